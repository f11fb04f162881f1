// SPDX-License-Identifier: MIT
/* pct.c: priority order, change points at exactly their step, seeds, yields,
 * change points split over two pools of steps. */
#include <errno.h>
#include <string.h>

#include "strategies/pct.h"
#include "tap.h"

static void test_depth1_priority_order(void)
{
	int violations = 0, top[3] = { 0, 0, 0 };

	for (uint64_t seed = 0; seed < 30; seed++) {
		struct pct p;
		struct cs_rng sub;
		uint32_t prio[3];

		pct_init(&p, 1, 1000, seed);
		for (uint32_t t = 0; t < 3; t++)
			pct_thread_add(&p, t);
		for (uint32_t t = 0; t < 3; t++)
			prio[t] = pct_priority(&p, t);
		top[prio[0] > prio[1] && prio[0] > prio[2] ? 0 : prio[1] > prio[2] ? 1 : 2]++;
		rng_seed(&sub, seed + 1000);
		for (int s = 0; s < 1000; s++) {
			uint32_t run[3], n = 0, want = 0;
			int64_t got;

			for (uint32_t t = 0; t < 3; t++)
				if (rng_chance(&sub, 0.6))
					run[n++] = t;
			if (!n)
				continue;
			for (uint32_t i = 0; i < n; i++)
				if (!i || prio[run[i]] > prio[want])
					want = run[i];
			got = pct_pick(&p, run, n);
			violations += got != (int64_t)want ||
				      pct_priority(&p, (uint32_t)got) != prio[got];
			pct_step(&p);
		}
		pct_free(&p);
	}
	tap_is_int(violations, 0, "d=1: always the highest-priority runnable thread (30 seeds)");
	tap_ok(top[0] && top[1] && top[2], "d=1: priorities are a random permutation (%d/%d/%d)",
	       top[0], top[1], top[2]);
}

/* Order of the initial priorities, highest first. */
static void initial_order(struct pct *p, uint32_t n, uint32_t *order)
{
	for (uint32_t i = 0; i < n; i++)
		order[i] = i;
	for (uint32_t i = 0; i < n; i++)
		for (uint32_t j = i + 1; j < n; j++)
			if (pct_priority(p, order[j]) > pct_priority(p, order[i])) {
				uint32_t x = order[i];

				order[i] = order[j];
				order[j] = x;
			}
}

static void test_change_point(void)
{
	const uint32_t all[2] = { 0, 1 };
	struct pct p;
	uint32_t order[2];
	uint64_t c;
	int wrong = 0;

	pct_init(&p, 2, 50, 7);
	pct_thread_add(&p, 0);
	pct_thread_add(&p, 1);
	initial_order(&p, 2, order);
	c = p.change[0];
	tap_ok(p.nchange == 1 && c >= 1 && c <= 50, "d=2: one change point in [1, 50] (%llu)",
	       (unsigned long long)c);
	for (uint64_t step = 1; step <= 50; step++) {
		int64_t t = pct_pick(&p, all, 2);
		uint32_t want = step < c ? order[0] : order[1];

		if (step == c && pct_pick(&p, all, 2) != t)
			wrong++; /* re-evaluation must not demote again */
		wrong += t != (int64_t)want;
		pct_step(&p);
	}
	tap_is_int(wrong, 0, "d=2: the top thread runs until step %llu, then drops below the other",
		   (unsigned long long)c);
	tap_is_int(pct_priority(&p, order[0]), 1, "demoted thread has change-point priority 1 < d");
	pct_free(&p);
}

static void test_depth3(void)
{
	const uint32_t all[3] = { 0, 1, 2 };
	struct pct p;
	uint32_t order[3];
	int wrong = 0;

	pct_init(&p, 3, 40, 12345);
	for (uint32_t t = 0; t < 3; t++)
		pct_thread_add(&p, t);
	initial_order(&p, 3, order);
	tap_ok(p.nchange == 2 && p.change[0] < p.change[1] && p.change[1] <= 40,
	       "d=3: two distinct sorted change points (%llu, %llu)",
	       (unsigned long long)p.change[0], (unsigned long long)p.change[1]);
	for (uint64_t step = 1; step <= 40; step++) {
		/* Before c1 the top runs; from c1 the second; from c2 the third
		 * (the second drops to 2, still above the first at 1). */
		uint32_t want = step < p.change[0]   ? order[0]
				: step < p.change[1] ? order[1]
						     : order[2];

		wrong += pct_pick(&p, all, 3) != (int64_t)want;
		pct_step(&p);
	}
	tap_is_int(wrong, 0, "d=3: each change point demotes exactly the running thread");
	tap_ok(pct_priority(&p, order[1]) == 2 && pct_priority(&p, order[0]) == 1 &&
		       pct_priority(&p, order[2]) >= 3,
	       "d=3: change point i gives priority i");
	pct_free(&p);
}

static void test_determinism(void)
{
	struct pct a, b;
	int differ = 0, changes_differ = 0;
	const uint32_t all[4] = { 0, 1, 2, 3 };

	for (uint64_t seed = 0; seed < 20; seed++) {
		pct_init(&a, 4, 100, seed);
		pct_init(&b, 4, 100, seed);
		for (int s = 0; s < 100; s++) {
			differ += pct_pick(&a, all, 4) != pct_pick(&b, all, 4);
			pct_step(&a);
			pct_step(&b);
		}
		pct_free(&a);
		pct_free(&b);
		pct_init(&b, 4, 100, seed + 1);
		changes_differ += a.change[0] != b.change[0] || a.change[1] != b.change[1];
	}
	tap_is_int(differ, 0, "same seed: same change points, same picks");
	tap_ok(changes_differ >= 15, "different seeds: different change points (%d/20)",
	       changes_differ);
	tap_ok(pct_init(&a, 0, 10, 1) == -EINVAL && pct_init(&a, 5, 3, 1) == -EINVAL &&
		       pct_pick(&b, all, 0) == -1,
	       "depth 0, more change points than steps, and an empty runnable set are refused");
	pct_free(&b);
}

/* A yield drops the thread below every other, the demoted and the earlier
 * yielded ones included, without a step or a change point; the scheduler's
 * priorities keep that order (1..Y for Y yielded threads, then the
 * change-point and initial ones shifted by Y); a change point that falls
 * on a yielded thread demotes it as usual. */
static void test_yield(void)
{
	const uint32_t all[3] = { 0, 1, 2 };
	struct pct p;
	uint32_t order[3];
	uint64_t c;
	int wrong = 0;

	pct_init(&p, 2, 1000, 3);
	for (uint32_t t = 0; t < 3; t++)
		pct_thread_add(&p, t);
	initial_order(&p, 3, order);
	c = p.change[0];
	pct_yield(&p, order[0]);
	tap_ok(pct_pick(&p, all, 3) == (int64_t)order[1] && p.steps == 0 && p.next_change == 0,
	       "the top thread yields: the second runs; no step, no change point taken");
	tap_ok(pct_priority(&p, order[0]) == 1 && pct_priority(&p, order[1]) == 1 + 2 + 1 &&
		       pct_priority(&p, order[2]) == 1 + 2,
	       "priorities: the yielded 1, the others d + rank shifted by one (%u %u %u)",
	       pct_priority(&p, order[0]), pct_priority(&p, order[1]), pct_priority(&p, order[2]));
	pct_yield(&p, order[1]);
	tap_ok(pct_pick(&p, all, 3) == (int64_t)order[2] && pct_priority(&p, order[1]) == 1 &&
		       pct_priority(&p, order[0]) == 2 && pct_priority(&p, order[2]) == 2 + 2,
	       "a second yield: the latest to yield runs last (%u %u %u)",
	       pct_priority(&p, order[0]), pct_priority(&p, order[1]), pct_priority(&p, order[2]));
	tap_ok(pct_pick(&p, order, 2) == (int64_t)order[0],
	       "with only the two yielded threads runnable, the earlier to yield runs");
	pct_yield(&p, order[0]);
	tap_ok(pct_pick(&p, order, 2) == (int64_t)order[1] && pct_priority(&p, order[0]) == 1,
	       "... and yielding again puts it last: two spinners take turns");
	for (uint64_t step = 1; step < c; step++) {
		wrong += pct_pick(&p, all, 3) != (int64_t)order[2];
		pct_step(&p);
	}
	tap_is_int(wrong, 0, "the one thread that never yielded runs until the change point (%llu)",
		   (unsigned long long)c);
	pct_pick(&p, all, 3);
	tap_ok(pct_priority(&p, order[2]) == 2 + 1 && pct_priority(&p, order[1]) == 2 &&
		       pct_priority(&p, order[0]) == 1,
	       "at the change point it is demoted to priority 1, above the 2 yielded (%u %u %u)",
	       pct_priority(&p, order[0]), pct_priority(&p, order[1]), pct_priority(&p, order[2]));
	pct_free(&p);
}

/* pct_highest: the top thread, with no change point considered or
 * consumed (a decision that is not a step, e.g. a thread's start). */
static void test_highest(void)
{
	const uint32_t all[2] = { 0, 1 };
	struct pct p;
	uint32_t order[2];
	uint64_t step;

	pct_init(&p, 2, 50, 7);
	pct_thread_add(&p, 0);
	pct_thread_add(&p, 1);
	initial_order(&p, 2, order);
	for (step = 1; step < p.change[0]; step++)
		pct_step(&p);
	tap_ok(pct_highest(&p, all, 2) == (int64_t)order[0] &&
		       pct_highest(&p, all, 2) == (int64_t)order[0] && p.next_change == 0,
	       "at the change point's step pct_highest still gives the top thread, twice");
	tap_ok(pct_pick(&p, all, 2) == (int64_t)order[1] && pct_highest(&p, all, 0) == -1,
	       "the change point is left for pct_pick; no thread: -1");
	pct_free(&p);
}

/* A step list per thread, run to its end by the engine: before each pick
 * each thread's next step is marked with its pool, S a synchronization
 * point, F an access to a cross-thread variable, O another access (no
 * pool), as the strategy marks them. Returns the trace of ranks picked (0
 * the highest initial priority) as a string. */
static void run_steps(struct pct *p, const uint32_t *order, const char *const *steps, char *trace)
{
	size_t pos[3] = { 0, 0, 0 }, n = 0;

	for (;;) {
		uint32_t run[3], nrun = 0;
		int64_t t;
		uint32_t rank = 0;

		for (uint32_t r = 0; r < 3; r++) {
			char m = steps[r][pos[r]];

			if (!m)
				continue;
			pct_thread_pool(p, order[r],
					m == 'S'   ? PCT_POOL_SYNC
					: m == 'F' ? PCT_POOL_CROSS
						   : PCT_POOL_NONE);
			run[nrun++] = order[r];
		}
		if (!nrun)
			break;
		t = pct_pick(p, run, nrun);
		for (uint32_t r = 0; r < 3; r++)
			if ((int64_t)order[r] == t)
				rank = r;
		pos[rank]++;
		trace[n++] = (char)('0' + rank);
		pct_step(p);
	}
	trace[n] = 0;
}

/* The trace of the step lists with the change points set by hand: n of
 * them, at[i] in pool pool[i] (split), or at[0] over every step (unsplit).
 * Seed 11: order holds the ranks. */
static void trace_of(struct pct *p, const char *const *steps, bool split, uint32_t n,
		     const uint64_t *at, const enum pct_pool *pool, uint32_t *order, char *trace)
{
	if (split)
		pct_init_split(p, n + 1, 4, 4, 11);
	else
		pct_init(p, n + 1, 9, 11);
	for (uint32_t t = 0; t < 3; t++)
		pct_thread_add(p, t);
	initial_order(p, 3, order);
	for (uint32_t i = 0; i < n; i++) {
		p->change[i] = at[i];
		p->change_pool[i] = (uint8_t)(split ? pool[i] : PCT_POOL_SYNC);
	}
	run_steps(p, order, steps, trace);
}

/* Split: each change point counts its own pool's steps. Hand-checked
 * traces of rank 0 S O F F S, rank 1 O S F, rank 2 S. */
static void test_split_traces(void)
{
	static const char *const steps[3] = { "SOFFS", "OSF", "S" };
	static const char *const meet[3] = { "S", "F", "S" };
	static const enum pct_pool sync[2] = { PCT_POOL_SYNC, PCT_POOL_CROSS };
	static const enum pct_pool cross[1] = { PCT_POOL_CROSS };
	const uint64_t two[1] = { 2 }, one[1] = { 1 }, ones[2] = { 1, 1 };
	struct pct p;
	uint32_t order[3];
	char trace[16];

	/* rank 0: S (sync 1), O, F (cross 1); its next F is cross 2: it drops;
	 * rank 1 O S F, rank 2 S, then rank 0 F S below both. */
	trace_of(&p, steps, true, 1, two, cross, order, trace);
	tap_is_str(trace, "000111200",
		   "split, cross change point 2: the top thread drops at its second cross-thread "
		   "access, not at its second step");
	pct_free(&p);
	/* rank 0 runs S O F F; its last S is sync step 2: it drops there. */
	trace_of(&p, steps, true, 1, two, sync, order, trace);
	tap_is_str(trace, "000011120",
		   "split, sync change point 2: the drop is at the second synchronization point");
	pct_free(&p);
	/* sync step 1 is rank 0's first step. */
	trace_of(&p, steps, true, 1, one, sync, order, trace);
	tap_ok(!strcmp(trace, "111200000") && pct_priority(&p, order[0]) == 1 &&
		       p.pool_steps[PCT_POOL_SYNC] == 4 && p.pool_steps[PCT_POOL_CROSS] == 3 &&
		       p.steps == 9,
	       "split, sync change point 1: the top thread drops at its first step (%s; 4 sync, "
	       "3 cross steps of 9)",
	       trace);
	pct_free(&p);
	/* Unsplit, the same marks count nothing: step 2 is rank 0's O. */
	trace_of(&p, steps, false, 1, two, NULL, order, trace);
	tap_is_str(trace, "011120000", "unsplit, change point 2: the drop is at the second step");
	pct_free(&p);
	/* Sync 1 and cross 1: rank 0 drops at its S (to 1), rank 1 O S F
	 * runs to its F, cross step 1, and drops (to 2, above rank 0). */
	trace_of(&p, steps, true, 2, ones, sync, order, trace);
	tap_ok(!strcmp(trace, "112100000") && pct_priority(&p, order[0]) == 1 &&
		       pct_priority(&p, order[1]) == 2,
	       "split, sync 1 and cross 1: rank 0 drops at its first step to 1, rank 1 at its "
	       "F to 2 (%s)",
	       trace);
	pct_free(&p);
	/* Both in one pick: rank 0 drops at its S, rank 1, then on top, at
	 * its F; rank 2 runs, then rank 1 (2) above rank 0 (1). */
	trace_of(&p, meet, true, 2, ones, sync, order, trace);
	tap_ok(!strcmp(trace, "210") && p.next_change == 2,
	       "split: a pick demotes the next thread too when its step is the other pool's "
	       "change point (%s)",
	       trace);
	pct_free(&p);
	/* Change point past the last cross step: it expires unused. */
	trace_of(&p, steps, true, 1, (const uint64_t[]){ 4 }, cross, order, trace);
	tap_ok(!strcmp(trace, "000001112") && p.next_change == 0,
	       "split, cross change point past the run's 3 cross steps: no drop (%s)", trace);
	pct_free(&p);
}

/* How many change points of p are in pool q, all in [1, k]? -1 if one is
 * out of range, or the pool's points are not distinct and sorted. */
static int in_pool(const struct pct *p, enum pct_pool q, uint64_t k)
{
	int n = 0;
	uint64_t last = 0;

	for (uint32_t i = 0; i < p->nchange; i++) {
		if (p->change_pool[i] != q)
			continue;
		if (p->change[i] < 1 || p->change[i] > k || p->change[i] <= last)
			return -1;
		last = p->change[i];
		n++;
	}
	return n;
}

/* Split draws: depth d >= 3 gives one change point over the ksync
 * synchronization points and d-2 over the kcross accesses; depth 2 one,
 * its pool by the seed's coin; an empty or short pool gives its share to
 * the other. Deterministic: the seeds 0..999 give the counts below every
 * time (the ranges are the binomial's mean +- 5 sd). */
static void test_split_draws(void)
{
	int wrong = 0, sync2 = 0, at1 = 0, cross_hit = 0;
	struct pct p;

	for (uint64_t seed = 0; seed < 1000; seed++) {
		pct_init_split(&p, 3, 4, 6, seed);
		wrong += in_pool(&p, PCT_POOL_SYNC, 4) != 1 || in_pool(&p, PCT_POOL_CROSS, 6) != 1;
		at1 += p.change_pool[0] == PCT_POOL_SYNC && p.change[0] == 1;
		pct_free(&p);
		pct_init_split(&p, 4, 4, 6, seed); /* 2 of 6 cross: (d-2)/kcross = 1/3 */
		wrong += in_pool(&p, PCT_POOL_SYNC, 4) != 1 || in_pool(&p, PCT_POOL_CROSS, 6) != 2;
		for (uint32_t i = 0; i < p.nchange; i++)
			cross_hit += p.change_pool[i] == PCT_POOL_CROSS && p.change[i] == 5;
		pct_free(&p);
		pct_init_split(&p, 2, 4, 6, seed);
		sync2 += in_pool(&p, PCT_POOL_SYNC, 4) == 1;
		wrong += in_pool(&p, PCT_POOL_SYNC, 4) + in_pool(&p, PCT_POOL_CROSS, 6) != 1;
		pct_free(&p);
	}
	tap_is_int(
		wrong, 0,
		"split draws (seeds 0..999): depth 3 one sync in [1, 4] and one cross in [1, 6]; "
		"depth 4 one and two; depth 2 one in all");
	tap_ok(at1 > 250 - 70 && at1 < 250 + 70,
	       "depth 3: sync step 1 of 4 is the sync change point in about 1/4 (%d of 1000)", at1);
	tap_ok(cross_hit > 333 - 75 && cross_hit < 333 + 75,
	       "depth 4: cross step 5 of 6 is a change point in about 2/6 (%d of 1000)", cross_hit);
	tap_ok(sync2 > 500 - 80 && sync2 < 500 + 80,
	       "depth 2: the coin gives the sync pool about half the seeds (%d of 1000)", sync2);
	pct_init_split(&p, 2, 0, 3, 5);
	wrong = in_pool(&p, PCT_POOL_CROSS, 3) != 1;
	pct_free(&p);
	pct_init_split(&p, 2, 3, 0, 5);
	wrong += in_pool(&p, PCT_POOL_SYNC, 3) != 1;
	pct_free(&p);
	pct_init_split(&p, 4, 0, 3, 5);
	wrong += in_pool(&p, PCT_POOL_CROSS, 3) != 3;
	pct_free(&p);
	pct_init_split(&p, 5, 3, 2, 5); /* 1 sync, 3 cross: only 2 fit */
	wrong += in_pool(&p, PCT_POOL_SYNC, 3) != 2 || in_pool(&p, PCT_POOL_CROSS, 2) != 2;
	pct_free(&p);
	tap_is_int(wrong, 0,
		   "an empty pool's change point goes to the other (depth 2, 0 sync or 0 cross; "
		   "depth 4, 0 sync), and so does a share a pool has no room for (depth 5, 3 + 2)");
	tap_is_int(pct_init_split(&p, 4, 1, 1, 5), -EINVAL,
		   "split: 3 change points over 2 steps in all is refused");
}

int main(void)
{
	tap_plan(20 + 13);
	test_depth1_priority_order();
	test_change_point();
	test_depth3();
	test_determinism();
	test_yield();
	test_highest();
	test_split_traces();
	test_split_draws();
	return tap_done();
}
