/* SPDX-License-Identifier: MIT */
/*
 * `concsched report DIR --junit FILE --sarif FILE` (cli/cmd_report.c): the CI
 * files of a campaign, or of an experiment directory (one suite, one SARIF
 * run, per cell: DIR/cells/NAME), through results/report_junit.h and
 * results/report_sarif.h.
 */
#ifndef CONCSCHED_CLI_REPORT_CI_H
#define CONCSCHED_CLI_REPORT_CI_H

#include <stdbool.h>

#include "results/report.h"
#include "results/store.h"

struct report_ci_files {
	const char *junit, *sarif; /* NULL: not asked for */
};

/* Open a campaign to report on: with write access when the user has it
 * (SQLite then recovers a campaign whose writer was killed), else as it
 * is. 0 or -errno (one line printed). */
int report_ci_open(const char *dir, struct store **s);
/* DIR holds an experiment (DIR/experiment.db) and no campaign. */
bool report_ci_is_experiment(const char *dir);
/* The files of one loaded campaign (named as dir). 0 or EXIT_USAGE. */
int report_ci_campaign(const char *dir, struct store *s, const struct report *r,
		       const struct report_ci_files *out);
/* The files of an experiment directory, printing where they went; the exit
 * status of `report`: 0, 1 when a cell failed, EXIT_USAGE. */
int report_ci_experiment(const char *dir, const struct report_ci_files *out, bool replay_vm);

#endif
