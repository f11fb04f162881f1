// SPDX-License-Identifier: MIT
/*
 * Seed 000 (TSA): the Algorithm 1 scheduling controller as an event-driven
 * engine (the estimation phase: tsa_estimate.c). See tsa.h for the
 * interface and docs/strategies.md for the choices the paper leaves open.
 */
#include "strategies/tsa.h"

#include <errno.h>
#include <string.h>

#include "strategies/tsa_map.h"
#include "lib/rng.h"
#include "lib/futex_lock.h"
#include "lib/xalloc.h"

/* ---- Algorithm 1 engine --------------------------------------------------- */

enum tsa_tstate {
	TSA_T_UNKNOWN = 0,
	TSA_T_RUNNING, /* enabled, not paused                              */
	TSA_T_PAUSED,  /* enabled, held by us before a lock action         */
	TSA_T_BLOCKED, /* not enabled: waiting in the kernel, sleeping     */
	TSA_T_EXITED,
};

struct tsa_tstate_rec {
	uint8_t state;
	bool pending;  /* a lock action is pending (before, no after yet) */
	uint32_t site; /* its site and lock                               */
	uint64_t lock;
	uint64_t since; /* engine clock when it became pending            */
};

struct tsa_lockrec {
	bool has_last; /* loc_last(m) defined in this run */
	bool held;
	uint32_t last;
	uint32_t holder;
};

/*
 * The coverage every run of a campaign shares (seed 000's covered and
 * uncovered sets): the campaign's engine owns it and each run's engine
 * (tsa_engine_run_new) points to it. Runs steered at once (run -j N) read
 * and write it from their own workers, and a pair one run covers must
 * change what the others pause at once, so every access during a run
 * holds `lock`: a futex, not a pthread mutex, because concsched's own
 * pthread calls would trap into the target's libc uprobes (lib/futex_lock.h).
 */
struct tsa_cover {
	struct futex_lock lock;
	struct tsa_pairset pairs;
	struct u64map site_uncovered; /* site -> num_cov_req               */
	uint64_t n_estimated, n_uncovered, n_covered, n_covered_estimated;
	/* Sites whose uncovered count reached 0, in that order. Append-only:
	 * each engine reads on from its own cursor (retired_seen), so every
	 * run learns of every retirement, whichever run covered the pair. */
	uint32_t *retired;
	size_t nretired, retcap;
};

struct tsa_engine {
	struct tsa_cover *cov;	     /* the campaign's coverage            */
	struct tsa_engine *campaign; /* a run's engine: the campaign's one;
				      * NULL for the campaign's own        */
	bool heuristic;
	struct cs_rng rng;

	/* Per run: touched by the run's own worker only. */
	struct tsa_tstate_rec *threads;
	uint32_t nthreads;
	struct u64map lock_index; /* lock id -> index into locks           */
	struct tsa_lockrec *locks;
	size_t nlocks, lockcap;
	uint64_t clock;
	struct tsa_stats stats; /* a run's engine: this run's, until run_end */
	size_t retired_seen;	/* how much of cov->retired was taken      */
};

const char *tsa_rule_name(enum tsa_rule r)
{
	static const char *const names[TSA_RULE__COUNT] = {
		[TSA_RULE_NONE] = "none", [TSA_RULE_1] = "rule1",	[TSA_RULE_2] = "rule2",
		[TSA_RULE_3] = "rule3",	  [TSA_RULE_RANDOM] = "random",
	};

	return (unsigned)r < TSA_RULE__COUNT ? names[r] : "?";
}

/* The helpers named *_locked and the site counting below run with
 * cov->lock held (or before any run engine exists). */

static void site_retire(struct tsa_cover *cov, uint32_t site)
{
	if (cov->nretired == cov->retcap) {
		cov->retcap = cov->retcap ? cov->retcap * 2 : 32;
		cov->retired = xrealloc(cov->retired, cov->retcap * sizeof(*cov->retired));
	}
	cov->retired[cov->nretired++] = site;
}

static void site_count_one(struct tsa_cover *cov, uint32_t site, int64_t d)
{
	uint64_t *n = u64map_ref(&cov->site_uncovered, site);

	*n += (uint64_t)d;
	if (d < 0 && !*n)
		site_retire(cov, site);
}

/* num_cov_req bookkeeping: <x,y> mentions x and y (once if x == y). */
static void site_count_add(struct tsa_cover *cov, uint32_t x, uint32_t y, int64_t d)
{
	site_count_one(cov, x, d);
	if (y != x)
		site_count_one(cov, y, d);
}

static uint32_t site_uncovered_locked(const struct tsa_cover *cov, uint32_t site)
{
	uint64_t *n = u64map_find(&cov->site_uncovered, site);

	return n ? (uint32_t)*n : 0;
}

static bool uncovered_locked(const struct tsa_cover *cov, uint32_t x, uint32_t y)
{
	return (tsa_pairset_get(&cov->pairs, x, y) & (TSA_PAIR_ESTIMATED | TSA_PAIR_COVERED)) ==
	       TSA_PAIR_ESTIMATED;
}

struct tsa_engine *tsa_engine_new(const struct tsa_pairset *estimated, bool heuristic)
{
	struct tsa_engine *e = xcalloc(1, sizeof(*e));
	struct tsa_cover *cov = xcalloc(1, sizeof(*cov));
	size_t pos = 0;
	uint32_t x, y;
	unsigned f;

	tsa_pairset_init(&cov->pairs);
	e->cov = cov;
	e->heuristic = heuristic;
	while (estimated && tsa_pairset_next(estimated, &pos, &x, &y, &f)) {
		if (!(f & TSA_PAIR_ESTIMATED))
			continue;
		if (tsa_pairset_add(&cov->pairs, x, y, TSA_PAIR_ESTIMATED))
			continue;
		cov->n_estimated++;
		cov->n_uncovered++;
		site_count_add(cov, x, y, 1);
	}
	rng_seed(&e->rng, 0);
	return e;
}

struct tsa_engine *tsa_engine_run_new(struct tsa_engine *campaign)
{
	struct tsa_engine *e = xcalloc(1, sizeof(*e));

	if (campaign->campaign)
		campaign = campaign->campaign;
	e->cov = campaign->cov;
	e->campaign = campaign;
	e->heuristic = campaign->heuristic;
	rng_seed(&e->rng, 0);
	/* Sites retired before now are in no tsa_pause_sites list the run
	 * will ask for: it has nothing to drop for them. */
	futex_lock_acquire(&e->cov->lock);
	e->retired_seen = e->cov->nretired;
	futex_lock_release(&e->cov->lock);
	return e;
}

void tsa_engine_free(struct tsa_engine *e)
{
	if (!e)
		return;
	if (!e->campaign) {
		tsa_pairset_free(&e->cov->pairs);
		u64map_free(&e->cov->site_uncovered);
		free(e->cov->retired);
		free(e->cov);
	}
	u64map_free(&e->lock_index);
	free(e->threads);
	free(e->locks);
	free(e);
}

/* Line 40: move <x,y> from uncovered to covered (or just record it). */
static void cover_pair(struct tsa_engine *e, uint32_t x, uint32_t y)
{
	struct tsa_cover *cov = e->cov;
	unsigned old;

	futex_lock_acquire(&cov->lock);
	old = tsa_pairset_add(&cov->pairs, x, y, TSA_PAIR_COVERED);
	if (!(old & TSA_PAIR_COVERED)) {
		cov->n_covered++;
		if (old & TSA_PAIR_ESTIMATED) {
			cov->n_covered_estimated++;
			cov->n_uncovered--;
			/* Under the lock too: the campaign's own stats are
			 * shared when it is given coverage during runs. */
			e->stats.newly_covered++;
			site_count_add(cov, x, y, -1);
		}
	}
	futex_lock_release(&cov->lock);
}

void tsa_engine_mark_covered(struct tsa_engine *e, uint32_t x, uint32_t y)
{
	cover_pair(e, x, y);
}

void tsa_run_begin(struct tsa_engine *e, uint64_t seed)
{
	free(e->threads);
	e->threads = NULL;
	e->nthreads = 0;
	u64map_clear(&e->lock_index);
	e->nlocks = 0;
	e->clock = 0;
	rng_seed(&e->rng, seed);
	e->stats.runs++;
}

/* Add a run's counters to the campaign's. */
static void stats_add(struct tsa_stats *to, const struct tsa_stats *from)
{
	to->runs += from->runs;
	to->pauses += from->pauses;
	to->pauses_same_lock += from->pauses_same_lock;
	to->releases += from->releases;
	for (size_t i = 0; i < TSA_RULE__COUNT; i++)
		to->rule[i] += from->rule[i];
	to->forced += from->forced;
	to->lock_actions += from->lock_actions;
	to->newly_covered += from->newly_covered;
}

void tsa_run_end(struct tsa_engine *e)
{
	free(e->threads);
	e->threads = NULL;
	e->nthreads = 0;
	u64map_clear(&e->lock_index);
	e->nlocks = 0;
	if (!e->campaign)
		return;
	futex_lock_acquire(&e->cov->lock);
	stats_add(&e->campaign->stats, &e->stats);
	futex_lock_release(&e->cov->lock);
	memset(&e->stats, 0, sizeof(e->stats));
}

static struct tsa_tstate_rec *thread_rec(struct tsa_engine *e, uint32_t t)
{
	if (t >= e->nthreads) {
		uint32_t n = t + 1 > e->nthreads * 2 ? t + 1 : e->nthreads * 2;

		e->threads = xrealloc(e->threads, n * sizeof(*e->threads));
		memset(e->threads + e->nthreads, 0, (n - e->nthreads) * sizeof(*e->threads));
		e->nthreads = n;
	}
	if (e->threads[t].state == TSA_T_UNKNOWN)
		e->threads[t].state = TSA_T_RUNNING;
	return &e->threads[t];
}

static struct tsa_lockrec *lock_rec(struct tsa_engine *e, uint64_t lock)
{
	uint64_t *idx = u64map_find(&e->lock_index, lock);

	if (idx)
		return &e->locks[*idx];
	if (e->nlocks == e->lockcap) {
		e->lockcap = e->lockcap ? e->lockcap * 2 : 32;
		e->locks = xrealloc(e->locks, e->lockcap * sizeof(*e->locks));
	}
	memset(&e->locks[e->nlocks], 0, sizeof(*e->locks));
	*u64map_ref(&e->lock_index, lock) = e->nlocks;
	return &e->locks[e->nlocks++];
}

void tsa_thread_start(struct tsa_engine *e, uint32_t t)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	if (r->state != TSA_T_PAUSED)
		r->state = TSA_T_RUNNING;
}

void tsa_thread_blocked(struct tsa_engine *e, uint32_t t)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	if (r->state == TSA_T_RUNNING)
		r->state = TSA_T_BLOCKED;
}

void tsa_thread_runnable(struct tsa_engine *e, uint32_t t)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	if (r->state == TSA_T_BLOCKED)
		r->state = TSA_T_RUNNING;
}

void tsa_thread_exit(struct tsa_engine *e, uint32_t t)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	r->state = TSA_T_EXITED;
	r->pending = false;
}

uint32_t tsa_site_uncovered(const struct tsa_engine *e, uint32_t site)
{
	uint32_t n;

	futex_lock_acquire(&e->cov->lock);
	n = site_uncovered_locked(e->cov, site);
	futex_lock_release(&e->cov->lock);
	return n;
}

static bool paused_on_lock(const struct tsa_engine *e, uint64_t lock, uint32_t except)
{
	for (uint32_t t = 0; t < e->nthreads; t++)
		if (t != except && e->threads[t].state == TSA_T_PAUSED &&
		    e->threads[t].lock == lock)
			return true;
	return false;
}

enum tsa_verdict tsa_before_lock(struct tsa_engine *e, uint32_t t, uint32_t site, uint64_t lock)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	if (!r->pending || r->site != site || r->lock != lock)
		r->since = ++e->clock;
	r->pending = true;
	r->site = site;
	r->lock = lock;
	/* Lines 7-8: some uncovered <x,y> has x or y = loc(p) (as of now:
	 * another run may cover it the next moment, and that run's pairs
	 * count for this one at once). */
	if (tsa_site_uncovered(e, site)) {
		r->state = TSA_T_PAUSED;
		e->stats.pauses++;
		return TSA_PAUSE;
	}
	/* Lines 10-12: do not let p take a lock a paused action waits for. */
	if (paused_on_lock(e, lock, t)) {
		r->state = TSA_T_PAUSED;
		e->stats.pauses++;
		e->stats.pauses_same_lock++;
		return TSA_PAUSE;
	}
	if (r->state != TSA_T_BLOCKED)
		r->state = TSA_T_RUNNING;
	return TSA_PROCEED;
}

void tsa_after_lock(struct tsa_engine *e, uint32_t t, uint32_t site, uint64_t lock)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);
	struct tsa_lockrec *l = lock_rec(e, lock);

	if (r->state == TSA_T_PAUSED)
		e->stats.forced++;
	r->state = TSA_T_RUNNING;
	r->pending = false;
	e->stats.lock_actions++;
	if (l->has_last)
		cover_pair(e, l->last, site);
	l->has_last = true;
	l->last = site;
	l->held = true;
	l->holder = t;
}

void tsa_after_unlock(struct tsa_engine *e, uint32_t t, uint64_t lock)
{
	struct tsa_lockrec *l = lock_rec(e, lock);

	if (l->held && l->holder == t)
		l->held = false;
}

void tsa_lock_abandoned(struct tsa_engine *e, uint32_t t)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	if (r->state == TSA_T_PAUSED)
		r->state = TSA_T_RUNNING;
	r->pending = false;
}

void tsa_force_release(struct tsa_engine *e, uint32_t t)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	if (r->state != TSA_T_PAUSED)
		return;
	r->state = TSA_T_RUNNING;
	e->stats.forced++;
}

bool tsa_all_enabled_paused(const struct tsa_engine *e)
{
	bool any = false;

	for (uint32_t t = 0; t < e->nthreads; t++) {
		if (e->threads[t].state == TSA_T_RUNNING)
			return false;
		any |= e->threads[t].state == TSA_T_PAUSED;
	}
	return any;
}

/* Is the lock of paused thread t held by another thread? Then its action is
 * not in enabled(s): releasing it would only block it in the kernel. */
static bool lock_held_by_other(struct tsa_engine *e, uint32_t t)
{
	uint64_t *idx = u64map_find(&e->lock_index, e->threads[t].lock);

	return idx && e->locks[*idx].held && e->locks[*idx].holder != t;
}

static int cmp_candidate(const void *a, const void *b, void *arg)
{
	const struct tsa_engine *e = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t sx = e->threads[x].since, sy = e->threads[y].since;

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Paused actions the rules choose from, oldest pending first. Those whose
 * lock is free come first-class; if every paused action waits for a held
 * lock, all of them are candidates (progress over precision). */
static uint32_t release_candidates(struct tsa_engine *e, uint32_t *out)
{
	uint32_t n = 0;

	for (uint32_t t = 0; t < e->nthreads; t++)
		if (e->threads[t].state == TSA_T_PAUSED && !lock_held_by_other(e, t))
			out[n++] = t;
	if (!n)
		for (uint32_t t = 0; t < e->nthreads; t++)
			if (e->threads[t].state == TSA_T_PAUSED)
				out[n++] = t;
	qsort_r(out, n, sizeof(*out), cmp_candidate, e);
	return n;
}

static bool rule1_applies(struct tsa_engine *e, uint32_t t)
{
	uint64_t *idx = u64map_find(&e->lock_index, e->threads[t].lock);
	struct tsa_lockrec *l = idx ? &e->locks[*idx] : NULL;

	return l && l->has_last && uncovered_locked(e->cov, l->last, e->threads[t].site);
}

static bool rule2_applies(struct tsa_engine *e, uint32_t t)
{
	const struct tsa_tstate_rec *p = &e->threads[t];

	for (uint32_t u = 0; u < e->nthreads; u++) {
		const struct tsa_tstate_rec *q = &e->threads[u];

		if (u != t && q->state == TSA_T_PAUSED && q->lock == p->lock &&
		    uncovered_locked(e->cov, p->site, q->site))
			return true;
	}
	return false;
}

/* With cov->lock held: the rules read the shared coverage throughout. */
static uint32_t pick_release(struct tsa_engine *e, const uint32_t *cand, uint32_t n,
			     enum tsa_rule *rule)
{
	uint32_t best = 0;

	for (uint32_t i = 0; i < n; i++)
		if (rule1_applies(e, cand[i])) {
			*rule = TSA_RULE_1;
			return cand[i];
		}
	for (uint32_t i = 0; i < n; i++)
		if (rule2_applies(e, cand[i])) {
			*rule = TSA_RULE_2;
			return cand[i];
		}
	if (!e->heuristic) {
		*rule = TSA_RULE_RANDOM;
		return cand[rng_below(&e->rng, n)];
	}
	/* Rule 3: the action whose site has the fewest uncovered requirements
	 * has the least to gain from staying paused. Ties (seed 000 leaves
	 * them open) go to a seeded choice among the tied actions: with a
	 * fixed tie-break, once rules 1 and 2 are spent every run replays the
	 * same releases and coverage stops growing whatever the seed
	 * (docs/studies/tsa.md, "Why tsa loses on hashset"). */
	uint32_t ties = 1;

	for (uint32_t i = 1; i < n; i++) {
		uint32_t ui = site_uncovered_locked(e->cov, e->threads[cand[i]].site);
		uint32_t ub = site_uncovered_locked(e->cov, e->threads[cand[best]].site);

		if (ui < ub) {
			best = i;
			ties = 1;
		} else if (ui == ub && rng_below(&e->rng, ++ties) == 0) {
			best = i; /* reservoir sampling: each tied one 1/ties */
		}
	}
	*rule = TSA_RULE_3;
	return cand[best];
}

int tsa_choose_release(struct tsa_engine *e, struct tsa_release *out)
{
	uint32_t *cand, n, t;
	enum tsa_rule rule = TSA_RULE_NONE;

	cand = xcalloc(e->nthreads ? e->nthreads : 1, sizeof(*cand));
	n = release_candidates(e, cand);
	if (!n) {
		free(cand);
		return -EAGAIN;
	}
	futex_lock_acquire(&e->cov->lock);
	t = pick_release(e, cand, n, &rule);
	futex_lock_release(&e->cov->lock);
	free(cand);
	e->threads[t].state = TSA_T_RUNNING;
	e->stats.releases++;
	e->stats.rule[rule]++;
	if (out) {
		out->thread = t;
		out->rule = rule;
		out->site = e->threads[t].site;
		out->lock = e->threads[t].lock;
	}
	return 0;
}

size_t tsa_pause_sites(const struct tsa_engine *e, uint32_t *out, size_t max)
{
	const struct u64map *m = &e->cov->site_uncovered;
	size_t n = 0;

	futex_lock_acquire(&e->cov->lock);
	for (size_t i = 0; i < m->cap && n < max; i++)
		if (m->used[i] && m->vals[i])
			out[n++] = (uint32_t)m->keys[i];
	futex_lock_release(&e->cov->lock);
	return n;
}

size_t tsa_take_retired_sites(struct tsa_engine *e, uint32_t *out, size_t max)
{
	size_t n;

	futex_lock_acquire(&e->cov->lock);
	n = e->cov->nretired - e->retired_seen;
	if (n > max)
		n = max;
	if (n) /* nothing retired yet: no log to copy from */
		memcpy(out, e->cov->retired + e->retired_seen, n * sizeof(*out));
	e->retired_seen += n;
	futex_lock_release(&e->cov->lock);
	return n;
}

bool tsa_is_paused(const struct tsa_engine *e, uint32_t t)
{
	return t < e->nthreads && e->threads[t].state == TSA_T_PAUSED;
}

bool tsa_is_enabled(const struct tsa_engine *e, uint32_t t)
{
	return t < e->nthreads &&
	       (e->threads[t].state == TSA_T_RUNNING || e->threads[t].state == TSA_T_PAUSED);
}

bool tsa_is_uncovered(const struct tsa_engine *e, uint32_t x, uint32_t y)
{
	bool u;

	futex_lock_acquire(&e->cov->lock);
	u = uncovered_locked(e->cov, x, y);
	futex_lock_release(&e->cov->lock);
	return u;
}

bool tsa_is_covered(const struct tsa_engine *e, uint32_t x, uint32_t y)
{
	bool c;

	futex_lock_acquire(&e->cov->lock);
	c = tsa_pairset_get(&e->cov->pairs, x, y) & TSA_PAIR_COVERED;
	futex_lock_release(&e->cov->lock);
	return c;
}

uint64_t tsa_uncovered_count(const struct tsa_engine *e)
{
	uint64_t n;

	futex_lock_acquire(&e->cov->lock);
	n = e->cov->n_uncovered;
	futex_lock_release(&e->cov->lock);
	return n;
}

const struct tsa_stats *tsa_engine_stats(const struct tsa_engine *e)
{
	return &e->stats;
}

void tsa_engine_precision(const struct tsa_engine *e, struct tsa_precision *p)
{
	const struct tsa_cover *cov = e->cov;

	futex_lock_acquire(&e->cov->lock);
	p->estimated = cov->n_estimated;
	p->covered = cov->n_covered;
	p->covered_estimated = cov->n_covered_estimated;
	p->false_positives = cov->n_estimated - cov->n_covered_estimated;
	p->false_negatives = cov->n_covered - cov->n_covered_estimated;
	futex_lock_release(&e->cov->lock);
}

const struct tsa_pairset *tsa_engine_pairs(const struct tsa_engine *e)
{
	return &e->cov->pairs;
}
