/* SPDX-License-Identifier: MIT */
/*
 * Experiment report (docs/experiment.md "Report"): per program x strategy
 * the runs and seconds to the first failure (median, quartiles; campaigns
 * without a failure are censored), the fraction found by each budget,
 * coverage per metric at the budget and the saturation point; between the
 * strategies of a program Mann-Whitney U, Wilcoxon signed-rank when the
 * seeds pair, and Vargha-Delaney A12; per metric the coverage after each
 * run (median and IQR over the seeds). Text, CSV, JSON and HTML (SVG
 * found-by-budget and coverage curves).
 */
#ifndef CONCSCHED_EXP_REPORT_H
#define CONCSCHED_EXP_REPORT_H

#include <stdio.h>

#include "experiment/exp_index.h"

struct exp_report;

/* Build the report from an experiment's index (its cells and spec); the
 * coverage curves come from each done cell's campaign (dir/cells/NAME),
 * opened read-only. */
int exp_report_load(struct exp_index *x, const char *dir, struct exp_report **out);
void exp_report_free(struct exp_report *r);
void exp_report_text(const struct exp_report *r, FILE *f);
void exp_report_csv(const struct exp_report *r, FILE *f);
/* One row per comparison of two strategies on a program: runs to the first
 * failure (measure runs_to_failure, fewer is better) and coverage of the
 * stopping metric at the budget (coverage_at_budget, more is better). */
void exp_report_comparisons_csv(const struct exp_report *r, FILE *f);
void exp_report_json(const struct exp_report *r, FILE *f);
void exp_report_html(const struct exp_report *r, FILE *f);

#endif
