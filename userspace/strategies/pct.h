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
 * Focused (pct_init_focused): the change points are drawn over the first
 * k focus steps only, the steps the caller marks (pct_thread_focus: the
 * thread's next step is one), e.g. the synchronization points and the
 * accesses to variables one thread writes and another reads. A change
 * point then falls on the thread about to make its c-th focus step; the
 * other steps still run by priority but are not counted, so a bug that
 * needs one thread of many to be preempted between two such accesses gets
 * (d-1)/k with k the focus steps, not every step of every thread.
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

struct pct_thread {
	uint8_t known;
	uint8_t demoted; /* dropped at a change point                    */
	uint8_t yielded; /* dropped below everyone by pct_yield           */
	uint8_t focus;	 /* its next step is a focus step (focused mode)  */
	uint32_t low;	 /* its change-point priority (1..d-1) if demoted */
	uint64_t yseq;	 /* when it last yielded (the latest runs last)   */
	uint64_t key;	 /* random initial priority (higher runs first)  */
};

struct pct {
	uint32_t depth;
	uint64_t k;			/* estimated number of steps */
	uint64_t change[PCT_MAX_DEPTH]; /* sorted change points      */
	uint32_t nchange, next_change;
	uint64_t steps;	      /* executed so far           */
	bool focused;	      /* change points count focus steps only */
	bool picked_focus;    /* the last pick's step is a focus step */
	uint64_t focus_steps; /* focus steps executed so far */
	uint64_t yields;      /* pct_yield calls so far    */
	struct cs_rng rng;
	struct pct_thread *threads;
	uint32_t nthreads;
};

/* depth d >= 1 (d-1 change points), k >= 1 steps. 0 or -EINVAL. */
int pct_init(struct pct *p, uint32_t depth, uint64_t k, uint64_t seed);
/* The same, with the change points drawn over k focus steps. */
int pct_init_focused(struct pct *p, uint32_t depth, uint64_t k, uint64_t seed);
/* Is thread t's next step a focus step? (Only focused mode reads it.) */
void pct_thread_focus(struct pct *p, uint32_t t, bool focus);
void pct_free(struct pct *p);
/* Thread t appears: it gets a random priority among the initial ones
 * (uniformly random rank, as a random permutation would). */
void pct_thread_add(struct pct *p, uint32_t t);
/* Whom to run for the next step among the runnable threads (unknown ones
 * are added). If the next step is a change point, the thread that would
 * run is first demoted (focused: if its next step is the next focus step
 * and that one is a change point). Returns -1 when n == 0. Calling it again before
 * pct_step() (re-evaluation) does not consume the change point twice. */
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
