/* SPDX-License-Identifier: MIT */
/*
 * Synchronization-pair (SP) coverage steering, seed 000 (Hong et al.,
 * "Testing concurrent programs to achieve high synchronization coverage",
 * ISSTA'12), ALGORITHMS.md section 1:
 *
 *  - estimation phase: from one observed run (the thread model: per thread
 *    its lock actions with locksets, plus who created whom and when) keep
 *    every site pair <loc(p), loc(q)> that passes AC1 (same thread) or
 *    AC2-AC4 (different threads);
 *  - testing phase: Algorithm 1 (the scheduling controller), driven by
 *    events: before/after each lock action, thread blocked/runnable/exited,
 *    and "every enabled thread is paused -> whom do we release?".
 *
 * Plain C, no kernel: the caller maps runtime things to the small integers
 * used here (site ids stable across runs, lock ids, per-run thread
 * indices) and turns PAUSE/release decisions into parks and releases.
 */
#ifndef CONCSCHED_TSA_H
#define CONCSCHED_TSA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strategies/tsa_estimate.h"

/* ---- Algorithm 1 (testing phase) ---------------------------------------- */

enum tsa_verdict {
	TSA_PROCEED = 0,
	TSA_PAUSE,
};

/* Which rule picked a released action (Algorithm 1 lines 16-35). */
enum tsa_rule {
	TSA_RULE_NONE = 0,
	TSA_RULE_1,	 /* <loc_last(m), loc(p')> uncovered: covers at once   */
	TSA_RULE_2,	 /* <loc(p'), loc(p'')> uncovered, same lock          */
	TSA_RULE_3,	 /* fewest uncovered requirements mention loc(p')     */
	TSA_RULE_RANDOM, /* tsa-h: no rule applied, uniform among the paused  */
	TSA_RULE__COUNT,
};

const char *tsa_rule_name(enum tsa_rule r);

struct tsa_release {
	uint32_t thread;
	enum tsa_rule rule;
	uint32_t site;
	uint64_t lock;
};

struct tsa_stats {
	uint64_t runs;
	uint64_t pauses;		/* PAUSE verdicts                */
	uint64_t pauses_same_lock;	/* of those, by lines 10-12      */
	uint64_t releases;		/* tsa_choose_release decisions  */
	uint64_t rule[TSA_RULE__COUNT]; /* per rule                      */
	uint64_t forced;		/* released by someone else     */
	uint64_t lock_actions;		/* tsa_after_lock calls          */
	uint64_t newly_covered;		/* estimated pairs covered       */
};

/* Table 4 of seed 000. */
struct tsa_precision {
	uint64_t estimated;	    /* |R|                                   */
	uint64_t covered;	    /* distinct pairs seen in any run        */
	uint64_t covered_estimated; /* |covered ∩ R|                         */
	uint64_t false_positives;   /* |R \ covered|: estimated, never seen  */
	uint64_t false_negatives;   /* |covered \ R|: seen, not estimated    */
};

struct tsa_engine;

/* The campaign's engine: it copies the estimated requirements (all
 * uncovered) and owns the coverage. With heuristic == false it is tsa-h:
 * rule 3 is skipped and, when rules 1 and 2 do not apply, a paused action
 * is released uniformly at random (the paper removes rule 3 and says no
 * more; something must be released or the run would stop, and a uniform
 * choice adds no heuristic). One run at a time may use it directly
 * (tsa_run_begin ... tsa_run_end on it). */
struct tsa_engine *tsa_engine_new(const struct tsa_pairset *estimated, bool heuristic);
/* Runs at once (run -j N): each run in flight gets an engine of its own,
 * with its own threads, locks, clock, random generator and stats, over the
 * campaign's coverage. The coverage is shared under a lock, so a pair one
 * run covers counts for every run at once (pauses, the rules, retired
 * sites). Each engine is used by one thread at a time; different engines
 * of one campaign may be used at once. The campaign's engine must outlive
 * them. Given a run's engine, the new one shares its campaign. */
struct tsa_engine *tsa_engine_run_new(struct tsa_engine *campaign);
/* Either kind; the coverage goes with the campaign's engine. */
void tsa_engine_free(struct tsa_engine *e);

/* Restore coverage from earlier runs (covered carries over, seed 000:
 * "the algorithm passes updated covered and uncovered to the next run"). */
void tsa_engine_mark_covered(struct tsa_engine *e, uint32_t x, uint32_t y);

/* Per-run state: loc_last per lock, paused, enabled. `seed` drives only
 * the tsa-h random choice and the rule 3 ties. On a run's engine,
 * tsa_run_end adds the run's stats to the campaign's (and zeroes its
 * own). */
void tsa_run_begin(struct tsa_engine *e, uint64_t seed);
void tsa_run_end(struct tsa_engine *e);

/* Thread lifecycle. A new thread is enabled. blocked = not in enabled(s)
 * (waiting in the kernel on a lock, condition, join, sleep, I/O);
 * runnable = back in enabled(s). Both are ignored while the engine keeps
 * the thread paused: a parked thread is enabled by definition. */
void tsa_thread_start(struct tsa_engine *e, uint32_t t);
void tsa_thread_blocked(struct tsa_engine *e, uint32_t t);
void tsa_thread_runnable(struct tsa_engine *e, uint32_t t);
void tsa_thread_exit(struct tsa_engine *e, uint32_t t);

/* Lines 5-14: thread t is about to lock `lock` at `site`. PAUSE: park it
 * until tsa_choose_release names it. Calling it again for the same pending
 * action (site and lock, no tsa_after_lock in between) re-evaluates it
 * and keeps the time the action became pending. */
enum tsa_verdict tsa_before_lock(struct tsa_engine *e, uint32_t t, uint32_t site, uint64_t lock);
/* Lines 36-42: t acquired `lock` at `site`: cover <loc_last, site>, then
 * loc_last = site. A thread still marked paused was released by someone
 * else (watchdog) and is counted in stats.forced. */
void tsa_after_lock(struct tsa_engine *e, uint32_t t, uint32_t site, uint64_t lock);
/* t released `lock` (optional: lets the rules prefer paused actions whose
 * lock is free, i.e. actions that are really in enabled(s)). */
void tsa_after_unlock(struct tsa_engine *e, uint32_t t, uint64_t lock);
/* A pending lock action ended without acquiring (trylock failed). */
void tsa_lock_abandoned(struct tsa_engine *e, uint32_t t);
/* Someone else (the watchdog) released t. */
void tsa_force_release(struct tsa_engine *e, uint32_t t);

/* Line 16: some thread is paused and no enabled thread is running. The
 * scheduler's all-parked notification is the authoritative signal; this is
 * the engine's own view from the events above. */
bool tsa_all_enabled_paused(const struct tsa_engine *e);
/* Lines 16-35: pick the paused action to release by rule 1, 2, 3 (or
 * random for tsa-h), remove it from paused and describe it in *out.
 * Ties go to the action pending longest, then the lower thread index.
 * 0, or -EAGAIN when nothing is paused. */
int tsa_choose_release(struct tsa_engine *e, struct tsa_release *out);

/* Keeping BPF site policies in sync (policy.h): lines 7-8 are a pure
 * per-site predicate, so the caller can park at those sites in the kernel
 * (policy_park_site) and drop the policy once a site is in no uncovered
 * pair any more. tsa_pause_sites lists the sites to park at now;
 * tsa_take_retired_sites returns the sites whose last uncovered pair was
 * covered, by any run, since this engine's previous call (a run's engine:
 * since it was made, so call tsa_pause_sites after tsa_engine_run_new).
 * Each engine gets each retired site once. Both return how many they
 * wrote, at most max (call again if max was reached). */
size_t tsa_pause_sites(const struct tsa_engine *e, uint32_t *out, size_t max);
size_t tsa_take_retired_sites(struct tsa_engine *e, uint32_t *out, size_t max);

/* Introspection (tests, logs, reports). The coverage queries take the
 * lock. tsa_engine_stats: the campaign's totals (runs that ended) or a
 * run's counters so far; tsa_engine_pairs: only while no run is in flight
 * (it hands out the shared set itself). */
bool tsa_is_paused(const struct tsa_engine *e, uint32_t t);
bool tsa_is_enabled(const struct tsa_engine *e, uint32_t t);
bool tsa_is_uncovered(const struct tsa_engine *e, uint32_t x, uint32_t y);
bool tsa_is_covered(const struct tsa_engine *e, uint32_t x, uint32_t y);
/* num_cov_req(site, uncovered) of rule 3. */
uint32_t tsa_site_uncovered(const struct tsa_engine *e, uint32_t site);
uint64_t tsa_uncovered_count(const struct tsa_engine *e);
const struct tsa_stats *tsa_engine_stats(const struct tsa_engine *e);
void tsa_engine_precision(const struct tsa_engine *e, struct tsa_precision *p);
/* Every pair the engine knows (estimated and/or covered) with its flags. */
const struct tsa_pairset *tsa_engine_pairs(const struct tsa_engine *e);

#endif
