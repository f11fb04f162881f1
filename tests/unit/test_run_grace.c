// SPDX-License-Identifier: MIT
/* The grace period after a run timeout (run/onerun.h onerun_grace_s): the
 * run timeout up to 30 s, and at least twice the campaign's longest
 * unsteered run up to 300 s (issue 32: steered sqlite_threads runs whose
 * unsteered rest outlasted a 30 s grace were called hung). */
#include "run/onerun.h"
#include "run/run_types.h"
#include "tap.h"

int main(void)
{
	tap_plan(9);
	tap_is_dbl(onerun_grace_s(2, 0), 2, 1e-9, "no unsteered run measured: the run timeout");
	tap_is_dbl(onerun_grace_s(30, 0), 30, 1e-9, "... 30 s at the default timeout");
	tap_is_dbl(onerun_grace_s(120, 0), RUN_MAX_GRACE, 1e-9, "... and at most 30 s");
	tap_is_dbl(onerun_grace_s(30, 5), 30, 1e-9,
		   "an unsteered run of 5 s: twice it is under the timeout's 30 s");
	tap_is_dbl(onerun_grace_s(30, 25), 50, 1e-9,
		   "an unsteered run of 25 s: 50 s of grace, twice it");
	tap_is_dbl(onerun_grace_s(2, 25), 50, 1e-9,
		   "... however short the run timeout (an adapted one)");
	tap_is_dbl(onerun_grace_s(30, 1000), RUN_MAX_GRACE_UNSTEERED, 1e-9,
		   "twice a 1000 s unsteered run: capped at %g s", RUN_MAX_GRACE_UNSTEERED);
	tap_is_dbl(onerun_grace_s(0.5, 0.2), 0.5, 1e-9,
		   "a short program with a short timeout: the timeout's, as before");
	/* replay gives the recorded grace back as half of it (replay.c) */
	tap_is_dbl(onerun_grace_s(30, onerun_grace_s(30, 40) / RUN_GRACE_FACTOR),
		   onerun_grace_s(30, 40), 1e-9, "the recorded grace comes back in a replay");
	return tap_done();
}
