/* SPDX-License-Identifier: MIT */
/*
 * One run of a campaign's target (onerun.c): the session that stays loaded
 * from run to run (probes, scheduler), launching, the event loop that hands
 * decision points to the strategy, the deadlock report at a timeout.
 */
#ifndef CONCSCHED_ONERUN_H
#define CONCSCHED_ONERUN_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

#include "run/run_types.h"

/* Set by the SIGINT/SIGTERM/SIGHUP handler: stop after this run. */
extern volatile sig_atomic_t onerun_stop;
void onerun_on_signal(int sig);

bool onerun_sched_ext_supported(void);
/* Root, and sched_ext when the campaign steers; one line on stderr if not. */
int onerun_check_environment(const struct campaign *c);

/* A run of campaign c; strat NULL and steer false for an observed run. */
void onerun_init(struct onerun *r, struct campaign *c, struct strategy *strat, uint64_t seed,
		 bool steer);
/* The grace period after a run timeout of timeout_s under steering or
 * with the access probes on: the run timeout, at most RUN_MAX_GRACE; and at
 * least RUN_GRACE_FACTOR times unsteered_s, the campaign's longest
 * unsteered run (0: none measured), up to RUN_MAX_GRACE_UNSTEERED. */
double onerun_grace_s(double timeout_s, double unsteered_s);
/* Run the target once; the caller cleans up with onerun_cleanup. */
int onerun_do(struct onerun *r, uid_t uid, gid_t gid, bool drop);
void onerun_cleanup(struct onerun *r);
/* The run's stored configuration cfg (malloc'd; consumed) with
 * "steering": {"watchdog_releases", "rescued_threads"} appended when the
 * scheduler let a parked thread go on its own or a starved thread left it:
 * the run did not follow its strategy's decisions throughout, so its
 * failure may not follow from its schedule (report and replay say so).
 * cfg unchanged otherwise. */
char *onerun_config_steering(const struct onerun *r, char *cfg);
/* A captured stream's last RUN_OUTPUT_MAX bytes (malloc'd, NUL-ended). */
char *onerun_read_capture(int fd, size_t *len);

#endif
