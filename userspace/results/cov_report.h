/* SPDX-License-Identifier: MIT */
/*
 * The concurrency coverage of a window (SP pairs, GoodLock, HBPair, Sync
 * tasks with their sites) as observe and attach print it: the text lines
 * and the JSON "metrics" object (docs/observe.md, docs/attach.md).
 */
#ifndef CONCSCHED_COV_REPORT_H
#define CONCSCHED_COV_REPORT_H

#include <stdbool.h>
#include <stdio.h>

#include "coverage/syncov.h"
#include "lib/json.h"

/* A site key as a JSON object named name: key, text, function and
 * function_offset, file and line (the last four when known). */
void cov_report_json_site(struct json *j, const char *name, const char *key);
/* Per metric, "NAME tasks: N" and one line per task (detail, sites, hits). */
void cov_report_text(FILE *f, const struct syncov_set *tasks);
/* "metrics": per metric its count and tasks (key, hits, sites). described:
 * each task's detail too, and its sites as cov_report_json_site objects
 * (observe); else the sites as their keys (attach). */
void cov_report_json(struct json *j, const struct syncov_set *tasks, bool described);

#endif
