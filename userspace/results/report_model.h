/* SPDX-License-Identifier: MIT */
/*
 * A campaign report's model (report.h): the campaign loaded once, its
 * runs, metrics with their saturation, failures, grouped warnings, the
 * strategy's summaries. report_model.c loads it; report.c, report_json.c
 * and report_html.c render it.
 */
#ifndef CONCSCHED_REPORT_MODEL_H
#define CONCSCHED_REPORT_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "results/oracle.h"
#include "results/saturation.h"
#include "results/run_steering.h"
#include "results/store.h"

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

struct declog_summary;
struct report;

/* Load everything a report shows. 0 or -errno. */
int report_load(struct store *s, const struct report_options *opt, struct report **out);
void report_free(struct report *r);
struct report_site {
	int64_t id;
	char *text; /* "function file:line" */
	char *function, *file, *object;
	int line;
	uint64_t offset;
};

struct report_failure {
	int64_t run;
	char *kind, *summary, *detail;
	char *arm; /* the sub-strategy that ran it (a portfolio's "arm"), or NULL */
	/* The recording's steering lost (results/run_steering.h; all 0: the
	 * strategy's decisions held throughout). */
	struct run_steering steering;
	uint64_t replays, reproduced; /* the latest `replay --times K` of it (0: none) */
	struct report_site *sites;
	size_t nsites;
};

struct report_warning {
	char *sig; /* grouping key: kind, variable, sites (no sites: locks too) */
	char *kind, *variable, *threads, *locks;
	struct report_site *sites;
	size_t nsites;
	size_t runs; /* runs that had it */
	int64_t first_run, last_run;
};

struct report_metric {
	char *name;
	int64_t covered;
	int64_t estimated;	   /* requirements, 0 when none were estimated */
	int64_t covered_estimated; /* covered tasks that were estimated */
	bool stop;		   /* the campaign's stopping metric */
	struct store_series_point *pts;
	size_t npts;
	struct sat_result sat;
	long sat_at; /* index into pts of the first saturated point, -1 */
};

#define REPORT_BESIDE_MAX 8

struct report {
	struct store *store;
	struct store_campaign c;
	char *dir;
	bool replay_vm;
	struct sat_config sat;
	struct store_run *runs;
	size_t nruns;
	size_t outcomes[OUTCOME_COUNT + 1]; /* last: unknown names */
	double total_s;
	/* -j N: per run, the runs whose targets ran at the same time
	 * (find_overlaps; the first REPORT_BESIDE_MAX of them, and how many) */
	struct run_beside {
		int64_t runs[REPORT_BESIDE_MAX];
		size_t n;
	} * beside;
	size_t noverlapped; /* runs that ran beside another */
	int64_t jobs;	    /* the campaign's -j */
	/* The strategy's summary of the runs' decision logs, NULL: none. */
	struct declog_summary *logsum;
	struct report_metric *metrics;
	size_t nmetrics;
	struct report_failure *failures;
	size_t nfailures;
	struct report_warning *warnings;
	size_t nwarnings;
	struct store_input *inputs; /* a merged campaign's inputs, else none */
	size_t ninputs;
	/* The strategy's note summaries (strategy_notes with a "summary"),
	 * e.g. a GA's generations, in run order. */
	char **log;
	size_t nlog;
};

/* Number of failures recorded (exit status 1 of `report` and `run`). */
size_t report_model_failure_count(const struct report *r);
/* -j N: the runs whose targets ran at the same time as run's, at most max
 * of them into out (in the order of their start); returns how many there
 * are (0 for an unknown run). */
size_t report_model_run_beside(const struct report *r, int64_t run, int64_t *out, size_t max);
/* Run's entry of r->beside, NULL for an unknown run. */
const struct run_beside *report_model_beside_of(const struct report *r, int64_t run);

#endif
