/* SPDX-License-Identifier: MIT */
/*
 * concsched observe (cli/cmd_observe.c parses its options): run a program
 * once, or watch a running process or the whole system, under the
 * synchronization probes with no scheduling control, and report the
 * concurrency coverage it showed (docs/observe.md).
 */
#ifndef CONCSCHED_OBSERVE_H
#define CONCSCHED_OBSERVE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "coverage/syncov.h"
#include "coverage/thread_model.h"
#include "kernel/launcher.h"
#include "kernel/symbolize.h"
#include "kernel/sync.h"
#include "kernel/target.h"

#define OBSERVE_MAX_ACTIONS 200000 /* thread-model actions kept (~22 MB) */

enum observe_mode { OBS_LAUNCH, OBS_PID, OBS_ALL };

struct observe {
	enum observe_mode mode;
	bool json, follow_forks;
	const char *out_path, *comm, *cgroup;
	double duration_s;
	pid_t pid;
	char **argv;
	int argc;
	struct target_info ti;
	struct sync_runtime rt;
	struct sync_probes sp;
	struct site_resolver res;
	size_t told; /* res's files the probes know of (syncov_resolver_tell) */
	struct thread_model tm;
	struct launch l;
	bool launched;
	/* The launched target's probes are for its pid: attached at its exec
	 * (before it, it shares our memory, launcher.h). */
	bool attach_at_exec;
	int at_exec_err;
	uint32_t *seen; /* tgid << 8 | gen (low bits) already scanned */
	size_t nseen, capseen;
	int exit_status; /* wait status of the launched target, -1 unknown */
	bool stopped;	 /* by signal or --duration */
	uint64_t t0, t1;
	struct syncov_run run;
	uint64_t stats[CS_SSTAT__COUNT];
	uint64_t internal_static; /* events dropped by the static filter */
};

/* A process pid runs (not a zombie). */
bool observe_pid_alive(pid_t pid);
/* Observe as o says (filled by the options), then write the report: 0, or
 * EXIT_USAGE when setting up, observing or writing the report failed (one
 * line said). Until it returns, SIGINT and SIGTERM stop the observation. */
int observe_run(struct observe *o);

#endif
