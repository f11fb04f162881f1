/* SPDX-License-Identifier: MIT */
/*
 * `concsched report DIR --junit FILE --sarif FILE` (cli/cmd_report.c): the CI
 * files of campaigns, through results/report_junit.h and
 * results/report_sarif.h (an experiment directory's: experiment/exp_ci.h).
 */
#ifndef CONCSCHED_REPORT_CI_WRITE_H
#define CONCSCHED_REPORT_CI_WRITE_H

#include <stdbool.h>

#include "results/report.h"
#include "results/report_ci.h"
#include "results/store.h"

struct report_ci_files {
	const char *junit, *sarif; /* NULL: not asked for */
};

/* The files out asks for, of suites[0..n). 0 or EXIT_USAGE (one line said). */
int report_ci_write(const struct report_ci_suite *suites, size_t n,
		    const struct report_ci_files *out);
/* The files of one loaded campaign (named as dir). 0 or EXIT_USAGE. */
int report_ci_write_campaign(const char *dir, struct store *s, const struct report *r,
			     const struct report_ci_files *out);

#endif
