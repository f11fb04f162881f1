/* SPDX-License-Identifier: MIT */
/*
 * concsched sched (cli/cmd_sched.c parses its options): n copies of a
 * program under the concsched scheduler with a manual policy, parked,
 * delayed or yielded at chosen functions, and the report of what the
 * scheduler did (docs/sched.md).
 */
#ifndef CONCSCHED_SCHED_RUN_H
#define CONCSCHED_SCHED_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "kernel/launcher.h"
#include "kernel/scx_concsched.h"

#define SCHED_CMD_MAX_POINTS  16
#define SCHED_CMD_MAX_SAMPLES 100000
#define SCHED_CMD_MAX_COPIES  (CS_SCHED_MAX_TARGETS - 1)

enum release_rule {
	RELEASE_ALL_PARKED, /* when every runnable thread is parked: the oldest */
	RELEASE_NEVER,	    /* only the watchdog lets threads go               */
	RELEASE_AFTER,	    /* each parked thread after a fixed time           */
};

struct point_spec {
	char *symbol;
	enum cs_action act;
	uint64_t delay_ns;
	uint64_t skip, count;
	uint32_t index;
};

struct samples {
	int64_t *v;
	size_t n, cap;
};

struct sched_run {
	struct sched_ctl *ctl;
	struct point_spec points[SCHED_CMD_MAX_POINTS];
	int nr_points;
	enum release_rule rule;
	uint64_t release_after_ns;
	uint64_t all_parked_notes;
	uint64_t user_releases;
	struct samples release_lat; /* release -> running, ns */
	struct samples delay_late;  /* running - deadline, ns */
	struct samples parked;	    /* probe -> running, ns   */
	struct samples to_park;	    /* probe -> parked, ns    */
	uint64_t park_ips[8];	    /* distinct user IPs threads were parked at */
	int nr_park_ips;
	char state_during[32];
	char ops_during[64];
	int max_threads;
};

/* Set by sched_run_on_signal (SIGINT, SIGTERM): the run stops. */
extern volatile sig_atomic_t sched_run_interrupted;
void sched_run_on_signal(int sig);

/* One load -> launch -> run -> unload cycle of n copies of the program,
 * copy k the scheduler's target k. Returns the program's exit status (the
 * first copy's that is not 0; 1 on timeout), or EXIT_USAGE when the
 * environment failed. */
int sched_run_once(struct sched_run *r, int n, const struct scx_concsched_opts *so,
		   const struct launch_opts *lo, const char *path, unsigned run_timeout_ms,
		   bool pretty);

#endif
