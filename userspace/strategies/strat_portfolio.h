/* SPDX-License-Identifier: MIT */
/*
 * Strategy portfolio (strat_portfolio.c): its arms and the bandit's state,
 * exported for the unit tests.
 */
#ifndef CONCSCHED_STRAT_PORTFOLIO_H
#define CONCSCHED_STRAT_PORTFOLIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/rng.h"
#include "strategies/strategy.h"

/* Access probing stays on while the estimation run (every candidate site
 * probed) made at most PF_ACCESS_MAX probed accesses and took at most
 * PF_ACCESS_SLOWDOWN times the observed run without access probes (or
 * less than PF_ACCESS_SMALL_NS: fixed costs). A probed hit costs 20-28 us
 * (docs/perf.md "Access probes"): 100,000 add 2-3 s to a run on the host,
 * about 20 times a typical corpus run in the VM; a steered --access run
 * costs 4.0-8.4 times the VM's native run, and docs/perf.md's goal is at
 * most 20 times. Under the default probe cap (2000 hits per thread, site
 * and run) the count passes 100,000 only with many hot sites and threads;
 * the time ratio catches the rest. */
#define PF_ACCESS_MAX	   100000
#define PF_ACCESS_MAX_TEXT "100000"
#define PF_ACCESS_SLOWDOWN 20
#define PF_ACCESS_SMALL_NS 1000000000ULL
/* The time rule holds only when the estimation run's probed hits
 * (accesses and dropped ones), at PF_HIT_NS each (the upper end of
 * docs/perf.md's 20-28 us per probed hit on the host), account for at
 * least half of its excess over the plain run: else the probes did not
 * make it slow (a loaded machine, a VM's first run after its boot). */
#define PF_HIT_NS 30000ULL

/* What the estimation run showed of the program's synchronization
 * (strat_portfolio_signal), by priority: the largest over the estimation
 * runs picks the warm-up's order (strat_portfolio_warmup_order). UNKNOWN
 * (no estimation run) and NONE keep strat_portfolio_arms[]'s order. */
enum pf_signal {
	PF_SIG_UNKNOWN = 0,
	PF_SIG_NONE,	 /* no lock taken */
	PF_SIG_LOCKS,	 /* locks, none of the below */
	PF_SIG_COND,	 /* a condition-variable wait */
	PF_SIG_UNJOINED, /* more threads created than joined */
	PF_SIG_CYCLE,	 /* a cycle in the lock-order graph */
	PF_SIG__COUNT,
};

/* One arm: a strategy string, and whether it steers at accesses. */
struct pf_arm_spec {
	const char *name;		/* as the runs and the report name it */
	const char *strategy;		/* its --strategy string */
	const struct strategy_ops *ops; /* the registry's for that string */
	const char *opts;		/* the options after "NAME:", or NULL */
	bool access;			/* steers at memory accesses: only with access probing */
	const char *metric;		/* the coverage its reward counts */
	unsigned share;			/* its share of the runs after the warm-up (PF_FLOOR) */
	enum pf_signal only;		/* in the campaign only after this signal (0: always) */
};

/* The arms: the first PF_NARMS_EVERY in every campaign (the access ones
 * with access probing), then tsa, only after a lock-order cycle. */
#define PF_NARMS       7
#define PF_NARMS_EVERY 6
/* The floor of each arm's share after the warm-up: an arm with fewer than
 * n x share / (PF_FLOOR x the shares of the arms on) of the n runs begun
 * runs next (the one furthest below, in units of its share). With
 * PF_FLOOR 1 the floor is the whole share: the rewards measure coverage,
 * not bugs, and a bandit that follows them gives the runs to the arm that
 * adds coverage, not the one that finds the bug
 * (docs/studies/portfolio-sim-2026-11-29.md: offline, on the corpus's
 * measured per-arm failure rates, the shares with the warm-up's order take
 * the worst ratio to the best arm's median from 6.8 to 3.0). UCB1 chooses
 * only when every arm has its floor (the floors' rounding: at most one
 * run per arm on above the shares in all). A campaign of n runs gives an
 * arm of share 1 at least n / 10 - 3 runs (n / 11 - 3 with tsa on), more
 * than the n / 12 - 1 the tests' failure arithmetic uses
 * (tests/vm/62-portfolio.t, whose programs show no lock-order cycle). */
#define PF_FLOOR 1
/* In the order of the warm-up without a signal (strat_portfolio_warmup_order). */
extern const struct pf_arm_spec strat_portfolio_arms[PF_NARMS];

/* The warm-up's runs, at most: one arm may run twice in it. */
#define PF_WARM_MAX (PF_NARMS + 1)

struct thread_model;

/* The signal of one observed run's thread model. Lock-order edges: a
 * blocking acquisition (lock, rdlock, wrlock, spin lock), or a blocking
 * request (one that may wait for good: a run that deadlocked), of lock B
 * while holding A gives A -> B; a cycle among them is PF_SIG_CYCLE. */
enum pf_signal strat_portfolio_signal(const struct thread_model *tm);
/* Its name in the campaign's lines ("a lock-order cycle", ...). */
const char *strat_portfolio_signal_text(enum pf_signal sig);
/* The warm-up's arms (indexes of strat_portfolio_arms[]) for a signal, in
 * order, with access probing (every arm of the signal at least once) or
 * without (random and pct:3, and tsa after a cycle); returns how many. */
size_t strat_portfolio_warmup_order(enum pf_signal sig, bool access, const size_t **order);

struct pf_arm {
	const struct pf_arm_spec *spec;
	struct strategy *s;
	bool on; /* in this campaign (the access arms only with access probing, tsa
		  * only after a lock-order cycle) */
	uint64_t begun, inflight, ended, failures;
	uint64_t tasks, warnings; /* what its runs added */
	double seconds;		  /* its runs' time */
	double value;		  /* exponentially weighted reward per second */
	int64_t count;		  /* its metric's tasks at the last run's end */
};

struct portfolio {
	struct pf_arm arm[PF_NARMS];
	bool access; /* access probing on: the access arms run */
	struct cs_rng rng;
	uint64_t begun, ended;
	int64_t warnings;  /* race and lock-order warnings at the last run's end */
	uint64_t plain_ns; /* the observed runs' mean time (no access probes) */
	unsigned observed;
	enum pf_signal signal; /* the estimation runs' (the warm-up's order) */
};

/* Access probing for the portfolio: true when asked for, or when the
 * estimation found a variable to steer at, at most PF_ACCESS_MAX accesses
 * and a probed run at most PF_ACCESS_SLOWDOWN times plain_ns (the observed
 * run's time, 0: unknown); *why says which. */
bool strat_portfolio_access_affordable(const struct strat_campaign *c, uint64_t plain_ns,
				       const char **why);
/* The arms in this campaign. */
size_t strat_portfolio_arms_on(const struct portfolio *pf);
/* The warm-up's runs in this campaign (its order's entries whose arm is on). */
size_t strat_portfolio_warmup_len(const struct portfolio *pf);
/* The arm of the next run: the warm-up's next arm (the order of
 * pf->signal, an entry whose arm has begun fewer runs than the entries so
 * far ask of it), else the
 * arm furthest below its share's floor (PF_FLOOR), else the largest UCB1
 * index, ties drawn from pf->rng. */
size_t strat_portfolio_choose(struct portfolio *pf);
/* The arm on with the largest x[arm] (indexes of every arm), ties drawn
 * with the campaign seed's generator (tools/bench/portfolio_sim.c's model
 * of the choice uses it too). */
size_t strat_portfolio_argmax(struct portfolio *pf, const double *x);
/* Arm a's UCB1 index among n runs ended or in flight. */
double strat_portfolio_index(const struct portfolio *pf, const struct pf_arm *a, uint64_t n);
/* Arm a's run ended with reward x (per second). */
void strat_portfolio_reward(struct portfolio *pf, struct pf_arm *a, double x);

#endif
