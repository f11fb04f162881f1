/* SPDX-License-Identifier: MIT */
/*
 * The event every coverage consumer reads (the metrics, the GoldiLocks race
 * engine, the MAP matcher, the strategies): one observed action in abstract
 * ids, its lockset, the cs_event converter, and the small containers they
 * share (a u64 map and a coverage task set). The lowest file of coverage/:
 * it includes nothing of the folder.
 */
#ifndef CONCSCHED_COV_EVENT_H
#define CONCSCHED_COV_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "concsched_abi.h"

/* ---- the event the metrics consume ------------------------------------ */

/* Locks a thread holds at once; deeper nesting is truncated (and counted
 * in cov_event_conv.lockset_overflow) because real code rarely nests more. */
#define COV_LOCKSET_MAX 8

/* Sorted, duplicate-free set of lock ids. */
struct cov_lockset {
	uint32_t n;
	uint32_t id[COV_LOCKSET_MAX];
};

/* One observed action in abstract ids (ALGORITHMS.md notation). */
struct cov_event {
	uint32_t thread;	 /* abstract thread id, small dense integer        */
	uint16_t op;		 /* enum cs_op                                     */
	uint16_t flags;		 /* CS_EV_* (CS_EV_BLOCKED drives the Sync metric) */
	uint32_t site;		 /* site id (stable across runs)                   */
	uint32_t func;		 /* function id of the site, 0 = unknown           */
	uint32_t obj;		 /* var id (accesses), lock/sync id (sync ops),
				  * abstract thread id (CREATE/JOIN: the child)     */
	struct cov_lockset held; /* lockset(p): locks held when p starts     */
	/* Raw addresses for the happens-before detector (hb.h), 0 unknown:
	 * accesses: the effective address; sync ops: the object's; */
	uint64_t addr;
	uint64_t addr2;	  /* COND_WAIT / COND_WAKE: the mutex's address;
			   * ONCE_ENTER: 1 if once_control said done      */
	uint32_t size;	  /* accesses: bytes accessed (0: unknown)        */
	uint32_t var_off; /* accesses: byte offset of addr in the variable */
};

bool cov_event_op_is_access(unsigned op);
bool cov_event_op_reads(unsigned op);  /* READ or RW */
bool cov_event_op_writes(unsigned op); /* WRITE or RW */
bool cov_event_op_acquires(unsigned op);
bool cov_event_op_releases(unsigned op);
/* Sync edges: unlock/signal/broadcast/post release; lock/cond wake/sem wait acquire. */
bool cov_event_op_sync_releases(unsigned op);
bool cov_event_op_sync_acquires(unsigned op);
/* lock, rdlock or wrlock requested (the entry of a blocking acquisition) */
bool cov_event_op_is_lock_request(unsigned op);
/* Lock actions in the LP sense: any operation on a lock object. */
bool cov_event_op_is_lock_action(unsigned op);

void cov_event_lockset_clear(struct cov_lockset *ls);
bool cov_event_lockset_has(const struct cov_lockset *ls, uint32_t id);
/* Insert keeping order; 0, or -ENOSPC when COV_LOCKSET_MAX is reached. */
int cov_event_lockset_add(struct cov_lockset *ls, uint32_t id);
void cov_event_lockset_del(struct cov_lockset *ls, uint32_t id);
void cov_event_lockset_intersect(struct cov_lockset *dst, const struct cov_lockset *other);
bool cov_event_lockset_meets(const struct cov_lockset *a, const struct cov_lockset *b);
/* "{l1,l4}" into buf; returns buf. */
char *cov_event_lockset_fmt(const struct cov_lockset *ls, char *buf, size_t len);

/* ---- small containers shared by the metric, race and MAP files --------- */

/* u64 -> u64 open-addressing map (key ~0 is reserved). */
struct cov_u64map {
	uint64_t *keys, *vals;
	size_t cap, count;
};

void cov_event_u64map_init(struct cov_u64map *m);
void cov_event_u64map_free(struct cov_u64map *m);
/* Pointer to the value slot of key, or NULL if absent. */
uint64_t *cov_event_u64map_get(const struct cov_u64map *m, uint64_t key);
/* Pointer to the value slot, inserting `init` if absent (*created set). */
uint64_t *cov_event_u64map_put(struct cov_u64map *m, uint64_t key, uint64_t init, bool *created);

/* A set of coverage task keys in insertion order, with per-task weight and
 * hit count. Covered/uncovered across runs = keep the set alive. */
struct cov_taskset {
	char **keys;
	uint32_t *weights;
	uint64_t *hits;
	size_t count, cap;
	size_t *slots; /* hash index: slot -> key index + 1, 0 = empty */
	size_t nslots;
	uint64_t weight_sum; /* sum of weights of distinct tasks */
};

void cov_event_taskset_init(struct cov_taskset *ts);
void cov_event_taskset_free(struct cov_taskset *ts);
/* Add (or hit again) `key`; 1 if it is new, 0 if already present. */
int cov_event_taskset_add(struct cov_taskset *ts, const char *key, uint32_t weight);
bool cov_event_taskset_has(const struct cov_taskset *ts, const char *key);
static inline size_t cov_taskset_count(const struct cov_taskset *ts)
{
	return ts->count;
}

/* An access as the metrics see it: the event itself, or for a plain (not
 * lock-prefixed) read-modify-write, which is not atomic, its read and then
 * its write. Fills out[], returns 1 or 2. */
size_t cov_event_access_events(const struct cov_event *ev, bool split, struct cov_event out[2]);

/* ---- converter from the ring-buffer event ------------------------------ */

/* Maps raw runtime values to abstract ids. Any callback may be NULL: the
 * default interns values densely in order of first appearance (fine inside
 * one run; the controller should pass its abstract-id mappers so keys match
 * across runs). Per-thread locksets are rebuilt from the lock operations. */
struct cov_event_conv {
	void *ctx;
	uint32_t (*thread_id)(void *ctx, uint32_t tid);
	uint32_t (*site_id)(void *ctx, uint64_t site_addr);
	uint32_t (*func_id)(void *ctx, uint64_t site_addr);
	uint32_t (*var_id)(void *ctx, uint64_t addr, uint32_t size);
	uint32_t (*sync_id)(void *ctx, uint64_t addr);

	struct cov_u64map tids, sites, vars, syncs; /* default interning */
	struct cov_lockset *held;		    /* per abstract thread */
	uint32_t nheld;
	uint64_t lockset_overflow;
};

void cov_event_conv_init(struct cov_event_conv *c);
void cov_event_conv_free(struct cov_event_conv *c);
/* Translate one probe event; 0, or -ENOENT for CS_OP_NONE, unknown ops,
 * CS_OP_PROC_EXIT and CS_OP_STDIO (decision points, not coverage events).
 * For an access event it only interns ids (no lockset change), so it may
 * also translate a pending access for map_strategy_before_access(). */
int cov_event_from_cs(struct cov_event_conv *c, const struct cs_event *ev, struct cov_event *out);

#endif
