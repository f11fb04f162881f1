// SPDX-License-Identifier: MIT
/* The grace period after a run timeout (run/onerun.h onerun_grace_s): the
 * run timeout up to 30 s, and at least twice the campaign's longest
 * unsteered run up to 300 s (issue 32: steered sqlite_threads runs whose
 * unsteered rest outlasted a 30 s grace were called hung). And a run's
 * stored configuration with its steering lost (onerun_config_steering). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "run/onerun.h"
#include "run/run_types.h"
#include "tap.h"
#include "lib/json.h"
#include "lib/xalloc.h"

/* onerun_config_steering on cfg with the run's counts (cfg is consumed). */
static void steering(const char *cfg, uint64_t wd, uint64_t resc, const char *want,
		     const char *what)
{
	struct onerun r = { .watchdog_run = wd, .rescued_run = resc };
	char *out;

	if (!wd && !resc) { /* a serial token taken back counts too */
		struct onerun sp = { .serial_preempts_run = 1 };
		char *o = onerun_config_steering(&sp, xstrdup("{}"));

		tap_ok(strstr(o, "\"serial_preempts\":1}") != NULL,
		       "a serial token taken back is recorded");
		free(o);
	}
	out = onerun_config_steering(&r, xstrdup(cfg));

	tap_is_str(out, want, "%s", what);
	free(out);
}

static void test_steering(void)
{
	char *cfg;
	int64_t v = -1;

	steering("{\"seed\":3}", 0, 0, "{\"seed\":3}",
		 "steering kept: the configuration as it was");
	steering("{\"seed\":3}", 2, 0,
		 "{\"seed\":3,\"steering\":{\"watchdog_releases\":2,\"rescued_threads\":0,"
		 "\"serial_preempts\":0}}",
		 "2 watchdog releases: appended");
	steering("{}", 0, 1,
		 "{\"steering\":{\"watchdog_releases\":0,\"rescued_threads\":1,"
		 "\"serial_preempts\":0}}",
		 "a rescued thread, in an empty configuration: no leading comma");
	/* what report and replay read back */
	cfg = "{\"a\":{\"rescued_threads\":9},\"steering\":{\"watchdog_releases\":2,"
	      "\"rescued_threads\":1}}";
	tap_ok(json_get_object(cfg, "steering") != NULL &&
		       !json_get_int(json_get_object(cfg, "steering"), "rescued_threads", &v) &&
		       v == 1,
	       "json_get_object: the nested object's own key (1), not a sibling's (9)");
	cfg = "{\"steering\":{\"watchdog_releases\":2},\"b\":{\"rescued_threads\":9}}";
	tap_is_int(json_get_int(json_get_object(cfg, "steering"), "rescued_threads", &v), -ENOENT,
		   "... and a key of a later sibling object is not the nested object's");
	tap_ok(json_get_object("{\"steering\":3}", "steering") == NULL,
	       "json_get_object: not an object, NULL");
}

int main(void)
{
	tap_plan(16);
	test_steering();
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
