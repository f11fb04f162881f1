/* SPDX-License-Identifier: MIT */
/*
 * Campaign reports (`concsched report DIR [--json] [--html FILE]`, and the
 * final summary of `concsched run`): program, runs and their outcomes,
 * coverage per metric with its saturation verdict (saturation.h), failures
 * with their sites (function file:line) and the exact replay command, race
 * warnings. Three renderings of one loaded model: text for terminals, JSON
 * (schema in docs/report.md, "schema": "concsched-report/1") and a
 * self-contained HTML page with an inline SVG coverage chart per metric.
 *
 * Works on any campaign the store opens, including one whose `run` was
 * killed: only committed runs are reported.
 */
#ifndef CONCSCHED_REPORT_H
#define CONCSCHED_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "results/report_model.h"
#include "results/saturation.h"
#include "results/store.h"

#define REPORT_JSON_SCHEMA "concsched-report/1"

void report_write_text(const struct report *r, FILE *f);
void report_write_json(const struct report *r, FILE *f);
void report_html_write(const struct report *r, FILE *f);

/* A task key with every store site reference "@N" replaced by
 * "function (file:line)" (or "object+0xoff"); malloc'd. */
/* Every covered task of metric with its sites resolved, as text or JSON
 * (concsched report --tasks). -ENOENT for a metric the campaign lacks. */
int report_tasks_write(struct store *s, const char *metric, bool json, FILE *f);
char *report_tasks_key_text(struct store *s, const char *key);

/* "sudo concsched replay 'DIR' --run N" into buf, with this concsched as
 * the user types it (self_command: "sudo " only for a user who is not
 * root, the binary's path when PATH finds another concsched or none). */
const char *report_replay_command(const char *dir, long run, char *buf, size_t len);

/* Shared by the renderers (report.c: text; report_json.c, report_html.c). */
/* "native", "VM", or "?" for a campaign's where_ran. */
const char *report_where_text(const char *where);
/* report_replay_command for run of r, with --vm when r's replays need it. */
const char *report_replay_cmd(const struct report *r, long run, char *buf, size_t len);
/* "3, 4 and 2 more": the runs beside one (-j N). */
void report_text_beside(const struct run_beside *b, FILE *f);
/* The run at which metric m saturated, -1 not (yet). */
long report_metric_sat_run(const struct report_metric *m);
/* The unit of r's saturation window: "run" or "s". */
const char *report_sat_unit(const struct report *r);
/* "2026-11-28 01:42:21 UTC" from ns since the epoch. */
void report_format_time(int64_t ns, char *buf, size_t len);

#endif
