/* SPDX-License-Identifier: MIT */
/*
 * TAP check for a coverage task set (userspace/coverage/metrics.h): exactly the
 * wanted keys, and on failure both lists as diagnostics. For the unit
 * tests of the metrics and the MAP matchers.
 */
#ifndef CONCSCHED_TAP_TASKSET_H
#define CONCSCHED_TAP_TASKSET_H

#include <stdbool.h>

#include "coverage/metrics.h"
#include "tap.h"

static int tap_taskset_is(const struct cov_taskset *ts, const char *const *want, size_t n,
			  const char *what)
{
	bool ok = ts->count == n;

	for (size_t i = 0; i < n; i++)
		if (!cov_event_taskset_has(ts, want[i]))
			ok = false;
	tap_ok(ok, "%s", what);
	if (!ok) {
		for (size_t i = 0; i < ts->count; i++)
			tap_diag("  got  %s", ts->keys[i]);
		for (size_t i = 0; i < n; i++)
			tap_diag("  want %s", want[i]);
	}
	return ok;
}

#endif
