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
#include "lib/util.h"

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

struct map_strategy {
	struct map_strategy_opts opts;
	struct cov_taskset covered;
	struct cov_taskset covered_prefix; /* "p<id> v<x> s<first>" */
	struct cov_taskset tried;	   /* prefixes tried this run */
	struct cov_u64map vars_seen;	   /* across runs */
	struct map_online *online;
	struct cs_rng rng;
	struct mthr *thr;
	uint32_t nthr;
	struct map_target target;
	uint64_t generation;
	struct map_strategy_stats stats;
};

static void prefix_key(unsigned pattern, uint32_t x, uint32_t site, char *buf, size_t len)
{
	snprintf(buf, len, "p%u v%u s%u", pattern, x, site);
}

static void note_covered(struct map_strategy *s, const struct map_instance *in)
{
	char key[64];

	prefix_key(in->pattern, in->x, in->site[0], key, sizeof(key));
	cov_taskset_add(&s->covered_prefix, key, 1);
}

static void online_hook(void *ctx, const struct map_instance *in, bool is_new)
{
	struct map_strategy *s = ctx;

	if (!is_new)
		return;
	s->stats.covered_new++;
	note_covered(s, in);
}

struct map_strategy *map_strategy_new(const struct map_strategy_opts *opts)
{
	struct map_strategy *s = xcalloc(1, sizeof(*s));

	if (opts)
		s->opts = *opts;
	if (!s->opts.stall_limit)
		s->opts.stall_limit = STALL_LIMIT_DEFAULT;
	cov_taskset_init(&s->covered);
	cov_taskset_init(&s->covered_prefix);
	cov_taskset_init(&s->tried);
	cov_u64map_init(&s->vars_seen);
	s->online = map_online_new(s->opts.window);
	map_online_set_hook(s->online, online_hook, s);
	cs_rng_seed(&s->rng, 0);
	return s;
}

void map_strategy_free(struct map_strategy *s)
{
	if (!s)
		return;
	cov_taskset_free(&s->covered);
	cov_taskset_free(&s->covered_prefix);
	cov_taskset_free(&s->tried);
	cov_u64map_free(&s->vars_seen);
	map_online_free(s->online);
	free(s->thr);
	free(s);
}

void map_strategy_mark_covered(struct map_strategy *s, const char *key)
{
	struct map_instance in;

	if (map_instance_parse(key, &in))
		return;
	cov_taskset_add(&s->covered, key, 1);
	note_covered(s, &in);
}

const struct cov_taskset *map_strategy_covered(const struct map_strategy *s)
{
	return &s->covered;
}

static void target_clear(struct map_strategy *s)
{
	memset(&s->target, 0, sizeof(s->target));
	s->generation++;
}

void map_run_begin(struct map_strategy *s, uint64_t seed)
{
	cs_rng_seed(&s->rng, seed);
	memset(s->thr, 0, s->nthr * sizeof(*s->thr));
	cov_taskset_free(&s->tried);
	cov_taskset_init(&s->tried);
	map_online_run_begin(s->online);
	target_clear(s);
	s->stats.runs++;
}

static struct mthr *thr(struct map_strategy *s, uint32_t t)
{
	if (t >= s->nthr) {
		uint32_t n = t + 16;

		s->thr = xrealloc(s->thr, n * sizeof(*s->thr));
		memset(s->thr + s->nthr, 0, (n - s->nthr) * sizeof(*s->thr));
		s->nthr = n;
	}
	return &s->thr[t];
}

static void target_abandon(struct map_strategy *s)
{
	char key[64];

	if (!s->target.active)
		return;
	prefix_key(s->target.pattern, s->target.x, s->target.site[0], key, sizeof(key));
	cov_taskset_add(&s->tried, key, 1);
	s->stats.targets_abandoned++;
	target_clear(s);
}

void map_thread_start(struct map_strategy *s, uint32_t t)
{
	thr(s, t)->state = T_ENABLED;
}

void map_thread_blocked(struct map_strategy *s, uint32_t t)
{
	struct mthr *m = thr(s, t);

	if (!m->paused)
		m->state = T_BLOCKED;
}

void map_thread_runnable(struct map_strategy *s, uint32_t t)
{
	struct mthr *m = thr(s, t);

	if (m->state != T_EXITED)
		m->state = T_ENABLED;
}

/* Does thread t still have a step to play in the target? */
static bool target_needs(const struct map_strategy *s, uint32_t t)
{
	const struct map_target *g = &s->target;
	const struct map_pattern *p;

	if (!g->active)
		return false;
	p = map_pattern_get(g->pattern);
	for (unsigned j = g->next; j < p->nsteps; j++) {
		if (p->step[j].role == MAP_ROLE_A && g->a == t)
			return true;
		if (p->step[j].role == MAP_ROLE_B && g->has_b && g->b == t)
			return true;
	}
	return false;
}

void map_thread_exit(struct map_strategy *s, uint32_t t)
{
	struct mthr *m = thr(s, t);

	m->state = T_EXITED;
	m->paused = false;
	m->has_pending = false;
	if (target_needs(s, t))
		target_abandon(s);
}

/* Would thread t's access (var, op) be the target's next step? */
static bool is_next_step(const struct map_strategy *s, uint32_t t, uint32_t var, unsigned op)
{
	const struct map_target *g = &s->target;
	const struct map_pattern *p;
	const struct map_step *st;

	if (!g->active)
		return false;
	p = map_pattern_get(g->pattern);
	st = &p->step[g->next];
	if (!map_step_accepts(st, op))
		return false;
	if (st->var == MAP_VAR_X && var != g->x)
		return false;
	if (st->var == MAP_VAR_Y && (g->has_y ? var != g->y : var == g->x))
		return false;
	if (st->role == MAP_ROLE_A)
		return t == g->a;
	return g->has_b ? t == g->b : t != g->a;
}

static bool is_scheduling_point(const struct map_strategy *s, uint32_t var)
{
	const struct map_target *g = &s->target;

	return g->active && (var == g->x || (g->has_y && var == g->y));
}

enum map_verdict map_before_access(struct map_strategy *s, uint32_t t, uint32_t site, uint32_t var,
				   unsigned op)
{
	struct mthr *m = thr(s, t);
	bool was_paused = m->paused;

	if (m->state == T_UNKNOWN)
		m->state = T_ENABLED;
	m->has_pending = true;
	m->site = site;
	m->var = var;
	m->op = op;
	m->paused = false;
	if (!is_scheduling_point(s, var) || is_next_step(s, t, var, op))
		return MAP_PROCEED;
	m->paused = true;
	m->state = T_ENABLED;
	if (!was_paused)
		s->stats.pauses++;
	return MAP_PAUSE;
}

static bool var_seen_other(const struct map_strategy *s)
{
	return s->vars_seen.count >= 2;
}

/* Seed 001: pick a target among uncovered patterns whose first step is
 * this access; prefer pattern 3. */
static void target_start(struct map_strategy *s, const struct cov_event *ev)
{
	unsigned cand[MAP_NPATTERNS], ncand = 0, pick;
	char key[64];

	for (unsigned id = 1; id <= MAP_NPATTERNS; id++) {
		const struct map_pattern *p = map_pattern_get(id);

		if (!map_step_accepts(&p->step[0], ev->op))
			continue;
		if (p->nvars == 2 && !var_seen_other(s))
			continue;
		prefix_key(id, ev->obj, ev->site, key, sizeof(key));
		if (cov_taskset_has(&s->covered_prefix, key) || cov_taskset_has(&s->tried, key))
			continue;
		cand[ncand++] = id;
	}
	if (!ncand)
		return;
	pick = cand[cs_rng_below(&s->rng, ncand)];
	for (unsigned i = 0; i < ncand && !s->opts.no_prefer_ww; i++)
		if (cand[i] == 3)
			pick = 3;
	memset(&s->target, 0, sizeof(s->target));
	s->target.active = true;
	s->target.pattern = pick;
	s->target.next = 1;
	s->target.a = ev->thread;
	s->target.x = ev->obj;
	s->target.site[0] = ev->site;
	s->generation++;
	s->stats.targets_started++;
	s->stats.targets_by_pattern[pick]++;
}

static void target_advance(struct map_strategy *s, const struct cov_event *ev)
{
	struct map_target *g = &s->target;
	const struct map_pattern *p = map_pattern_get(g->pattern);
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
	s->generation++;
	if (g->next < p->nsteps)
		return;
	/* Covered: also record it directly, the online window may be
	 * narrower than the target's span. */
	in = (struct map_instance){ .pattern = g->pattern, .x = g->x, .y = g->y };
	memcpy(in.site, g->site, sizeof(in.site));
	if (cov_taskset_add(&s->covered, map_instance_key(&in, key, sizeof(key)), 1)) {
		s->stats.covered_new++;
		note_covered(s, &in);
	}
	s->stats.targets_completed++;
	target_clear(s);
}

void map_after_access(struct map_strategy *s, const struct cov_event *ev)
{
	struct mthr *m;

	if (!cov_op_is_access(ev->op))
		return;
	m = thr(s, ev->thread);
	if (m->paused) {
		s->stats.forced++;
		m->paused = false;
	}
	m->has_pending = false;
	if (m->state == T_UNKNOWN || m->state == T_BLOCKED)
		m->state = T_ENABLED;
	cov_u64map_put(&s->vars_seen, ev->obj, 1, NULL);
	map_online_feed(s->online, ev, &s->covered);
	if (s->target.active && is_next_step(s, ev->thread, ev->obj, ev->op))
		target_advance(s, ev);
	else if (!s->target.active)
		target_start(s, ev);
}

bool map_all_enabled_paused(const struct map_strategy *s)
{
	bool any = false;

	for (uint32_t t = 0; t < s->nthr; t++) {
		const struct mthr *m = &s->thr[t];

		if (m->state != T_ENABLED)
			continue;
		if (!m->paused)
			return false;
		any = true;
	}
	return any;
}

int map_choose_release(struct map_strategy *s, struct map_release *out)
{
	uint32_t paused[256], n = 0, pick = UINT32_MAX;
	enum map_release_why why = MAP_REL_RANDOM;

	for (uint32_t t = 0; t < s->nthr && n < ARRAY_SIZE(paused); t++)
		if (s->thr[t].paused)
			paused[n++] = t;
	if (!n)
		return -EAGAIN;
	if (!s->target.active) {
		pick = paused[0];
		why = MAP_REL_NO_TARGET;
	}
	for (uint32_t i = 0; i < n && pick == UINT32_MAX; i++) {
		const struct mthr *m = &s->thr[paused[i]];

		if (is_next_step(s, paused[i], m->var, m->op)) {
			pick = paused[i];
			why = MAP_REL_EAGER;
		}
	}
	if (pick == UINT32_MAX) {
		pick = paused[cs_rng_below(&s->rng, n)];
		if (++s->target.stalls >= s->opts.stall_limit)
			target_abandon(s);
	}
	s->thr[pick].paused = false;
	*out = (struct map_release){ pick, why, s->thr[pick].site, s->thr[pick].var,
				     s->thr[pick].op };
	if (why == MAP_REL_EAGER)
		s->stats.releases_eager++;
	else if (why == MAP_REL_RANDOM)
		s->stats.releases_random++;
	else
		s->stats.releases_no_target++;
	return 0;
}

bool map_is_paused(const struct map_strategy *s, uint32_t t)
{
	return t < s->nthr && s->thr[t].paused;
}

const struct map_target *map_current_target(const struct map_strategy *s)
{
	return &s->target;
}

uint64_t map_target_generation(const struct map_strategy *s)
{
	return s->generation;
}

const struct map_strategy_stats *map_strategy_stats(const struct map_strategy *s)
{
	return &s->stats;
}
