/* SPDX-License-Identifier: MIT */
/*
 * `concsched report DIR --junit FILE --sarif FILE` on an experiment
 * directory (cli/cmd_report.c): the CI files of every cell that holds a
 * campaign, through results/report_ci_write.h.
 */
#ifndef CONCSCHED_EXP_CI_H
#define CONCSCHED_EXP_CI_H

#include <stdbool.h>

#include "results/report_ci_write.h"

/* DIR holds an experiment (DIR/experiment.db) and no campaign. */
bool exp_ci_is_experiment(const char *dir);
/* The files of an experiment directory, printing where they went; the exit
 * status of `report`: 0, 1 when a cell failed, EXIT_USAGE. */
int exp_ci_write(const char *dir, const struct report_ci_files *out, bool replay_vm);

#endif
