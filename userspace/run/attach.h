/* SPDX-License-Identifier: MIT */
/*
 * The attach window (attach.c, docs/attach.md): the selected running
 * processes get the synchronization probes (and with access the access
 * probes), their threads go into SCHED_EXT when the strategy steers, and
 * the window's coverage is printed (and stored with dir).
 */
#ifndef CONCSCHED_ATTACH_H
#define CONCSCHED_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The options of `concsched attach`; exactly one of pid, comm and cgroup. */
struct attach_opts {
	pid_t pid;
	const char *comm, *cgroup, *spec, *check, *dir;
	double duration_s, check_every_s, epoch_s;
	bool json, allow_other, access;
	uint64_t seed, steer_cap;
	const char **inc, **exc; /* --sites-include / --sites-exclude */
	size_t ninc, nexc;
};

/* Attach, run the window until it ends, detach and report. The exit
 * status: 0 the window ended (duration, signal, target exited), 1 the
 * target crashed or the check failed, 2 an error (printed). */
int attach_run(const struct attach_opts *o);

#endif
