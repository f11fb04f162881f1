/* SPDX-License-Identifier: MIT */
/*
 * SARIF 2.1.0 of campaign reports (`concsched report DIR --sarif FILE`,
 * docs/report.md "SARIF"), the format code-scanning views read (GitHub's,
 * GitLab's, IDE viewers): one run per campaign, one rule per finding kind
 * (assertion, crash, deadlock, hang, sanitizer, exit status, check,
 * data race, lock-order inversion...), one result per failure or warning
 * with a physical location (file, line) for every site that has one and
 * the replay command in its message, and the failing run's schedule as a
 * code flow: one threadFlow per thread, its steps in global order
 * (executionOrder). Validated against the SARIF 2.1.0 JSON schema by
 * tests/host/62-report-ci.t.
 */
#ifndef CONCSCHED_REPORT_SARIF_H
#define CONCSCHED_REPORT_SARIF_H

#include <stdio.h>

#include "results/report_ci.h"

/* 0 or -errno (a write error). */
int report_write_sarif(const struct report_ci_suite *suites, size_t n, FILE *f);

#endif
