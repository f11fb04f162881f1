// SPDX-License-Identifier: MIT
/*
 * Strategy map (seed 001's MAPTest testexecute, ALGORITHMS.md section 2) on
 * the contract, around the engine of map_strategy.c. It implies --access:
 * the campaign finds the shared variables and which of them a write may
 * meet concurrently ("contended"); only accesses to those are steered.
 *
 * Every probed access parks; map_strategy_before_access decides. Synchronization
 * points park too and go on at once: the run's observed schedule then
 * holds their order, which a replay enforces (a lost wake-up is an order
 * of a signal and a wait, not of accesses). PROCEED releases
 * at once (logged, so replay keeps the order of decisions); PAUSE keeps the
 * thread. A released access to a contended variable is "in flight" until
 * its thread's next event, the next all-parked note or 2 ms prove it ran,
 * and no other access to that variable is let go before that (else two
 * released threads would race for the order the engine chose). At each
 * all-parked note: re-evaluate the kept threads against the current target
 * (PROCEED -> release), else map_strategy_choose_release. Every release of a kept
 * thread is logged (DECLOG_RELEASE, arg = enum map_release_why, or
 * MAP_REL_REEVAL) so `replay` re-applies them in order. Covered patterns
 * carry across runs: the campaign's coverage is one struct map_strategy,
 * under a lock of its own, and each run steers with a struct map_exec of
 * its own (threads, target, RNG, counts), so runs may be steered at once
 * (run -j N): a pattern one run covers is no target for the others from
 * then on. The counts of a run join the campaign's at its end.
 *
 * Focus (issue 30): when the estimation found variables one thread writes
 * and another reads (strat_campaign.cross_var_ids), targets start on those
 * first (map_strategy_set_focus), so a pattern of the accesses where
 * threads meet is not waited for behind the patterns of every other shared
 * variable; once a run meets them and can start no target there, every
 * variable. Each run's configuration records "map": {"focus"}.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/policy.h"
#include "lib/array_size.h"
#include "lib/json.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/xalloc.h"
#include "strategies/map_strategy.h"
#include "strategies/strategy.h"

/* DECLOG_RELEASE args of map: enum map_release_why (0-2), then these. */
#define MAP_REL_REEVAL	3 /* a kept thread re-evaluated to PROCEED */
#define MAP_REL_PROCEED 4 /* released at once at its point */

/* A released access counts as executed once its thread shows another
 * event, at the next all-parked note, or after this long (the thread runs
 * the probed instruction as soon as it is back on a CPU). */
#define INFLIGHT_NS 2000000ULL

/* The campaign's. During a run only the engine touches it (what the runs
 * share, under the engine's lock); rel and deferred add up the runs that
 * ended (at run_end, under the campaign's lock). */
struct map_strat {
	struct map_strategy *eng;
	uint64_t rel[5]; /* eager, random, no target, re-evaluated, at once */
	uint64_t deferred;
};

struct map_thread {
	bool held;	      /* parked at an access we keep */
	bool inflight;	      /* released at hev, not known to have executed */
	uint64_t inflight_ns; /* when */
	struct cov_event hev; /* that access */
};

/* One run's: only its worker touches it. */
struct map_run {
	struct map_exec *x;    /* its engine state over the campaign's coverage */
	struct map_thread *th; /* by thread index */
	size_t nth;
	size_t ninflight;
	uint64_t last_release_ns;
	uint64_t rel[5]; /* as struct map_strat's, for this run */
	uint64_t deferred;
};

static int map_init(struct strategy *s, const char *opts, char *err, size_t errlen)
{
	if (opts) {
		snprintf(err, errlen, "map takes no options");
		return -EINVAL;
	}
	s->priv = xcalloc(1, sizeof(struct map_strat));
	return 0;
}

static void map_destroy(struct strategy *s)
{
	struct map_strat *ms = s->priv;

	if (!ms)
		return;
	map_strategy_free(ms->eng);
	free(ms);
	s->priv = NULL;
}

static int map_campaign_start(struct strategy *s, struct strat_campaign *c)
{
	struct map_strat *ms = s->priv;

	ms->eng = map_strategy_new(NULL);
	if (c->cross_var_ids)
		map_strategy_set_focus(ms->eng, c->cross_var_ids, c->cross_vars);
	if (c->quiet)
		return 0;
	fprintf(stderr, "concsched: map: steering accesses to %zu variable%s\n", c->contended_vars,
		c->contended_vars == 1 ? "" : "s");
	if (c->cross_var_ids && c->cross_vars)
		fprintf(stderr,
			"concsched: map: targets on the %zu variable%s written by one thread and "
			"read by another first\n",
			c->cross_vars, c->cross_vars == 1 ? "" : "s");
	else
		fprintf(stderr, "concsched: map: no variable written by one thread and read by "
				"another: targets on every variable\n");
	return 0;
}

static void map_campaign_stop(struct strategy *s, struct strat_campaign *c)
{
	struct map_strat *ms = s->priv;
	const struct map_strategy_stats *st;

	if (!ms->eng || c->quiet || !c->nruns)
		return;
	st = map_strategy_stats(ms->eng);
	fprintf(stderr,
		"concsched: map: %zu covered patterns; targets %" PRIu64 " started, %" PRIu64
		" completed, %" PRIu64 " abandoned; %" PRIu64 " pauses, %" PRIu64
		" waits for an access in flight; releases: at once %" PRIu64 ", eager %" PRIu64
		", random %" PRIu64 ", no target %" PRIu64 ", re-evaluated %" PRIu64 ", %" PRIu64
		" forced (watchdog)\n",
		cov_taskset_count(map_strategy_covered(ms->eng)), st->targets_started,
		st->targets_completed, st->targets_abandoned, st->pauses, ms->deferred,
		ms->rel[MAP_REL_PROCEED], ms->rel[0], ms->rel[1], ms->rel[2],
		ms->rel[MAP_REL_REEVAL], st->forced);
}

static void map_run_start(struct strategy *s, struct strat_run *r)
{
	struct map_strat *ms = s->priv;
	struct map_run *mr = xcalloc(1, sizeof(*mr));

	mr->x = map_strategy_exec_new(ms->eng, r->seed);
	r->priv = mr;
}

/* What the run's targets were drawn over. */
static void map_config(struct strategy *s, struct strat_run *r, struct json *j)
{
	struct map_run *mr = r->priv;

	json_obj_begin(j, "map");
	json_kv_str(j, "focus",
		    mr && map_strategy_exec_focused(mr->x) ? "cross-thread variables"
							   : "every variable");
	json_obj_end(j);
}

/* The run's counts join the campaign's (under the campaign's lock). */
static void map_run_stop(struct strategy *s, struct strat_run *r, struct strat_campaign *c,
			 const struct strat_outcome *o)
{
	struct map_strat *ms = s->priv;
	struct map_run *mr = r->priv;

	if (!mr)
		return;
	for (size_t i = 0; i < ARRAY_SIZE(ms->rel); i++)
		ms->rel[i] += mr->rel[i];
	ms->deferred += mr->deferred;
	map_strategy_exec_end(mr->x);
	free(mr->th);
	free(mr);
	r->priv = NULL;
}

static struct map_thread *map_thread(struct map_run *mr, size_t i)
{
	if (i >= mr->nth) {
		size_t n = i + 16;

		mr->th = xrealloc(mr->th, n * sizeof(*mr->th));
		memset(mr->th + mr->nth, 0, (n - mr->nth) * sizeof(*mr->th));
		mr->nth = n;
	}
	return &mr->th[i];
}

static size_t tindex(struct strat_run *r, struct strat_thread *t)
{
	return (size_t)(t - r->threads);
}

/* Is another thread's released access to var still unconfirmed? */
static bool var_in_flight(const struct map_run *mr, size_t self, uint32_t var)
{
	for (size_t i = 0; i < mr->nth; i++)
		if (i != self && mr->th[i].inflight && mr->th[i].hev.obj == var)
			return true;
	return false;
}

static void set_inflight(struct map_run *mr, size_t i, const struct cov_event *ev)
{
	struct map_thread *h = map_thread(mr, i);

	h->inflight = true;
	h->inflight_ns = now_ns();
	h->hev = *ev;
	mr->ninflight++;
	mr->last_release_ns = h->inflight_ns;
}

static void clear_inflight(struct map_run *mr, size_t i)
{
	if (i < mr->nth && mr->th[i].inflight) {
		mr->th[i].inflight = false;
		mr->ninflight--;
	}
}

/* Let a kept thread go: its access executes now. */
static void release_held(struct strat_run *r, size_t i, int why)
{
	struct map_run *mr = r->priv;
	struct map_thread *h = &mr->th[i];
	struct cov_event ev = h->hev;

	h->held = false;
	mr->rel[why]++;
	set_inflight(mr, i, &ev);
	r->release(r, &r->threads[i], why);
}

/* Kept threads whose access may go now (the target changed, or the access
 * they waited for has executed): re-evaluate each against the engine. */
static bool reevaluate(struct strat_run *r)
{
	struct map_run *mr = r->priv;
	bool any = false;
	size_t i;

	for (i = 0; i < mr->nth && i < r->nthreads; i++) {
		struct map_thread *h = &mr->th[i];

		if (!h->held || var_in_flight(mr, i, h->hev.obj))
			continue;
		if (map_strategy_exec_before_access(mr->x, h->hev.thread, h->hev.site, h->hev.obj,
						    h->hev.op) == MAP_PROCEED) {
			release_held(r, i, MAP_REL_REEVAL);
			any = true;
		}
	}
	return any;
}

static void map_thread_begins(struct strategy *s, struct strat_run *r, struct strat_thread *t)
{
	struct map_run *mr = r->priv;

	map_strategy_exec_thread_start(mr->x, t->cid);
}

/* Any event of thread t: what it did before has executed (a kept thread
 * that runs was let go by the watchdog; the campaign fed its access). */
static void map_event(struct strategy *s, struct strat_run *r, const struct cs_event *e,
		      struct strat_thread *t)
{
	struct map_run *mr = r->priv;
	size_t i = tindex(r, t);

	if (i < mr->nth) {
		mr->th[i].held = false;
		if (mr->th[i].inflight) {
			clear_inflight(mr, i);
			reevaluate(r);
		}
	}
	if (e->op == CS_OP_EXIT) {
		map_strategy_exec_thread_exit(mr->x, t->cid);
		reevaluate(r);
	}
}

/* From the run's own worker, with or without the campaign's lock (a
 * release feeds the access it lets go): the engine locks what it shares. */
static void map_executed(struct strategy *s, struct strat_run *r, const struct cov_event *ev)
{
	struct map_run *mr = r->priv;

	if (mr)
		map_strategy_exec_after_access(mr->x, ev);
}

/* A thread parked at an access: keep it or let it go. */
static void map_point(struct strategy *s, struct strat_run *r, const struct strat_point *p,
		      struct strat_decision *d)
{
	struct map_run *mr = r->priv;
	const struct cov_event *ev = p->access;
	size_t i = tindex(r, p->t);
	struct map_thread *h;

	d->v = STRAT_PROCEED;
	if (!ev || !p->contended) {
		/* not a variable the engine steers (or a synchronization
		 * point, parked only for the observed schedule): it goes on,
		 * so an all-parked note from before is stale */
		mr->last_release_ns = now_ns();
		return;
	}
	h = map_thread(mr, i);
	if (map_strategy_exec_before_access(mr->x, p->t->cid, ev->site, ev->obj, ev->op) ==
	    MAP_PROCEED) {
		/* Only once the access to this variable released before it
		 * has executed: the engine's order must be the real one. */
		if (!var_in_flight(mr, i, ev->obj)) {
			mr->rel[MAP_REL_PROCEED]++;
			set_inflight(mr, i, ev);
			if (log_verbose > 1)
				log_debug("map: thread %s @%u v%u op %u: proceed", p->t->path,
					  ev->site, ev->obj, ev->op);
			d->v = STRAT_RELEASE;
			d->arg = MAP_REL_PROCEED;
			return;
		}
		mr->deferred++;
	}
	if (log_verbose > 1)
		log_debug("map: thread %s @%u v%u op %u: %s", p->t->path, ev->site, ev->obj, ev->op,
			  map_strategy_exec_is_paused(mr->x, p->t->cid)
				  ? "pause"
				  : "wait (same variable in flight)");
	h->held = true;
	h->hev = *ev;
	d->v = STRAT_PARK;
}

static void map_all_parked(struct strategy *s, struct strat_run *r, const struct policy_note *n)
{
	struct map_run *mr = r->priv;
	struct map_release rel;
	size_t i;

	if (n->ts_ns <= mr->last_release_ns)
		return; /* from before our last release */
	r->drain(r);
	if (n->ts_ns <= mr->last_release_ns)
		return; /* a point drained just now went on after it */
	/* Everyone runnable is parked: every released access has executed. */
	for (i = 0; i < mr->nth; i++)
		clear_inflight(mr, i);
	if (reevaluate(r))
		return;
	if (map_strategy_exec_choose_release(mr->x, &rel))
		return;
	for (i = 0; i < mr->nth && i < r->nthreads; i++)
		if (mr->th[i].held && r->threads[i].cid == rel.thread) {
			release_held(r, i, rel.why);
			return;
		}
}

/* Released accesses older than INFLIGHT_NS have executed. */
static void map_tick(struct strategy *s, struct strat_run *r)
{
	struct map_run *mr = r->priv;
	uint64_t now;
	bool any = false;

	if (!mr->ninflight)
		return;
	now = now_ns();
	for (size_t i = 0; i < mr->nth; i++)
		if (mr->th[i].inflight && now - mr->th[i].inflight_ns >= INFLIGHT_NS) {
			clear_inflight(mr, i);
			any = true;
		}
	if (any)
		reevaluate(r);
}

static int map_poll_ms(struct strategy *s, struct strat_run *r, int ms)
{
	struct map_run *mr = r->priv;

	return mr->ninflight && ms > 1 ? 1 : ms;
}

const struct strategy_ops strat_map_ops = {
	.name = "map",
	.summary = "MAP-directed (seed 001): steer accesses to shared variables towards "
		   "uncovered memory-access patterns, those of variables one thread writes and "
		   "another reads first; implies --access",
	.flags = STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ACCESS_POINTS | STRAT_F_ACCESS |
		 STRAT_F_PICKS | STRAT_F_JOBS,
	.replay = STRAT_REPLAY_PACED,
	.init = map_init,
	.destroy = map_destroy,
	.campaign_begin = map_campaign_start,
	.campaign_end = map_campaign_stop,
	.run_begin = map_run_start,
	.config_json = map_config,
	.run_end = map_run_stop,
	.thread_start = map_thread_begins,
	.event = map_event,
	.executed = map_executed,
	.point = map_point,
	.all_parked = map_all_parked,
	.tick = map_tick,
	.poll_ms = map_poll_ms,
};
