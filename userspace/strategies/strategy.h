/* SPDX-License-Identifier: MIT */
/*
 * The strategy contract, in the spirit of struct sched_ext_ops: a strategy
 * is one named struct of optional callbacks plus static facts, and the
 * campaign loop (campaign/) calls only through it. It never names a
 * strategy; what differs between strategies is either a callback or a flag
 * below. docs/DESIGN.md "Adding a strategy".
 *
 * Lifecycle, as the campaign drives it:
 *
 *   init(spec options)                         once, at option parsing
 *   estimate(observed run)  x --estimate-runs  if STRAT_F_ESTIMATE
 *   campaign_begin
 *   for each run:
 *     run_begin -> config_json -> thread_start / event / point / all_parked /
 *     tick / poll_ms ... -> run_end (the outcome and the coverage come in)
 *   campaign_end, destroy
 *
 * Decision points: every synchronization point (lock/rwlock request, cond
 * wait/signal/broadcast, sem wait/post, barrier) parks its thread inside
 * the probe when the strategy asks for STRAT_F_SYNC_POINTS, every probed
 * memory access when it asks for STRAT_F_ACCESS_POINTS (with --access).
 * point() answers; PARK keeps the thread until the strategy releases it
 * with r->release(). Every other answer is applied and logged by the loop,
 * so replay can make it again.
 *
 * Strategies are plain C: they act through the policy interface
 * (kernel/policy.h, the real scheduler or the fake backend of the unit
 * tests) and through the services in struct strat_run, never through the
 * campaign's internals.
 */
#ifndef CONCSCHED_STRATEGY_H
#define CONCSCHED_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "concsched_abi.h"
#include "coverage/cov_event.h"
#include "lib/declog.h"

struct json;
struct policy;
struct policy_note;
struct site_resolver;
struct syncov_run;
struct thread_model;

/* ---- static facts: the loop reads these instead of branching ---------- */

enum strat_flags {
	STRAT_F_STEERS = 1u << 0,	 /* needs the scheduler: threads park */
	STRAT_F_SYNC_POINTS = 1u << 1,	 /* synchronization points are decisions */
	STRAT_F_ACCESS_POINTS = 1u << 2, /* probed accesses are decisions (--access) */
	STRAT_F_ACCESS = 1u << 3,	 /* implies --access (probes and estimation) */
	STRAT_F_ESTIMATE = 1u << 4,	 /* observed runs first: estimate() */
	STRAT_F_SERIAL = 1u << 5,	 /* one thread at a time: the loop waits on
					  * the scheduler's all-parked notes */
	STRAT_F_PICKS = 1u << 6,	 /* picks who runs itself: refuses --serial */
	STRAT_F_NEEDS_ACCESS = 1u << 8,	 /* this configuration acts only at memory
					  * accesses: run demands --access (set by
					  * init) */
	STRAT_F_ANY_NAME = 1u << 7,	 /* the registry's last resort: takes any
					  * strategy string (noise configurations) */
	STRAT_F_JOBS = 1u << 9,		 /* its ops during a run touch that run's
					  * state only, or what the runs share
					  * under a lock of its own (tsa's
					  * coverage): runs may be steered at once
					  * (run -j N) */
};

/* How `replay` re-makes a run of this strategy (strategies/strategy_replay.c). */
enum strat_replay {
	STRAT_REPLAY_DECISIONS = 0, /* the logged decision at the logged point */
	STRAT_REPLAY_ORDER,	    /* logged points wait; all-parked notes
				     * release them in logged order */
	STRAT_REPLAY_PACED,	    /* logged points go one at a time, in logged
				     * order, each once the one before ran */
};

/* ---- what a strategy sees of the run in flight ------------------------- */

/* One target thread (the loop's thread table). */
struct strat_thread {
	uint32_t tid;
	char path[48];	       /* creation path: "0" main, "0.1" its first child... */
	uint64_t id;	       /* fnv1a64(path): the decision log's abstract thread */
	uint32_t ncreated;     /* children created so far (their path suffix) */
	uint32_t nforked;      /* processes forked so far (their path suffix) */
	uint64_t points;       /* decision points reached (the log's event index) */
	uint32_t cid;	       /* campaign-wide thread id under --access, else 0 */
	int64_t site;	       /* the store site of its last point (0: unknown) */
	uint16_t op;	       /* the probe op (CS_OP_*) of its last point */
	uint64_t pass_pending; /* 1 + the point it waits at or was let go from,
				* until its pass is logged (the schedule's pass) */
	int64_t pass_site;     /* the site of that point, or -(op + 1) for an exit
				* or a point without one (results/schedule.c) */
	uint64_t park_ts;      /* the probe's timestamp of that point */
	bool let_go;	       /* the loop let it go from that point */
	bool pass_acquire;     /* that point is a lock request: its pass is dated by
				* the acquisition (its next event), not its resume */
	size_t pass_rec;       /* 1 + its last pass logged from its next event (a
				* later resume note may date it better), else 0 */
};

/* A thread parked at a decision point. */
struct strat_point {
	struct strat_thread *t;
	uint64_t k;		  /* t's point index: the log's event */
	const struct cs_event *e; /* what the probe reported (op, site, obj) */
	/* An access point: the access in campaign ids (variable, site, op,
	 * locks held), NULL when it touches no variable the campaign follows
	 * or for a synchronization point. */
	const struct cov_event *access;
	bool split;	/* access is a plain read-modify-write: R then W */
	bool contended; /* its variable: a write may meet another access */
	bool cross;	/* its variable: written by one thread and read by
			 * another (strat_campaign.cross_vars) */
};

enum strat_verdict {
	STRAT_PROCEED = 0, /* go on; nothing logged */
	STRAT_RELEASE,	   /* go on, logged as a release with arg */
	STRAT_DELAY,	   /* go on after us microseconds */
	STRAT_YIELD,	   /* go on behind the other runnable threads (arg: count) */
	STRAT_HALT,	   /* wait until every other runnable thread is parked */
	STRAT_PARK,	   /* the strategy keeps it: r->release() later */
};

struct strat_decision {
	enum strat_verdict v;
	uint64_t us;
	int64_t arg;
};

/* The run in flight: filled by the loop (or a unit test's fake). */
struct strat_run {
	uint64_t seed;
	enum cs_serial_mode serial; /* --serial of the campaign */
	struct policy *pol;
	struct declog *log;	      /* decisions made in this run */
	struct strat_thread *threads; /* the loop's table (index = order seen) */
	size_t nthreads;
	bool access_points; /* probed accesses are decision points this run */
	/* Set by run_begin: this run probes no access (the portfolio's
	 * synchronization arms, so their runs are the strategy's own runs
	 * without --access: no uprobe trap at every shared-variable access);
	 * the loop skips the run's access probing and its race analysis. */
	bool no_access_probes;
	/* Which accesses this run probes when it probes any: 0 the campaign's
	 * shared sites, another value a set the probe rotation chose; runs
	 * with one value probe the same variables (run/access.c,
	 * access_run_probe_key). Set before run_begin. */
	uint64_t probe_set;
	/* This run's flags and serial mode: the strategy's (onerun_init),
	 * unless a wrapper's run_begin narrows them to the sub-strategy that
	 * runs (portfolio). The loop reads these per run, not s->flags. */
	unsigned flags;
	enum cs_serial_mode sched_serial;
	void *priv; /* the strategy's per-run state */
	void *wrap; /* a wrapper's per-run state (portfolio): priv stays the
		     * sub-strategy's, so a callback the sub-strategy makes the
		     * loop run (drain) finds both */
	void *ctx;  /* the loop's */
	/* Let a kept thread go: logs DECLOG_RELEASE(arg) at its last point;
	 * an access it was kept at counts as executed from now on. */
	void (*release)(struct strat_run *r, struct strat_thread *t, int64_t arg);
	/* Process every event the probes have queued (point() and event()
	 * may run from inside), so a decision sees everything before it. */
	void (*drain)(struct strat_run *r);
	/* The campaign site id of an event's call site (0: unknown). */
	uint32_t (*site_id)(struct strat_run *r, const struct cs_event *e);
};

/* How a run ended, for run_end(). */
struct strat_outcome {
	bool ran;	/* false: the run could not be started or was cut short */
	bool failed;	/* an oracle failed it */
	bool timed_out; /* a hang: still running after the grace period */
	bool slow;	/* ran past the run timeout only while steered: the
			 * strategy's parks and delays made it slow (issue 13) */
	uint64_t parks, watchdog_releases; /* up to the timeout, when slow */
	uint64_t duration_ns;
	const struct syncov_run *cov; /* its synchronization coverage */
	/* --access: the run's WGoldiLockSC (seed 004's weighted GoldiLock-SC
	 * coverage) and its warnings (races, lock-order), else 0 */
	double wgoldilock_sc;
	uint64_t warnings;
};

/* The campaign, as a strategy sees it. */
struct strat_campaign {
	uint64_t seed;
	bool quiet; /* no summaries on stderr (--json) */
	unsigned estimate_runs;
	size_t contended_vars;	       /* --access: variables a write may race on */
	uint64_t est_accesses;	       /* --access: probed accesses per estimation run
					* (every candidate site: an upper bound of the
					* shared ones), 0 without --access */
	uint64_t est_access_ns;	       /* --access: an estimation run's time (every
					* candidate probed), 0 without --access */
	uint64_t est_dropped;	       /* --access: probed hits per estimation run
					* the ring buffer dropped (they trapped too) */
	size_t cross_vars;	       /* --access: variables one thread writes and
					* another reads, in no fork/join order and
					* with no lock in common (strat_point.cross) */
	uint64_t est_cross_accesses;   /* --access: their accesses per estimation run */
	const uint32_t *cross_var_ids; /* --access: their ids (cov_event.obj, the
					* variable of strat_point.access),
					* ascending; cross_vars of them; may
					* move when a run ends: copy to keep */
	uint64_t nruns;		       /* runs so far */
	void *ctx;
	/* The store's site id of "OBJECT+0xOFF" (0: not a site). */
	int64_t (*site_of)(void *ctx, const char *key);
	int (*add_requirement)(void *ctx, const char *metric, const char *key, const char *source);
	/* Note on the run that just ended (from run_end, when it ran): a JSON
	 * object stored with the run; "summary", when present, is a line the
	 * report prints (docs/DESIGN.md "Adding a strategy"). */
	int (*note)(void *ctx, const char *json);
	/* Each covered task key of metric, so far. */
	int (*for_each_task)(void *ctx, const char *metric, int (*fn)(const char *key, void *arg),
			     void *arg);
	/* Covered tasks of metric, and distinct race and lock-order
	 * warnings, so far (NULL in a loop without a store). */
	int64_t (*count_tasks)(void *ctx, const char *metric);
	int64_t (*count_warnings)(void *ctx);
	/* Access probing: asked for by the user (--access, a metric of
	 * accesses), so it stays on; else a strategy that implies it
	 * (STRAT_F_ACCESS) may turn it off in campaign_begin (access_off):
	 * the loop then probes no access in the test runs. */
	bool access_asked;
	bool access_off;
};

/* One observed (unsteered) run, for estimate(). */
struct strat_observation {
	const struct thread_model *tm;
	const struct site_resolver *res;
	uint64_t duration_ns; /* its time (no access probes) */
};

struct strategy;

struct strategy_ops {
	const char *name; /* as given to --strategy (before any ':') */
	/* What --strategy takes, as `run --help` lists it ("pct[:DEPTH]");
	 * NULL: the name alone. */
	const char *synopsis;
	const char *summary; /* one sentence for `run --help` */
	unsigned flags;	     /* enum strat_flags */
	enum strat_replay replay;

	/* Parse the options after "NAME:" (or the whole string for
	 * STRAT_F_ANY_NAME; NULL when none) into s->priv. 0, or -EINVAL
	 * with a one-line reason in err. */
	int (*init)(struct strategy *s, const char *opts, char *err, size_t errlen);
	void (*destroy)(struct strategy *s);

	int (*estimate)(struct strategy *s, struct strat_campaign *c,
			const struct strat_observation *obs);
	int (*campaign_begin)(struct strategy *s, struct strat_campaign *c);
	void (*campaign_end)(struct strategy *s, struct strat_campaign *c);

	void (*run_begin)(struct strategy *s, struct strat_run *r);
	/* The run's configuration, stored with it (keys of the run's JSON). */
	void (*config_json)(struct strategy *s, struct strat_run *r, struct json *j);
	void (*run_end)(struct strategy *s, struct strat_run *r, struct strat_campaign *c,
			const struct strat_outcome *o);

	void (*thread_start)(struct strategy *s, struct strat_run *r, struct strat_thread *t);
	/* Every event of the run, in ring order, before its point (if any). */
	void (*event)(struct strategy *s, struct strat_run *r, const struct cs_event *e,
		      struct strat_thread *t);
	/* An access the run executed (campaign ids), as the metrics see it. */
	void (*executed)(struct strategy *s, struct strat_run *r, const struct cov_event *ev);
	void (*point)(struct strategy *s, struct strat_run *r, const struct strat_point *p,
		      struct strat_decision *d);
	/* Every runnable thread is parked or blocked: whom to release. */
	void (*all_parked)(struct strategy *s, struct strat_run *r, const struct policy_note *n);
	/* Once per turn of the event loop, and its poll timeout. */
	void (*tick)(struct strategy *s, struct strat_run *r);
	int (*poll_ms)(struct strategy *s, struct strat_run *r, int ms);
};

/* An instance: the ops, the string it was made from, its state. */
struct strategy {
	const struct strategy_ops *ops;
	char *spec;
	unsigned flags; /* ops->flags unless a wrapper changes them */
	enum strat_replay replay;
	/* The scheduler's serial mode this strategy runs under (OFF: threads
	 * run in parallel; --serial's mode; CS_SERIAL_PRIO for priorities). */
	enum cs_serial_mode sched_serial;
	void *priv;
};

/* Short names the loop uses (each a no-op when the callback is NULL). */
static inline bool strategy_has(const struct strategy *s, unsigned flag)
{
	return (s->flags & flag) != 0;
}

/* An instance of ops from spec (its options opts, NULL for none): 0, or
 * -EINVAL with a one-line reason in err (strategy.c). The registry's
 * strategy_new finds ops by name; a wrapper that holds strategies of its
 * own (the portfolio) makes them from their ops. */
int strategy_make(const struct strategy_ops *ops, const char *spec, const char *opts,
		  struct strategy **out, char *err, size_t errlen);
void strategy_free(struct strategy *s);

/* A flag of the run in flight (strat_run.flags). */
static inline bool strat_run_has(const struct strat_run *r, unsigned flag)
{
	return (r->flags & flag) != 0;
}

/* The name it was registered under (--strategy before any ':'). */
static inline const char *strategy_name(const struct strategy *s)
{
	return s->ops->name;
}

/* ---- the callbacks, as every caller outside strategies/ makes them ----- */

/* Each calls s's callback when s and the callback are there, else does
 * nothing (and returns its default: 0, or ms for poll_ms); no file
 * outside strategies/ calls s->ops-> itself. */
static inline int strategy_estimate(struct strategy *s, struct strat_campaign *c,
				    const struct strat_observation *obs)
{
	return s && s->ops->estimate ? s->ops->estimate(s, c, obs) : 0;
}

static inline int strategy_campaign_begin(struct strategy *s, struct strat_campaign *c)
{
	return s && s->ops->campaign_begin ? s->ops->campaign_begin(s, c) : 0;
}

static inline void strategy_campaign_end(struct strategy *s, struct strat_campaign *c)
{
	if (s && s->ops->campaign_end)
		s->ops->campaign_end(s, c);
}

static inline void strategy_run_begin(struct strategy *s, struct strat_run *r)
{
	if (s && s->ops->run_begin)
		s->ops->run_begin(s, r);
}

static inline void strategy_config_json(struct strategy *s, struct strat_run *r, struct json *j)
{
	if (s && s->ops->config_json)
		s->ops->config_json(s, r, j);
}

static inline void strategy_run_end(struct strategy *s, struct strat_run *r,
				    struct strat_campaign *c, const struct strat_outcome *o)
{
	if (s && s->ops->run_end)
		s->ops->run_end(s, r, c, o);
}

static inline void strategy_thread_start(struct strategy *s, struct strat_run *r,
					 struct strat_thread *t)
{
	if (s && s->ops->thread_start)
		s->ops->thread_start(s, r, t);
}

static inline void strategy_event(struct strategy *s, struct strat_run *r, const struct cs_event *e,
				  struct strat_thread *t)
{
	if (s && s->ops->event)
		s->ops->event(s, r, e, t);
}

static inline void strategy_executed(struct strategy *s, struct strat_run *r,
				     const struct cov_event *ev)
{
	if (s && s->ops->executed)
		s->ops->executed(s, r, ev);
}

static inline void strategy_point(struct strategy *s, struct strat_run *r,
				  const struct strat_point *p, struct strat_decision *d)
{
	if (s && s->ops->point)
		s->ops->point(s, r, p, d);
}

static inline void strategy_all_parked(struct strategy *s, struct strat_run *r,
				       const struct policy_note *n)
{
	if (s && s->ops->all_parked)
		s->ops->all_parked(s, r, n);
}

static inline void strategy_tick(struct strategy *s, struct strat_run *r)
{
	if (s && s->ops->tick)
		s->ops->tick(s, r);
}

static inline int strategy_poll_ms(struct strategy *s, struct strat_run *r, int ms)
{
	return s && s->ops->poll_ms ? s->ops->poll_ms(s, r, ms) : ms;
}

#endif
