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

/* ---- thread model (estimation input) ---------------------------------- */

/* One lock action: the lock at `site` on `lock`, and the locks the thread
 * held when it started (lockset(p) of the paper, without `lock` itself). */
struct tsa_lock_action {
	uint32_t site;
	uint64_t lock;
	uint64_t *lockset; /* owned, sorted, unique */
	uint32_t nlockset;
};

struct tsa_thread_model {
	struct tsa_lock_action *actions;
	uint32_t nactions, cap;
	/* Creation (the paper's precedence relation): the creator's first
	 * `create_pos` lock actions precede every action of this thread.
	 * creator < 0 for threads nobody in the model created (main). */
	int32_t creator;
	uint32_t create_pos;
};

struct tsa_model {
	struct tsa_thread_model *threads;
	uint32_t nthreads, cap;
};

void tsa_model_init(struct tsa_model *m);
void tsa_model_free(struct tsa_model *m);
/* Add a thread; returns its index (>= 0) or -EINVAL for a bad creator.
 * create_pos is the creator's number of lock actions so far. */
int tsa_model_add_thread(struct tsa_model *m, int32_t creator, uint32_t create_pos);
/* Append a lock action to thread t. The lockset is copied, sorted and
 * deduplicated. 0 or -EINVAL. */
int tsa_model_add_lock(struct tsa_model *m, uint32_t t, uint32_t site, uint64_t lock,
		       const uint64_t *lockset, uint32_t nlockset);

/* ---- requirement sets --------------------------------------------------- */

/* A set of site pairs <x, y> with per-pair flags (open addressing). */
struct tsa_pairset {
	uint64_t *keys;
	uint8_t *flags; /* 0 = empty slot */
	size_t cap, count;
};

#define TSA_PAIR_ESTIMATED 0x01u
#define TSA_PAIR_COVERED   0x02u

void tsa_pairset_init(struct tsa_pairset *s);
void tsa_pairset_free(struct tsa_pairset *s);
/* OR `flags` into pair <x,y>'s flags; returns the previous flags (0: new). */
unsigned tsa_pairset_add(struct tsa_pairset *s, uint32_t x, uint32_t y, unsigned flags);
/* Flags of <x,y>, 0 if absent. */
unsigned tsa_pairset_get(const struct tsa_pairset *s, uint32_t x, uint32_t y);
/* Iterate: *pos starts at 0; returns false at the end. */
bool tsa_pairset_next(const struct tsa_pairset *s, size_t *pos, uint32_t *x, uint32_t *y,
		      unsigned *flags);

/* What the estimation saw; the counts behind Table 4's first column. */
struct tsa_estimate_stats {
	uint64_t lock_actions; /* lock actions in the model               */
	uint64_t classes;      /* distinct (thread, site, lock, locksets) */
	uint64_t candidates;   /* action-class pairs examined             */
	uint64_t accepted_ac1; /* site pairs accepted by AC1 (same thread)*/
	uint64_t rejected_ac2; /* cross-thread candidates each AC rejected*/
	uint64_t rejected_ac3;
	uint64_t rejected_ac4;
	uint64_t requirements; /* distinct site pairs accepted            */
};

/* Estimation phase (seed 000 section 2.3): add every accepted <x,y> to
 * `out` with TSA_PAIR_ESTIMATED. 0 or -errno. */
int tsa_estimate(const struct tsa_model *m, struct tsa_pairset *out, struct tsa_estimate_stats *st);

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
