/* SPDX-License-Identifier: MIT */
/*
 * The strategy host (strat_host.c): what stands between a strategy and the
 * threads it steers, one for a campaign's run, a replay (a run) and
 * attach's window alike. It keeps the thread table a strategy sees
 * (struct strat_run's), asks the strategy at each decision point and
 * applies its verdict (proceed, release, delay, yield, halt, park),
 * queues the delayed threads, holds the halted ones until every other
 * thread is parked (a halted exit until no other thread can run: every
 * other one blocked or gone), and logs each decision when the owner gives it a
 * decision log. The owner (run/onerun.c, run/attach.c) says through its
 * hooks how a thread goes on.
 */
#ifndef CONCSCHED_STRAT_HOST_H
#define CONCSCHED_STRAT_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/declog.h"
#include "lib/delayq.h"
#include "strategies/strategy.h"

#define STRAT_HOST_MAX_DELAYS 4096
#define STRAT_HOST_MAX_HALTED 64

struct strat_host {
	struct strategy *strat; /* NULL: no strategy, every call a no-op */
	struct strat_run *sr;	/* the run it steers; its table: sr->threads */
	struct declog *log;	/* each decision logged here; NULL: not logged */
	size_t max_delays;	/* delayed at once (<= STRAT_HOST_MAX_DELAYS), then
				 * a delay is let go at once */
	uint64_t halt_us;	/* 0: a halt waits for every other thread to park;
				 * else it is a delay this long (attach: a
				 * service's threads are rarely all parked) */
	size_t max_threads;	/* the table's cap (0: none) */
	void *ctx;		/* the owner's, passed to its hooks */
	/* A new thread, before the strategy sees it (may be NULL). */
	void (*born)(void *ctx, struct strat_thread *t);
	/* t goes on from its decision point now. */
	void (*go)(void *ctx, struct strat_thread *t);
	/* t waits in the delay queue from now (may be NULL). */
	void (*delayed)(void *ctx, struct strat_thread *t);
	/* A delayed or halted thread goes on. */
	void (*resume)(void *ctx, uint32_t tid);

	struct delay delays[STRAT_HOST_MAX_DELAYS];
	size_t ndelays;
	uint32_t halted[STRAT_HOST_MAX_HALTED];
	bool halted_exit[STRAT_HOST_MAX_HALTED]; /* halted at the process's end */
	size_t nhalted;
	/* delays, yields and halts made (the log's), and each verdict's count */
	uint64_t injected, ndelayed, nyields, nhalts;
};

/* A new thread tid named path (the log's abstract thread) into the table,
 * born() then the strategy's thread_start; NULL when the table is full. */
struct strat_thread *strat_host_thread_add(struct strat_host *h, uint32_t tid, const char *path);
/* The thread tid in the table, or NULL. */
struct strat_thread *strat_host_thread_find(struct strat_host *h, uint32_t tid);
/* tid exited: out of the table (its last entry takes its place). */
void strat_host_thread_drop(struct strat_host *h, uint32_t tid);
/* The strategy decides at point p and its verdict is applied (and
 * logged): the thread goes on, waits in the delay queue, halts, or is
 * kept until strat_host_release. */
void strat_host_decide(struct strat_host *h, const struct strat_point *p);
/* A kept thread is let go (struct strat_run's release): logged as a
 * release with arg at its last point. */
void strat_host_release(struct strat_host *h, struct strat_thread *t, int64_t arg);
/* The delayed threads that are due go on (all: every one). */
void strat_host_delays_due(struct strat_host *h, bool all);
/* Milliseconds until the next delay is due (delayq_next_ms). */
int strat_host_next_delay_ms(const struct strat_host *h);
/* Every runnable thread is parked: the halted ones go on first, then the
 * strategy's all_parked decides. A thread halted at the end of the
 * process (CS_OP_PROC_EXIT) stays while the note names a parked thread
 * other than the halted exits (one waiting for its decision, in the delay
 * queue, or halted at a point and let go now: each will run again): it
 * goes once every other thread is blocked or gone, or by the scheduler's
 * watchdog. */
void strat_host_all_parked(struct strat_host *h, const struct policy_note *n);
/* Steering stops: every delayed thread goes on, the halted ones are
 * forgotten (the scheduler lets every park go). */
void strat_host_stop(struct strat_host *h);

#endif
