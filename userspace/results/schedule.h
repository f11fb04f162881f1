/* SPDX-License-Identifier: MIT */
/*
 * A run's observed schedule, for people (report --schedule N, the HTML
 * swimlanes; docs/report.md): the order in which its threads went on from
 * their decision points (the DECLOG_PASS entries of its decision log), each
 * point with its function and file:line, the switches between threads
 * marked, and how the run ended.
 */
#ifndef CONCSCHED_SCHEDULE_H
#define CONCSCHED_SCHEDULE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "results/store.h"
#include "lib/declog.h"
#include "lib/json.h"

struct sched_step {
	size_t thread;	 /* index into sched_view.threads */
	uint64_t point;	 /* the thread's point index */
	char *function;	 /* NULL when unknown */
	char *file;	 /* NULL when unknown */
	int line;	 /* 0 when unknown */
	bool switched;	 /* a thread other than the step before's */
	bool preemption; /* ... and that thread goes on later: it was switched
			  * away from, not finished (a thread that blocked in
			  * between counts too) */
};

struct sched_view {
	int64_t run;
	char *outcome, *summary;
	char **threads; /* creation paths ("0", "0.1"...), in order of first step */
	size_t nthreads;
	struct sched_step *steps;
	size_t nsteps;
	size_t nswitches, npreemptions;
};

/* Load run `run`'s schedule. -ENOENT no such run, -ENODATA the run has no
 * schedule (not steered, or recorded before schedules were). */
int schedule_load(struct store *s, int64_t run, struct sched_view *v);
void schedule_free(struct sched_view *v);

/* One column per thread, one row per step, the end last. */
void schedule_write_text(const struct sched_view *v, FILE *f);
/* {"run", "outcome", "summary", "threads": [...], "steps": [...],
 * "switches", "preemptions"} as the value of key (NULL: an array element). */
void schedule_write_json(const struct sched_view *v, struct json *j, const char *key);
/* An SVG swimlane: a lane per thread, a box per step, preemptions marked,
 * each step's source line beside it when the file is readable. */
void schedule_write_svg(const struct sched_view *v, FILE *f);

/* The next order to try for a schedule that did not fail again: steps
 * i - 1 and i swapped, for the last i < from where they are two threads'
 * (their passes may have been dated in the wrong order: replay.c). Returns
 * that i, 0 when there is none; out holds n entries. */
size_t schedule_swap_before(const struct declog_entry *v, size_t n, size_t from,
			    struct declog_entry *out);

#endif
