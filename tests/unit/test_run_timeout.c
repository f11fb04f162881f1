// SPDX-License-Identifier: MIT
/* The adaptive run timeout (run/run_timeout.h) on hand-checked inputs:
 * 20 times the slowest clean run, or twice the whole time of the slowest
 * slow run (one that ended once steering stopped), whichever is longer,
 * at least 2 s; the default until a run ended either way. */
#include "run/run_timeout.h"
#include "tap.h"

int main(void)
{
	tap_plan(7);
	tap_is_dbl(run_timeout_adaptive(30, 0, 0), 30, 1e-9, "no run ended yet: the default");
	tap_is_dbl(run_timeout_adaptive(30, 0.5, 0), 10, 1e-9, "a clean run of 0.5 s: 10 s");
	tap_is_dbl(run_timeout_adaptive(30, 0.01, 0), 2, 1e-9, "at least 2 s");
	/* libsqlite3's driver steered: every run past the 30 s default, the
	 * first ended 14 s after steering stopped (44 s in all) */
	tap_is_dbl(run_timeout_adaptive(30, 0, 44), 88, 1e-9,
		   "only slow runs: twice the slowest one's whole time, 88 s");
	tap_is_dbl(run_timeout_adaptive(30, 5, 44), 100, 1e-9,
		   "a clean run's 20x when longer (5 s: 100 s against 88 s)");
	tap_is_dbl(run_timeout_adaptive(30, 2, 44), 88, 1e-9,
		   "the slow run's 2x when longer (88 s against 40 s)");
	tap_is_dbl(run_timeout_adaptive(30, 0, 0.5), 2, 1e-9, "at least 2 s with slow runs too");
	return tap_done();
}
