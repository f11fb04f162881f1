// SPDX-License-Identifier: MIT
/*
 * The portfolio strategy (strategies/strat_portfolio.c) through the
 * contract, on the fake policy backend: its flags, the access decision from
 * given estimates, the warm-up order, the per-run flags and serial mode of
 * each arm, forwarding to the arm that runs, the run's configuration and
 * note, the reward from given counts, UCB1's choice after given rewards
 * (hand-computed), an arm that stops adding losing its share, and the
 * same choices from the same seed.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coverage/syncov.h"
#include "coverage/thread_model.h"
#include "kernel/policy.h"
#include "lib/declog.h"
#include "lib/json.h"
#include "lib/array_size.h"
#include "lib/fnv1a64.h"
#include "lib/now.h"
#include "lib/xalloc.h"
#include "strategies/strategy_registry.h"
#include "strategies/strat_portfolio.h"
#include "strategies/strategy.h"
#include "tap.h"

/* ---- a minimal loop: one campaign, its runs one after the other ---------------------- */

static int64_t fake_tasks[3]; /* sp, concurpairs, fpair: what count_tasks says */
static int64_t fake_warnings;
static char *notes[64];
static size_t nnotes;

static int64_t metric_slot(const char *metric)
{
	return !strcmp(metric, "sp") ? 0 : !strcmp(metric, "concurpairs") ? 1 : 2;
}

static int64_t fc_count_tasks(void *ctx, const char *metric)
{
	return fake_tasks[metric_slot(metric)];
}

static int64_t fc_count_warnings(void *ctx)
{
	return fake_warnings;
}

static int fc_note(void *ctx, const char *json)
{
	if (nnotes < ARRAY_SIZE(notes))
		notes[nnotes++] = xstrdup(json);
	return 0;
}

static int fc_tasks(void *ctx, const char *metric, int (*fn)(const char *, void *), void *arg)
{
	return 0;
}

/* Site ids: the first key seen 1, the next 2, ... (tsa's estimation). */
static char *site_keys[32];
static size_t nsite_keys, nrequirements;

static int64_t fc_site_of(void *ctx, const char *key)
{
	size_t i;

	for (i = 0; i < nsite_keys; i++)
		if (!strcmp(site_keys[i], key))
			return (int64_t)i + 1;
	if (nsite_keys == ARRAY_SIZE(site_keys))
		return -1;
	site_keys[nsite_keys++] = xstrdup(key);
	return (int64_t)nsite_keys;
}

static int fc_add_requirement(void *ctx, const char *metric, const char *key, const char *source)
{
	nrequirements += !strcmp(metric, "sp");
	return 0;
}

static void notes_free(void)
{
	while (nnotes)
		free(notes[--nnotes]);
}

static void fr_release(struct strat_run *r, struct strat_thread *t, int64_t arg)
{
	declog_add(r->log, t->id, 0, t->points ? t->points - 1 : 0, DECLOG_RELEASE, arg);
	policy_release(r->pol, t->tid);
}

static void fr_drain(struct strat_run *r)
{
}

static uint32_t fr_site_id(struct strat_run *r, const struct cs_event *e)
{
	return (uint32_t)(e->site & 0xffff);
}

struct camp {
	struct strategy *s;
	struct strat_campaign c;
};

struct frun {
	struct strat_run r;
	struct declog log;
	struct strat_thread th[4];
};

/* A campaign whose estimation runs observed tm[0..ntm) (none: no
 * estimation run). */
static void camp_begin_observed(struct camp *k, uint64_t seed, bool asked, size_t contended,
				uint64_t accesses, const struct thread_model *const *tm, size_t ntm)
{
	char err[200] = "";
	size_t i;

	struct site_resolver res;
	struct site_vma prog = { .tgid = 100, .end = 0x1000, .ino = 1, .dev = 2, .file = true };

	memset(k, 0, sizeof(*k));
	if (strategy_new("portfolio", &k->s, err, sizeof(err)))
		tap_diag("portfolio: %s", err);
	syncov_resolver_init(&res);
	strcpy(prog.name, "prog");
	syncov_resolver_add_vma(&res, &prog);
	k->c.site_of = fc_site_of;
	k->c.add_requirement = fc_add_requirement;
	for (i = 0; i < ntm; i++) {
		struct strat_observation obs = { .tm = tm[i],
						 .res = &res,
						 .duration_ns = 100000000 };

		strategy_estimate(k->s, &k->c, &obs);
	}
	syncov_resolver_free(&res);
	k->c.seed = seed;
	k->c.quiet = true;
	k->c.access_asked = asked;
	k->c.contended_vars = contended;
	k->c.est_accesses = accesses;
	k->c.note = fc_note;
	k->c.for_each_task = fc_tasks;
	k->c.count_tasks = fc_count_tasks;
	k->c.count_warnings = fc_count_warnings;
	strategy_campaign_begin(k->s, &k->c);
}

static void camp_begin(struct camp *k, uint64_t seed, bool asked, size_t contended,
		       uint64_t accesses)
{
	camp_begin_observed(k, seed, asked, contended, accesses, NULL, 0);
}

static void camp_end(struct camp *k)
{
	strategy_campaign_end(k->s, &k->c);
	strategy_free(k->s);
	notes_free();
	while (nsite_keys)
		free(site_keys[--nsite_keys]);
	nrequirements = 0;
	memset(fake_tasks, 0, sizeof(fake_tasks));
	fake_warnings = 0;
}

/* A run of two threads; access_points: the loop would probe accesses. */
static void run_begin(struct camp *k, struct frun *f, uint64_t seed, bool access_points)
{
	size_t i;

	memset(f, 0, sizeof(*f));
	declog_init(&f->log, seed, NULL);
	f->r.seed = seed;
	f->r.pol = policy_new_fake();
	f->r.log = &f->log;
	f->r.threads = f->th;
	f->r.release = fr_release;
	f->r.drain = fr_drain;
	f->r.site_id = fr_site_id;
	f->r.flags = k->s->flags;
	f->r.sched_serial = k->s->sched_serial;
	f->r.access_points = access_points;
	strategy_run_begin(k->s, &f->r);
	for (i = 0; i < 2; i++) {
		struct strat_thread *t = &f->th[f->r.nthreads++];

		t->tid = 100 + (uint32_t)i;
		snprintf(t->path, sizeof(t->path), i ? "0.1" : "0");
		t->id = fnv1a64(t->path, strlen(t->path), FNV1A64_INIT);
		policy_fake_thread(f->r.pol, t->tid);
		strategy_thread_start(k->s, &f->r, t);
	}
}

static void run_end(struct camp *k, struct frun *f, uint64_t ns, bool failed)
{
	struct strat_outcome o = { .ran = true, .failed = failed, .duration_ns = ns };

	k->c.nruns++;
	strategy_run_end(k->s, &f->r, &k->c, &o);
	policy_free(f->r.pol);
	declog_free(&f->log);
}

static char *run_config(struct camp *k, struct frun *f)
{
	struct json_mem m;

	json_mem_open(&m);
	json_obj_begin(&m.j, NULL);
	strategy_config_json(k->s, &f->r, &m.j);
	json_obj_end(&m.j);
	return json_mem_close(&m);
}

/* The arm the next run gets (a whole run, nothing added). */
static char *next_arm(struct camp *k, bool access_points)
{
	struct frun f;
	char *cfg, *arm;

	run_begin(k, &f, 1, access_points);
	cfg = run_config(k, &f);
	arm = json_get_string(cfg, "arm");
	free(cfg);
	run_end(k, &f, 100000000, false);
	return arm;
}

/* Thread i reaches a synchronization point (a lock request). */
static struct strat_decision sync_point(struct camp *k, struct frun *f, size_t i)
{
	struct strat_decision d = { .v = STRAT_PROCEED };
	struct cs_event e = { .op = CS_OP_LOCK, .tid = f->th[i].tid, .site = 0x10, .obj = 0x99 };
	struct strat_point p = { .t = &f->th[i], .k = f->th[i].points++, .e = &e };

	strategy_event(k->s, &f->r, &e, p.t);
	strategy_point(k->s, &f->r, &p, &d);
	return d;
}

/* ---- tests ------------------------------------------------------------------------- */

static void test_registry(void)
{
	const struct strategy_ops *ops = strategy_lookup("portfolio");
	struct strategy *s = NULL;
	char err[200] = "";

	tap_is_str(ops ? ops->name : "", "portfolio", "portfolio by name");
	tap_ok(ops && (ops->flags & STRAT_F_ACCESS) && (ops->flags & STRAT_F_ESTIMATE),
	       "it implies --access (its estimation measures the accesses) and asks for pct's "
	       "estimation runs");
	tap_ok(ops && (ops->flags & STRAT_F_PICKS),
	       "its pct and fpair arms pick: --serial refused");
	tap_ok(!strategy_new("portfolio", &s, err, sizeof(err)) && (s->flags & STRAT_F_JOBS),
	       "every arm keeps its per-run state per run: runs at once (-j)");
	tap_is_int(s ? (int)s->sched_serial : -1, CS_SERIAL_OFF,
		   "no serial mode of its own: each run gets its arm's");
	strategy_free(s);
	tap_ok(strategy_new("portfolio:x", &s, err, sizeof(err)) == -EINVAL && !s &&
		       strstr(err, "no options"),
	       "portfolio:x is refused (%s)", err);
}

static void test_access_decision(void)
{
	struct strat_campaign c = { 0 };
	const char *why = "";
	struct camp k;

	bool on;

	c.contended_vars = 2;
	c.est_accesses = PF_ACCESS_MAX;
	on = strat_portfolio_access_affordable(&c, 0, &why);
	tap_ok(on, "100,000 accesses and a contended variable: access on (%s)", why);
	c.est_accesses = PF_ACCESS_MAX + 1;
	on = strat_portfolio_access_affordable(&c, 0, &why);
	tap_ok(!on && strstr(why, "more than 100000"), "100,001 accesses: off (%s)", why);
	c.est_accesses = 40;
	c.contended_vars = 0;
	on = strat_portfolio_access_affordable(&c, 0, &why);
	tap_ok(!on && strstr(why, "no variable"), "no variable a write may race on: off (%s)", why);
	c.contended_vars = 1;
	c.est_access_ns = 2100000000ULL; /* 2.1 s probed against 0.1 s without */
	on = strat_portfolio_access_affordable(&c, 100000000ULL, &why);
	tap_ok(on, "21 times the plain run, but 40 probed hits (1.2 ms) cannot explain it: on (%s)",
	       why);
	c.est_accesses = 20000;
	c.est_dropped = 13334; /* 33,334 hits x 30 us = 1.0 s: half the 2.0 s excess */
	on = strat_portfolio_access_affordable(&c, 100000000ULL, &why);
	tap_ok(!on && strstr(why, "20 times"),
	       "21 times with 33,334 probed hits (dropped ones too) explaining half: off (%s)",
	       why);
	c.est_dropped = 13332;
	on = strat_portfolio_access_affordable(&c, 100000000ULL, &why);
	tap_ok(on, "... 2 hits fewer, less than half explained: on (%s)", why);
	c.est_dropped = 13334;
	on = strat_portfolio_access_affordable(&c, 110000000ULL, &why);
	tap_ok(on, "19 times: on (%s)", why);
	c.est_access_ns = 900000000ULL; /* 0.9 s: fixed costs */
	on = strat_portfolio_access_affordable(&c, 10000000ULL, &why);
	tap_ok(on, "90 times but under 1 s: on (%s)", why);
	c.access_asked = true;
	c.est_accesses = 5000000;
	tap_ok(strat_portfolio_access_affordable(&c, 0, &why),
	       "--access given: on whatever the count");

	camp_begin(&k, 1, false, 3, 500);
	tap_ok(!k.c.access_off, "campaign_begin with 500 accesses, 3 contended: access stays on");
	camp_end(&k);
	camp_begin(&k, 1, false, 3, 2000000);
	tap_ok(k.c.access_off, "with 2,000,000 accesses: the loop is told to turn it off");
	camp_end(&k);
}

/* The warm-up, in strat_portfolio_arms[] order, and each arm's run as the loop sees it. */
static void test_warmup(void)
{
	static const char *const order[] = { "random --access", "map",	 "random",
					     "pct:3 --access",	"fpair", "pct:3" };
	struct camp k;
	struct frun f;
	size_t i;
	bool in_order = true;

	camp_begin(&k, 7, false, 1, 100);
	for (i = 0; i < ARRAY_SIZE(order); i++) {
		char *arm = next_arm(&k, true);

		if (!arm || strcmp(arm, order[i])) {
			tap_diag("warm-up run %zu: %s, expected %s", i + 1, arm ? arm : "-",
				 order[i]);
			in_order = false;
		}
		free(arm);
	}
	tap_ok(in_order, "with access: the warm-up runs random --access, map, random, "
			 "pct:3 --access, fpair, pct:3, once each");
	camp_end(&k);

	camp_begin(&k, 7, false, 0, 100);
	{
		char *a1 = next_arm(&k, false), *a2 = next_arm(&k, false),
		     *a3 = next_arm(&k, false);

		tap_ok(a1 && a2 && a3 && !strcmp(a1, "random") && !strcmp(a2, "pct:3") &&
			       (!strcmp(a3, "random") || !strcmp(a3, "pct:3")),
		       "access off: random, pct:3, then only those two (third run: %s)",
		       a3 ? a3 : "-");
		free(a1);
		free(a2);
		free(a3);
	}
	camp_end(&k);

	/* Each arm's flags and serial mode, per run. */
	camp_begin(&k, 7, false, 1, 100);
	run_begin(&k, &f, 11, true);
	tap_ok(strat_run_has(&f.r, STRAT_F_ACCESS_POINTS) && f.r.access_points &&
		       !strat_run_has(&f.r, STRAT_F_SERIAL) && f.r.sched_serial == CS_SERIAL_OFF,
	       "run 1 (random --access): access points, in parallel");
	tap_ok(!f.r.no_access_probes, "... its accesses probed");
	run_end(&k, &f, 100000000, false);
	run_begin(&k, &f, 12, true);
	tap_ok(strat_run_has(&f.r, STRAT_F_ACCESS_POINTS) && f.r.access_points &&
		       !strat_run_has(&f.r, STRAT_F_SERIAL) && f.r.sched_serial == CS_SERIAL_OFF,
	       "run 2 (map): access points too, in parallel");
	run_end(&k, &f, 100000000, false);
	run_begin(&k, &f, 13, true);
	tap_ok(!strat_run_has(&f.r, STRAT_F_ACCESS_POINTS) && !f.r.access_points &&
		       strat_run_has(&f.r, STRAT_F_SYNC_POINTS) &&
		       !strat_run_has(&f.r, STRAT_F_SERIAL) && f.r.sched_serial == CS_SERIAL_OFF,
	       "run 3 (random): synchronization points only, in parallel");
	tap_ok(f.r.no_access_probes, "... and no access probed: random's own run without --access");
	run_end(&k, &f, 100000000, false);
	run_begin(&k, &f, 14, true);
	tap_ok(strat_run_has(&f.r, STRAT_F_ACCESS_POINTS) && f.r.access_points &&
		       strat_run_has(&f.r, STRAT_F_SERIAL) && f.r.sched_serial == CS_SERIAL_PRIO,
	       "run 4 (pct:3 --access): access points, serial by priorities");
	run_end(&k, &f, 100000000, false);
	run_begin(&k, &f, 15, true);
	run_end(&k, &f, 100000000, false);
	run_begin(&k, &f, 16, true);
	tap_ok(!strat_run_has(&f.r, STRAT_F_ACCESS_POINTS) && strat_run_has(&f.r, STRAT_F_SERIAL) &&
		       f.r.sched_serial == CS_SERIAL_PRIO,
	       "run 6 (pct:3): serial by priorities, no access points");
	run_end(&k, &f, 100000000, false);
	camp_end(&k);
}

/* ---- the warm-up's order from the estimation run ---------------------------------- */

/* Events of one process (pid 100): thread tid's n-th event. */
static void tm_ev_flags(struct thread_model *m, uint32_t tid, unsigned op, uint64_t obj,
			unsigned flags)
{
	struct tm_thread *t = thread_model_thread(m, 100, 0, tid, false, NULL);
	struct cs_event e = { .pid = 100,
			      .tid = tid,
			      .seq = t ? t->next_seq : 0,
			      .op = (uint16_t)op,
			      .flags = (uint16_t)flags,
			      .obj = obj,
			      .site = 0x10 + (obj & 0xff) };

	thread_model_add_event(m, &e);
}

static void tm_ev(struct thread_model *m, uint32_t tid, unsigned op, uint64_t obj)
{
	tm_ev_flags(m, tid, op, obj, 0);
}

/* Thread tid takes the locks in order, then releases them. */
static void tm_nest(struct thread_model *m, uint32_t tid, unsigned op, uint64_t a, uint64_t b)
{
	tm_ev(m, tid, CS_OP_LOCK, a);
	tm_ev(m, tid, op, b);
	tm_ev(m, tid, CS_OP_UNLOCK, b);
	tm_ev(m, tid, CS_OP_UNLOCK, a);
}

/* main (tid 1) creates workers 2..n+1 and joins the first j of them. */
static void tm_threads(struct thread_model *m, uint32_t n, uint32_t j)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		tm_ev(m, 1, CS_OP_CREATE, 2 + i);
	for (i = 0; i < j; i++)
		tm_ev(m, 1, CS_OP_JOIN, 2 + i);
}

static void test_signal(void)
{
	struct thread_model m;

	tap_is_int(strat_portfolio_signal(NULL), PF_SIG_UNKNOWN, "no thread model: unknown");

	thread_model_init(&m, 0);
	tm_threads(&m, 2, 2);
	tap_is_int(strat_portfolio_signal(&m), PF_SIG_NONE,
		   "two workers created and joined, no lock: none");
	tm_nest(&m, 2, CS_OP_LOCK, 0xa, 0xb);
	tm_nest(&m, 3, CS_OP_LOCK, 0xa, 0xb);
	tap_is_int(strat_portfolio_signal(&m), PF_SIG_LOCKS,
		   "both workers take a then b: locks, no cycle");
	tm_nest(&m, 3, CS_OP_TRYLOCK_OK, 0xb, 0xa);
	tap_is_int(strat_portfolio_signal(&m), PF_SIG_LOCKS,
		   "b then a by trylock: no edge (a trylock does not wait)");
	tm_nest(&m, 2, CS_OP_LOCK, 0xb, 0xc);
	tap_is_int(strat_portfolio_signal(&m), PF_SIG_LOCKS, "a -> b -> c: a chain, no cycle");
	tm_nest(&m, 3, CS_OP_LOCK, 0xc, 0xa);
	tap_is_int(strat_portfolio_signal(&m), PF_SIG_CYCLE,
		   "c -> a closes a -> b -> c: a cycle of three locks");
	thread_model_free(&m);

	thread_model_init(&m, 0);
	tm_threads(&m, 2, 2);
	tm_nest(&m, 2, CS_OP_LOCK, 0xa, 0xb);
	tm_nest(&m, 3, CS_OP_WRLOCK, 0xb, 0xa);
	tm_threads(&m, 1, 0);
	tap_is_int(strat_portfolio_signal(&m), PF_SIG_CYCLE,
		   "a -> b, then b -> a by wrlock: a cycle, first whatever else holds");
	thread_model_free(&m);

	/* A run that deadlocked on the cycle: each worker holds its first
	 * lock and its request of the second never returned. */
	thread_model_init(&m, 0);
	tm_threads(&m, 2, 0);
	tm_ev(&m, 2, CS_OP_LOCK_REQ, 0xa);
	tm_ev(&m, 2, CS_OP_LOCK, 0xa);
	tm_ev(&m, 3, CS_OP_LOCK_REQ, 0xb);
	tm_ev(&m, 3, CS_OP_LOCK, 0xb);
	tm_ev_flags(&m, 2, CS_OP_LOCK_REQ, 0xb, CS_EV_NOWAIT);
	tm_ev(&m, 3, CS_OP_LOCK_REQ, 0xa);
	tap_is_int(strat_portfolio_signal(&m), PF_SIG_UNJOINED,
		   "b -> a requested, a -> b only by a timed request (gives up): no cycle");
	tm_ev(&m, 2, CS_OP_LOCK_REQ, 0xb);
	tap_is_int(
		strat_portfolio_signal(&m), PF_SIG_CYCLE,
		"a deadlocked run: each holds one lock and requests the other, for good: a cycle");
	thread_model_free(&m);

	thread_model_init(&m, 0);
	tm_threads(&m, 2, 1);
	tm_ev(&m, 2, CS_OP_LOCK, 0xa);
	tm_ev(&m, 2, CS_OP_COND_WAIT, 0xc);
	tap_is_int(strat_portfolio_signal(&m), PF_SIG_UNJOINED,
		   "two created, one joined: unjoined, before the condition variable");
	tm_ev(&m, 1, CS_OP_JOIN, 3);
	tap_is_int(strat_portfolio_signal(&m), PF_SIG_COND, "both joined: the wait");
	thread_model_free(&m);

	thread_model_init(&m, 0);
	tm_threads(&m, 2, 2);
	tm_ev(&m, 2, CS_OP_LOCK, 0xa);
	tm_ev(&m, 2, CS_OP_LOCK, 0xb);
	tm_ev(&m, 2, CS_OP_COND_WAIT, 0xc);
	tm_ev(&m, 2, CS_OP_COND_WAKE, 0xc);
	tap_is_int(strat_portfolio_signal(&m), PF_SIG_COND,
		   "cond_wait's reacquisition under another lock adds no lock-order edge");
	thread_model_free(&m);
}

/* The warm-up's arms, one whole run each, as a comma-joined list. */
static void warmup_arms(struct camp *k, size_t n, bool access, char *buf, size_t len)
{
	size_t i, o = 0;

	buf[0] = 0;
	for (i = 0; i < n; i++) {
		char *arm = next_arm(k, access);

		o += (size_t)snprintf(buf + o, o < len ? len - o : 0, "%s%s", i ? ", " : "",
				      arm ? arm : "-");
		free(arm);
	}
}

/* A campaign observed tm (access probing on when contended), its first n
 * runs' arms against want. */
static void warmup_is(const struct thread_model *tm, bool contended, size_t n, const char *want,
		      const char *name)
{
	struct camp k;
	char got[400];

	camp_begin_observed(&k, 7, false, contended, 100, &tm, 1);
	warmup_arms(&k, n, contended, got, sizeof(got));
	tap_is_str(got, want, "%s", name);
	camp_end(&k);
}

static void test_warmup_signal(void)
{
	struct thread_model none, cond, unjoined, cycle, locks;
	const struct thread_model *two[2];
	struct camp k;
	char got[400];
	size_t i;
	bool summary = false;

	thread_model_init(&none, 0);
	tm_threads(&none, 2, 2);
	thread_model_init(&locks, 0);
	tm_threads(&locks, 2, 2);
	tm_nest(&locks, 2, CS_OP_LOCK, 0xa, 0xb);
	thread_model_init(&cond, 0);
	tm_threads(&cond, 2, 2);
	tm_ev(&cond, 2, CS_OP_LOCK, 0xa);
	tm_ev(&cond, 2, CS_OP_COND_WAIT, 0xc);
	thread_model_init(&unjoined, 0);
	tm_threads(&unjoined, 2, 0);
	thread_model_init(&cycle, 0);
	tm_threads(&cycle, 2, 2);
	tm_nest(&cycle, 2, CS_OP_LOCK, 0xa, 0xb);
	tm_nest(&cycle, 3, CS_OP_LOCK, 0xb, 0xa);

	warmup_is(&none, true, 6, "random --access, map, random, pct:3 --access, fpair, pct:3",
		  "no lock: today's warm-up");
	warmup_is(&locks, true, 6, "random --access, fpair, map, pct:3, pct:3 --access, random",
		  "locks: fpair second");
	warmup_is(&unjoined, true, 6, "pct:3, random --access, map, pct:3 --access, fpair, random",
		  "unjoined: pct:3 first");
	warmup_is(&cond, true, 7,
		  "pct:3, pct:3, random --access, map, fpair, pct:3 --access, random",
		  "a condition-variable wait: pct:3 twice, then the others");

	camp_begin_observed(&k, 7, false, 1, 100, (const struct thread_model *const[]){ &cond }, 1);
	warmup_arms(&k, 7, true, got, sizeof(got));
	for (i = 0; i < nnotes; i++)
		summary |= strstr(notes[i], "warm-up done (a condition-variable wait)") != NULL &&
			   i == 6;
	tap_ok(summary, "the seventh run's note ends the warm-up and names the signal");
	camp_end(&k);

	warmup_is(&cycle, true, 7,
		  "tsa, random, random --access, map, fpair, pct:3, pct:3 --access",
		  "a lock-order cycle: tsa first, then random");
	two[0] = &none;
	two[1] = &cycle;
	camp_begin_observed(&k, 7, false, 1, 100, two, 2);
	warmup_arms(&k, 7, true, got, sizeof(got));
	tap_is_str(got, "tsa, random, random --access, map, fpair, pct:3, pct:3 --access",
		   "two estimation runs, the second with a lock-order cycle: tsa first");
	camp_end(&k);

	warmup_is(&cond, false, 3, "pct:3, pct:3, random",
		  "access off, a wait: pct:3 twice, then random");
	warmup_is(&cycle, false, 3, "tsa, random, pct:3",
		  "access off, a cycle: tsa, random, pct:3");
	warmup_is(&locks, false, 2, "random, pct:3",
		  "access off, locks: random, pct:3 (as before the signals)");
	warmup_is(&unjoined, false, 2, "pct:3, random", "access off, unjoined: pct:3, random");

	thread_model_free(&none);
	thread_model_free(&locks);
	thread_model_free(&cond);
	thread_model_free(&unjoined);
	thread_model_free(&cycle);
}

/* tsa, an arm after a lock-order cycle only: on, estimated from the runs
 * that show the cycle (its SP requirements stored), steering lock
 * requests; off, neither estimated nor run, after any other signal. */
static void test_tsa_arm(void)
{
	struct thread_model cycle, locks;
	const struct thread_model *two[2];
	struct camp k;
	struct frun f;
	size_t i, req_cycle;
	bool no_tsa = true;
	char *cfg;

	tap_ok(!strcmp(strat_portfolio_arms[PF_NARMS - 1].name, "tsa") &&
		       strat_portfolio_arms[PF_NARMS - 1].only == PF_SIG_CYCLE &&
		       !strat_portfolio_arms[PF_NARMS - 1].access,
	       "the last arm: tsa, at synchronization points, after a lock-order cycle only");
	for (i = 0; i < PF_NARMS_EVERY; i++)
		no_tsa &= !strat_portfolio_arms[i].only;
	tap_ok(no_tsa, "the first %d arms: in every campaign", PF_NARMS_EVERY);

	thread_model_init(&cycle, 0);
	tm_threads(&cycle, 2, 2);
	tm_nest(&cycle, 2, CS_OP_LOCK, 0xa, 0xb);
	tm_nest(&cycle, 3, CS_OP_LOCK, 0xb, 0xa);
	thread_model_init(&locks, 0);
	tm_threads(&locks, 2, 2);
	tm_nest(&locks, 2, CS_OP_LOCK, 0xc, 0xd);
	tm_nest(&locks, 3, CS_OP_LOCK, 0xc, 0xd);

	camp_begin_observed(&k, 7, false, 1, 100, (const struct thread_model *const[]){ &cycle },
			    1);
	req_cycle = nrequirements;
	tap_is_int(strat_portfolio_arms_on(k.s->priv), PF_NARMS, "a cycle: all %d arms on",
		   PF_NARMS);
	tap_ok(req_cycle > 0, "tsa's SP requirements stored (%zu)", req_cycle);
	run_begin(&k, &f, 41, false);
	cfg = run_config(&k, &f);
	tap_ok(strstr(cfg, "\"arm\":\"tsa\"") && strstr(cfg, "\"arm_strategy\":\"tsa\"") &&
		       strstr(cfg, "\"arm_access\":false"),
	       "run 1 is tsa's, named in its configuration (%s)", cfg);
	free(cfg);
	tap_ok(strat_run_has(&f.r, STRAT_F_SYNC_POINTS) && !strat_run_has(&f.r, STRAT_F_ACCESS) &&
		       f.r.no_access_probes && !f.r.access_points,
	       "... steering synchronization points, its accesses not probed");
	run_end(&k, &f, 100000000, false);
	camp_end(&k);

	two[0] = &locks;
	two[1] = &cycle;
	camp_begin_observed(&k, 7, false, 1, 100, two, 2);
	tap_is_int(nrequirements, req_cycle,
		   "a run with other locks, then one with the cycle: tsa estimated from the "
		   "cycle's run only (%zu requirements)",
		   req_cycle);
	camp_end(&k);

	camp_begin_observed(&k, 7, false, 1, 100, (const struct thread_model *const[]){ &locks },
			    1);
	tap_is_int(strat_portfolio_arms_on(k.s->priv), PF_NARMS_EVERY,
		   "locks without a cycle: tsa off (%d arms on)", PF_NARMS_EVERY);
	tap_is_int(nrequirements, 0, "... and no SP requirement of its");
	no_tsa = true;
	for (i = 0; i < 30; i++) {
		char *arm = next_arm(&k, true);

		no_tsa &= arm && strcmp(arm, "tsa");
		free(arm);
	}
	tap_ok(no_tsa, "... none of the first 30 runs is tsa's");
	camp_end(&k);
	thread_model_free(&cycle);
	thread_model_free(&locks);
}

/* Every callback of a run goes to its arm: pct keeps every thread at its
 * point and releases one when all are parked; random never keeps one. */
static void test_forwarding(void)
{
	struct camp k;
	struct frun f;
	struct policy_note n = { .ts_ns = now_ns() + 1000000000ULL };
	bool never_parked = true;
	size_t i;
	char *cfg;

	camp_begin(&k, 3, false, 0, 0);
	run_begin(&k, &f, 21, false); /* random */
	for (i = 0; i < 20; i++)
		never_parked &= sync_point(&k, &f, i % 2).v != STRAT_PARK;
	tap_ok(never_parked, "random's run: no point is kept (noise decides)");
	cfg = run_config(&k, &f);
	tap_ok(strstr(cfg, "\"arm\":\"random\"") && strstr(cfg, "\"arm_strategy\":\"random\"") &&
		       strstr(cfg, "\"arm_access\":false") && strstr(cfg, "\"noise\":"),
	       "its configuration: arm, arm_strategy, arm_access and random's noise (%s)", cfg);
	free(cfg);
	run_end(&k, &f, 100000000, false);

	run_begin(&k, &f, 22, false); /* pct:3 */
	tap_is_int(sync_point(&k, &f, 0).v, STRAT_PARK, "pct:3's run: thread 0 is kept");
	tap_is_int(sync_point(&k, &f, 1).v, STRAT_PARK, "... and thread 1");
	strategy_all_parked(k.s, &f.r, &n);
	tap_ok(f.log.n == 1 && f.log.entries[0].action == DECLOG_RELEASE,
	       "all parked: pct releases one of them (logged)");
	cfg = run_config(&k, &f);
	tap_ok(strstr(cfg, "\"arm\":\"pct:3\"") && strstr(cfg, "\"arm_strategy\":\"pct:3\"") &&
		       strstr(cfg, "\"pct\":{\"depth\":3"),
	       "its configuration: the arm and pct's own keys (%s)", cfg);
	free(cfg);
	run_end(&k, &f, 100000000, false);
	camp_end(&k);
}

/* A run's reward from the campaign's counts, and its note. */
static void test_reward_and_note(void)
{
	struct camp k;
	struct frun f;
	char *arm, *summary;
	int64_t tasks = -1, warnings = -1;

	fake_tasks[0] = 10; /* before the first run: 10 sp tasks, 2 warnings */
	fake_warnings = 2;
	camp_begin(&k, 5, false, 0, 0);
	run_begin(&k, &f, 31, false); /* random */
	fake_tasks[0] = 14;
	fake_warnings = 3;
	run_end(&k, &f, 500000000, true); /* 0.5 s, failed */
	arm = nnotes ? json_get_string(notes[0], "arm") : NULL;
	summary = nnotes ? json_get_string(notes[0], "summary") : NULL;
	json_get_int(nnotes ? notes[0] : "{}", "tasks", &tasks);
	json_get_int(nnotes ? notes[0] : "{}", "warnings", &warnings);
	tap_ok(nnotes == 1 && arm && !strcmp(arm, "random"), "the run's note names its arm");
	tap_ok(tasks == 4 && warnings == 1, "... 4 new sp tasks, 1 new warning (%lld, %lld)",
	       (long long)tasks, (long long)warnings);
	tap_ok(nnotes && strstr(notes[0], "\"reward\":2028"),
	       "... reward (4 + 10 x 1 + 1000) / 0.5 s = 2028 (%s)", nnotes ? notes[0] : "-");
	tap_ok(summary && strstr(summary, "random found a failure"),
	       "... and a summary: which arm found the failure (%s)", summary ? summary : "-");
	free(arm);
	free(summary);
	run_begin(&k, &f, 32, false); /* pct:3: the warm-up's last */
	run_end(&k, &f, 500000000, false);
	summary = nnotes > 1 ? json_get_string(notes[1], "summary") : NULL;
	tap_ok(summary && strstr(summary, "warm-up done"), "the warm-up's last run says so (%s)",
	       summary ? summary : "-");
	free(summary);
	camp_end(&k);
}

/* A portfolio of the table's first n arms, all on, each begun `begun`
 * times, arm i with shares[i] of the runs (PF_FLOOR), or, shares NULL,
 * share 0: no floor, the bandit alone. */
static struct pf_arm_spec specs[PF_NARMS];

static void arms_fresh(struct portfolio *pf, size_t n, uint64_t seed, uint64_t begun,
		       const unsigned *shares)
{
	size_t i;

	memset(pf, 0, sizeof(*pf));
	rng_seed(&pf->rng, seed);
	for (i = 0; i < n; i++) {
		specs[i] = strat_portfolio_arms[i];
		specs[i].share = shares ? shares[i] : 0;
		pf->arm[i].spec = &specs[i];
		pf->arm[i].on = true;
		pf->arm[i].begun = begun;
	}
}

/* UCB1 on given values, hand-computed: value_a / top + 0.5 sqrt(2 ln n / n_a),
 * top the largest value of an arm with two runs or more; an arm with one
 * run scores 1 + its bonus. */
static void test_ucb1(void)
{
	struct portfolio pf;

	arms_fresh(&pf, 3, 1, 1, NULL);
	pf.arm[0].ended = 3;
	pf.arm[0].value = 4;
	pf.arm[1].ended = 2;
	pf.arm[1].value = 1;
	pf.arm[2].ended = 1; /* its warm-up run added nothing */
	pf.arm[2].value = 0;
	/* n = 6, top 4: 4/4 + 0.5 sqrt(2 ln 6 / 3) = 1.546467;
	 * 1/4 + 0.5 sqrt(2 ln 6 / 2) = 0.919283; one run: 1 + 0.5 sqrt(2 ln 6) = 1.946509 */
	tap_is_dbl(strat_portfolio_index(&pf, &pf.arm[0], 6), 1.546467, 1e-6,
		   "arm 0 (3 runs, the top value 4): index 1.546467");
	tap_is_dbl(strat_portfolio_index(&pf, &pf.arm[1], 6), 0.919283, 1e-6,
		   "arm 1 (2 runs, value 1 of top 4): index 0.919283");
	tap_is_dbl(strat_portfolio_index(&pf, &pf.arm[2], 6), 1.946509, 1e-6,
		   "arm 2 (its warm-up run only, value 0): scores as the top, index 1.946509");
	tap_is_int(strat_portfolio_choose(&pf), 2, "the largest index runs: arm 2's second run");
	pf.arm[2].ended = 2;	/* say its second run added nothing either */
	pf.arm[0].inflight = 1; /* arm 0 runs: n = 8, n_0 = 4 */
	/* 1 + 0.5 sqrt(2 ln 8 / 4) = 1.509833; 0.25 + 0.5 sqrt(2 ln 8 / 2) = 0.971013;
	 * 0 + 0.721013 */
	tap_is_int(strat_portfolio_choose(&pf), 0,
		   "arm 2 at 0 after two runs, arm 0 in flight (n = 8): arm 0 again, 1.510 "
		   "against 0.971");
	pf.arm[0].inflight = 0;
	pf.arm[2].ended = 1;
	strat_portfolio_reward(&pf, &pf.arm[2], 11);
	tap_is_dbl(pf.arm[2].value, 11.0, 1e-12,
		   "arm 2's second reward, 11, replaces its warm-up run's 0");
	tap_is_int(pf.arm[2].ended, 2, "... 2 runs of arm 2 ended");
	/* n = 7, top 11: 4/11 + 0.5 sqrt(2 ln 7 / 3) = 0.933126;
	 * 1/11 + 0.5 sqrt(2 ln 7 / 2) = 0.788389; 11/11 + 0.5 sqrt(2 ln 7 / 2) = 1.697479 */
	tap_is_dbl(strat_portfolio_index(&pf, &pf.arm[0], 7), 0.933126, 1e-6,
		   "arm 0 against the new top 11: index 0.933126");
	tap_is_int(strat_portfolio_choose(&pf), 2, "arm 2, the top now, runs");
	strat_portfolio_reward(&pf, &pf.arm[2], 1);
	tap_is_dbl(pf.arm[2].value, 8.0, 1e-12,
		   "its third, 1, moves 11 to 11 + 0.3 x (1 - 11) = 8");
	strat_portfolio_reward(&pf, &pf.arm[1], 11);
	tap_is_dbl(pf.arm[1].value, 4.0, 1e-12, "arm 1's third, 11, moves 1 to 1 + 0.3 x 10 = 4");
	pf.arm[2].begun = 0;
	tap_is_int(strat_portfolio_choose(&pf), 2, "an arm not begun yet runs first (warm-up)");
}

/* The six arms, the bandit alone (no floor), runs one after the other, arm
 * a's run number k (from 0) and the campaign's run i (from 0) earning
 * reward(a, k, i); each arm's runs in *runs, the arm of run i in arm_of[i]. */
static void campaign_of(size_t nruns, double (*reward)(size_t a, uint64_t k, size_t i),
			uint64_t runs[PF_NARMS_EVERY], size_t *arm_of)
{
	struct portfolio pf;
	size_t i, a, k;

	arms_fresh(&pf, PF_NARMS_EVERY, 5, 0, NULL);
	for (i = 0; i < nruns; i++) {
		a = strat_portfolio_choose(&pf);
		pf.arm[a].begun++;
		strat_portfolio_reward(&pf, &pf.arm[a], reward(a, pf.arm[a].ended, i));
		arm_of[i] = a;
	}
	for (k = 0; k < PF_NARMS_EVERY; k++)
		runs[k] = pf.arm[k].ended;
}

static double three_times(size_t a, uint64_t k, size_t i)
{
	return a == 0 ? 3.0 : 1.0;
}

/* The warm-up runs earn 30 times a later run (a metric still empty). */
static double warmup_inflated(size_t a, uint64_t k, size_t i)
{
	return (k ? 1.0 : 30.0) * three_times(a, k, i);
}

/* Arm 0 adds 3/s until run 60 of the campaign, then nothing. */
static double top_stops(size_t a, uint64_t k, size_t i)
{
	return a ? 1.0 : i < 60 ? 3.0 : 0.0;
}

/* The bandit alone (no floor: share 0), six arms, arm 0's rewards 3 times
 * the others' (3/s against 1/s). Each arm's value is its rewards'
 * (constant), top 3: arm 0's index is 1 + 0.5 sqrt(2 ln n / n_0),
 * another's 1/3 + 0.5 sqrt(2 ln n / n_o), an arm with one run
 * 1 + 0.5 sqrt(2 ln n). Runs 1-6: the warm-up, one each; runs 7-12: each
 * arm's second (one run beats two). Arm 0 then runs while its index is the
 * larger: at n = 34, n_0 = 24: 1 + 0.5 sqrt(2 ln 34 / 24) = 1.2714 <
 * 1/3 + 0.5 sqrt(2 ln 34 / 2) = 1.2718: runs 35-36 go to two others. So
 * after 36 runs arm 0 has 24, the others 12 among them. With the table's
 * shares (test_shares) the rewards move only the rounding's slack. */
static void test_concentrates(void)
{
	uint64_t runs[PF_NARMS_EVERY];
	size_t arm_of[120], i, late = 0;

	campaign_of(36, three_times, runs, arm_of);
	tap_is_int(runs[0], 24, "the bandit alone, rewards 3x the others': arm 0 gets 24 of 36");
	campaign_of(60, three_times, runs, arm_of);
	tap_ok(runs[0] >= 36, "... and %" PRIu64 " of 60 (>= 36)", runs[0]);
	/* The same rewards, each arm's warm-up run earning 30 times: the
	 * second run's reward replaces the first, and every arm's second run
	 * comes before the values count (runs 7-12), so the runs go as above. */
	campaign_of(36, warmup_inflated, runs, arm_of);
	tap_is_int(runs[0], 24, "warm-up rewards 30x the later ones: arm 0 still gets 24 of 36");
	/* Arm 0 stops adding at run 61: its value falls 3 -> 2.1 -> 1.47 ->
	 * 1.03 -> 0.72 with its next runs, below the others' 1 after 4; then
	 * its index stays below theirs. */
	campaign_of(120, top_stops, runs, arm_of);
	for (i = 60; i < 120; i++)
		late += arm_of[i] == 0;
	tap_ok(late <= 5, "arm 0 stops adding at run 61: %zu of runs 61-120 (<= 5)", late);
}

/* The bandit alone, two arms: A adds 10/s for its first 5 runs, then
 * nothing; B 2/s always. Once A stops, B takes most runs. */
static void test_share_moves(void)
{
	struct portfolio pf;
	size_t i, late_b = 0;
	unsigned a_runs = 0;

	arms_fresh(&pf, 2, 9, 0, NULL);
	for (i = 0; i < 80; i++) {
		size_t a = strat_portfolio_choose(&pf);
		double x = a == 1 ? 2.0 : a_runs < 5 ? 10.0 : 0.0;

		pf.arm[a].begun++;
		a_runs += a == 0;
		strat_portfolio_reward(&pf, &pf.arm[a], x);
		late_b += i >= 60 && a == 1;
	}
	tap_ok(late_b >= 15, "runs 61-80: B (still adding) gets %zu of 20, A (stopped) the rest",
	       late_b);
}

/* The shares (PF_FLOOR 1): with n runs begun, an arm below
 * n x share / (the shares of the arms on) runs next, whatever the indices;
 * of two below, the one further below (in runs), the first in order on a
 * tie. */
static void test_floor(void)
{
	static const unsigned shares[3] = { 4, 1, 1 };
	struct portfolio pf;

	arms_fresh(&pf, 3, 1, 1, shares);
	tap_is_int(strat_portfolio_arms_on(&pf), 3, "three arms on, shares 4, 1, 1");
	/* n = 30: floors 30 x 4 / 6 = 20, 30 / 6 = 5 and 5. */
	pf.arm[0].ended = 17;
	pf.arm[0].value = 1;
	pf.arm[1].ended = 8;
	pf.arm[1].value = 9;
	pf.arm[2].ended = 5;
	pf.arm[2].value = 0;
	tap_is_int(strat_portfolio_choose(&pf), 0,
		   "n = 30: arm 0 (17 runs < its floor 20) runs, though its index is lower");
	pf.arm[0].ended = 19;
	pf.arm[2].ended = 3;
	tap_is_int(strat_portfolio_choose(&pf), 2,
		   "n = 30, arm 0 1 below its floor 20, arm 2 2 below 5: arm 2, the furthest");
	pf.arm[1].ended = 7;
	pf.arm[2].ended = 4;
	tap_is_int(strat_portfolio_choose(&pf), 0,
		   "arm 0 and arm 2 both 1 below: the first in order, arm 0");
	/* Every arm at its floor (20, 5, 5): UCB1, top value 9:
	 * 1/9 + 0.5 sqrt(2 ln 30 / 20) = 0.403; 1 + 0.5 sqrt(2 ln 30 / 5) = 1.583;
	 * 0 + 0.5 sqrt(2 ln 30 / 5) = 0.583 -> arm 1. */
	pf.arm[0].ended = 20;
	pf.arm[1].ended = 5;
	pf.arm[2].ended = 5;
	tap_is_dbl(strat_portfolio_index(&pf, &pf.arm[1], 30), 1.583, 1e-3,
		   "every arm at its floor: arm 1's index 1.583");
	tap_is_int(strat_portfolio_choose(&pf), 1, "... the largest: arm 1 runs (the slack)");
	pf.arm[1].ended = 6; /* n = 31: floors 20, 5, 5: none below */
	pf.arm[1].value = 0;
	pf.arm[0].value = 9;
	tap_is_int(strat_portfolio_choose(&pf), 0, "n = 31, none below: UCB1 again (arm 0)");
}

/* The table's shares (pct:3 --access 4, random --access 2, the others 1),
 * n runs one after the other, one arm's rewards 100 times the others'.
 * The first run after the warm-up is pct:3 --access's (n = 6: its floor
 * 6 x 4 / 10 = 2, it has 1). UCB1 chooses only when every arm has its
 * floor, and the six floors' rounding leaves at most 5 runs to it (each
 * floor falls short of n x share / 10 by less than one): the favoured arm
 * ends with its share and those 5, each other arm with its share less
 * one; on the way an arm whose floor just rose waits while others whose
 * floors rose at the same n run (less than 3 runs below its share). */
static size_t shares_campaign(size_t favoured, size_t nruns, uint64_t runs[PF_NARMS_EVERY],
			      size_t *seventh)
{
	unsigned shares[PF_NARMS_EVERY];
	struct portfolio pf;
	size_t i, k, off = 0;

	for (k = 0; k < PF_NARMS_EVERY; k++)
		shares[k] = strat_portfolio_arms[k].share;
	arms_fresh(&pf, PF_NARMS_EVERY, 11, 0, shares);
	for (i = 1; i <= nruns; i++) {
		size_t a = strat_portfolio_choose(&pf);

		if (i == 7)
			*seventh = a;
		pf.arm[a].begun++;
		strat_portfolio_reward(&pf, &pf.arm[a], a == favoured ? 100.0 : 1.0);
		for (k = 0; k < PF_NARMS_EVERY && i >= PF_NARMS_EVERY; k++) {
			double want = (double)i * shares[k] / 10.0;

			if ((double)pf.arm[k].ended < want - 3 + 1e-9 ||
			    (double)pf.arm[k].ended > want + 5 + 1e-9)
				off++;
		}
	}
	for (k = 0; k < PF_NARMS_EVERY; k++)
		runs[k] = pf.arm[k].ended;
	return off;
}

static void test_shares(void)
{
	uint64_t runs[PF_NARMS_EVERY];
	size_t fav, seventh = PF_NARMS_EVERY, off;
	bool within = true;

	tap_ok(strat_portfolio_arms[0].share == 2 && strat_portfolio_arms[1].share == 1 &&
		       strat_portfolio_arms[2].share == 1 && strat_portfolio_arms[3].share == 4 &&
		       strat_portfolio_arms[4].share == 1 && strat_portfolio_arms[5].share == 1,
	       "the table's shares: random --access 2, map 1, random 1, pct:3 --access 4, "
	       "fpair 1, pct:3 1");
	for (fav = 0; fav < PF_NARMS_EVERY; fav++) {
		size_t k, wrong = 0;

		off = shares_campaign(fav, 600, runs, &seventh);
		for (k = 0; k < PF_NARMS_EVERY; k++)
			wrong += runs[k] != 60 * strat_portfolio_arms[k].share +
						    (k == fav ? 5 : 0) - (k == fav ? 0 : 1);
		if (off || seventh != 3 || wrong) {
			tap_diag("arm %zu favoured: %zu times off, run 7 to arm %zu, runs %" PRIu64
				 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64,
				 fav, off, seventh, runs[0], runs[1], runs[2], runs[3], runs[4],
				 runs[5]);
			within = false;
		}
	}
	tap_ok(within, "600 runs, each arm in turn earning 100 times the others: run 7 "
		       "pct:3 --access's, every arm within -3..+5 runs of n x share / 10 at every "
		       "n, at 600 the favoured arm 60 x share + 5, the others 60 x share - 1");
	shares_campaign(4, 100, runs, &seventh);
	tap_ok(runs[0] == 19 && runs[3] == 39 && runs[4] == 15,
	       "of 100 runs with fpair favoured: random --access %" PRIu64
	       ", pct:3 --access %" PRIu64 ", fpair %" PRIu64 " (19, 39, 15)",
	       runs[0], runs[3], runs[4]);
}

static void choices(uint64_t seed, char *buf, size_t len)
{
	struct camp k;
	size_t i, n = 0;

	camp_begin(&k, seed, false, 0, 0);
	for (i = 0; i < 24 && n + 2 < len; i++) {
		char *arm = next_arm(&k, false);

		buf[n++] = arm && !strcmp(arm, "random") ? 'r' : 'p';
		free(arm);
	}
	buf[n] = 0;
	camp_end(&k);
}

static void test_seed(void)
{
	char a[32], b[32], c[32];

	choices(42, a, sizeof(a));
	choices(42, b, sizeof(b));
	choices(43, c, sizeof(c));
	tap_is_str(a, b, "the same campaign seed, the same rewards: the same arms (%s)", a);
	tap_ok(strcmp(a, c) != 0, "another seed breaks the ties otherwise (%s)", c);
	tap_ok(!strncmp(a, "rp", 2) && !strncmp(c, "rp", 2), "both warm up random, then pct:3");
}

int main(void)
{
	tap_plan(100);
	test_registry();
	test_access_decision();
	test_warmup();
	test_signal();
	test_warmup_signal();
	test_tsa_arm();
	test_forwarding();
	test_reward_and_note();
	test_ucb1();
	test_share_moves();
	test_concentrates();
	test_floor();
	test_shares();
	test_seed();
	return tap_done();
}
