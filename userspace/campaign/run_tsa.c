// SPDX-License-Identifier: MIT
/*
 * Strategies tsa and tsa-h in `concsched run`, and `concsched estimate`:
 * the glue between the run in flight (run.c) and the plain-C engine of
 * seed 000 (tsa.c). Estimation: K runs under the probes only, each run's
 * thread model becomes a tsa_model (sites are the campaign store's site
 * ids, so requirements and covered SP tasks use the same "@N" keys), and
 * tsa_estimate keeps the pairs AC1-AC4 allow; they are stored as the
 * campaign's "sp" requirements. Testing: every lock request parks
 * (run.c's site policy); tsa_before_lock decides PROCEED (released at
 * once) or PAUSE (kept); at each all-parked note tsa_choose_release picks
 * by rule 1, 2, 3 (tsa-h: random instead of 3), and the release is logged
 * with its rule (DECLOG_RELEASE, arg = enum tsa_rule), which is what
 * `report` counts and `replay` re-applies. Covered pairs carry across
 * runs. docs/strategies.md, docs/run.md.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "cli/commands.h"
#include "lib/json.h"
#include "campaign/run_int.h"
#include "campaign/store.h"
#include "kernel/symbolize.h"
#include "strategies/tsa.h"
#include "lib/util.h"

struct tsa_campaign {
	struct tsa_engine *eng;
	struct tsa_pairset est;
	struct tsa_estimate_stats st;
};

struct tsa_run {
	struct campaign *c;
	struct tsa_engine *eng;
	uint64_t *addr; /* runtime address -> site id cache */
	uint32_t *id;
	size_t n;
	uint64_t last_release_ns;
};

/* ---- the thread model as seed 000's model ---------------------------------------------- */

typedef int64_t (*site_of_fn)(void *ctx, const char *key);

static uint32_t action_site(const struct site_resolver *res, const struct tm_thread *t,
			    uint64_t addr, site_of_fn site_of, void *ctx)
{
	struct site_ref s;
	char key[PATH_MAX + 32];
	int64_t id;

	if (site_resolve(res, t->tgid, t->gen, addr, &s) || !s.object)
		return 0;
	id = site_of(ctx, site_key(&s, key, sizeof(key)));
	return id > 0 && id <= UINT32_MAX ? (uint32_t)id : 0;
}

/* Lock acquisitions of every thread, with the locks held when each began
 * and the creation precedence. Thread i of the model is thread i of tm. */
static int model_from_run(const struct thread_model *tm, const struct site_resolver *res,
			  site_of_fn site_of, void *ctx, struct tsa_model *m)
{
	uint64_t set[CS_LOCKSET_MAX];
	size_t i, a;
	int err;

	for (i = 0; i < tm->nthreads; i++) {
		const struct tm_thread *t = &tm->threads[i];
		int32_t creator = t->creator >= 0 && (size_t)t->creator < i ? t->creator : -1;

		err = tsa_model_add_thread(m, creator, creator >= 0 ? t->create_pos : 0);
		if (err < 0)
			return err;
		for (a = 0; a < t->nactions; a++) {
			const struct tm_action *x = &t->actions[a];
			uint64_t lock;
			uint32_t site, n = 0, j;

			if (!tm_op_is_acquire(x->op))
				continue;
			site = action_site(res, t, x->site, site_of, ctx);
			if (!site)
				continue;
			lock = tm_action_lock(x->op, x->obj, x->arg);
			for (j = 0; j < x->nlockset && j < CS_LOCKSET_MAX; j++)
				if (x->lockset[j] != lock)
					set[n++] = x->lockset[j];
			err = tsa_model_add_lock(m, (uint32_t)i, site, lock, set, n);
			if (err)
				return err;
		}
	}
	return 0;
}

static void stats_add(struct tsa_estimate_stats *to, const struct tsa_estimate_stats *s)
{
	to->lock_actions += s->lock_actions;
	to->classes += s->classes;
	to->candidates += s->candidates;
	to->accepted_ac1 += s->accepted_ac1;
	to->rejected_ac2 += s->rejected_ac2;
	to->rejected_ac3 += s->rejected_ac3;
	to->rejected_ac4 += s->rejected_ac4;
}

/* K observed runs -> the union of their estimates. */
static int estimate_runs(struct campaign *c, unsigned k, site_of_fn site_of, void *ctx,
			 struct tsa_pairset *out, struct tsa_estimate_stats *st)
{
	unsigned i;
	int err = 0;

	for (i = 0; i < k && !err; i++) {
		struct tsa_estimate_stats one = { 0 };
		struct tsa_model m;
		struct onerun r;

		tsa_model_init(&m);
		err = run_observe_once(c, &r);
		if (!err)
			err = model_from_run(&r.tm, &r.res, site_of, ctx, &m);
		if (!err)
			err = tsa_estimate(&m, out, &one);
		stats_add(st, &one);
		tsa_model_free(&m);
		onerun_cleanup(&r);
	}
	st->requirements = out->count;
	return err;
}

/* "sp @X -> @Y" -> (X, Y), the key store_key() gives an SP task. */
static bool parse_sp_key(const char *key, uint32_t *x, uint32_t *y)
{
	unsigned long a, b;

	if (sscanf(key, "sp @%lu -> @%lu", &a, &b) != 2 || a > UINT32_MAX || b > UINT32_MAX)
		return false;
	*x = (uint32_t)a;
	*y = (uint32_t)b;
	return true;
}

/* ---- strategy in run ---------------------------------------------------------------------- */

static int64_t store_site_of(void *ctx, const char *key)
{
	return run_store_site(ctx, key);
}

static int carry_covered(const struct store_task *t, void *arg)
{
	uint32_t x, y;

	if (parse_sp_key(t->key, &x, &y))
		tsa_engine_mark_covered(arg, x, y);
	return 0;
}

int tsa_strat_campaign_begin(struct campaign *c)
{
	struct tsa_campaign *tc = xcalloc(1, sizeof(*tc));
	size_t pos = 0;
	uint32_t x, y;
	unsigned flags;
	char key[64];
	int err;

	c->tsa = tc;
	tsa_pairset_init(&tc->est);
	err = estimate_runs(c, c->o->estimate_runs, store_site_of, c->st, &tc->est, &tc->st);
	if (err) {
		cs_err("tsa: the estimation run failed: %s", strerror(-err));
		return err;
	}
	while (tsa_pairset_next(&tc->est, &pos, &x, &y, &flags)) {
		snprintf(key, sizeof(key), "sp @%u -> @%u", x, y);
		store_add_requirement(c->st, "sp", key, "sp-estimate");
	}
	tc->eng = tsa_engine_new(&tc->est, c->o->kind == STRAT_TSA);
	store_for_each_task(c->st, "sp", carry_covered, tc->eng);
	if (!c->o->json)
		fprintf(stderr,
			"concsched: tsa: %" PRIu64 " SP requirements from %u observed run%s "
			"(%" PRIu64 " lock actions; AC1 kept %" PRIu64 "; AC2/AC3/AC4 rejected "
			"%" PRIu64 "/%" PRIu64 "/%" PRIu64 ")\n",
			tc->st.requirements, c->o->estimate_runs,
			c->o->estimate_runs == 1 ? "" : "s", tc->st.lock_actions,
			tc->st.accepted_ac1, tc->st.rejected_ac2, tc->st.rejected_ac3,
			tc->st.rejected_ac4);
	return 0;
}

void tsa_strat_campaign_end(struct campaign *c)
{
	struct tsa_campaign *tc = c->tsa;
	const struct tsa_stats *s;
	struct tsa_precision p;

	if (!tc)
		return;
	if (tc->eng && !c->o->json) {
		s = tsa_engine_stats(tc->eng);
		tsa_engine_precision(tc->eng, &p);
		fprintf(stderr,
			"concsched: tsa: estimated %" PRIu64 ", covered %" PRIu64 " (%" PRIu64
			" of them estimated), false positives %" PRIu64 ", false negatives %" PRIu64
			"; %" PRIu64 " pauses, releases by rule 1/2/3/random: %" PRIu64 "/%" PRIu64
			"/%" PRIu64 "/%" PRIu64 ", %" PRIu64 " forced (watchdog)\n",
			p.estimated, p.covered, p.covered_estimated, p.false_positives,
			p.false_negatives, s->pauses, s->rule[TSA_RULE_1], s->rule[TSA_RULE_2],
			s->rule[TSA_RULE_3], s->rule[TSA_RULE_RANDOM], s->forced);
	}
	tsa_engine_free(tc->eng);
	tsa_pairset_free(&tc->est);
	free(tc);
	c->tsa = NULL;
}

void tsa_strat_run_begin(struct campaign *c, struct onerun *r)
{
	struct tsa_run *tr = xcalloc(1, sizeof(*tr));

	tr->c = c;
	tr->eng = c->tsa->eng;
	r->tsa = tr;
	tsa_run_begin(tr->eng, r->seed);
}

void tsa_strat_run_end(struct campaign *c, struct onerun *r)
{
	struct tsa_run *tr = r->tsa;
	size_t i;

	if (!tr)
		return;
	/* Pairs the harvest saw but the event stream missed (dropped events)
	 * count as covered too. */
	for (i = 0; i < r->cov.tasks.n; i++) {
		const struct syncov_task *t = &r->cov.tasks.tasks[i];
		int64_t a, b;

		if (t->metric != SYNCOV_SP || t->nsites != 2)
			continue;
		a = run_store_site(c->st, t->sites[0]);
		b = run_store_site(c->st, t->sites[1]);
		if (a > 0 && b > 0)
			tsa_engine_mark_covered(tr->eng, (uint32_t)a, (uint32_t)b);
	}
	tsa_run_end(tr->eng);
	free(tr->addr);
	free(tr->id);
	free(tr);
	r->tsa = NULL;
}

static uint32_t runtime_site(struct onerun *r, const struct cs_event *e)
{
	struct tsa_run *tr = r->tsa;
	int64_t id;
	size_t i;

	for (i = 0; i < tr->n; i++)
		if (tr->addr[i] == e->site)
			return tr->id[i];
	id = run_site_id(tr->c, r, e->pid, e->gen, e->site);
	if (id <= 0 || id > UINT32_MAX) {
		/* The mapping may be new: learn it and try once more. */
		run_refresh_vmas(r);
		id = run_site_id(tr->c, r, e->pid, e->gen, e->site);
		if (id <= 0 || id > UINT32_MAX)
			return 0;
	}
	if (tr->n % 64 == 0) {
		tr->addr = xrealloc(tr->addr, (tr->n + 64) * sizeof(*tr->addr));
		tr->id = xrealloc(tr->id, (tr->n + 64) * sizeof(*tr->id));
	}
	tr->addr[tr->n] = e->site;
	tr->id[tr->n++] = (uint32_t)id;
	return (uint32_t)id;
}

static uint32_t thread_index(struct onerun *r, struct rthread *t)
{
	return (uint32_t)(t - r->threads);
}

void tsa_hook_thread(struct onerun *r, struct rthread *t)
{
	tsa_thread_start(r->tsa->eng, thread_index(r, t));
}

void tsa_hook_event(struct onerun *r, const struct cs_event *e, struct rthread *t)
{
	struct tsa_engine *eng = r->tsa->eng;
	uint32_t ti = thread_index(r, t), site;

	switch (e->op) {
	case CS_OP_LOCK:
	case CS_OP_TRYLOCK_OK:
	case CS_OP_RDLOCK:
	case CS_OP_WRLOCK:
	case CS_OP_COND_WAKE:
		site = runtime_site(r, e);
		if (site)
			tsa_after_lock(eng, ti, site, e->op == CS_OP_COND_WAKE ? e->arg : e->obj);
		break;
	case CS_OP_UNLOCK:
	case CS_OP_RWUNLOCK:
		tsa_after_unlock(eng, ti, e->obj);
		break;
	case CS_OP_COND_WAIT:
		tsa_after_unlock(eng, ti, e->arg);
		break;
	case CS_OP_TRYLOCK_FAIL:
		tsa_lock_abandoned(eng, ti);
		break;
	case CS_OP_EXIT:
		tsa_thread_exit(eng, ti);
		break;
	default:
		break;
	}
}

bool tsa_hook_parked(struct onerun *r, const struct cs_event *e, struct rthread *t)
{
	uint32_t site = runtime_site(r, e);
	enum tsa_verdict v;

	if (!site) {
		cs_debug("tsa: thread %s: lock request at 0x%" PRIx64 " has no site", t->path,
			 (uint64_t)e->site);
		return false;
	}
	v = tsa_before_lock(r->tsa->eng, thread_index(r, t), site, e->obj);
	if (cs_verbose > 1)
		cs_debug("tsa: thread %s requests lock 0x%" PRIx64 " at @%u: %s", t->path,
			 (uint64_t)e->obj, site, v == TSA_PAUSE ? "pause" : "proceed");
	return v == TSA_PAUSE;
}

void tsa_hook_all_parked(struct onerun *r, const struct policy_note *n)
{
	struct tsa_run *tr = r->tsa;
	struct tsa_release rel;

	if (n->ts_ns <= tr->last_release_ns)
		return; /* from before our last release */
	if (r->rb)
		ring_buffer__consume(r->rb);
	if (tsa_choose_release(tr->eng, &rel) || rel.thread >= r->nthreads)
		return;
	tr->last_release_ns = now_ns();
	run_release(r, &r->threads[rel.thread], DECLOG_RELEASE, rel.rule);
}

/* ---- concsched estimate ---------------------------------------------------------------------- */

struct site_table {
	char **keys;
	size_t n;
};

static int64_t table_site_of(void *ctx, const char *key)
{
	struct site_table *t = ctx;
	size_t i;

	if (!strchr(key, '+'))
		return 0;
	for (i = 0; i < t->n; i++)
		if (!strcmp(t->keys[i], key))
			return (int64_t)i + 1;
	t->keys = xrealloc(t->keys, (t->n + 1) * sizeof(*t->keys));
	t->keys[t->n++] = xstrdup(key);
	return (int64_t)t->n;
}

static void estimate_usage(FILE *f)
{
	fprintf(f, "Usage: concsched estimate [OPTIONS] -- PROG [ARGS...]\n\n"
		   "Run PROG under the synchronization probes (no scheduling: any kernel with\n"
		   "uprobes) and estimate its synchronization-pair (SP) requirements as seed 000\n"
		   "does: from the thread model of the observed run(s), every pair of lock sites\n"
		   "<p, q> that AC1 (same thread, q right after p) or AC2-AC4 (different threads,\n"
		   "not protected by a common lock, not ordered by thread creation) allows.\n"
		   "This is what `run --strategy tsa` steers towards.\n\n"
		   "Options:\n"
		   "      --estimate-runs K  observed runs whose estimates are united (default 1)\n"
		   "      --run-timeout SEC  per-run timeout (default 30)\n"
		   "      --json             machine-readable output\n"
		   "  -h, --help             this text\n\n"
		   "Examples:\n"
		   "  sudo concsched estimate -- ./mytest\n"
		   "  sudo concsched estimate --estimate-runs 5 --json -- ./mytest 4\n\n"
		   "Exit status: 0, or 2 on a usage or environment error.\n");
}

static void describe(const char *key, char *buf, size_t len)
{
	struct sym_site ss;

	syncov_site_describe(key, &ss, buf, len);
}

int cmd_estimate(int argc, char **argv)
{
	enum { O_EST = 256, O_JSON, O_TIMEOUT };
	static const struct option opts[] = {
		{ "estimate-runs", required_argument, NULL, O_EST },
		{ "json", no_argument, NULL, O_JSON },
		{ "run-timeout", required_argument, NULL, O_TIMEOUT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct run_opts o = { .strategy = "none", .run_timeout_s = 30, .estimate_runs = 1 };
	struct campaign c = { .o = &o };
	struct tsa_estimate_stats st = { 0 };
	struct site_table tab = { 0 };
	struct tsa_pairset est;
	char a[1024], b[1024];
	bool json = false;
	uint32_t x, y;
	unsigned flags;
	size_t pos = 0, i;
	uint64_t v;
	int ch, err, ret = EXIT_USAGE;

	optind = 1;
	while ((ch = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (ch) {
		case O_EST:
			if (parse_u64(optarg, &v) || !v || v > 1000) {
				cs_err("--estimate-runs %s: 1-1000", optarg);
				return EXIT_USAGE;
			}
			o.estimate_runs = (unsigned)v;
			break;
		case O_JSON:
			json = true;
			break;
		case O_TIMEOUT:
			if (parse_double(optarg, &o.run_timeout_s) || o.run_timeout_s <= 0) {
				cs_err("--run-timeout %s: not a positive number of seconds",
				       optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			estimate_usage(stdout);
			return 0;
		default:
			fprintf(stderr, "(see concsched estimate --help)\n");
			return EXIT_USAGE;
		}
	}
	o.argv = argv + optind;
	o.argc = argc - optind;
	if (!o.argc) {
		cs_err("estimate: no program given (concsched estimate -- PROG ARGS)");
		return EXIT_USAGE;
	}
	if (geteuid() != 0) {
		cs_err("estimate needs root to load BPF probes (try: sudo concsched estimate ...)");
		return EXIT_USAGE;
	}
	if (target_inspect(o.argv[0], &c.ti) || sync_runtime_for_exec(&c.ti, &c.rt) ||
	    launch_resolve_user(NULL, &c.uid, &c.gid, &c.drop))
		return EXIT_USAGE;
	o.argv[0] = c.ti.path;
	libbpf_set_print(NULL);
	tsa_pairset_init(&est);
	err = estimate_runs(&c, o.estimate_runs, table_site_of, &tab, &est, &st);
	if (err) {
		cs_err("estimate: the observed run failed: %s", strerror(-err));
		goto out;
	}
	if (json) {
		struct json j;

		json_init(&j, stdout, true);
		json_obj_begin(&j, NULL);
		json_kv_str(&j, "schema", "concsched.estimate/1");
		json_kv_str(&j, "program", c.ti.path);
		json_kv_uint(&j, "runs", o.estimate_runs);
		json_obj_begin(&j, "stats");
		json_kv_uint(&j, "lock_actions", st.lock_actions);
		json_kv_uint(&j, "candidates", st.candidates);
		json_kv_uint(&j, "accepted_ac1", st.accepted_ac1);
		json_kv_uint(&j, "rejected_ac2", st.rejected_ac2);
		json_kv_uint(&j, "rejected_ac3", st.rejected_ac3);
		json_kv_uint(&j, "rejected_ac4", st.rejected_ac4);
		json_kv_uint(&j, "requirements", st.requirements);
		json_obj_end(&j);
		json_arr_begin(&j, "requirements");
		while (tsa_pairset_next(&est, &pos, &x, &y, &flags)) {
			describe(tab.keys[x - 1], a, sizeof(a));
			describe(tab.keys[y - 1], b, sizeof(b));
			json_obj_begin(&j, NULL);
			json_kv_str(&j, "first", tab.keys[x - 1]);
			json_kv_str(&j, "first_text", a);
			json_kv_str(&j, "second", tab.keys[y - 1]);
			json_kv_str(&j, "second_text", b);
			json_obj_end(&j);
		}
		json_arr_end(&j);
		json_obj_end(&j);
		json_end(&j);
	} else {
		printf("%s: %" PRIu64 " SP requirements from %u observed run%s\n", c.ti.path,
		       st.requirements, o.estimate_runs, o.estimate_runs == 1 ? "" : "s");
		printf("  %" PRIu64 " lock actions, %" PRIu64 " candidate pairs; AC1 kept %" PRIu64
		       "; rejected by AC2 %" PRIu64 ", AC3 %" PRIu64 ", AC4 %" PRIu64 "\n",
		       st.lock_actions, st.candidates, st.accepted_ac1, st.rejected_ac2,
		       st.rejected_ac3, st.rejected_ac4);
		while (tsa_pairset_next(&est, &pos, &x, &y, &flags)) {
			describe(tab.keys[x - 1], a, sizeof(a));
			describe(tab.keys[y - 1], b, sizeof(b));
			printf("  %s -> %s\n", a, b);
		}
	}
	ret = 0;
out:
	run_session_close(&c.sess);
	tsa_pairset_free(&est);
	for (i = 0; i < tab.n; i++)
		free(tab.keys[i]);
	free(tab.keys);
	return ret;
}
