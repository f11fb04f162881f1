/* SPDX-License-Identifier: MIT */
/*
 * The per-run thread model (seed 000 §2.3, ALGORITHMS.md §1): per thread
 * its sequence of actions, each with the lockset the thread held when the
 * action started, plus who created whom and after how many of the
 * creator's lock actions (the precedence relation of AC4). Built from the
 * sync probes' ring-buffer events (struct cs_event); libc-internal calls
 * never reach it (the probe drops them, counted in CS_SSTAT_INTERNAL).
 *
 * Raw addresses and tids live here; syncov.c turns them into sites and
 * abstract ids (ALGORITHMS.md §8) once the run is over.
 */
#ifndef CONCSCHED_THREAD_MODEL_H
#define CONCSCHED_THREAD_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "concsched_abi.h"

struct tm_action {
	uint64_t ts;
	uint64_t obj;  /* lock / cond / sem / barrier address, tid       */
	uint64_t site; /* runtime address of the call site               */
	uint64_t arg;  /* cs_event.arg                                   */
	uint32_t seq;
	uint16_t op;	   /* enum cs_op                                     */
	uint16_t flags;	   /* CS_EV_*                                        */
	uint32_t nlockset; /* lockset(p): locks held when the action started */
	uint64_t lockset[CS_LOCKSET_MAX];
};

struct tm_thread {
	uint32_t tgid, tid, gen;
	int32_t creator;      /* index of the creating thread, -1: none seen */
	uint32_t create_pos;  /* creator's lock actions before the create    */
	uint64_t create_site; /* 0: main thread or not seen created          */
	uint64_t start_routine;
	bool exited;
	uint32_t nlock_actions; /* acquisitions (thread_model_op_is_acquire)             */
	uint64_t nevents;
	struct tm_action *actions;
	size_t nactions, cap;
	uint32_t next_seq; /* to detect dropped events                    */
	uint64_t seq_gaps; /* events of this thread lost                  */
	uint64_t held[CS_LOCKSET_MAX];
	uint64_t held_site[CS_LOCKSET_MAX]; /* where each hold was taken          */
	uint32_t nheld;
	uint32_t held_overflow;
	/* The thread's latest event, kept even when the model is truncated
	 * (max_actions) and actions[] stops growing: the deadlock analysis
	 * pairs it with the current held[], never with a stale action. */
	struct tm_action last;
	bool has_last;
};

struct thread_model {
	struct tm_thread *threads;
	size_t nthreads, cap;
	uint64_t events;
	uint64_t by_op[CS_OP__COUNT];
	uint64_t seq_gaps;    /* sum over threads                            */
	uint64_t stored;      /* actions kept (bounded by max_actions)       */
	uint64_t max_actions; /* 0: unbounded                                */
	uint64_t truncated;   /* actions counted but not stored              */
};

void thread_model_init(struct thread_model *m, uint64_t max_actions);
void thread_model_free(struct thread_model *m);
/* Feed one event. Returns the thread it belongs to (never NULL). */
struct tm_thread *thread_model_add_event(struct thread_model *m, const struct cs_event *e);
/* A thread's synchronization event numbered seq (cs_event.seq: the probes
 * number each thread's events, a drop included) after the ones up to
 * *next_seq - 1: how many were lost between (0 for the next one, a late
 * or repeated number), and *next_seq past seq. EXEC events restart the
 * numbering and are not given here. */
uint32_t thread_model_seq_gap(uint32_t *next_seq, uint32_t seq);
/* Thread by (tgid, gen, tid); creates it if create. Index in *idx. */
struct tm_thread *thread_model_thread(struct thread_model *m, uint32_t tgid, uint32_t gen,
				      uint32_t tid, bool create, size_t *idx);

/* Drop the actions whose site is_internal() says are libc-internal
 * (static targets, where the probe cannot tell) and recount; returns how
 * many were dropped. */
uint64_t thread_model_drop_internal(struct thread_model *m,
				    bool (*is_internal)(const struct tm_thread *t, uint64_t site,
							void *arg),
				    void *arg);

/* A thread's latest event (stored in actions[] or not), NULL before any. */
const struct tm_action *thread_model_last(const struct tm_thread *t);

/* Op classes. Acquisitions include COND_WAKE (cond_wait reacquires its
 * mutex, obj in arg); releases include COND_WAIT (arg is the mutex). */
bool thread_model_op_is_acquire(unsigned op);
bool thread_model_op_is_release(unsigned op);
/* The lock an acquire/release op acts on. */
uint64_t thread_model_action_lock(unsigned op, uint64_t obj, uint64_t arg);
/* Short lowercase name ("lock", "cond_wake", ...) for summaries/JSON. */
const char *thread_model_op_name(unsigned op);

/* Lockset bookkeeping (pure; also used by tests): push returns false on
 * overflow (counted in *overflow); remove drops the innermost hold and
 * returns false if the lock was not held. */
bool thread_model_lockset_push(uint64_t *held, uint32_t *n, uint32_t *overflow, uint64_t lock);
bool thread_model_lockset_remove(uint64_t *held, uint32_t *n, uint32_t *overflow, uint64_t lock);

/* A thread whose last action is a: does it wait for a lock for good? A
 * blocking lock/rdlock/wrlock request; never a try or timed request
 * (CS_EV_NOWAIT), which gives up instead. */
bool thread_model_action_waits_for_good(const struct tm_action *a);

#endif
