/* SPDX-License-Identifier: MIT */
/*
 * Noise injection configurations (seed 004 section 4, ALGORITHMS.md §6) and
 * the random-delay baselines of seed 000 (RND-y, RND-s10, RND-s100).
 *
 * A configuration says WHERE/WHEN (placement + frequency) and HOW
 * (seeding + strength). The per-run engine answers, for one visit of one
 * decision point by one thread: nothing, yield n times, sleep n µs,
 * busy-wait n µs, wait n µs, park until alone (haltOneThread), run alone
 * for n actions (inverseNoise), or change priority. Turning the answer into
 * a park/delay/yield is the caller's job; everything here is plain C and
 * deterministic from the run's seed.
 *
 * Compact string form (stored with each run, parsed back for replay):
 *   PLACEMENT@FREQ/SEEDING[,read=SEEDING,write=SEEDING][,ht][,tt]
 *   SEEDING = KIND[:N | :LO-HI]        (N fixed; LO-HI uniform per injection)
 * e.g. "sharedVar-all@150/sleep:2000,ht", "read-write@300/yield:10,
 * read=sleep:2000,write=sleep:20000"; FREQ in per mille (0-1000). The
 * seed 000 baselines are "rnd-y:P", "rnd-s10:P", "rnd-s100:P" (P a
 * probability, the paper's 0.1-0.5).
 */
#ifndef CONCSCHED_NOISE_H
#define CONCSCHED_NOISE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/rng.h"

struct json;

enum noise_placement {
	NOISE_PLACE_RANDOM_ALL = 0, /* every decision point                    */
	NOISE_PLACE_SHAREDVAR_ALL,  /* accesses to variables seen from >= 2 threads */
	NOISE_PLACE_SHAREDVAR_ONE,  /* accesses to one shared variable per run */
	NOISE_PLACE_READ_WRITE,	    /* all points; own seeding for reads/writes */
	NOISE_PLACE_PATTERN,	    /* 2nd+ access to a variable in one function */
	NOISE_PLACE_COVERAGE,	    /* first access of a cross-thread couple    */
	NOISE_PLACE__COUNT,
};

enum noise_seeding {
	NOISE_SEED_YIELD = 0, /* strength: number of yields                   */
	NOISE_SEED_SLEEP,     /* µs off-CPU                                   */
	NOISE_SEED_BUSYWAIT,  /* µs spinning on-CPU                           */
	NOISE_SEED_WAIT,      /* µs asleep holding a private lock             */
	NOISE_SEED_HALT_ONE,  /* park until no other thread can run (no N)    */
	NOISE_SEED_INVERSE,   /* park every other thread for N actions        */
	NOISE_SEED_PRIORITY,  /* change the thread's priority by ±N           */
	NOISE_SEED_TIMEOUT,   /* timeoutTamper only: no noise at points       */
	NOISE_SEED_MIXED,     /* a random basic one at each injection (µs)    */
	NOISE_SEED__COUNT,
};

/* seed 000's random testing baselines; NOISE_RND_NONE for seed 004 ones. */
enum noise_rnd {
	NOISE_RND_NONE = 0,
	NOISE_RND_Y,	/* yield once with probability p                  */
	NOISE_RND_S10,	/* sleep uniform in [0, 10 ms] with probability p  */
	NOISE_RND_S100, /* sleep uniform in [0, 100 ms] with probability p */
};

struct noise_seed_cfg {
	enum noise_seeding kind;
	uint32_t lo, hi; /* strength; lo == hi: fixed, else uniform in [lo, hi] */
};

struct noise_config {
	enum noise_rnd rnd;
	enum noise_placement placement;
	uint32_t freq;			   /* per mille of eligible visits that get noise */
	struct noise_seed_cfg seed;	   /* all points (sync points for read-write) */
	struct noise_seed_cfg read, write; /* read-write placement only */
	bool halt_one;			   /* +ht: occasionally haltOneThread instead    */
	bool timeout_tamper;		   /* +tt: shorten the program's own timeouts     */
	bool exit_hold;			   /* +xh: the end of the process waits until no
					    * other thread can run (haltOneThread)     */
};

/* Strength range each seeding accepts (parse check, GA gene scaling). */
void noise_strength_range(enum noise_seeding kind, uint32_t *min, uint32_t *max);
const char *noise_placement_name(enum noise_placement p);
const char *noise_seeding_name(enum noise_seeding s);

/* Parse a compact string or an rnd-* name. 0, or -EINVAL with a one-line
 * reason in err (may be NULL). */
int noise_config_parse(const char *s, struct noise_config *c, char *err, size_t errlen);
/* Canonical compact string; returns the length snprintf would write. */
int noise_config_format(const struct noise_config *c, char *buf, size_t len);
/* {"string": compact form, "placement": ..., ...} under `key`. */
void noise_config_json(struct json *j, const char *key, const struct noise_config *c);
/* Structural check (ranges); 0 or -EINVAL with reason. */
int noise_config_validate(const struct noise_config *c, char *err, size_t errlen);

/* RND-y/RND-s10/RND-s100 with probability p (0 < p <= 1). */
int noise_config_rnd(enum noise_rnd kind, double p, struct noise_config *c);
/* seed 004's recommended blind default: a random configuration, drawn
 * afresh for each run (frequency 5-50 %, reference strengths). */
void noise_config_random(struct cs_rng *r, struct noise_config *c);

/* ---- per-run decisions ---------------------------------------------------- */

enum noise_point_kind {
	NOISE_PT_SYNC = 0, /* lock, unlock, condition, create, join, ...    */
	NOISE_PT_READ,
	NOISE_PT_WRITE,
};

/* What the caller knows about one visit of a decision point. */
struct noise_point {
	enum noise_point_kind kind;
	bool exit; /* the end of the process (exit() or main's return) while
		    * other threads live */
	uint32_t thread;
	uint32_t site;
	uint64_t var;		 /* abstract variable of an access; 0 if none   */
	bool shared;		 /* var seen from >= 2 threads so far           */
	bool repeat_in_function; /* this thread already accessed var in this
				  * invocation of the enclosing function       */
	bool coverage_target;	 /* before the first access of a recorded
				  * cross-thread couple, or its common lock    */
	uint64_t site_hits;	 /* visits of this site so far in the run       */
};

enum noise_act {
	NOISE_ACT_NONE = 0,
	NOISE_ACT_YIELD,    /* n yields                                    */
	NOISE_ACT_SLEEP,    /* n µs off-CPU                                */
	NOISE_ACT_BUSYWAIT, /* n µs on-CPU                                 */
	NOISE_ACT_WAIT,	    /* n µs asleep holding a private lock          */
	NOISE_ACT_HALT,	    /* park until no other thread can run          */
	NOISE_ACT_INVERSE,  /* park all other threads for n of our actions */
	NOISE_ACT_PRIORITY, /* priority change by n (signed)               */
	NOISE_ACT__COUNT,
};

struct noise_decision {
	enum noise_act act;
	int64_t n;
};

const char *noise_act_name(enum noise_act a);

struct noise_run {
	struct noise_config cfg;
	struct cs_rng rng;
	bool var_chosen;
	uint64_t var; /* sharedVar-one target */
	bool focus;   /* sharedVar-one: var drawn among the cross-thread ones */
	uint64_t visits, eligible, injected[NOISE_ACT__COUNT];
};

void noise_run_begin(struct noise_run *r, const struct noise_config *c, uint64_t seed);
/* sharedVar-one: pick this run's variable among candidates (e.g. the
 * shared variables earlier runs saw). Without a call, the first shared
 * variable the run reaches is taken. */
void noise_run_choose_var(struct noise_run *r, const uint64_t *vars, size_t n);
/* Focus (issue 30): the campaign found variables written by one thread
 * and read by another (n > 0; vars in an order that does not depend on the
 * run): sharedVar-one picks its variable among them with the run's RNG
 * instead of taking the first shared variable the run reaches. The other
 * placements keep acting at every access they did (sharedVar-all at every
 * shared one), and draw nothing. n == 0: nothing changes. */
void noise_run_focus(struct noise_run *r, const uint64_t *vars, size_t n);
/* Decide for one visit. */
struct noise_decision noise_decide(struct noise_run *r, const struct noise_point *pt);
/* timeoutTamper: the timeout to use instead of the program's (ns). */
uint64_t noise_tamper_timeout(struct noise_run *r, uint64_t timeout_ns);

#endif
