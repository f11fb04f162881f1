// SPDX-License-Identifier: MIT
/*
 * Minimizing a schedule (replay/minimize.c) on hand-checked pass orders:
 * how many preemptions an order has, and what undoing one gives; the
 * orders a failing run's replay check tries (results/schedule.c); which
 * of the check's replays count (replay/replay.c replay_again).
 */
#include <string.h>

#include "replay/minimize.h"
#include "replay/replay.h"
#include "results/schedule.h"
#include "tap.h"

/* An order from a string: "ABAB" = A's point 0, B's 0, A's 1, B's 1. */
static size_t order(const char *s, struct declog_entry *v)
{
	unsigned k[26] = { 0 };
	size_t i;

	for (i = 0; s[i]; i++) {
		memset(&v[i], 0, sizeof(v[i]));
		v[i].thread = (uint64_t)(s[i] - 'A' + 1);
		v[i].event = k[s[i] - 'A']++;
		v[i].action = DECLOG_PASS;
	}
	return i;
}

static void text(const struct declog_entry *v, size_t n, char *out)
{
	size_t i;

	for (i = 0; i < n; i++)
		out[i] = (char)('A' + v[i].thread - 1);
	out[n] = 0;
}

int main(void)
{
	struct declog_entry v[16], out[16];
	char s[17];
	size_t n;
	bool ok;

	tap_plan(22);
	n = order("AABB", v);
	tap_is_int(minimize_preemptions(v, n), 0, "AABB: one switch, A was done: no preemption");
	n = order("ABAB", v);
	tap_is_int(minimize_preemptions(v, n), 2,
		   "ABAB: A and then B stopped while going on later");
	n = order("ABBA", v);
	tap_is_int(minimize_preemptions(v, n), 1, "ABBA: only A was stopped");
	n = order("ABCACB", v);
	tap_is_int(minimize_preemptions(v, n), 3, "ABCACB: A, B and C each stopped once");

	n = order("ABAB", v);
	ok = minimize_unpreempt(v, n, 1, out);
	text(out, n, s);
	tap_ok(ok && !strcmp(s, "AABB"), "ABAB undo at 1: A runs on -> AABB (got %s)", s);
	tap_ok(out[1].thread == 1 && out[1].event == 1 && out[2].event == 0,
	       "each thread's points keep their order");
	ok = minimize_unpreempt(v, n, 2, out);
	text(out, n, s);
	tap_ok(ok && !strcmp(s, "ABBA"), "ABAB undo at 2: B runs on -> ABBA (got %s)", s);
	tap_is_int(minimize_preemptions(out, n), 1, "one preemption fewer");
	tap_ok(!minimize_unpreempt(v, n, 3, out), "ABAB at 3: A is done, nothing to undo");
	tap_ok(!minimize_unpreempt(v, n, 0, out), "step 0 is never a preemption");
	n = order("ABBBAC", v);
	ok = minimize_unpreempt(v, n, 1, out);
	text(out, n, s);
	tap_ok(ok && !strcmp(s, "AABBBC"), "ABBBAC undo at 1: A's next run moves up (got %s)", s);
	n = order("AABA", v);
	ok = minimize_unpreempt(v, n, 2, out);
	text(out, n, s);
	tap_ok(ok && !strcmp(s, "AAAB"), "AABA undo at 2 -> AAAB (got %s)", s);

	/* The orders a schedule that did not replay is tried in. */
	n = order("ABAB", v);
	tap_is_int(schedule_swap_before(v, n, n, out), 3, "ABAB: the last two steps first");
	text(out, n, s);
	tap_ok(!strcmp(s, "ABBA") && out[2].thread == 2 && out[2].event == 1 &&
		       out[3].thread == 1 && out[3].event == 1,
	       "... -> ABBA, each thread's points in their order (got %s)", s);
	n = order("AABBA", v);
	tap_is_int(schedule_swap_before(v, n, 4, out), 2,
		   "AABBA before step 4: BB is one thread's, the pair at 1-2 next");
	text(out, n, s);
	tap_ok(!strcmp(s, "ABABA"), "... -> ABABA (got %s)", s);
	tap_is_int(schedule_swap_before(v, n, 2, out), 0, "AABBA before step 2: AA, none left");
	/* A replay that waited for the end of its steering and passed runs
	 * again, at most REPLAY_GRACED_AGAIN (4) times; one that failed again,
	 * or passed with its steering to the end, counts. */
	{
		unsigned again = 0, k, runs = 0;

		tap_ok(!replay_again(true, true, &again) && again == 0,
		       "a replay that failed again counts, steering ended or not");
		tap_ok(!replay_again(false, false, &again) && again == 0,
		       "a pass steered to the end counts");
		for (k = 0; k < 10; k++)
			runs += replay_again(false, true, &again);
		tap_is_int(runs, 4,
			   "passes after the steering ended: 4 replayed again, then counted");
		tap_is_int(again, 4, "the count stops at the limit");
		tap_ok(!replay_again(false, true, &again), "the fifth counts");
	}

	return tap_done();
}
