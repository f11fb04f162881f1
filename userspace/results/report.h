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

#include "results/saturation.h"
#include "results/store.h"

#define REPORT_JSON_SCHEMA "concsched-report/1"

struct report_options {
	/* The campaign directory as the user names it: used verbatim (shell
	 * quoted) in replay commands. */
	const char *dir;
	/* Saturation rule; NULL = the campaign's own (--saturation given to
	 * run), else the default 50 runs / 0.1. */
	const struct sat_config *sat;
	/* Replay commands get --vm: the machine that will replay has no
	 * sched_ext (cmd_report: this one; run --vm: the host). */
	bool replay_vm;
};

struct report;

/* Load everything a report shows. 0 or -errno. */
int report_load(struct store *s, const struct report_options *opt, struct report **out);
void report_free(struct report *r);
/* Number of failures recorded (exit status 1 of `report` and `run`). */
size_t report_failure_count(const struct report *r);
/* -j N: the runs whose targets ran at the same time as run's, at most max
 * of them into out (in the order of their start); returns how many there
 * are (0 for an unknown run). */
size_t report_run_beside(const struct report *r, int64_t run, int64_t *out, size_t max);

void report_write_text(const struct report *r, FILE *f);
void report_write_json(const struct report *r, FILE *f);
void report_write_html(const struct report *r, FILE *f);

/* A task key with every store site reference "@N" replaced by
 * "function (file:line)" (or "object+0xoff"); malloc'd. */
/* Every covered task of metric with its sites resolved, as text or JSON
 * (concsched report --tasks). -ENOENT for a metric the campaign lacks. */
int report_write_tasks(struct store *s, const char *metric, bool json, FILE *f);
char *report_task_text(struct store *s, const char *key);

/* "sudo concsched replay 'DIR' --run N" into buf, with this concsched as
 * the user types it (cs_self_command: "sudo " only for a user who is not
 * root, the binary's path when PATH finds another concsched or none). */
const char *report_replay_command(const char *dir, long run, char *buf, size_t len);

#endif
