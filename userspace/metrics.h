/* SPDX-License-Identifier: MIT */
/*
 * Concurrency coverage metrics as coverage-task producers (ALGORITHMS.md
 * sections 3-5; seeds 002, 003, 004 section 3.2). Plain C, no kernel: the
 * input is a stream of `struct cov_event` (one observed action with abstract
 * ids), the output is, per metric, a set of canonical text task keys built
 * from site ids and abstract ids only (never raw addresses or TIDs), so the
 * same task seen in two runs has the same key (ALGORITHMS.md section 8).
 *
 * Key vocabulary: s<N> site id, v<N> variable id, l<N> lock/sync object id,
 * t<N> abstract thread id, f<N> function id, {l1,l2} a lockset.
 *
 * Metrics (one task set each, see docs/metrics.md for the key formats):
 *   LP, ConcurPairs, Avio*, HBPair* (incl. reads-from access pairs),
 *   GoodLock*, Eraser* (with exclusive'), GoldiLock-SC (+ WGoldiLockSC),
 *   Sync, function pairs, MAP (map_patterns.h).
 * The MAP matcher and the GoldiLocks race engine (races.h) are fed from
 * cov_metrics_feed() too, so one call per event drives everything.
 */
#ifndef CONCSCHED_METRICS_H
#define CONCSCHED_METRICS_H

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
};

bool cov_op_is_access(unsigned op);
bool cov_op_reads(unsigned op);	 /* READ or RW */
bool cov_op_writes(unsigned op); /* WRITE or RW */
bool cov_op_acquires(unsigned op);
bool cov_op_releases(unsigned op);
/* Sync edges: unlock/signal/broadcast/post release; lock/cond wake/sem wait acquire. */
bool cov_op_sync_releases(unsigned op);
bool cov_op_sync_acquires(unsigned op);

void cov_lockset_clear(struct cov_lockset *ls);
bool cov_lockset_has(const struct cov_lockset *ls, uint32_t id);
/* Insert keeping order; 0, or -ENOSPC when COV_LOCKSET_MAX is reached. */
int cov_lockset_add(struct cov_lockset *ls, uint32_t id);
void cov_lockset_del(struct cov_lockset *ls, uint32_t id);
void cov_lockset_intersect(struct cov_lockset *dst, const struct cov_lockset *other);
bool cov_lockset_meets(const struct cov_lockset *a, const struct cov_lockset *b);
/* "{l1,l4}" into buf; returns buf. */
char *cov_lockset_fmt(const struct cov_lockset *ls, char *buf, size_t len);

/* ---- small containers shared by the metric, race and MAP files --------- */

/* u64 -> u64 open-addressing map (key ~0 is reserved). */
struct cov_u64map {
	uint64_t *keys, *vals;
	size_t cap, count;
};

void cov_u64map_init(struct cov_u64map *m);
void cov_u64map_free(struct cov_u64map *m);
/* Pointer to the value slot of key, or NULL if absent. */
uint64_t *cov_u64map_get(const struct cov_u64map *m, uint64_t key);
/* Pointer to the value slot, inserting `init` if absent (*created set). */
uint64_t *cov_u64map_put(struct cov_u64map *m, uint64_t key, uint64_t init, bool *created);

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

void cov_taskset_init(struct cov_taskset *ts);
void cov_taskset_free(struct cov_taskset *ts);
/* Add (or hit again) `key`; 1 if it is new, 0 if already present. */
int cov_taskset_add(struct cov_taskset *ts, const char *key, uint32_t weight);
bool cov_taskset_has(const struct cov_taskset *ts, const char *key);
static inline size_t cov_taskset_count(const struct cov_taskset *ts)
{
	return ts->count;
}

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
/* Translate one probe event; 0, or -ENOENT for CS_OP_NONE and unknown
 * ops. For an access event it only interns ids (no lockset change), so it
 * may also translate a pending access for map_before_access(). */
int cov_event_from_cs(struct cov_event_conv *c, const struct cs_event *ev, struct cov_event *out);

/* ---- the metrics ------------------------------------------------------- */

enum cov_metric {
	COV_LP = 0,
	COV_CONCURPAIRS,
	COV_AVIO,
	COV_HBPAIR,
	COV_GOODLOCK,
	COV_ERASER,
	COV_GOLDILOCK_SC,
	COV_SYNC,
	COV_FPAIR,
	COV_MAP,
	COV__COUNT,
};

const char *cov_metric_name(enum cov_metric m);
/* Inverse of cov_metric_name; -EINVAL for an unknown name. */
int cov_metric_parse(const char *name);

/* Eraser* states (Savage et al. + exclusive' of von Praun & Gross,
 * seed 004 section 3.2). */
enum cov_eraser_state {
	ERASER_VIRGIN = 0,
	ERASER_EXCLUSIVE,
	ERASER_EXCLUSIVE2, /* exclusive': ownership handed to a 2nd thread */
	ERASER_SHARED,
	ERASER_MODIFIED,
	ERASER_RACE,
};
const char *cov_eraser_state_name(enum cov_eraser_state s);

/* GoldiLock-SC states and their WGoldiLockSC weights (seed 004 5.5.1). */
enum cov_goldi_state {
	GOLDI_SCT = 0, /* short-circuit: same thread             weight 1  */
	GOLDI_SCL,     /* short-circuit: a common lock           weight 5  */
	GOLDI_LS,      /* full GoldiLocks lockset proved it      weight 5  */
	GOLDI_E,       /* race: warning                          weight 10 */
};
const char *cov_goldi_state_name(enum cov_goldi_state s);
unsigned cov_goldi_weight(enum cov_goldi_state s);

/* AVIO's unserializable interleavings of a thread's consecutive accesses
 * a1, a2 with a remote access a3 between them, given as is-write flags in
 * the order a1, a3, a2: r/w/r, w/w/r, w/r/w, r/w/w (Lu et al. ASPLOS'06). */
bool avio_unserializable(bool w1, bool w3, bool w2);

struct cov_metrics; /* opaque */
struct race_detector;
struct map_online;

/* map_window: accesses per (variable, thread) kept by the online MAP
 * matcher (0 = MAP_WINDOW_DEFAULT, see map_patterns.h). */
struct cov_metrics *cov_metrics_new(unsigned map_window);
void cov_metrics_free(struct cov_metrics *m);
/* Start a new run: per-run detector state is reset; task sets (the
 * covered tasks) and race warnings accumulate across runs. */
void cov_metrics_run_begin(struct cov_metrics *m);
void cov_metrics_feed(struct cov_metrics *m, const struct cov_event *ev);
const struct cov_taskset *cov_metrics_tasks(const struct cov_metrics *m, enum cov_metric which);
/* WGoldiLockSC: the weighted count of distinct GoldiLock-SC tasks. */
uint64_t cov_metrics_wgoldilock(const struct cov_metrics *m);
struct race_detector *cov_metrics_races(struct cov_metrics *m);
struct map_online *cov_metrics_map(struct cov_metrics *m);
/* Lock-order inversions seen by GoodLock* (2-cycles l1->l2, l2->l1 with
 * different threads): deadlock warnings, as "deadlock l1 l2 s.. s.. ..". */
const struct cov_taskset *cov_metrics_deadlocks(const struct cov_metrics *m);

struct json;
/* One JSON object under `key`: per metric {"tasks": N, "keys": [...]}
 * (keys only if with_keys), "wgoldilock_sc", "race_warnings" (variable,
 * both accesses with thread/site/op/locks, and the text) and "deadlocks". */
void cov_metrics_json(struct cov_metrics *m, struct json *j, const char *key, bool with_keys);

/* ---- function pairs and the bug-driven priority of seed 002 ------------- */

/* Which group a function pair belongs to (seed 002 Algorithm 1). */
enum fpair_group {
	FPAIR_LOW = 0,
	FPAIR_HIGH,    /* a shared variable, a write, MPL_WW/MPL_WR disjoint */
	FPAIR_DROPPED, /* both functions always hold a common lock          */
};

struct fpair_table; /* opaque */

struct fpair_table *fpair_table_new(void);
void fpair_table_free(struct fpair_table *t);
/* Profile: add one observed access or sync event (estimation run). Only
 * events with func != 0 count. */
void fpair_profile_add(struct fpair_table *t, const struct cov_event *ev);
/* Build the pair list (unordered, f == g allowed: C(n,2) + n pairs) and
 * group it. Returns the number of pairs kept (not dropped). */
size_t fpair_group(struct fpair_table *t);
enum fpair_group fpair_group_of(const struct fpair_table *t, uint32_t f, uint32_t g);
/* S(p) = max(|r - c|, 1) * r, r = attempts starting at 1, c = covered. */
uint64_t fpair_score(uint64_t r, uint64_t c);
/* Next target: lowest S(p) (ties: smaller f, then g) from the high group
 * while some high pair was never tried, then from the low group while
 * some low pair was never tried, then from all kept pairs. 0 or -ENOENT. */
int fpair_next(const struct fpair_table *t, uint32_t *f, uint32_t *g);
/* After an attempt at (f, g): r += 1, c += covered. 0 or -ENOENT. */
int fpair_record(struct fpair_table *t, uint32_t f, uint32_t g, bool covered);
int fpair_counts(const struct fpair_table *t, uint32_t f, uint32_t g, uint64_t *r, uint64_t *c);

#endif
