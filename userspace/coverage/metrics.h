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
 * metrics_feed() too, so one call per event drives everything.
 */
#ifndef CONCSCHED_METRICS_H
#define CONCSCHED_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "concsched_abi.h"

#include "coverage/cov_event.h"

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

const char *metrics_metric_name(enum cov_metric m);
/* Inverse of metrics_metric_name; -EINVAL for an unknown name. */
int metrics_metric_parse(const char *name);

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
const char *metrics_eraser_state_name(enum cov_eraser_state s);

/* AVIO's unserializable interleavings of a thread's consecutive accesses
 * a1, a2 with a remote access a3 between them, given as is-write flags in
 * the order a1, a3, a2: r/w/r, w/w/r, w/r/w, r/w/w (Lu et al. ASPLOS'06). */
bool metrics_avio_unserializable(bool w1, bool w3, bool w2);

struct cov_metrics; /* opaque */
struct race_detector;
struct map_online;

/* map_window: accesses per (variable, thread) kept by the online MAP
 * matcher (0 = MAP_WINDOW_DEFAULT, see map_patterns.h). */
struct cov_metrics *metrics_new(unsigned map_window);
void metrics_free(struct cov_metrics *m);
/* Start a new run: per-run detector state is reset; task sets (the
 * covered tasks) and race warnings accumulate across runs. */
void metrics_run_begin(struct cov_metrics *m);
/* Synchronization events were lost (a thread's sequence skipped): which
 * locks each thread holds is unknown, so the held sets start empty (no
 * lock-order edge from a lock whose release was lost) and the race
 * analysis forgets (races_sync_lost). */
void metrics_sync_lost(struct cov_metrics *m);
void metrics_feed(struct cov_metrics *m, const struct cov_event *ev);
const struct cov_taskset *metrics_tasks(const struct cov_metrics *m, enum cov_metric which);
/* WGoldiLockSC: the weighted count of distinct GoldiLock-SC tasks. */
uint64_t metrics_wgoldilock(const struct cov_metrics *m);
struct race_detector *metrics_races(struct cov_metrics *m);
struct map_online *metrics_map(struct cov_metrics *m);
/* Lock-order inversions seen by GoodLock* (2-cycles l1->l2, l2->l1 with
 * different threads): deadlock warnings, as "deadlock l1 l2 s.. s.. ..". */
const struct cov_taskset *metrics_deadlocks(const struct cov_metrics *m);

struct json;
/* One JSON object under `key`: per metric {"tasks": N, "keys": [...]}
 * (keys only if with_keys), "wgoldilock_sc", "race_warnings" (variable,
 * both accesses with thread/site/op/locks, and the text) and "deadlocks". */
void metrics_json(struct cov_metrics *m, struct json *j, const char *key, bool with_keys);

/* ---- function pairs and the bug-driven priority of seed 002 ------------- */

/* Which group a function pair belongs to (seed 002 Algorithm 1). */
enum fpair_group {
	FPAIR_LOW = 0,
	FPAIR_HIGH,    /* a shared variable, a write, MPL_WW/MPL_WR disjoint */
	FPAIR_DROPPED, /* both functions always hold a common lock          */
};

struct fpair_table; /* opaque */

struct fpair_table *metrics_fpair_table_new(void);
void metrics_fpair_table_free(struct fpair_table *t);
/* Profile: add one observed access or sync event (estimation run). Only
 * events with func != 0 count. */
void metrics_fpair_profile_add(struct fpair_table *t, const struct cov_event *ev);
/* Build the pair list (unordered, f == g allowed: C(n,2) + n pairs) and
 * group it; a pair that was in the list before keeps its attempts and
 * covers (the profile grew). Returns the number of pairs kept (not
 * dropped). */
size_t metrics_fpair_group(struct fpair_table *t);
enum fpair_group metrics_fpair_group_of(const struct fpair_table *t, uint32_t f, uint32_t g);
/* S(p) = max(|r - c|, 1) * r, r = attempts starting at 1, c = covered. */
uint64_t metrics_fpair_score(uint64_t r, uint64_t c);
/* Next target: lowest S(p) (ties: smaller f, then g) from the high group
 * while some high pair was never tried, then from the low group while
 * some low pair was never tried, then from all kept pairs. Pairs a run in
 * flight targets (metrics_fpair_fly) are passed over while another kept pair is
 * left. 0 or -ENOENT. */
int metrics_fpair_next(const struct fpair_table *t, uint32_t *f, uint32_t *g);
/* After an attempt at (f, g): r += 1, c += covered. 0 or -ENOENT. */
int metrics_fpair_record(struct fpair_table *t, uint32_t f, uint32_t g, bool covered);
/* A run targeting (f, g) begins (flying) or ends (!flying): runs at once
 * (run -j) target different pairs. Regrouping keeps the count. 0 or
 * -ENOENT. */
int metrics_fpair_fly(struct fpair_table *t, uint32_t f, uint32_t g, bool flying);
int metrics_fpair_counts(const struct fpair_table *t, uint32_t f, uint32_t g, uint64_t *r,
			 uint64_t *c);

#endif
