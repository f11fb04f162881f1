/* SPDX-License-Identifier: MIT */
/*
 * PCT, probabilistic concurrency testing (Burckhardt et al., ASPLOS'10;
 * ALGORITHMS.md §10): the comparison baseline. Threads get random distinct
 * priorities as they appear; d-1 change points are drawn uniformly from
 * the first k steps; the highest-priority runnable thread always runs, and
 * at change point i the running thread drops to priority i (below every
 * initial priority). A bug of depth d is found with probability at least
 * 1/(n k^(d-1)) per run. A thread that yields (pct_yield: the caller saw it
 * spin, waiting for what only another thread can do) drops below every
 * other thread, as a yield lowers a thread's priority in PCT's own
 * implementation; a yield is not a change point.
 *
 * Split (pct_init_split): the change points are drawn over two pools of
 * focus steps, the steps the caller marks (pct_thread_pool: the pool of
 * the thread's next step), e.g. the synchronization points (PCT_POOL_SYNC)
 * and the accesses to variables one thread writes and another reads
 * (PCT_POOL_CROSS). With d-1 >= 2 change points one is drawn uniformly
 * over the ksync synchronization points and the other d-2 over the kcross
 * accesses; with one change point (d = 2) a coin drawn from the seed picks
 * its pool. A change point (pool q, c) falls on the thread about to make
 * pool q's c-th step; the other steps still run by priority but are not
 * counted. A bug that needs one change at a particular synchronization
 * point then gets 1/ksync (d = 2: 1/(2 ksync)), one that needs it at a
 * particular cross-thread access (d-2)/kcross (d = 2: 1/(2 kcross)): each
 * pool's count, not the other's, is in its bound. Pools left empty
 * (ksync or kcross 0) give their change points to the other.
 *
 * Plain C and deterministic from the seed: the caller (serial mode of the
 * scheduler) asks pct_pick() whom to run and reports each executed step.
 */
#ifndef CONCSCHED_PCT_H
#define CONCSCHED_PCT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/rng.h"

#define PCT_MAX_DEPTH 64

/* The pools of a split engine's change points; unsplit, every step counts
 * in pool 0 whatever the caller marks. */
enum pct_pool {
	PCT_POOL_SYNC,		   /* synchronization points */
	PCT_POOL_CROSS,		   /* accesses to cross-thread variables */
	PCT_POOLS,		   /* how many */
	PCT_POOL_NONE = PCT_POOLS, /* a step no change point counts */
};

struct pct_thread {
	uint8_t known;
	uint8_t demoted; /* dropped at a change point                    */
	uint8_t yielded; /* dropped below everyone by pct_yield           */
	uint8_t pool;	 /* its next step's pool (split mode)             */
	uint32_t low;	 /* its change-point priority (1..d-1) if demoted */
	uint64_t yseq;	 /* when it last yielded (the latest runs last)   */
	uint64_t key;	 /* random initial priority (higher runs first)  */
};

struct pct {
	uint32_t depth;
	uint64_t k;			/* estimated number of steps (split: both pools) */
	uint64_t kpool[PCT_POOLS];	/* split: each pool's */
	uint64_t change[PCT_MAX_DEPTH]; /* change points, sorted within a pool */
	uint8_t change_pool[PCT_MAX_DEPTH];
	uint64_t consumed;		/* bit i: change point i fired or expired */
	uint32_t nchange, next_change;	/* next_change: how many consumed */
	uint64_t steps;			/* executed so far           */
	bool split;			/* change points count the pools' steps */
	uint8_t picked_pool;		/* the last pick's step's pool */
	uint64_t pool_steps[PCT_POOLS]; /* each pool's steps executed so far */
	uint64_t yields;		/* pct_yield calls so far    */
	struct cs_rng rng;
	struct pct_thread *threads;
	uint32_t nthreads;
};

/* depth d >= 1 (d-1 change points), k >= 1 steps. 0 or -EINVAL. */
int pct_init(struct pct *p, uint32_t depth, uint64_t k, uint64_t seed);
/* Split: the change points over ksync synchronization points and kcross
 * cross-thread accesses (depth-1 <= ksync + kcross). 0 or -EINVAL. */
int pct_init_split(struct pct *p, uint32_t depth, uint64_t ksync, uint64_t kcross, uint64_t seed);
/* The pool of thread t's next step (only split mode reads it). */
void pct_thread_pool(struct pct *p, uint32_t t, enum pct_pool pool);
void pct_free(struct pct *p);
/* Thread t appears: it gets a random priority among the initial ones
 * (uniformly random rank, as a random permutation would). */
void pct_thread_add(struct pct *p, uint32_t t);
/* Whom to run for the next step among the runnable threads (unknown ones
 * are added). If the next step is a change point, the thread that would
 * run is first demoted (split: if its next step is its pool's change
 * point), and so on for the thread that would run then. Returns -1 when n == 0. Calling it again
 * before pct_step() (re-evaluation) does not consume the change point twice. */
int64_t pct_pick(struct pct *p, const uint32_t *runnable, size_t n);
/* The highest-priority runnable thread, no change point considered (a
 * decision that is not a step); -1 when n == 0. */
int64_t pct_highest(struct pct *p, const uint32_t *runnable, size_t n);
/* One step executed. */
void pct_step(struct pct *p);
/* Thread t yields: it drops below every other thread, the yielded ones
 * included (the latest to yield runs last), until a change point demotes
 * it. Neither a step nor a change point. */
void pct_yield(struct pct *p, uint32_t t);
/* Priority as a number for the scheduler's CS_SERIAL_PRIO mode (higher
 * runs first): with Y yielded threads, those 1..Y (the latest to yield
 * lowest), demoted threads Y+1..Y+d-1, the others Y+d + their rank. */
uint32_t pct_priority(const struct pct *p, uint32_t t);

#endif
