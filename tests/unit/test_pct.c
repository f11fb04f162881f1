// SPDX-License-Identifier: MIT
/* pct.c: priority order, change points at exactly their step, seeds, yields,
 * change points over focus steps only. */
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

/* A step list per thread, run to its end by the engine: each thread's
 * next step is marked focus (F) or not (S) before each pick, as the
 * strategy marks the accesses to cross-thread variables. Returns the
 * trace of ranks picked (0 the highest initial priority) as a string. */
static void run_steps(struct pct *p, const uint32_t *order, const char *const *steps, char *trace)
{
	size_t pos[3] = { 0, 0, 0 }, n = 0;

	for (;;) {
		uint32_t run[3], nrun = 0;
		int64_t t;
		uint32_t rank = 0;

		for (uint32_t r = 0; r < 3; r++) {
			if (!steps[r][pos[r]])
				continue;
			pct_thread_focus(p, order[r], steps[r][pos[r]] == 'F');
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

/* The trace of the step lists below with one change point at c, focused or
 * not (seed 11: order holds the ranks). */
static void trace_at(struct pct *p, bool focused, uint64_t c, uint32_t *order, char *trace)
{
	static const char *const steps[3] = { "SFFS", "SF", "S" };

	if (focused)
		pct_init_focused(p, 2, 4, 11);
	else
		pct_init(p, 2, 4, 11);
	for (uint32_t t = 0; t < 3; t++)
		pct_thread_add(p, t);
	initial_order(p, 3, order);
	p->change[0] = c;
	run_steps(p, order, steps, trace);
}

/* Focused: the change points count the focus steps only. Hand-checked
 * traces: rank 0 runs S F F S, rank 1 S F, rank 2 S. */
static void test_focused(void)
{
	struct pct p;
	uint32_t order[3];
	char trace[16];
	int hits = 0, firsts = 0;

	trace_at(&p, true, 2, order, trace);
	/* rank 0: S, F (focus step 1); at its second F, focus step 2, it
	 * drops; rank 1 runs S F (its F is focus step 2), rank 2 S, then
	 * rank 0 F S below both. */
	tap_is_str(trace, "0011200",
		   "focused, change point 2: the top thread drops at its second access, "
		   "not at its second step");
	pct_free(&p);
	trace_at(&p, false, 2, order, trace);
	tap_is_str(trace, "0112000", "unfocused, change point 2: it drops at its second step");
	pct_free(&p);
	trace_at(&p, true, 1, order, trace);
	/* step 1 is S: no drop although it is the first step; the first F
	 * (focus step 1) is where rank 0 drops; rank 1's F is then step 1
	 * done, rank 0's two Fs follow with no change point left. */
	tap_ok(!strcmp(trace, "0112000") && p.focus_steps == 3 && p.steps == 7 &&
		       pct_priority(&p, order[0]) == 1,
	       "focused, change point 1: a synchronization step before the first access "
	       "is not it (%s, %llu focus steps of %llu)",
	       trace, (unsigned long long)p.focus_steps, (unsigned long long)p.steps);
	pct_free(&p);
	trace_at(&p, true, 4, order, trace); /* past the 3 focus steps the run makes */
	tap_ok(!strcmp(trace, "0000112") && p.next_change == 0,
	       "focused, change point past the last access: no drop (%s)", trace);
	pct_free(&p);

	/* The draw: depth 3 over 4 focus steps, 2 distinct points in [1, 4];
	 * step 2 is among them in C(3,1)/C(4,2) = 1/2 of the draws (the
	 * issue's 2/4 when only a pair's second access of 4 counts).
	 * Deterministic: the seeds 0..999 give the count below every time. */
	for (uint64_t seed = 0; seed < 1000; seed++) {
		pct_init_focused(&p, 3, 4, seed);
		hits += p.focused && p.nchange == 2 && p.change[0] >= 1 && p.change[1] <= 4 &&
			p.change[0] < p.change[1];
		firsts += p.change[0] == 2 || p.change[1] == 2;
		pct_free(&p);
	}
	tap_is_int(hits, 1000, "focused draws: 2 distinct change points in [1, 4]");
	tap_ok(firsts > 450 && firsts < 550,
	       "focus step 2 is a change point in about half the seeds (%d of 1000)", firsts);
}

int main(void)
{
	tap_plan(24 + 2);
	test_depth1_priority_order();
	test_change_point();
	test_depth3();
	test_determinism();
	test_yield();
	test_highest();
	test_focused();
	return tap_done();
}
