/* SPDX-License-Identifier: MIT */
/*
 * `concsched attach --access` (attach_access.c): access probes on the
 * memory-access sites of a running process's program, the window's
 * accesses and synchronization fed to the race detector,
 * and each access as a decision point for the noise strategy.
 */
#ifndef CONCSCHED_ATTACH_ACCESS_H
#define CONCSCHED_ATTACH_ACCESS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "concsched_abi.h"

struct attach_access;
struct cov_event;
struct json;
struct policy;
struct sched_ctl;
struct store;
struct sync_probes;

struct attach_access_opts {
	pid_t pid;		/* the first process: its program's sites */
	struct sync_probes *sp; /* the accesses go into its ring buffer */
	struct sched_ctl *ctl;	/* steering: its maps, accesses park */
	struct policy *pol;	/* steering: the access ops park */
	uint64_t steer_cap;	/* steered hits per site in the window, then 1 in 64 */
	const char **include;	/* --sites-include globs */
	size_t ninclude;
	const char **exclude; /* --sites-exclude globs */
	size_t nexclude;
};

/* Find the sites of the program PID runs, load and attach the probes for
 * PID. 0 or -errno (printed, one line). */
int attach_access_open(struct attach_access **out, const struct attach_access_opts *o);
/* Another process of the selection: probed when it runs the same program
 * (true), else not (false). */
bool attach_access_add_pid(struct attach_access *aa, pid_t pid);
/* Every event of the window, in ring order. For an access a thread is
 * parked at (hold): it is fed when the thread goes on (attach_access_pass);
 * returns the access in window ids when its variable is shared so far
 * (touched by two threads), else NULL. */
const struct cov_event *attach_access_event(struct attach_access *aa, const struct cs_event *e,
					    bool hold, bool *split);
/* The thread goes on: its held access has executed. */
void attach_access_pass(struct attach_access *aa, uint32_t tid);
/* Detach the probes (the window's end). */
void attach_access_detach(struct attach_access *aa);
void attach_access_report_text(struct attach_access *aa, FILE *f);
void attach_access_report_json(struct attach_access *aa, struct json *j);
/* The window's race warnings into the store (inside the window's run). */
void attach_access_store(struct attach_access *aa, struct store *st);
uint64_t attach_access_warnings(struct attach_access *aa);
void attach_access_free(struct attach_access *aa);

#endif
