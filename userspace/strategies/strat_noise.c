// SPDX-License-Identifier: MIT
/*
 * Strategies none, random and the noise configurations (seed 004 section 4,
 * seed 000's RND baselines; ALGORITHMS.md section 6) on the contract.
 *
 * none: reruns under the probes, no steering (not native reruns: the probes
 * change the timing); nothing parks (with --serial the
 * serial wrapper alone steers). A noise configuration: every
 * synchronization point parks and noise_decide() answers for it: nothing,
 * yield, sleep / busy-wait / wait n us (a delay), or haltOneThread (wait
 * until every other runnable thread is parked). With --access every probed
 * memory access is a decision point too, so the placements over accesses
 * (sharedVar-all, sharedVar-one, pattern, and reads/writes of read-write)
 * act where they were meant to; a configuration that acts only at accesses
 * demands --access (STRAT_F_NEEDS_ACCESS). When the estimation found
 * variables written by one thread and read by another
 * (strat_campaign.cross_var_ids), sharedVar-one picks one of them per run
 * with the run's seed (noise_run_focus) instead of the first shared
 * variable the run reaches (on a program with a lock-protected counter
 * touched first, always that one); the other placements act at every
 * access they did (sharedVar-all and random-all at every shared one: the
 * noise at the other shared accesses is part of what opens a window like
 * race_torn_pair's). A sharedVar-one run records "focus" and "var".
 * random: a configuration drawn
 * afresh for each run from the run's seed, among the ones that act at
 * synchronization points; half the runs hold the end of the process
 * (",xh") until no other thread can run, so that the workers a main leaves
 * unjoined run before the exit. With --access the synchronization points
 * keep that configuration (the one random draws for the seed without
 * --access) and the accesses get a second one, drawn among all ("noise"
 * and "noise_access" in the run's configuration), so random --access
 * steers the synchronization points as random does and adds the noise at
 * accesses.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/policy.h"
#include "lib/json.h"
#include "coverage/cov_event.h"
#include "lib/xalloc.h"
#include "strategies/noise.h"
#include "strategies/strat_noise.h"
#include "strategies/strategy.h"

struct noise_strat {
	struct noise_config cfg;
	bool random;	 /* draw a configuration per run */
	uint64_t *cross; /* the campaign's cross-thread variables (ids) */
	size_t ncross;
	bool campaign; /* campaign_begin ran (not so inside ga) */
};

/* pattern: the function and the variables one thread accessed in it since
 * it last entered another function (an invocation, as far as points see). */
#define PATTERN_VARS 16
struct pattern_thread {
	uint64_t id;
	uint32_t func;
	uint32_t vars[PATTERN_VARS];
	size_t nvars;
};

struct noise_strat_run {
	struct noise_config cfg; /* random --access: the synchronization points' */
	struct noise_run run;
	bool split;		  /* random --access: accesses have their own */
	struct noise_config acfg; /* configuration and their own draws */
	struct noise_run arun;
	uint64_t *lock_threads; /* (obj, first tid) pairs, UINT32_MAX once shared */
	size_t nlock_threads;
	struct pattern_thread *pat;
	size_t npat;
};

/* The decision points are synchronization calls; placements and seedings
 * that only make sense at memory accesses (or need access probes) are
 * redrawn for `random` and refused for a configuration. */
/* Seedings run can apply at a point: a delay, a yield or a halt. */
static bool noise_seeding_runs(const struct noise_config *c)
{
	switch (c->seed.kind) {
	case NOISE_SEED_INVERSE:
	case NOISE_SEED_PRIORITY:
	case NOISE_SEED_TIMEOUT:
		return false;
	default:
		return true;
	}
}

static bool noise_fits_sync(const struct noise_config *c)
{
	switch (c->placement) {
	case NOISE_PLACE_RANDOM_ALL:
	case NOISE_PLACE_READ_WRITE:
	case NOISE_PLACE_COVERAGE:
		break;
	default:
		return false;
	}
	switch (c->seed.kind) {
	case NOISE_SEED_INVERSE:
	case NOISE_SEED_PRIORITY:
	case NOISE_SEED_TIMEOUT:
		return false;
	default:
		return true;
	}
}

static int noise_init(struct strategy *s, const char *opts, char *err, size_t errlen)
{
	struct noise_strat *ns = xcalloc(1, sizeof(*ns));

	s->priv = ns;
	if (noise_config_parse(opts ? opts : "", &ns->cfg, err, errlen))
		return -EINVAL;
	if (!noise_seeding_runs(&ns->cfg)) {
		snprintf(err, errlen,
			 "seeding %s is not available in run (it needs thread priorities or the "
			 "program's own timeouts); use yield, sleep, busyWait, wait, mixed or "
			 "haltOneThread",
			 noise_seeding_name(ns->cfg.seed.kind));
		return -EINVAL;
	}
	/* Placements over accesses: only with --access (run checks). */
	if (!noise_fits_sync(&ns->cfg))
		s->flags |= STRAT_F_NEEDS_ACCESS;
	return 0;
}

static int random_init(struct strategy *s, const char *opts, char *err, size_t errlen)
{
	struct noise_strat *ns = xcalloc(1, sizeof(*ns));

	s->priv = ns;
	ns->random = true;
	if (opts) {
		snprintf(err, errlen, "random takes no options");
		return -EINVAL;
	}
	return 0;
}

void strat_noise_configure(struct strategy *s, const struct noise_config *c)
{
	struct noise_strat *ns = s->priv;

	ns->cfg = *c;
	ns->random = false;
}

static void noise_destroy(struct strategy *s)
{
	struct noise_strat *ns = s->priv;

	if (ns)
		free(ns->cross);
	free(ns);
	s->priv = NULL;
}

extern const struct strategy_ops strat_noise_ops;

struct strategy *strat_noise_new(const struct noise_config *c)
{
	struct strategy *s = xcalloc(1, sizeof(*s));

	s->ops = &strat_noise_ops;
	s->spec = xstrdup("noise");
	s->flags = strat_noise_ops.flags;
	s->replay = strat_noise_ops.replay;
	s->priv = xcalloc(1, sizeof(struct noise_strat));
	strat_noise_configure(s, c);
	return s;
}

void strat_noise_free(struct strategy *s)
{
	if (!s)
		return;
	noise_destroy(s);
	free(s->spec);
	free(s);
}

/* With --access: the variables the estimation found written by one thread
 * and read by another, among which sharedVar-one picks its variable
 * (issue 30); with none, the first shared variable a run reaches, as
 * before. A line says which when a run may be sharedVar-one. */
static int noise_campaign_start(struct strategy *s, struct strat_campaign *c)
{
	struct noise_strat *ns = s->priv;

	free(ns->cross);
	ns->cross = NULL;
	ns->campaign = true;
	ns->ncross = c->cross_var_ids ? c->cross_vars : 0;
	if (ns->ncross) {
		ns->cross = xcalloc(ns->ncross, sizeof(*ns->cross));
		for (size_t i = 0; i < ns->ncross; i++)
			ns->cross[i] = c->cross_var_ids[i];
	}
	if (c->quiet || !c->est_accesses ||
	    (!ns->random && ns->cfg.placement != NOISE_PLACE_SHAREDVAR_ONE))
		return 0;
	if (ns->ncross)
		fprintf(stderr,
			"concsched: %s: sharedVar-one picks its variable among the %zu written by "
			"one thread and read by another\n",
			s->ops->name, ns->ncross);
	else
		fprintf(stderr,
			"concsched: %s: no variable written by one thread and read by another: "
			"sharedVar-one takes the first shared variable a run reaches\n",
			s->ops->name);
	return 0;
}

/* The stream a run's configuration is drawn from. */
#define RANDOM_CFG_SALT 0x6e6f697365ULL
/* The draws of the accesses' noise, apart from the synchronization
 * points'. */
#define RANDOM_ACCESS_SALT 0x616363657373ULL

/* random's configuration for a run: the first in the seed's stream that
 * runs at synchronization points (or, access, at any point). */
static void random_draw(uint64_t seed, bool access, struct noise_config *c)
{
	struct cs_rng rng;

	rng_seed(&rng, seed ^ RANDOM_CFG_SALT);
	do
		noise_config_random(&rng, c);
	while (!noise_seeding_runs(c) || (!access && !noise_fits_sync(c)));
	/* Half the runs hold the end of the process for the other threads
	 * (,xh). Drawn after the configuration, so the rest of a seed's
	 * configuration is what it was before (2026-11-30). */
	c->exit_hold = rng_chance(&rng, 0.5);
}

static void noise_run_start(struct strategy *s, struct strat_run *r)
{
	struct noise_strat *ns = s->priv;
	struct noise_strat_run *nr = xcalloc(1, sizeof(*nr));

	if (ns->random) {
		/* The synchronization points get the configuration random
		 * draws without --access for this seed; with --access the
		 * accesses get their own, drawn among all (2026-11-30: one
		 * configuration over both left half the runs without noise
		 * at synchronization points, and random --access needed 5
		 * runs for a lock-order bug random finds in its first). */
		random_draw(r->seed, false, &nr->cfg);
		if (r->access_points) {
			random_draw(r->seed, true, &nr->acfg);
			nr->acfg.exit_hold = false;
			nr->split = true;
		}
	} else {
		nr->cfg = ns->cfg;
	}
	noise_run_begin(&nr->run, &nr->cfg, r->seed);
	if (nr->split) {
		noise_run_begin(&nr->arun, &nr->acfg, r->seed ^ RANDOM_ACCESS_SALT);
		noise_run_focus(&nr->arun, ns->cross, ns->ncross);
	} else if (r->access_points) {
		noise_run_focus(&nr->run, ns->cross, ns->ncross);
	}
	r->priv = nr;
}

static void noise_config(struct strategy *s, struct strat_run *r, struct json *j)
{
	struct noise_strat *ns = s->priv;
	struct noise_strat_run *nr = r->priv;
	struct noise_run *ar = nr->split ? &nr->arun : &nr->run;
	char buf[256];

	noise_config_format(&nr->cfg, buf, sizeof(buf));
	json_kv_str(j, "noise", buf);
	if (nr->split) {
		noise_config_format(&nr->acfg, buf, sizeof(buf));
		json_kv_str(j, "noise_access", buf);
	}
	if (!r->access_points || !ns->campaign || ar->cfg.placement != NOISE_PLACE_SHAREDVAR_ONE)
		return;
	/* What sharedVar-one's variable was drawn over. */
	json_kv_str(j, "focus", ar->focus ? "cross-thread variable" : "first shared variable");
	if (ar->focus)
		json_kv_uint(j, "var", ar->var);
}

static void noise_run_stop(struct strategy *s, struct strat_run *r, struct strat_campaign *c,
			   const struct strat_outcome *o)
{
	struct noise_strat_run *nr = r->priv;

	if (!nr)
		return;
	free(nr->lock_threads);
	free(nr->pat);
	free(nr);
	r->priv = NULL;
}

/* A lock seen from two threads is a shared variable for the placements. */
static bool lock_shared(struct noise_strat_run *nr, uint64_t obj, uint32_t tid)
{
	size_t i;

	for (i = 0; i < nr->nlock_threads; i += 2) {
		if (nr->lock_threads[i] != obj)
			continue;
		if (nr->lock_threads[i + 1] != tid)
			nr->lock_threads[i + 1] = UINT32_MAX;
		return nr->lock_threads[i + 1] == UINT32_MAX;
	}
	if (nr->nlock_threads % 128 == 0)
		nr->lock_threads =
			xrealloc(nr->lock_threads, (nr->nlock_threads + 128) * sizeof(uint64_t));
	nr->lock_threads[nr->nlock_threads++] = obj;
	nr->lock_threads[nr->nlock_threads++] = tid;
	return false;
}

/* pattern: has this thread accessed var in the function it is in, since
 * it entered it? */
static bool repeat_in_function(struct noise_strat_run *nr, uint64_t thread, uint32_t func,
			       uint32_t var)
{
	struct pattern_thread *pt = NULL;
	size_t i;

	for (i = 0; i < nr->npat; i++)
		if (nr->pat[i].id == thread)
			pt = &nr->pat[i];
	if (!pt) {
		nr->pat = xrealloc(nr->pat, (nr->npat + 1) * sizeof(*nr->pat));
		pt = &nr->pat[nr->npat++];
		memset(pt, 0, sizeof(*pt));
		pt->id = thread;
	}
	if (pt->func != func) {
		pt->func = func;
		pt->nvars = 0;
	}
	for (i = 0; i < pt->nvars; i++)
		if (pt->vars[i] == var)
			return true;
	if (pt->nvars < PATTERN_VARS)
		pt->vars[pt->nvars++] = var;
	return false;
}

/* exit()'s object is the process, a start's the new thread, a stdio
 * call's a stream no lock probe follows: nothing threads share. */
static bool sync_point_shares_obj(uint16_t op)
{
	return op != CS_OP_PROC_EXIT && op != CS_OP_START && op != CS_OP_STDIO;
}

static void noise_point_decide(struct strategy *s, struct strat_run *r, const struct strat_point *p,
			       struct strat_decision *d)
{
	struct noise_strat_run *nr = r->priv;
	struct noise_point pt = { 0 };
	struct noise_decision nd;

	pt.thread = (uint32_t)p->t->id;
	pt.site_hits = p->k;
	if (cov_event_op_is_access(p->e->op)) {
		/* A probed access (--access): the variables the estimation
		 * runs found shared are the ones probed. */
		pt.kind = cov_event_op_writes(p->e->op) ? NOISE_PT_WRITE : NOISE_PT_READ;
		pt.site = p->access ? p->access->site : (uint32_t)p->e->site;
		pt.var = p->access ? p->access->obj : 0;
		pt.shared = p->access != NULL;
		pt.repeat_in_function =
			p->access &&
			repeat_in_function(nr, p->t->id, p->access->func, p->access->obj);
		pt.coverage_target = p->contended;
	} else {
		pt.kind = NOISE_PT_SYNC;
		pt.exit = p->e->op == CS_OP_PROC_EXIT;
		pt.site = (uint32_t)p->e->site;
		pt.var = sync_point_shares_obj(p->e->op) ? p->e->obj : 0;
		pt.shared = pt.var && lock_shared(nr, pt.var, p->e->tid);
		pt.coverage_target = p->k == 0;
	}
	nd = noise_decide(nr->split && pt.kind != NOISE_PT_SYNC ? &nr->arun : &nr->run, &pt);
	switch (nd.act) {
	case NOISE_ACT_SLEEP:
	case NOISE_ACT_BUSYWAIT:
	case NOISE_ACT_WAIT:
		d->v = STRAT_DELAY;
		d->us = nd.n > 0 ? (uint64_t)nd.n : 0;
		d->arg = nd.n;
		break;
	case NOISE_ACT_YIELD:
		d->v = STRAT_YIELD;
		d->arg = nd.n;
		break;
	case NOISE_ACT_HALT:
		d->v = STRAT_HALT;
		break;
	default:
		d->v = STRAT_PROCEED;
		break;
	}
}

const struct strategy_ops strat_noise_none_ops = {
	.name = "none",
	.summary = "no steering, any kernel; not native reruns: the probes alone change the "
		   "timing, so compare strategies against native reruns",
	.flags = 0,
	.replay = STRAT_REPLAY_DECISIONS,
};

const struct strategy_ops strat_noise_random_ops = {
	.name = "random",
	.summary = "a random noise configuration per run (seed 004's blind default): delays and "
		   "yields at synchronization points, and with --access a second one at probed "
		   "accesses to shared variables (sharedVar-one on one that one thread writes "
		   "and another reads, when the estimation finds any); half the runs hold the "
		   "program's exit until the other threads cannot run",
	.flags = STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ACCESS_POINTS | STRAT_F_JOBS,
	.replay = STRAT_REPLAY_DECISIONS,
	.init = random_init,
	.destroy = noise_destroy,
	.campaign_begin = noise_campaign_start,
	.run_begin = noise_run_start,
	.config_json = noise_config,
	.run_end = noise_run_stop,
	.point = noise_point_decide,
};

const struct strategy_ops strat_noise_ops = {
	.name = "noise",
	.synopsis = "PLACEMENT@FREQ/SEEDING",
	.summary = "one noise configuration for every run (docs/strategies.md), e.g. "
		   "'sharedVar-all@300/sleep:200'; placements random-all, sharedVar-all, "
		   "sharedVar-one, read-write, pattern, coverage (all but random-all act at probed "
		   "accesses: add --access); or a baseline rnd-y:P, rnd-s10:P, rnd-s100:P",
	.flags = STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ACCESS_POINTS | STRAT_F_ANY_NAME |
		 STRAT_F_JOBS,
	.replay = STRAT_REPLAY_DECISIONS,
	.init = noise_init,
	.destroy = noise_destroy,
	.campaign_begin = noise_campaign_start,
	.run_begin = noise_run_start,
	.config_json = noise_config,
	.run_end = noise_run_stop,
	.point = noise_point_decide,
};
