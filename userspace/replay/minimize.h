/* SPDX-License-Identifier: MIT */
/*
 * concsched minimize DIR --run N (issue 14, docs/run.md "Minimizing a
 * failing schedule"): shrink a failing run's recorded schedule to fewer
 * preemptions that still fail, by replaying candidates in their order, and
 * store the smallest as a new run of the campaign.
 */
#ifndef CONCSCHED_MINIMIZE_H
#define CONCSCHED_MINIMIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/declog.h"

struct minimize_opts {
	const char *dir;
	int64_t run;
	unsigned times;	    /* replays a candidate must fail in, all of them (default 3) */
	unsigned max_tries; /* candidates replayed at most (default 60) */
	double run_timeout_s;
	bool vm;
	const char *emit; /* in the VM: write the result to this directory */
};

/* Preemptions of a pass order: switches away from a thread that passes
 * another point later. */
size_t minimize_preemptions(const struct declog_entry *v, size_t n);
/* The order with the preemption at step i undone: the preempted thread's
 * next run of steps moved up to step i. false when step i is no
 * preemption. out holds n entries. */
bool minimize_unpreempt(const struct declog_entry *v, size_t n, size_t i, struct declog_entry *out);

/* Exit status: 0 stored (or nothing left to remove), 2 error. */
int minimize_run(const struct minimize_opts *mo, int argc, char **argv);

#endif
