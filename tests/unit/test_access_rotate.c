// SPDX-License-Identifier: MIT
/* The probe rotation (access_rotate.c, access.h): a hot shared variable's
 * sites are probed in one test run of every period, which runs from the
 * campaign seed and the variable. The chosen runs below were worked out by
 * hand from rng_derive's definition (offset = rng_derive(seed, var) %
 * period; run chosen when (run + offset) % period == 0). */
#include "run/access.h"
#include "tap.h"

static int chosen_runs(uint64_t seed, uint64_t var, unsigned period, int *runs, int max)
{
	int n = 0;

	for (int run = 1; run <= 10; run++)
		if (access_rotate_chosen(seed, var, (uint64_t)run, period) && n < max)
			runs[n++] = run;
	return n;
}

int main(void)
{
	int runs[10], n, once = 1;

	tap_plan(12);
	tap_is_int(access_rotate_period(0, 5000), 1, "no accesses: every run");
	tap_is_int(access_rotate_period(5000, 5000), 1, "a share's worth: every run");
	tap_is_int(access_rotate_period(5001, 5000), 2, "just over a share: one run of 2");
	tap_is_int(access_rotate_period(20985, 5000), 5,
		   "lbzip2's heap block (20,985 accesses): one run of 5");
	tap_is_int(access_rotate_period(1000000, 5000), ACCESS_ROTATE_MAX,
		   "a million accesses: at most ACCESS_ROTATE_MAX runs apart");
	tap_is_int(access_rotate_period(1000000, 0), 1, "no share (no budget): every run");
	tap_ok(access_rotate_chosen(9, 9, 3, 1), "period 1: chosen");
	n = chosen_runs(1, 18, 5, runs, 10);
	tap_ok(n == 2 && runs[0] == 1 && runs[1] == 6, "seed 1, v18, period 5: runs 1 and 6");
	n = chosen_runs(42, 7, 4, runs, 10);
	tap_ok(n == 2 && runs[0] == 3 && runs[1] == 7, "seed 42, v7, period 4: runs 3 and 7");
	n = chosen_runs(42, 8, 4, runs, 10);
	tap_ok(n == 2 && runs[0] == 4 && runs[1] == 8,
	       "seed 42, v8, period 4: runs 4 and 8 (another variable, other runs)");
	for (uint64_t seed = 0; seed < 50; seed++)
		for (unsigned p = 2; p <= ACCESS_ROTATE_MAX; p++) {
			int k = 0;

			for (uint64_t run = 100; run < 100 + p; run++)
				k += access_rotate_chosen(seed, seed * 7 + 3, run, p);
			once &= k == 1;
		}
	tap_ok(once, "any seed and period: exactly one run of every period consecutive ones");
	tap_ok(access_rotate_chosen(5, 2, 7, 4) == access_rotate_chosen(5, 2, 7, 4),
	       "the same seed, variable and run: the same choice");
	return tap_done();
}
