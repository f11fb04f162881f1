// SPDX-License-Identifier: MIT
/*
 * MAPTest testexecute (seed 001 Algorithm 4) as a scheduling engine; the
 * rules are in map_strategy.h.
 */
#include "strategies/map_strategy.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "lib/array_size.h"
#include "lib/futex_lock.h"
#include "lib/log.h"
#include "lib/xalloc.h"

#define STALL_LIMIT_DEFAULT 8

enum tstate {
	T_UNKNOWN = 0,
	T_ENABLED,
	T_BLOCKED,
	T_EXITED,
};

struct mthr {
	enum tstate state;
	bool paused;
	bool has_pending;
	uint32_t site, var;
	uint16_t op;
};

/* One run's state: only the worker of that run touches it. */
struct map_exec {
	struct map_strategy *s;
	struct cs_rng rng;
	struct mthr *thr;
	uint32_t nthr;
	struct map_target target;
	uint64_t generation;
	struct cov_taskset tried; /* prefixes tried this run */
	/* The run's window of accesses; its cache of instances already in
	 * s->covered only saves work, so a matcher goes from an ended run to
	 * the next (one run at a time: the one matcher of before). */
	struct map_online *online;
	struct map_strategy_stats counts;
	bool focus;	    /* targets start only at the focus variables */
	bool focus_seen;    /* an access to one of them was fed */
	bool focus_started; /* a target started on one of them */
	/* &counts, or the totals for the strategy's own run (counted as it
	 * goes, as before runs at once) */
	struct map_strategy_stats *stats;
};

/* What the runs share, under lock: a covered instance is covered for
 * every run at once. Each run's own part, touched without the lock, is
 * its struct map_exec. */
struct map_strategy {
	struct map_strategy_opts opts; /* read-only once made */
	struct futex_lock lock;
	struct cov_taskset covered;
	struct cov_taskset covered_prefix; /* "p<id> v<x> s<first>" */
	struct cov_u64map vars_seen;	   /* across runs */
	struct cov_u64map focus;	   /* map_strategy_set_focus's variables */
	bool focus_spent;		   /* a run met them and could start no target on them */
	struct map_strategy_stats stats;   /* totals */
	struct map_online **spare;	   /* matchers of ended runs */
	size_t nspare;
	struct map_exec own; /* the run of map_strategy_run_begin and the calls on s */
};

static void prefix_key(unsigned pattern, uint32_t x, uint32_t site, char *buf, size_t len)
{
	snprintf(buf, len, "p%u v%u s%u", pattern, x, site);
}

/* Under s->lock. */
static void note_covered(struct map_strategy *s, const struct map_instance *in)
{
	char key[64];

	prefix_key(in->pattern, in->x, in->site[0], key, sizeof(key));
	cov_event_taskset_add(&s->covered_prefix, key, 1);
}

/* From map_patterns_online_feed, under s->lock. */
static void online_hook(void *ctx, const struct map_instance *in, bool is_new)
{
	struct map_exec *x = ctx;

	if (!is_new)
		return;
	x->stats->covered_new++;
	note_covered(x->s, in);
}

static void exec_init(struct map_exec *x, struct map_strategy *s, struct map_online *online)
{
	x->s = s;
	cov_event_taskset_init(&x->tried);
	x->online = online ? online : map_patterns_online_new(s->opts.window);
	map_patterns_online_set_hook(x->online, online_hook, x);
	rng_seed(&x->rng, 0);
}

static void exec_fini(struct map_exec *x)
{
	cov_event_taskset_free(&x->tried);
	free(x->thr);
}

struct map_strategy *map_strategy_new(const struct map_strategy_opts *opts)
{
	struct map_strategy *s = xcalloc(1, sizeof(*s));

	if (opts)
		s->opts = *opts;
	if (!s->opts.stall_limit)
		s->opts.stall_limit = STALL_LIMIT_DEFAULT;
	cov_event_taskset_init(&s->covered);
	cov_event_taskset_init(&s->covered_prefix);
	cov_event_u64map_init(&s->vars_seen);
	cov_event_u64map_init(&s->focus);
	exec_init(&s->own, s, NULL);
	s->own.stats = &s->stats;
	return s;
}

void map_strategy_free(struct map_strategy *s)
{
	if (!s)
		return;
	cov_event_taskset_free(&s->covered);
	cov_event_taskset_free(&s->covered_prefix);
	cov_event_u64map_free(&s->vars_seen);
	cov_event_u64map_free(&s->focus);
	exec_fini(&s->own);
	map_patterns_online_free(s->own.online);
	while (s->nspare)
		map_patterns_online_free(s->spare[--s->nspare]);
	free(s->spare);
	free(s);
}

void map_strategy_mark_covered(struct map_strategy *s, const char *key)
{
	struct map_instance in;

	if (map_patterns_instance_parse(key, &in))
		return;
	futex_lock_acquire(&s->lock);
	cov_event_taskset_add(&s->covered, key, 1);
	note_covered(s, &in);
	futex_lock_release(&s->lock);
}

const struct cov_taskset *map_strategy_covered(const struct map_strategy *s)
{
	return &s->covered;
}

const struct map_strategy_stats *map_strategy_stats(const struct map_strategy *s)
{
	return &s->stats;
}

static void target_clear(struct map_exec *x)
{
	memset(&x->target, 0, sizeof(x->target));
	x->generation++;
}

void map_strategy_set_focus(struct map_strategy *s, const uint32_t *vars, size_t n)
{
	futex_lock_acquire(&s->lock);
	cov_event_u64map_free(&s->focus);
	cov_event_u64map_init(&s->focus);
	for (size_t i = 0; i < n; i++)
		cov_event_u64map_put(&s->focus, vars[i], 1, NULL);
	s->focus_spent = false;
	futex_lock_release(&s->lock);
}

/* A new run on x: no threads, no target, nothing tried, an empty window;
 * targets on the focus variables only while they have any left. */
static void exec_begin(struct map_exec *x, uint64_t seed)
{
	futex_lock_acquire(&x->s->lock);
	x->focus = x->s->focus.count && !x->s->focus_spent;
	futex_lock_release(&x->s->lock);
	x->focus_seen = x->focus_started = false;
	rng_seed(&x->rng, seed);
	memset(x->thr, 0, x->nthr * sizeof(*x->thr));
	cov_event_taskset_free(&x->tried);
	cov_event_taskset_init(&x->tried);
	map_patterns_online_run_begin(x->online);
	target_clear(x);
	x->stats->runs++;
}

struct map_exec *map_strategy_exec_new(struct map_strategy *s, uint64_t seed)
{
	struct map_exec *x = xcalloc(1, sizeof(*x));
	struct map_online *online = NULL;

	futex_lock_acquire(&s->lock);
	if (s->nspare)
		online = s->spare[--s->nspare];
	futex_lock_release(&s->lock);
	exec_init(x, s, online);
	x->stats = &x->counts;
	exec_begin(x, seed);
	return x;
}

static void stats_add(struct map_strategy_stats *to, const struct map_strategy_stats *from)
{
	to->runs += from->runs;
	to->targets_started += from->targets_started;
	to->targets_completed += from->targets_completed;
	to->targets_abandoned += from->targets_abandoned;
	for (unsigned i = 0; i < ARRAY_SIZE(to->targets_by_pattern); i++)
		to->targets_by_pattern[i] += from->targets_by_pattern[i];
	to->pauses += from->pauses;
	to->releases_eager += from->releases_eager;
	to->releases_random += from->releases_random;
	to->releases_no_target += from->releases_no_target;
	to->forced += from->forced;
	to->covered_new += from->covered_new;
}

void map_strategy_exec_end(struct map_exec *x)
{
	struct map_strategy *s;

	if (!x)
		return;
	s = x->s;
	map_patterns_online_run_begin(x->online); /* its windows' memory goes now */
	futex_lock_acquire(&s->lock);
	stats_add(&s->stats, &x->counts);
	if (x->focus && x->focus_seen && !x->focus_started)
		s->focus_spent = true;
	s->spare = xrealloc(s->spare, (s->nspare + 1) * sizeof(*s->spare));
	s->spare[s->nspare++] = x->online;
	futex_lock_release(&s->lock);
	exec_fini(x);
	free(x);
}

void map_strategy_run_begin(struct map_strategy *s, uint64_t seed)
{
	if (s->own.focus && s->own.focus_seen && !s->own.focus_started)
		s->focus_spent = true; /* the run before */
	exec_begin(&s->own, seed);
}

bool map_strategy_exec_focused(const struct map_exec *x)
{
	return x->focus;
}

static struct mthr *thr(struct map_exec *x, uint32_t t)
{
	if (t >= x->nthr) {
		uint32_t n = t + 16;

		x->thr = xrealloc(x->thr, n * sizeof(*x->thr));
		memset(x->thr + x->nthr, 0, (n - x->nthr) * sizeof(*x->thr));
		x->nthr = n;
	}
	return &x->thr[t];
}

static void target_abandon(struct map_exec *x)
{
	char key[64];

	if (!x->target.active)
		return;
	prefix_key(x->target.pattern, x->target.x, x->target.site[0], key, sizeof(key));
	cov_event_taskset_add(&x->tried, key, 1);
	x->stats->targets_abandoned++;
	if (log_verbose > 1)
		log_debug("map: target %s abandoned at step %u, %u stalls", key, x->target.next + 1,
			  x->target.stalls);
	target_clear(x);
}

void map_strategy_exec_thread_start(struct map_exec *x, uint32_t t)
{
	thr(x, t)->state = T_ENABLED;
}

void map_strategy_exec_thread_blocked(struct map_exec *x, uint32_t t)
{
	struct mthr *m = thr(x, t);

	if (!m->paused)
		m->state = T_BLOCKED;
}

void map_strategy_exec_thread_runnable(struct map_exec *x, uint32_t t)
{
	struct mthr *m = thr(x, t);

	if (m->state != T_EXITED)
		m->state = T_ENABLED;
}

/* Does thread t still have a step to play in the target? */
static bool target_needs(const struct map_exec *x, uint32_t t)
{
	const struct map_target *g = &x->target;
	const struct map_pattern *p;

	if (!g->active)
		return false;
	p = map_patterns_get(g->pattern);
	for (unsigned j = g->next; j < p->nsteps; j++) {
		if (p->step[j].role == MAP_ROLE_A && g->a == t)
			return true;
		if (p->step[j].role == MAP_ROLE_B && g->has_b && g->b == t)
			return true;
	}
	return false;
}

void map_strategy_exec_thread_exit(struct map_exec *x, uint32_t t)
{
	struct mthr *m = thr(x, t);

	m->state = T_EXITED;
	m->paused = false;
	m->has_pending = false;
	if (target_needs(x, t))
		target_abandon(x);
}

/* Would thread t's access (var, op) be the target's next step? */
static bool is_next_step(const struct map_exec *x, uint32_t t, uint32_t var, unsigned op)
{
	const struct map_target *g = &x->target;
	const struct map_pattern *p;
	const struct map_step *st;

	if (!g->active)
		return false;
	p = map_patterns_get(g->pattern);
	st = &p->step[g->next];
	if (!map_patterns_step_accepts(st, op))
		return false;
	if (st->var == MAP_VAR_X && var != g->x)
		return false;
	if (st->var == MAP_VAR_Y && (g->has_y ? var != g->y : var == g->x))
		return false;
	if (st->role == MAP_ROLE_A)
		return t == g->a;
	return g->has_b ? t == g->b : t != g->a;
}

static bool is_scheduling_point(const struct map_exec *x, uint32_t var)
{
	const struct map_target *g = &x->target;

	return g->active && (var == g->x || (g->has_y && var == g->y));
}

enum map_verdict map_strategy_exec_before_access(struct map_exec *x, uint32_t t, uint32_t site,
						 uint32_t var, unsigned op)
{
	struct mthr *m = thr(x, t);
	bool was_paused = m->paused;

	if (m->state == T_UNKNOWN)
		m->state = T_ENABLED;
	m->has_pending = true;
	m->site = site;
	m->var = var;
	m->op = op;
	m->paused = false;
	if (!is_scheduling_point(x, var) || is_next_step(x, t, var, op))
		return MAP_PROCEED;
	m->paused = true;
	m->state = T_ENABLED;
	if (!was_paused)
		x->stats->pauses++;
	return MAP_PAUSE;
}

/* Under s->lock. */
static bool var_seen_other(const struct map_strategy *s)
{
	return s->vars_seen.count >= 2;
}

/* Seed 001: pick a target among uncovered patterns whose first step is
 * this access; prefer pattern 3. Under s->lock: what any run covered is
 * no target. */
static void target_start(struct map_exec *x, const struct cov_event *ev)
{
	const struct map_strategy *s = x->s;
	unsigned cand[MAP_NPATTERNS], ncand = 0, pick;
	char key[64];

	if (x->focus && !cov_event_u64map_get(&s->focus, ev->obj))
		return;
	for (unsigned id = 1; id <= MAP_NPATTERNS; id++) {
		const struct map_pattern *p = map_patterns_get(id);

		if (!map_patterns_step_accepts(&p->step[0], ev->op))
			continue;
		if (p->nvars == 2 && !var_seen_other(s))
			continue;
		prefix_key(id, ev->obj, ev->site, key, sizeof(key));
		if (cov_event_taskset_has(&s->covered_prefix, key) ||
		    cov_event_taskset_has(&x->tried, key))
			continue;
		cand[ncand++] = id;
	}
	if (!ncand)
		return;
	pick = cand[rng_below(&x->rng, ncand)];
	for (unsigned i = 0; i < ncand && !s->opts.no_prefer_ww; i++)
		if (cand[i] == 3)
			pick = 3;
	if (log_verbose > 1) {
		char cl[128];
		size_t o = 0;

		cl[0] = 0;
		for (unsigned i = 0; i < ncand && o < sizeof(cl); i++)
			o += (size_t)snprintf(cl + o, sizeof(cl) - o, " %u", cand[i]);
		log_debug("map: target p%u (of the uncovered%s) at thread %u v%u @%u op %u", pick,
			  cl, ev->thread, ev->obj, ev->site, ev->op);
	}
	memset(&x->target, 0, sizeof(x->target));
	x->target.active = true;
	x->target.pattern = pick;
	x->target.next = 1;
	x->target.a = ev->thread;
	x->target.x = ev->obj;
	x->target.site[0] = ev->site;
	x->generation++;
	x->focus_started |= x->focus;
	x->stats->targets_started++;
	x->stats->targets_by_pattern[pick]++;
}

/* Under s->lock: a completed target is covered for every run. */
static void target_advance(struct map_exec *x, const struct cov_event *ev)
{
	struct map_target *g = &x->target;
	const struct map_pattern *p = map_patterns_get(g->pattern);
	const struct map_step *st = &p->step[g->next];
	struct map_instance in;
	char key[160];

	if (st->role == MAP_ROLE_B && !g->has_b) {
		g->has_b = true;
		g->b = ev->thread;
	}
	if (st->var == MAP_VAR_Y && !g->has_y) {
		g->has_y = true;
		g->y = ev->obj;
	}
	g->site[g->next++] = ev->site;
	g->stalls = 0;
	if (log_verbose > 1)
		log_debug("map: target p%u step %u done by thread %u v%u", g->pattern, g->next,
			  ev->thread, ev->obj);
	x->generation++;
	if (g->next < p->nsteps)
		return;
	/* Covered: also record it directly, the online window may be
	 * narrower than the target's span. */
	in = (struct map_instance){ .pattern = g->pattern, .x = g->x, .y = g->y };
	memcpy(in.site, g->site, sizeof(in.site));
	if (cov_event_taskset_add(&x->s->covered, map_patterns_instance_key(&in, key, sizeof(key)),
				  1)) {
		x->stats->covered_new++;
		note_covered(x->s, &in);
	}
	x->stats->targets_completed++;
	target_clear(x);
}

void map_strategy_exec_after_access(struct map_exec *x, const struct cov_event *ev)
{
	struct map_strategy *s = x->s;
	struct mthr *m;

	if (!cov_event_op_is_access(ev->op))
		return;
	m = thr(x, ev->thread);
	if (m->paused) {
		x->stats->forced++;
		m->paused = false;
	}
	m->has_pending = false;
	if (m->state == T_UNKNOWN || m->state == T_BLOCKED)
		m->state = T_ENABLED;
	/* The coverage this access adds, and the target it may start, are
	 * the campaign's: one run at a time touches them. */
	futex_lock_acquire(&s->lock);
	cov_event_u64map_put(&s->vars_seen, ev->obj, 1, NULL);
	x->focus_seen |= x->focus && cov_event_u64map_get(&s->focus, ev->obj);
	map_patterns_online_feed(x->online, ev, &s->covered);
	if (x->target.active && is_next_step(x, ev->thread, ev->obj, ev->op))
		target_advance(x, ev);
	else if (!x->target.active)
		target_start(x, ev);
	futex_lock_release(&s->lock);
}

bool map_strategy_exec_all_enabled_paused(const struct map_exec *x)
{
	bool any = false;

	for (uint32_t t = 0; t < x->nthr; t++) {
		const struct mthr *m = &x->thr[t];

		if (m->state != T_ENABLED)
			continue;
		if (!m->paused)
			return false;
		any = true;
	}
	return any;
}

int map_strategy_exec_choose_release(struct map_exec *x, struct map_release *out)
{
	uint32_t paused[256], n = 0, pick = UINT32_MAX;
	enum map_release_why why = MAP_REL_RANDOM;

	for (uint32_t t = 0; t < x->nthr && n < ARRAY_SIZE(paused); t++)
		if (x->thr[t].paused)
			paused[n++] = t;
	if (!n)
		return -EAGAIN;
	if (!x->target.active) {
		pick = paused[0];
		why = MAP_REL_NO_TARGET;
	}
	for (uint32_t i = 0; i < n && pick == UINT32_MAX; i++) {
		const struct mthr *m = &x->thr[paused[i]];

		if (is_next_step(x, paused[i], m->var, m->op)) {
			pick = paused[i];
			why = MAP_REL_EAGER;
		}
	}
	if (pick == UINT32_MAX) {
		pick = paused[rng_below(&x->rng, n)];
		if (log_verbose > 1)
			log_debug("map: thread %u released at random: stall %u of target p%u", pick,
				  x->target.stalls + 1, x->target.pattern);
		if (++x->target.stalls >= x->s->opts.stall_limit)
			target_abandon(x);
	}
	x->thr[pick].paused = false;
	*out = (struct map_release){ pick, why, x->thr[pick].site, x->thr[pick].var,
				     x->thr[pick].op };
	if (why == MAP_REL_EAGER)
		x->stats->releases_eager++;
	else if (why == MAP_REL_RANDOM)
		x->stats->releases_random++;
	else
		x->stats->releases_no_target++;
	return 0;
}

bool map_strategy_exec_is_paused(const struct map_exec *x, uint32_t t)
{
	return t < x->nthr && x->thr[t].paused;
}

const struct map_target *map_strategy_exec_target(const struct map_exec *x)
{
	return &x->target;
}

uint64_t map_strategy_exec_generation(const struct map_exec *x)
{
	return x->generation;
}

const struct map_strategy_stats *map_strategy_exec_stats(const struct map_exec *x)
{
	return x->stats;
}

/* ---- the strategy's own run ------------------------------------------------------------ */

void map_strategy_thread_start(struct map_strategy *s, uint32_t t)
{
	map_strategy_exec_thread_start(&s->own, t);
}

void map_strategy_thread_blocked(struct map_strategy *s, uint32_t t)
{
	map_strategy_exec_thread_blocked(&s->own, t);
}

void map_strategy_thread_runnable(struct map_strategy *s, uint32_t t)
{
	map_strategy_exec_thread_runnable(&s->own, t);
}

void map_strategy_thread_exit(struct map_strategy *s, uint32_t t)
{
	map_strategy_exec_thread_exit(&s->own, t);
}

enum map_verdict map_strategy_before_access(struct map_strategy *s, uint32_t t, uint32_t site,
					    uint32_t var, unsigned op)
{
	return map_strategy_exec_before_access(&s->own, t, site, var, op);
}

void map_strategy_after_access(struct map_strategy *s, const struct cov_event *ev)
{
	map_strategy_exec_after_access(&s->own, ev);
}

bool map_strategy_all_enabled_paused(const struct map_strategy *s)
{
	return map_strategy_exec_all_enabled_paused(&s->own);
}

int map_strategy_choose_release(struct map_strategy *s, struct map_release *out)
{
	return map_strategy_exec_choose_release(&s->own, out);
}

bool map_strategy_is_paused(const struct map_strategy *s, uint32_t t)
{
	return map_strategy_exec_is_paused(&s->own, t);
}

const struct map_target *map_strategy_current_target(const struct map_strategy *s)
{
	return map_strategy_exec_target(&s->own);
}

uint64_t map_strategy_target_generation(const struct map_strategy *s)
{
	return map_strategy_exec_generation(&s->own);
}
