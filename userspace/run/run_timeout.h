/* SPDX-License-Identifier: MIT */
/*
 * A run that does not end by itself (onerun.c): at the run timeout,
 * steering goes off (every kept thread goes on) and the access probes are
 * detached; a lock cycle is found sooner by a watch, and the deadlock
 * report says who holds what and who waits where.
 */
#ifndef CONCSCHED_RUN_TIMEOUT_H
#define CONCSCHED_RUN_TIMEOUT_H

#include <stdint.h>

#include "run/run_types.h"

void run_timeout_steering_off(struct onerun *r);
void run_timeout_probes_off(struct onerun *r);
/* The deadlock report of run r: sets r->has_deadlock and its text. A
 * cycle counts only when none of its threads ran (was put on a CPU)
 * while it waited: read twice DL_SAMPLE_NS apart, and against the mark
 * below for a request older than the mark (lib/taskcpu.h). */
void run_timeout_analyze_deadlock(struct onerun *r);
/* Read every thread's scheduling counters now (r->cpu_mark): done
 * run_timeout_mark_after_ns() after steering or the access probes
 * stopped, once the threads let go have gone into their requests, and
 * again after each look at them. */
void run_timeout_cpu_mark(struct onerun *r, uint64_t now);
/* A quarter of the grace period, DL_CHECK_NS at least. */
uint64_t run_timeout_mark_after_ns(double grace_s);

/*
 * A deadlock need not wait for the run timeout. Threads blocked in blocking
 * lock requests (lock, rdlock, wrlock; never a trylock or a timed lock),
 * each holding the lock the one before it waits for, can never go on: no
 * thread outside the cycle can unlock what they hold. The check is the
 * timeout's (analyze_deadlock), only sooner, and as careful:
 *  - the cycle must stay as it is (no event from its threads) for
 *    DL_SETTLE_NS under steering; then every thread is let go and steering
 *    stops, as at the timeout (a thread of the cycle we kept goes on into
 *    its lock request and blocks for real);
 *  - then it must stay for DL_CONFIRM_NS more without steering;
 *  - lost events (sequence gaps) or a truncated thread model stop the check:
 *    the last action seen might not be the last one.
 * A cycle that breaks up (it was not one) resets the watch, and the run
 * goes on unsteered as after the timeout's release. Checked every
 * DL_CHECK_NS. The watch returns DL_CONFIRMED when the run is a confirmed deadlock.
 */
#define DL_CHECK_NS   (200 * 1000 * 1000ULL)
#define DL_SETTLE_NS  (500 * 1000 * 1000ULL)
#define DL_CONFIRM_NS (2000 * 1000 * 1000ULL)
#define DL_SAMPLE_NS  (200 * 1000 * 1000L)

enum dl_watch { DL_NONE, DL_STEERING_OFF, DL_CONFIRMED };
/* The lock-cycle watch of run r at time now (run_timeout.c). */
enum dl_watch run_timeout_lock_cycle_watch(struct onerun *r, uint64_t now);

#endif
