/* SPDX-License-Identifier: MIT */
/*
 * Memory-access-pattern (MAP) coverage, seed 001 (Wang et al., "MAP-
 * coverage: a novel coverage criterion for testing thread-safe classes",
 * ASE'19), ALGORITHMS.md section 2 (its table is the corrected one).
 *
 * 17 patterns over one variable x or two variables x != y and two threads
 * a != b. An instance is a subsequence of the run's accesses (steps need
 * not be adjacent) and is keyed by the pattern, the variable(s) and the
 * sites of its steps, never by thread ids:
 *     "p<id> v<x> s<..> s<..>"            patterns 1-8
 *     "p<id> v<x> v<y> s<..> s<..> s<..> s<..>"   patterns 9-17
 * A lock-prefixed read-modify-write (CS_OP_RW) may play a read step or a
 * write step (one step per access).
 *
 * Two matchers:
 *  - map_exact_*: offline, exact subsequence matching over a whole trace
 *    (forward dynamic programming over deduplicated partial instances;
 *    polynomial but large: for tests and small traces);
 *  - map_patterns_online_*: online with a bounded window W (map_patterns_online_new):
 *    for each (variable, thread) the last W accesses, and for each thread
 *    the last W distinct variables it accessed. When an access arrives the
 *    matcher finds every instance whose LAST step is this access and whose
 *    earlier steps are all still in those windows (the other variable of a
 *    two-variable pattern must be among the last W distinct variables of
 *    the last step's thread, which touched both). Hence: on traces where
 *    no thread accesses one variable more than W times and no thread
 *    touches more than W variables, online == exact; beyond that the
 *    online matcher can miss instances whose early steps were pushed out.
 *    Cost per access: O(17 * W^3 * threads * W) in the worst case, small
 *    for the default W = 4.
 */
#ifndef CONCSCHED_MAP_PATTERNS_H
#define CONCSCHED_MAP_PATTERNS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coverage/cov_event.h"

#define MAP_NPATTERNS	   17
#define MAP_MAX_STEPS	   4
#define MAP_WINDOW_DEFAULT 4

enum { MAP_ROLE_A = 0, MAP_ROLE_B = 1 };
enum { MAP_VAR_X = 0, MAP_VAR_Y = 1 };

struct map_step {
	uint8_t role;  /* MAP_ROLE_A / MAP_ROLE_B */
	uint8_t var;   /* MAP_VAR_X / MAP_VAR_Y   */
	uint8_t write; /* 1 = W, 0 = R            */
};

struct map_pattern {
	uint8_t id; /* 1..17 */
	uint8_t nsteps;
	uint8_t nvars;
	struct map_step step[MAP_MAX_STEPS];
};

/* Pattern `id` (1..17) or NULL. */
const struct map_pattern *map_patterns_get(unsigned id);
/* "a:W x, b:R x" style text into buf; returns buf. */
char *map_patterns_fmt(const struct map_pattern *p, char *buf, size_t len);

/* One matched instance. */
struct map_instance {
	uint8_t pattern;
	uint32_t x, y; /* y only for two-variable patterns */
	uint32_t site[MAP_MAX_STEPS];
};

char *map_patterns_instance_key(const struct map_instance *in, char *buf, size_t len);
/* Parse a key back; 0 or -EINVAL. */
int map_patterns_instance_parse(const char *key, struct map_instance *out);

/* Can an access with op `op` play `step`? (RW plays both.) */
bool map_patterns_step_accepts(const struct map_step *step, unsigned op);

/* ---- exact offline matcher --------------------------------------------- */

/* Every instance in events[0..n) (non-access events are skipped) added to
 * `out`. Returns the number of new keys. */
size_t map_patterns_exact_match(const struct cov_event *events, size_t n, struct cov_taskset *out);

/* ---- online matcher ------------------------------------------------------- */

struct map_online;
typedef void (*map_instance_fn)(void *ctx, const struct map_instance *in, bool is_new);

/* window 0 = MAP_WINDOW_DEFAULT. */
struct map_online *map_patterns_online_new(unsigned window);
void map_patterns_online_free(struct map_online *mo);
unsigned map_patterns_online_window(const struct map_online *mo);
/* Called for every instance found (is_new: first time in `out`). */
void map_patterns_online_set_hook(struct map_online *mo, map_instance_fn fn, void *ctx);
/* Forget the windows (new run). */
void map_patterns_online_run_begin(struct map_online *mo);
/* Feed one event (non-accesses are ignored); new keys go to `out`, which
 * must be the same task set on every call (repeats are filtered by a
 * 64-bit instance hash kept with the matcher). Returns the number of new
 * keys. */
size_t map_patterns_online_feed(struct map_online *mo, const struct cov_event *ev,
				struct cov_taskset *out);

/* ---- domain estimate (ALGORITHMS.md section 2) ----------------------------- */

/* Read and write sites of one variable (a RW site belongs to both). */
struct map_var_sites {
	uint32_t var;
	const uint32_t *reads;
	uint32_t nreads;
	const uint32_t *writes;
	uint32_t nwrites;
};

/* The closed form: sum over x of 2|R||W| + |W|^2 + |R|^2|W| + 3|R||W|^2 +
 * |W|^3, plus over ordered pairs x != y of 3|Wx|^2|Wy|^2 +
 * 6|Wx||Rx||Wy||Ry|. */
uint64_t map_patterns_domain_formula(const struct map_var_sites *vars, size_t n);

/* "Site s can only happen before site t" (s != t). */
typedef bool (*map_precedes_fn)(void *ctx, uint32_t s, uint32_t t);

/* Enumerate the domain (the site tuples the formula counts) and drop every
 * instance with a later step at a site that must precede an earlier
 * step's site. precedes == NULL gives the formula's value. If `keys` is
 * not NULL, the kept instance keys are added to it. */
uint64_t map_patterns_domain_estimate(const struct map_var_sites *vars, size_t n,
				      map_precedes_fn precedes, void *ctx,
				      struct cov_taskset *keys);

/* Happens-before between sites from one observed run, using program order
 * and thread create/join only (lock order may change from run to run, so
 * it is not used): s precedes t iff every occurrence of s happens before
 * every occurrence of t, computed with vector clocks as
 * join(VC over occurrences of s) <= meet(VC over occurrences of t). */
struct map_site_order;
struct map_site_order *map_patterns_site_order_build(const struct cov_event *events, size_t n);
void map_patterns_site_order_free(struct map_site_order *o);
bool map_patterns_site_order_precedes(void *order, uint32_t s, uint32_t t);

#endif
