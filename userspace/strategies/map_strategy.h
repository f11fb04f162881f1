/* SPDX-License-Identifier: MIT */
/*
 * MAP-directed scheduling: MAPTest's testexecute (seed 001 Algorithm 4,
 * ALGORITHMS.md section 2) as an engine with plain inputs and outputs, in
 * the shape of the TSA engine (tsa.h). No kernel: the caller turns PAUSE
 * and release decisions into parks and releases.
 *
 *  - Target: when an access is observed that can be the first step of a
 *    pattern with no covered instance starting at that (variable, site) and
 *    not yet tried in this run, that pattern becomes the target (the first
 *    step is "seen"; the accessing thread is role a). Pattern 3 (write-
 *    write, the one that exposed most bugs in MAPTest) is preferred when
 *    it is a candidate; otherwise one candidate is chosen with the seeded
 *    RNG. Two-variable patterns are candidates once two variables have
 *    been seen. One target at a time. With a focus (map_strategy_set_focus:
 *    the variables one thread writes and another reads, issue 30) only an
 *    access to a focus variable starts a target, until a run meets them
 *    and can start none (every pattern starting there covered): from the
 *    next run on, every variable again.
 *  - Scheduling points are the accesses to the target's variables x (and
 *    y once bound). A thread about to perform the target's next step
 *    proceeds at once (eager); any other thread at a scheduling point is
 *    paused. Accesses to other variables are not scheduling points.
 *  - When every enabled thread is paused, map_strategy_choose_release releases the
 *    paused thread whose pending access is the target's next step, or, if
 *    none is, one chosen at random (seeded). After `stall_limit` random
 *    releases without progress the target is abandoned for this run; it
 *    is also abandoned when a thread that still has a step in it exits.
 *  - Coverage (instances found by an online matcher, window as in
 *    map_patterns.h) is kept across runs; map_strategy_mark_covered
 *    restores it from an earlier campaign.
 * Whenever the target changes, map_strategy_target_generation() changes: the
 * caller should then call map_strategy_before_access again for each paused thread
 * (re-evaluation; PROCEED means release it now).
 *
 * Runs at once (run -j N): a struct map_strategy holds what the runs
 * share (the covered instances and their first steps, the variables seen,
 * the totals of the ended runs) under a lock of its own; each run in
 * flight has a struct map_exec with what is its own (the RNG, its threads,
 * its target, the prefixes it tried, its window of accesses, its counts).
 * An instance a run covers is covered for every other run at once: their
 * next targets skip it. A run's counts join the totals at map_strategy_exec_end.
 * The map_strategy_* calls without "exec" below drive the strategy's own run, one
 * run at a time, with its counts in the totals as they happen; they must
 * not be mixed with runs of map_strategy_exec_new that are in flight.
 */
#ifndef CONCSCHED_MAP_STRATEGY_H
#define CONCSCHED_MAP_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coverage/map_patterns.h"
#include "coverage/metrics.h"

enum map_verdict {
	MAP_PROCEED = 0,
	MAP_PAUSE,
};

enum map_release_why {
	MAP_REL_EAGER = 0, /* its pending access is the target's next step */
	MAP_REL_RANDOM,	   /* no such thread: uniform among the paused     */
	MAP_REL_NO_TARGET, /* no target any more: lowest thread first      */
};

struct map_release {
	uint32_t thread;
	enum map_release_why why;
	uint32_t site, var;
	uint16_t op;
};

struct map_target {
	bool active;
	uint8_t pattern;
	uint8_t next; /* index of the next step */
	bool has_b, has_y;
	uint32_t a, b, x, y;
	uint32_t site[MAP_MAX_STEPS];
	unsigned stalls;
};

struct map_strategy_opts {
	unsigned window;      /* online matcher window, 0 = default        */
	unsigned stall_limit; /* random releases before giving up, 0 = 8   */
	bool no_prefer_ww;    /* do not prefer pattern 3                   */
};

struct map_strategy_stats {
	uint64_t runs;
	uint64_t targets_started, targets_completed, targets_abandoned;
	uint64_t targets_by_pattern[MAP_NPATTERNS + 1];
	uint64_t pauses;
	uint64_t releases_eager, releases_random, releases_no_target;
	uint64_t forced; /* a paused thread ran anyway (watchdog) */
	uint64_t covered_new;
};

struct map_strategy;
struct map_exec;

struct map_strategy *map_strategy_new(const struct map_strategy_opts *opts);
void map_strategy_free(struct map_strategy *s);
/* Targets start at accesses to these variables first (n == 0: any). */
void map_strategy_set_focus(struct map_strategy *s, const uint32_t *vars, size_t n);
/* Restore a covered instance key from an earlier run/campaign. */
void map_strategy_mark_covered(struct map_strategy *s, const char *key);
/* The covered instances; read it while no run of map_strategy_exec_new is in
 * flight (another run may add to it). */
const struct cov_taskset *map_strategy_covered(const struct map_strategy *s);
/* The totals: the strategy's own run as it goes, other runs once ended. */
const struct map_strategy_stats *map_strategy_stats(const struct map_strategy *s);

/* ---- runs at once: each its own state over the shared coverage ---------- */

/* A run begins (seeded): its own threads, target and RNG. */
struct map_exec *map_strategy_exec_new(struct map_strategy *s, uint64_t seed);
/* It ended: its counts join the totals; x is freed. */
void map_strategy_exec_end(struct map_exec *x);

void map_strategy_exec_thread_start(struct map_exec *x, uint32_t t);
void map_strategy_exec_thread_blocked(struct map_exec *x, uint32_t t);
void map_strategy_exec_thread_runnable(struct map_exec *x, uint32_t t);
void map_strategy_exec_thread_exit(struct map_exec *x, uint32_t t);
enum map_verdict map_strategy_exec_before_access(struct map_exec *x, uint32_t t, uint32_t site,
						 uint32_t var, unsigned op);
void map_strategy_exec_after_access(struct map_exec *x, const struct cov_event *ev);
bool map_strategy_exec_all_enabled_paused(const struct map_exec *x);
int map_strategy_exec_choose_release(struct map_exec *x, struct map_release *out);
bool map_strategy_exec_is_paused(const struct map_exec *x, uint32_t t);
const struct map_target *map_strategy_exec_target(const struct map_exec *x);
uint64_t map_strategy_exec_generation(const struct map_exec *x);
/* Does this run start targets at the focus variables only? */
bool map_strategy_exec_focused(const struct map_exec *x);
/* This run's counts so far (not yet in the totals). */
const struct map_strategy_stats *map_strategy_exec_stats(const struct map_exec *x);

/* ---- the strategy's own run: the same calls, one run at a time ---------- */

void map_strategy_run_begin(struct map_strategy *s, uint64_t seed);

/* Thread lifecycle, as in tsa.h: blocked = waiting in the kernel. */
void map_strategy_thread_start(struct map_strategy *s, uint32_t t);
void map_strategy_thread_blocked(struct map_strategy *s, uint32_t t);
void map_strategy_thread_runnable(struct map_strategy *s, uint32_t t);
void map_strategy_thread_exit(struct map_strategy *s, uint32_t t);

/* Thread t is about to access `var` at `site` (op CS_OP_READ/WRITE/RW).
 * PAUSE: park it until map_strategy_choose_release names it (or a re-evaluation
 * says PROCEED). */
enum map_verdict map_strategy_before_access(struct map_strategy *s, uint32_t t, uint32_t site,
					    uint32_t var, unsigned op);
/* An access was executed (feeds coverage and the target's progress). */
void map_strategy_after_access(struct map_strategy *s, const struct cov_event *ev);

bool map_strategy_all_enabled_paused(const struct map_strategy *s);
/* Pick the paused thread to release and unpause it. 0 or -EAGAIN. */
int map_strategy_choose_release(struct map_strategy *s, struct map_release *out);

bool map_strategy_is_paused(const struct map_strategy *s, uint32_t t);
const struct map_target *map_strategy_current_target(const struct map_strategy *s);
uint64_t map_strategy_target_generation(const struct map_strategy *s);

#endif
