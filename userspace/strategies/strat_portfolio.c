// SPDX-License-Identifier: MIT
/*
 * Strategy portfolio (issue 30): the campaign's runs shared among several
 * strategies (the arms), adaptively. docs/strategies.md "portfolio".
 *
 * The arms are strategy instances made through the registry: `random` and
 * `pct:3` at synchronization points, and, when access probing is on,
 * `map`, `random` and `pct:3` at memory accesses too and `fpair` (the
 * strategies that found the bugs between plain accesses: docs/perf.md's
 * corpus table, issue 30's 18 programs), and `tsa` when the estimation
 * run showed a lock-order cycle (its estimation only from such a run).
 * Each run is one arm's: run_begin picks it and every callback of that
 * run goes to it; its per-run state stays in r->priv, ours in r->wrap, so
 * a callback the arm makes the loop run from inside another (r->drain)
 * reaches the same arm. run_begin also narrows the run's flags and serial
 * mode (strat_run.flags, sched_serial) to the arm's, which the loop reads
 * per run.
 *
 * Choice: a warm-up runs each arm once (pct:3 twice after a
 * condition-variable wait), in the order the estimation run's
 * synchronization picks (strat_portfolio_signal: a lock-order cycle,
 * threads left unjoined, a condition-variable wait, locks, none; none
 * keeps strat_portfolio_arms[]'s order); then the arm furthest below its share of the
 * runs runs (the shares in strat_portfolio_arms[], PF_FLOOR: the rewards
 * measure coverage, not bugs, and must not take the runs from the arm
 * that finds this program's bug); when every arm has its share, UCB1
 * (Auer et al. 2002) chooses over each arm's reward: a run's reward is what it
 * added per second of its run time, (new tasks of the arm's metric +
 * PF_W_WARNING x new race and lock-order warnings + PF_W_FAILURE if it
 * failed) / seconds, and an arm's value is the exponentially weighted mean
 * of its rewards from its second run on (weight PF_ALPHA on the newest;
 * the warm-up run's reward, inflated by a metric still empty, only until
 * the second ends). The index of arm a is
 * value_a / top + PF_EXPLORE x sqrt(2 ln n / n_a): top is the largest
 * value of an arm now (so the arm adding the most scores 1, and the
 * others their fraction of it; an arm with only its warm-up run ended
 * scores 1), n_a the arm's runs ended or in flight, n their sum; the
 * largest index runs, ties drawn with the campaign seed's generator.
 * With the floor at the whole share UCB1 only orders the runs within the
 * shares' rounding (at most one run per arm ahead of its share): the
 * offline simulation on the corpus's measured failure rates found that a
 * bandit free to follow the rewards (the floor at half an equal share,
 * 2026-11-29 until the shares) concentrated on the arm adding coverage and
 * took 2.3 to 6.8 times the best arm's median runs on 11 of 16 programs,
 * the shares with the warm-up's new order 2.1 to 3.0 times on 6
 * (docs/studies/portfolio-sim-2026-11-29.md; before that study the bandit's history:
 * docs/studies/portfolio-2026-11-29.md). Rewards depend on timing, so only the warm-up and the
 * choices from given rewards are deterministic.
 *
 * Access probing: the portfolio implies --access (its estimation run
 * measures the accesses per run); at campaign_begin it stays on when the
 * estimation run found a variable a write may race on, made at most
 * PF_ACCESS_MAX probed accesses and took at most PF_ACCESS_SLOWDOWN times
 * pct's observed run (no access probes), else the portfolio turns it off
 * (strat_campaign.access_off, one line on stderr) and runs the
 * synchronization arms only. --access given by the user keeps it on
 * (so does an option of access probing, e.g. --sites-include: cmd_run.c).
 *
 * Each run's configuration names its arm ("arm", "arm_strategy",
 * "arm_access") beside the arm's own keys, so replay and minimize re-make
 * it with the arm's ops (replay/replay.c); each run's note has the arm,
 * its reward and the arm's own note, and a "summary" line on the runs that
 * end the warm-up, fail, or complete PF_SUMMARY_EVERY runs.
 *
 * Runs at once (-j N): every arm keeps its per-run state per run
 * (STRAT_F_JOBS), and the portfolio's counts change only in run_begin and
 * run_end, which the loop calls under the campaign's lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coverage/thread_model.h"
#include "lib/array_size.h"
#include "lib/json.h"
#include "lib/rng.h"
#include "lib/xalloc.h"
#include "strategies/strat_portfolio.h"
#include "strategies/strategy.h"

/* Reward weights: a new warning is worth 10 tasks, a failure 1000. */
#define PF_W_WARNING	 10.0
#define PF_W_FAILURE	 1000.0
#define PF_ALPHA	 0.3  /* weight of an arm's newest reward in its value */
#define PF_EXPLORE	 0.5  /* the exploration bonus: half UCB1's */
#define PF_MIN_SECONDS	 0.01 /* a run's time, at least (no division by ~0) */
#define PF_SUMMARY_EVERY 25   /* an allocation line every so many runs */

extern const struct strategy_ops strat_noise_random_ops, strat_pct_ops, strat_fpair_ops,
	strat_map_ops, strat_tsa_ops;

/* The warm-up's order and the shares after it, from the offline
 * simulation on docs/perf.md's corpus table (tools/bench/portfolio_sim,
 * docs/studies/portfolio-sim-2026-11-29.md): the first runs go to the arms
 * that find a corpus bug in their first run where no other arm does
 * (random --access: race_no_lock; map: race_uaf, race_trylock_wrap; random:
 * race_split_cs, bad_lockorder), then pct:3 --access, fpair, pct:3. After
 * the warm-up pct:3 --access, the arm of race_flag_token and
 * race_one_of_10/20 (and 7 of issue 30's 18 programs), has 4 shares,
 * random --access (race_torn_pair, race_one_of_100) 2, the others 1 each.
 * Before 2026-11-29 the order was pct:3 --access, random --access, map,
 * fpair, random, pct:3 with equal shares and a floor at half of one
 * (docs/studies/portfolio-2026-11-29.md). tsa, share 1, runs only after
 * a lock-order cycle, first: it pauses every lock request and releases by
 * its rules, which interleave the requests of the cycle's locks
 * (bad_lockorder: tsa alone failed in 17 of its 21 runs; the portfolio
 * with tsa first in 1, 1, 7, 1, 1 runs over 5 seeds, with random first
 * in 5, 5, 7, 6, 5: docs/studies/portfolio-tsa-2026-12-01.md). */
const struct pf_arm_spec strat_portfolio_arms[PF_NARMS] = {
	{ "random --access", "random", &strat_noise_random_ops, NULL, true, "concurpairs", 2 },
	{ "map", "map", &strat_map_ops, NULL, true, "map", 1 },
	{ "random", "random", &strat_noise_random_ops, NULL, false, "sp", 1 },
	{ "pct:3 --access", "pct:3", &strat_pct_ops, "3", true, "concurpairs", 4 },
	{ "fpair", "fpair", &strat_fpair_ops, NULL, true, "fpair", 1 },
	{ "pct:3", "pct:3", &strat_pct_ops, "3", false, "sp", 1 },
	{ "tsa", "tsa", &strat_tsa_ops, NULL, false, "sp", 1, PF_SIG_CYCLE },
};

struct pf_run {
	size_t arm;
};

/* ---- the warm-up's order, from what the estimation run showed ----------------------- */

/* The first two runs decide most of the corpus programs whose best single
 * strategy needs one or two runs, and no order fixed in advance serves them
 * all (docs/studies/portfolio-blind-bound-2026-12-01.md): the estimation
 * run's synchronization picks it. Indexes of strat_portfolio_arms[]. */
enum { RA, MAP, RND, PA, FP, PCT, TSA };
static const size_t warm_default[] = { RA, MAP, RND, PA, FP, PCT };
/* tsa first, then random: the interleavings of lock requests (bad_lockorder). */
static const size_t warm_cycle[] = { TSA, RND, RA, MAP, FP, PCT, PA };
/* pct:3 first: its priorities hold main behind the workers (race_exit_unjoined). */
static const size_t warm_unjoined[] = { PCT, RA, MAP, PA, FP, RND };
/* pct:3 twice: the waiter and the signaller in each order (bad_lostwakeup). */
static const size_t warm_cond[] = { PCT, PCT, RA, MAP, FP, PA, RND };
/* fpair second: two critical sections of one thread (race_split_cs). */
static const size_t warm_locks[] = { RA, FP, MAP, PCT, PA, RND };
/* Access probing off: random and pct:3 only (and tsa after a cycle). */
static const size_t sync_random[] = { RND, PCT };
static const size_t sync_cycle[] = { TSA, RND, PCT };
static const size_t sync_pct[] = { PCT, RND };
static const size_t sync_cond[] = { PCT, PCT, RND };

#define ORDER(a) a, ARRAY_SIZE(a)
static const struct {
	const size_t *order; /* with access probing */
	size_t n;
	const size_t *sync; /* without: the synchronization arms only */
	size_t nsync;
	const char *text;
} warmups[PF_SIG__COUNT] = {
	[PF_SIG_UNKNOWN] = { ORDER(warm_default), ORDER(sync_random), "no estimation run" },
	[PF_SIG_NONE] = { ORDER(warm_default), ORDER(sync_random), "no lock" },
	[PF_SIG_LOCKS] = { ORDER(warm_locks), ORDER(sync_random), "locks" },
	[PF_SIG_COND] = { ORDER(warm_cond), ORDER(sync_cond), "a condition-variable wait" },
	[PF_SIG_UNJOINED] = { ORDER(warm_unjoined), ORDER(sync_pct),
			      "more threads created than joined" },
	[PF_SIG_CYCLE] = { ORDER(warm_cycle), ORDER(sync_cycle), "a lock-order cycle" },
};
#undef ORDER

size_t strat_portfolio_warmup_order(enum pf_signal sig, bool access, const size_t **order)
{
	if ((unsigned)sig >= PF_SIG__COUNT)
		sig = PF_SIG_UNKNOWN;
	*order = access ? warmups[sig].order : warmups[sig].sync;
	return access ? warmups[sig].n : warmups[sig].nsync;
}

/* An arm that steers accesses is on: the access arms' warm-up. */
static bool access_arms_on(const struct portfolio *pf)
{
	size_t i;

	for (i = 0; i < PF_NARMS; i++)
		if (pf->arm[i].on && pf->arm[i].spec->access)
			return true;
	return false;
}

/* This campaign's warm-up: the signal's order for the arms on. */
static size_t warmup(const struct portfolio *pf, const size_t **order)
{
	return strat_portfolio_warmup_order(pf->signal, access_arms_on(pf), order);
}

const char *strat_portfolio_signal_text(enum pf_signal sig)
{
	return (unsigned)sig < PF_SIG__COUNT ? warmups[sig].text : "?";
}

struct lock_edge {
	uint64_t from, to;
};

static int edge_cmp(const void *a, const void *b)
{
	const struct lock_edge *x = a, *y = b;

	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static size_t u64_index(const uint64_t *v, size_t n, uint64_t x)
{
	const uint64_t *p = bsearch(&x, v, n, sizeof(*v), u64_cmp);

	return (size_t)(p - v);
}

/* A blocking acquisition: the requests that can wait for good (no
 * trylock, no cond_wait's reacquisition, which waits for the mutex it
 * released itself), acquired or only requested: a run that deadlocked on
 * the cycle shows its last edges as requests that never returned. */
static bool blocking_acquire(const struct tm_action *a)
{
	return a->op == CS_OP_LOCK || a->op == CS_OP_RDLOCK || a->op == CS_OP_WRLOCK ||
	       a->op == CS_OP_SPIN_LOCK || thread_model_action_waits_for_good(a);
}

/* Is there a cycle among the edges (sorted, distinct)? Kahn's algorithm:
 * remove the locks no edge enters, with their edges, until none is left
 * to remove; a lock left over lies on a cycle or behind one. */
static bool edges_cycle(const struct lock_edge *e, size_t ne)
{
	uint64_t *node = xcalloc(2 * ne + 1, sizeof(*node));
	size_t *indeg, *queue, nn = 0, i, k, head = 0, tail = 0, done = 0;
	bool cycle;

	for (i = 0; i < ne; i++) {
		node[nn++] = e[i].from;
		node[nn++] = e[i].to;
	}
	qsort(node, nn, sizeof(*node), u64_cmp);
	for (i = 0, k = 0; i < nn; i++)
		if (!k || node[k - 1] != node[i])
			node[k++] = node[i];
	nn = k;
	indeg = xcalloc(nn + 1, sizeof(*indeg));
	queue = xcalloc(nn + 1, sizeof(*queue));
	for (i = 0; i < ne; i++)
		indeg[u64_index(node, nn, e[i].to)]++;
	for (i = 0; i < nn; i++)
		if (!indeg[i])
			queue[tail++] = i;
	while (head < tail) {
		struct lock_edge key = { node[queue[head++]], 0 };
		size_t lo = 0, hi = ne;

		done++;
		while (lo < hi) { /* the first edge from key.from */
			size_t mid = lo + (hi - lo) / 2;

			if (edge_cmp(&e[mid], &key) < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < ne && e[lo].from == key.from; lo++) {
			size_t t = u64_index(node, nn, e[lo].to);

			if (!--indeg[t])
				queue[tail++] = t;
		}
	}
	cycle = done < nn;
	free(node);
	free(indeg);
	free(queue);
	return cycle;
}

enum pf_signal strat_portfolio_signal(const struct thread_model *tm)
{
	struct lock_edge *e = NULL;
	size_t ne = 0, cap = 0, i, j, k;
	uint32_t l;
	bool cycle;

	if (!tm)
		return PF_SIG_UNKNOWN;
	for (i = 0; i < tm->nthreads; i++) {
		const struct tm_thread *t = &tm->threads[i];

		for (j = 0; j < t->nactions; j++) {
			const struct tm_action *a = &t->actions[j];
			uint64_t lock;

			if (!blocking_acquire(a))
				continue;
			lock = thread_model_action_lock(a->op, a->obj, a->arg);
			for (l = 0; l < a->nlockset && l < CS_LOCKSET_MAX; l++) {
				if (a->lockset[l] == lock)
					continue;
				if (ne == cap) {
					cap = cap ? 2 * cap : 64;
					e = xrealloc(e, cap * sizeof(*e));
				}
				e[ne].from = a->lockset[l];
				e[ne++].to = lock;
			}
		}
	}
	if (ne) {
		qsort(e, ne, sizeof(*e), edge_cmp);
		for (i = 0, k = 0; i < ne; i++)
			if (!k || edge_cmp(&e[k - 1], &e[i]))
				e[k++] = e[i];
		ne = k;
	}
	cycle = ne && edges_cycle(e, ne);
	free(e);
	if (cycle)
		return PF_SIG_CYCLE;
	if (tm->by_op[CS_OP_CREATE] > tm->by_op[CS_OP_JOIN])
		return PF_SIG_UNJOINED;
	if (tm->by_op[CS_OP_COND_WAIT])
		return PF_SIG_COND;
	if (tm->by_op[CS_OP_LOCK] || tm->by_op[CS_OP_TRYLOCK_OK] || tm->by_op[CS_OP_TRYLOCK_FAIL] ||
	    tm->by_op[CS_OP_RDLOCK] || tm->by_op[CS_OP_WRLOCK] || tm->by_op[CS_OP_SPIN_LOCK])
		return PF_SIG_LOCKS;
	return PF_SIG_NONE;
}

static int pf_init(struct strategy *s, const char *opts, char *err, size_t errlen)
{
	struct portfolio *pf;
	unsigned jobs = STRAT_F_JOBS;
	size_t i;

	if (opts) {
		snprintf(err, errlen, "portfolio takes no options (its arms: docs/strategies.md)");
		return -EINVAL;
	}
	pf = xcalloc(1, sizeof(*pf));
	s->priv = pf;
	for (i = 0; i < PF_NARMS; i++) {
		struct pf_arm *a = &pf->arm[i];
		int ret =
			strategy_make(strat_portfolio_arms[i].ops, strat_portfolio_arms[i].strategy,
				      strat_portfolio_arms[i].opts, &a->s, err, errlen);

		if (ret)
			return ret;
		a->spec = &strat_portfolio_arms[i];
		a->on = !a->spec->access && !a->spec->only; /* until campaign_begin decides */
		jobs &= a->s->flags;
	}
	s->flags = STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ACCESS_POINTS | STRAT_F_ACCESS |
		   STRAT_F_ESTIMATE | STRAT_F_SERIAL | STRAT_F_PICKS | jobs;
	s->sched_serial = CS_SERIAL_OFF; /* each run gets its arm's */
	return 0;
}

static void pf_destroy(struct strategy *s)
{
	struct portfolio *pf = s->priv;
	size_t i;

	if (!pf)
		return;
	for (i = 0; i < PF_NARMS; i++)
		strategy_free(pf->arm[i].s);
	free(pf);
	s->priv = NULL;
}

static struct pf_arm *run_arm(struct strategy *s, struct strat_run *r)
{
	struct portfolio *pf = s->priv;
	struct pf_run *pr = r->wrap;

	return &pf->arm[pr->arm];
}

/* ---- the arms' view of the campaign: their notes captured ------------------------------ */

/* The campaign an arm sees: the loop's, but its note comes to us. */
struct pf_view {
	struct strat_campaign *c;
	char *note;
};

static int64_t view_site_of(void *ctx, const char *key)
{
	struct pf_view *v = ctx;

	return v->c->site_of(v->c->ctx, key);
}

static int view_add_requirement(void *ctx, const char *metric, const char *key, const char *source)
{
	struct pf_view *v = ctx;

	return v->c->add_requirement(v->c->ctx, metric, key, source);
}

static int view_note(void *ctx, const char *json)
{
	struct pf_view *v = ctx;

	free(v->note);
	v->note = xstrdup(json);
	return 0;
}

static int view_for_each_task(void *ctx, const char *metric, int (*fn)(const char *key, void *arg),
			      void *arg)
{
	struct pf_view *v = ctx;

	return v->c->for_each_task(v->c->ctx, metric, fn, arg);
}

static int64_t view_count_tasks(void *ctx, const char *metric)
{
	struct pf_view *v = ctx;

	return v->c->count_tasks ? v->c->count_tasks(v->c->ctx, metric) : 0;
}

static int64_t view_count_warnings(void *ctx)
{
	struct pf_view *v = ctx;

	return v->c->count_warnings ? v->c->count_warnings(v->c->ctx) : 0;
}

/* The campaign as arm a sees it: a synchronization arm sees no accesses
 * (pct's first k leaves the estimation's accesses out). */
static struct strat_campaign arm_view(const struct pf_arm *a, struct strat_campaign *c,
				      struct pf_view *v)
{
	struct strat_campaign ac = *c;

	v->c = c;
	v->note = NULL;
	ac.ctx = v;
	ac.site_of = c->site_of ? view_site_of : NULL;
	ac.add_requirement = c->add_requirement ? view_add_requirement : NULL;
	ac.note = view_note;
	ac.for_each_task = c->for_each_task ? view_for_each_task : NULL;
	ac.count_tasks = view_count_tasks;
	ac.count_warnings = view_count_warnings;
	if (!a->spec->access) {
		ac.est_accesses = 0;
		ac.contended_vars = 0;
		ac.cross_vars = 0;
		ac.est_cross_accesses = 0;
		ac.cross_var_ids = NULL;
	}
	return ac;
}

/* ---- campaign ------------------------------------------------------------------------ */

static int pf_estimate(struct strategy *s, struct strat_campaign *c,
		       const struct strat_observation *obs)
{
	struct portfolio *pf = s->priv;
	enum pf_signal sig = strat_portfolio_signal(obs->tm);
	size_t i;
	int err = 0;

	pf->plain_ns = (pf->plain_ns * pf->observed + obs->duration_ns) / (pf->observed + 1);
	pf->observed++;
	if (sig > pf->signal)
		pf->signal = sig;
	/* An arm of one signal estimates from the runs that show it only
	 * (tsa's pairs: no cost on the programs it does not run on). */
	for (i = 0; i < PF_NARMS && !err; i++)
		if (strategy_has(pf->arm[i].s, STRAT_F_ESTIMATE) &&
		    (!pf->arm[i].spec->only || pf->arm[i].spec->only == sig))
			err = strategy_estimate(pf->arm[i].s, c, obs);
	return err;
}

bool strat_portfolio_access_affordable(const struct strat_campaign *c, uint64_t plain_ns,
				       const char **why)
{
	if (c->access_asked) {
		*why = "asked for (--access)";
		return true;
	}
	if (!c->contended_vars) {
		*why = "the estimation run found no variable a write may race on";
		return false;
	}
	if (c->est_accesses > PF_ACCESS_MAX) {
		*why = "the estimation run made more than " PF_ACCESS_MAX_TEXT " probed accesses";
		return false;
	}
	/* The time rule counts only a slowdown the probes can explain: a
	 * run that was slow for other reasons (a loaded machine, the first
	 * run after a VM's boot) with a few hundred probed hits says
	 * nothing about the probes' cost. */
	if (plain_ns && c->est_access_ns > PF_ACCESS_SMALL_NS &&
	    c->est_access_ns > PF_ACCESS_SLOWDOWN * plain_ns &&
	    (c->est_accesses + c->est_dropped) * PF_HIT_NS >= (c->est_access_ns - plain_ns) / 2) {
		*why = "the estimation run with its accesses probed took more than 20 times the "
		       "run without";
		return false;
	}
	*why = "affordable";
	return true;
}

static void arm_names(const struct portfolio *pf, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = 0;
	for (i = 0; i < PF_NARMS; i++)
		if (pf->arm[i].on && n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
					      pf->arm[i].spec->name);
}

/* The warm-up's arms in order: "pct:3, random --access, ...". */
static void warm_names(const struct portfolio *pf, char *buf, size_t len)
{
	const size_t *order;
	size_t j, n = 0, nw = warmup(pf, &order);

	buf[0] = 0;
	for (j = 0; j < nw; j++)
		if (pf->arm[order[j]].on && n < len)
			n += (size_t)snprintf(buf + n, len - n, "%s%s", n ? ", " : "",
					      pf->arm[order[j]].spec->name);
}

static void count_known(struct portfolio *pf, struct strat_campaign *c)
{
	size_t i;

	for (i = 0; i < PF_NARMS; i++)
		pf->arm[i].count =
			c->count_tasks ? c->count_tasks(c->ctx, pf->arm[i].spec->metric) : 0;
	pf->warnings = c->count_warnings ? c->count_warnings(c->ctx) : 0;
}

/* Each arm in the campaign: its campaign_begin (quiet: the portfolio
 * says one line for all) or its campaign_end. */
static int arms_campaign(struct portfolio *pf, struct strat_campaign *c, bool begin)
{
	size_t i;
	int err = 0;

	for (i = 0; i < PF_NARMS && !err; i++) {
		struct pf_arm *a = &pf->arm[i];
		struct pf_view v;
		struct strat_campaign ac;

		if (!a->on)
			continue;
		ac = arm_view(a, c, &v);
		if (begin) {
			ac.quiet = true;
			err = strategy_campaign_begin(a->s, &ac);
		} else {
			strategy_campaign_end(a->s, &ac);
		}
		free(v.note);
	}
	return err;
}

static int pf_campaign_begin(struct strategy *s, struct strat_campaign *c)
{
	struct portfolio *pf = s->priv;
	const char *why;
	char names[160], warm[200];
	size_t i;
	int err = 0;

	pf->access = strat_portfolio_access_affordable(c, pf->plain_ns, &why);
	c->access_off = !pf->access;
	rng_seed(&pf->rng, c->seed ^ 0x706f7274666fULL);
	for (i = 0; i < PF_NARMS; i++)
		pf->arm[i].on = (!pf->arm[i].spec->access || pf->access) &&
				(!pf->arm[i].spec->only || pf->arm[i].spec->only == pf->signal);
	if (!c->quiet && !pf->access)
		fprintf(stderr,
			"concsched: portfolio: access probing off: %s (%" PRIu64
			" accesses, %zu contended variables, %.2f s against %.2f s); the arms "
			"steer synchronization points only (--access keeps it on)\n",
			why, c->est_accesses, c->contended_vars, c->est_access_ns / 1e9,
			pf->plain_ns / 1e9);
	err = arms_campaign(pf, c, true);
	count_known(pf, c);
	arm_names(pf, names, sizeof(names));
	warm_names(pf, warm, sizeof(warm));
	if (!c->quiet)
		fprintf(stderr,
			"concsched: portfolio: arms %s; warm-up %s (the estimation run: %s), then "
			"each arm its share of the runs, UCB1 on new tasks, warnings and failures "
			"per second within them\n",
			names, warm, strat_portfolio_signal_text(pf->signal));
	return err;
}

static void pf_campaign_end(struct strategy *s, struct strat_campaign *c)
{
	struct portfolio *pf = s->priv;
	size_t i;

	arms_campaign(pf, c, false);
	if (c->quiet || !pf->ended)
		return;
	for (i = 0; i < PF_NARMS; i++) {
		const struct pf_arm *a = &pf->arm[i];

		if (!a->on)
			continue;
		fprintf(stderr,
			"concsched: portfolio: %-15s %4" PRIu64 " runs, %7.1f s, %" PRIu64
			" new %s tasks, %" PRIu64 " new warnings, %" PRIu64
			" failures; value %.3g/s\n",
			a->spec->name, a->ended, a->seconds, a->tasks, a->spec->metric, a->warnings,
			a->failures, a->value);
	}
}

/* ---- choice ---------------------------------------------------------------------------- */

/* The largest value of an arm in the campaign now, among the arms whose
 * value rests on more than their warm-up run. */
static double top_value(const struct portfolio *pf)
{
	double top = 0;
	size_t i;

	for (i = 0; i < PF_NARMS; i++)
		if (pf->arm[i].on && pf->arm[i].ended >= 2 && pf->arm[i].value > top)
			top = pf->arm[i].value;
	return top;
}

/* The UCB1 index of arm a among n runs (ended or in flight). An arm with
 * only its warm-up run ended scores as the top one: that run's reward
 * says little (strat_portfolio_reward), and the warm-up's order decides
 * it (the first arm of a shared metric takes its tasks, the next earns
 * 0), so each arm runs a second time before the values part them. */
double strat_portfolio_index(const struct portfolio *pf, const struct pf_arm *a, uint64_t n)
{
	uint64_t na = a->ended + a->inflight;
	double top = top_value(pf);
	double v = a->ended < 2 ? 1 : top > 0 ? a->value / top : 0;

	if (!na)
		return INFINITY;
	return v + PF_EXPLORE * sqrt(2.0 * log((double)(n > 1 ? n : 1)) / (double)na);
}

/* The arm furthest below its floor, n x share / (PF_FLOOR x shares), in
 * runs (the first in order on a tie), or PF_NARMS when none is below. */
static size_t starved_arm(const struct portfolio *pf, uint64_t n)
{
	uint64_t shares = 0, floor_runs, na, best_gap = 0;
	size_t i, starved = PF_NARMS;

	for (i = 0; i < PF_NARMS; i++)
		if (pf->arm[i].on)
			shares += pf->arm[i].spec->share;
	for (i = 0; i < PF_NARMS; i++) {
		const struct pf_arm *a = &pf->arm[i];

		if (!a->on || !a->spec->share)
			continue;
		floor_runs = n * a->spec->share / (PF_FLOOR * shares);
		na = a->ended + a->inflight;
		if (na < floor_runs && floor_runs - na > best_gap) {
			starved = i;
			best_gap = floor_runs - na;
		}
	}
	return starved;
}

size_t strat_portfolio_argmax(struct portfolio *pf, const double *x)
{
	size_t i, k = 0, ntie = 0, tie[PF_NARMS];
	double best = -INFINITY;

	for (i = 0; i < PF_NARMS; i++) {
		if (!pf->arm[i].on)
			continue;
		if (x[i] > best + 1e-12) {
			best = x[i];
			ntie = 0;
		}
		if (x[i] > best - 1e-12)
			tie[ntie++] = i;
	}
	if (ntie > 1)
		k = (size_t)rng_below(&pf->rng, ntie);
	return tie[k];
}

size_t strat_portfolio_choose(struct portfolio *pf)
{
	const size_t *order;
	size_t i, j, starved, nw = warmup(pf, &order);
	uint64_t n = 0, asked[PF_NARMS] = { 0 };
	double x[PF_NARMS];

	/* Warm-up: the signal's order (every arm once, one maybe twice). */
	for (j = 0; j < nw; j++) {
		i = order[j];
		if (!pf->arm[i].on)
			continue;
		if (pf->arm[i].begun <= asked[i])
			return i;
		asked[i]++;
	}
	for (i = 0; i < PF_NARMS; i++)
		if (pf->arm[i].on)
			n += pf->arm[i].ended + pf->arm[i].inflight;
	starved = starved_arm(pf, n);
	if (starved < PF_NARMS)
		return starved;
	for (i = 0; i < PF_NARMS; i++)
		x[i] = pf->arm[i].on ? strat_portfolio_index(pf, &pf->arm[i], n) : -INFINITY;
	return strat_portfolio_argmax(pf, x);
}

/* ---- runs ---------------------------------------------------------------------------- */

static void pf_run_begin(struct strategy *s, struct strat_run *r)
{
	struct portfolio *pf = s->priv;
	struct pf_run *pr = xcalloc(1, sizeof(*pr));
	struct pf_arm *a;

	pr->arm = strat_portfolio_choose(pf);
	a = &pf->arm[pr->arm];
	a->begun++;
	a->inflight++;
	pf->begun++;
	r->wrap = pr;
	/* The loop steers this run as the arm's own run. */
	r->flags = a->s->flags;
	r->sched_serial = a->s->sched_serial;
	if (!a->spec->access) {
		r->flags &= ~(unsigned)STRAT_F_ACCESS_POINTS;
		r->access_points = false;
		r->no_access_probes = true;
	}
	strategy_run_begin(a->s, r);
}

static void pf_config(struct strategy *s, struct strat_run *r, struct json *j)
{
	struct pf_arm *a = run_arm(s, r);

	json_kv_str(j, "arm", a->spec->name);
	json_kv_str(j, "arm_strategy", a->spec->strategy);
	json_kv_bool(j, "arm_access", a->spec->access);
	strategy_config_json(a->s, r, j);
}

/* What the run added (the campaign's counts against the last run's end),
 * per second: its reward. */
static double run_reward(struct portfolio *pf, struct pf_arm *a, struct strat_campaign *c,
			 const struct strat_outcome *o, int64_t *tasks, int64_t *warnings)
{
	int64_t before = a->count, w = pf->warnings;
	double secs = o->duration_ns / 1e9;

	count_known(pf, c);
	*tasks = a->count > before ? a->count - before : 0;
	*warnings = pf->warnings > w ? pf->warnings - w : 0;
	if (secs < PF_MIN_SECONDS)
		secs = PF_MIN_SECONDS;
	a->seconds += secs;
	return ((double)*tasks + PF_W_WARNING * (double)*warnings +
		(o->failed ? PF_W_FAILURE : 0)) /
	       secs;
}

/* An arm's first run (its warm-up run) finds new whatever the estimation
 * and the arms before it left: every task of a metric of its own (map,
 * fpair), every task the first arm of a metric reaches. Its reward says
 * little of the runs to come, so the second run's replaces it, and the
 * weighted mean starts there. */
void strat_portfolio_reward(struct portfolio *pf, struct pf_arm *a, double x)
{
	a->value = a->ended > 1 ? a->value + PF_ALPHA * (x - a->value) : x;
	a->ended++;
	pf->ended++;
}

/* The allocation so far: "random 4, pct:3 3 (value 1.2/s, 0.4/s)". */
static void shares(const struct portfolio *pf, char *buf, size_t len)
{
	size_t i, n = 0;

	buf[0] = 0;
	for (i = 0; i < PF_NARMS && n < len; i++)
		if (pf->arm[i].on)
			n += (size_t)snprintf(buf + n, len - n, "%s%s %" PRIu64 " (%.3g/s)",
					      n ? ", " : "", pf->arm[i].spec->name,
					      pf->arm[i].ended, pf->arm[i].value);
}

size_t strat_portfolio_arms_on(const struct portfolio *pf)
{
	size_t i, n = 0;

	for (i = 0; i < PF_NARMS; i++)
		n += pf->arm[i].on;
	return n;
}

size_t strat_portfolio_warmup_len(const struct portfolio *pf)
{
	const size_t *order;
	size_t j, n = 0, nw = warmup(pf, &order);

	for (j = 0; j < nw; j++)
		n += pf->arm[order[j]].on;
	return n;
}

/* The run's summary line, or "" when it has none. */
static void run_summary(const struct portfolio *pf, const struct pf_arm *a,
			struct strat_campaign *c, const struct strat_outcome *o, char *buf,
			size_t len)
{
	char sh[400];

	buf[0] = 0;
	shares(pf, sh, sizeof(sh));
	if (o->failed)
		snprintf(buf, len, "portfolio run %" PRIu64 ": %s found a failure; runs so far %s",
			 c->nruns, a->spec->name, sh);
	else if (pf->ended == strat_portfolio_warmup_len(pf))
		snprintf(buf, len, "portfolio run %" PRIu64 ": warm-up done (%s): %s", c->nruns,
			 strat_portfolio_signal_text(pf->signal), sh);
	else if (pf->ended % PF_SUMMARY_EVERY == 0)
		snprintf(buf, len, "portfolio run %" PRIu64 ": %s", c->nruns, sh);
}

static void note_run(struct portfolio *pf, struct pf_arm *a, struct strat_campaign *c,
		     const struct strat_outcome *o, double x, int64_t tasks, int64_t warnings,
		     const char *arm_note)
{
	struct json_mem m;
	char summary[600];
	char *text;

	if (!c->note)
		return;
	run_summary(pf, a, c, o, summary, sizeof(summary));
	json_mem_open(&m);
	json_obj_begin(&m.j, NULL);
	json_kv_str(&m.j, "arm", a->spec->name);
	json_kv_dbl(&m.j, "reward", x);
	json_kv_int(&m.j, "tasks", tasks);
	json_kv_int(&m.j, "warnings", warnings);
	json_kv_dbl(&m.j, "value", a->value);
	if (arm_note)
		json_kv_str(&m.j, "arm_note", arm_note);
	if (summary[0])
		json_kv_str(&m.j, "summary", summary);
	json_obj_end(&m.j);
	text = json_mem_close(&m);
	c->note(c->ctx, text);
	free(text);
}

static void pf_run_end(struct strategy *s, struct strat_run *r, struct strat_campaign *c,
		       const struct strat_outcome *o)
{
	struct portfolio *pf = s->priv;
	struct pf_run *pr = r->wrap;
	struct pf_arm *a;
	struct pf_view v;
	struct strat_campaign ac;
	int64_t tasks, warnings;
	double x;

	if (!pr)
		return;
	a = &pf->arm[pr->arm];
	ac = arm_view(a, c, &v);
	strategy_run_end(a->s, r, &ac, o);
	a->inflight--;
	if (o->ran) {
		x = run_reward(pf, a, c, o, &tasks, &warnings);
		a->tasks += (uint64_t)tasks;
		a->warnings += (uint64_t)warnings;
		a->failures += o->failed;
		strat_portfolio_reward(pf, a, x);
		note_run(pf, a, c, o, x, tasks, warnings, v.note);
	}
	free(v.note);
	free(pr);
	r->wrap = NULL;
}

/* ---- the run's callbacks: the arm's ---------------------------------------------------- */

static void pf_thread_start(struct strategy *s, struct strat_run *r, struct strat_thread *t)
{
	strategy_thread_start(run_arm(s, r)->s, r, t);
}

static void pf_event(struct strategy *s, struct strat_run *r, const struct cs_event *e,
		     struct strat_thread *t)
{
	strategy_event(run_arm(s, r)->s, r, e, t);
}

static void pf_executed(struct strategy *s, struct strat_run *r, const struct cov_event *ev)
{
	strategy_executed(run_arm(s, r)->s, r, ev);
}

static void pf_point(struct strategy *s, struct strat_run *r, const struct strat_point *p,
		     struct strat_decision *d)
{
	strategy_point(run_arm(s, r)->s, r, p, d);
}

static void pf_all_parked(struct strategy *s, struct strat_run *r, const struct policy_note *n)
{
	strategy_all_parked(run_arm(s, r)->s, r, n);
}

static void pf_tick(struct strategy *s, struct strat_run *r)
{
	strategy_tick(run_arm(s, r)->s, r);
}

static int pf_poll_ms(struct strategy *s, struct strat_run *r, int ms)
{
	return strategy_poll_ms(run_arm(s, r)->s, r, ms);
}

const struct strategy_ops strat_portfolio_ops = {
	.name = "portfolio",
	.summary = "each run one of random --access, map, random, pct:3 --access, fpair and "
		   "pct:3 (the four that steer accesses when the estimation run found a "
		   "variable to race on, made at most 100,000 probed accesses and took at most "
		   "20x the run without): a warm-up run each, in an order the estimation run's "
		   "synchronization picks (a lock-order cycle: random first; threads left "
		   "unjoined: pct:3 first; a condition-variable wait: pct:3 twice; locks: random "
		   "--access, fpair, map; none: the order above), then each arm its "
		   "share of the runs (pct:3 --access 4, random --access 2, the others 1), a "
		   "bandit (UCB1) on what a run adds per second within them; the progress line, "
		   "failures and report name the arm",
	.flags = STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ACCESS_POINTS | STRAT_F_ACCESS |
		 STRAT_F_ESTIMATE | STRAT_F_SERIAL | STRAT_F_PICKS | STRAT_F_JOBS,
	.replay = STRAT_REPLAY_ORDER,
	.init = pf_init,
	.destroy = pf_destroy,
	.estimate = pf_estimate,
	.campaign_begin = pf_campaign_begin,
	.campaign_end = pf_campaign_end,
	.run_begin = pf_run_begin,
	.config_json = pf_config,
	.run_end = pf_run_end,
	.thread_start = pf_thread_start,
	.event = pf_event,
	.executed = pf_executed,
	.point = pf_point,
	.all_parked = pf_all_parked,
	.tick = pf_tick,
	.poll_ms = pf_poll_ms,
};
