/* SPDX-License-Identifier: MIT */
/*
 * What the CI renderings of a report share (report_junit.h, report_sarif.h;
 * docs/report.md "JUnit XML" and "SARIF"): a suite is one campaign, named
 * as the user knows it (the campaign directory, or an experiment's cell),
 * with its report as the JSON model of `report --json`
 * (concsched-report/1, parsed back with jansson) and its store, for the
 * schedules of its failing runs.
 */
#ifndef CONCSCHED_REPORT_CI_H
#define CONCSCHED_REPORT_CI_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "results/report.h"
#include "results/store.h"

struct report_ci_suite {
	const char *name;
	struct store *store;
	json_t *model; /* report_ci_model */
};

/* The report as a jansson object (bytes that are not UTF-8, from a
 * program's own messages, become '?'; the 64-bit seeds are strings). NULL
 * on failure (one line printed). */
json_t *report_ci_model(const struct report *r);

/* Accessors that tolerate a missing key: "", 0, NULL (which jansson's
 * array functions take as an empty array). */
const char *report_ci_str(const json_t *obj, const char *key);
long long report_ci_int(const json_t *obj, const char *key);
double report_ci_real(const json_t *obj, const char *key);
json_t *report_ci_array(const json_t *obj, const char *key);

/* The last path component of the campaign's program ("bank"). */
const char *report_ci_program_name(const json_t *model);
/* Run n's entry in runs.list, NULL if absent. */
json_t *report_ci_run(const json_t *model, long long n);
/* A failure whose run was not steered throughout ("steered_throughout":
 * false): true, with why ("not kept throughout (...)",
 * run_steering_describe) in buf. */
bool report_ci_steering_lost(const json_t *fail, char *buf, size_t len);

#endif
