// SPDX-License-Identifier: MIT
/*
 * --serial around a strategy (serial.h): the waiting list, the pick, and the
 * wrapper that hands every other callback to the inner strategy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/policy.h"
#include "lib/array_size.h"
#include "lib/now.h"
#include "lib/xalloc.h"
#include "strategies/strategy_registry.h"
#include "strategies/serial.h"

static const char *const serial_names[] = { "off", "fifo", "random", "prio" };

const char *serial_mode_name(enum cs_serial_mode m)
{
	return (unsigned)m < ARRAY_SIZE(serial_names) ? serial_names[m] : "off";
}

int serial_mode_parse(const char *s, enum cs_serial_mode *m)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(serial_names); i++)
		if (!strcmp(s, serial_names[i])) {
			*m = (enum cs_serial_mode)i;
			return 0;
		}
	return -EINVAL;
}

void serial_list_init(struct serial_list *l, enum cs_serial_mode mode, uint64_t run_seed)
{
	memset(l, 0, sizeof(*l));
	l->mode = mode;
	rng_seed(&l->rng, run_seed ^ 0x73657269616cULL);
}

void serial_list_free(struct serial_list *l)
{
	free(l->v);
	l->v = NULL;
	l->n = 0;
}

void serial_list_add(struct serial_list *l, size_t ti, uint64_t k)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (l->v[i].ti == ti)
			l->v[i--] = l->v[--l->n];
	l->v = xrealloc(l->v, (l->n + 1) * sizeof(*l->v));
	l->v[l->n].ti = ti;
	l->v[l->n].k = k;
	l->n++;
}

size_t serial_list_find(const struct serial_list *l, const struct strat_run *r, uint64_t id,
			uint64_t event)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (r->threads[l->v[i].ti].id == id && l->v[i].k == event)
			return i;
	return SIZE_MAX;
}

/* By creation path; arg is the run (runs may choose at once: -j N). */
static int cmp_path(const void *a, const void *b, void *arg)
{
	const struct serial_wait *x = a, *y = b;
	const struct strat_run *r = arg;

	return strcmp(r->threads[x->ti].path, r->threads[y->ti].path);
}

size_t serial_list_choose(struct serial_list *l, const struct strat_run *r)
{
	struct serial_wait *order;
	size_t i, pick = SIZE_MAX, chosen;

	if (!l->n)
		return SIZE_MAX;
	order = xcalloc(l->n, sizeof(*order));
	memcpy(order, l->v, l->n * sizeof(*order));
	qsort_r(order, l->n, sizeof(*order), cmp_path, (void *)r);
	/* fifo: the oldest thread (first in creation-path order) runs until
	 * it blocks, ends or waits for a younger one; random: a seeded
	 * choice. Either way no tid or timing enters. */
	chosen = order[l->mode == CS_SERIAL_FIFO ? 0 : rng_below(&l->rng, l->n)].ti;
	for (i = 0; i < l->n; i++)
		if (l->v[i].ti == chosen)
			pick = i;
	free(order);
	return pick;
}

void serial_list_release(struct serial_list *l, struct strat_run *r, size_t i)
{
	size_t ti = l->v[i].ti;

	l->v[i] = l->v[--l->n];
	l->last_pick_ns = now_ns();
	r->release(r, &r->threads[ti], 0);
}

/* ---- the wrapper ------------------------------------------------------------------ */

struct serial_strat {
	struct strategy *inner;
	enum cs_serial_mode mode;
};

struct serial_run {
	void *inner_priv;
	struct serial_list l;
};

#define INNER(s) (((struct serial_strat *)(s)->priv)->inner)

/* The inner strategy sees its own per-run state in r->priv. */
static struct serial_run *enter(struct strat_run *r)
{
	struct serial_run *sr = r->priv;

	r->priv = sr->inner_priv;
	return sr;
}

static void leave(struct strat_run *r, struct serial_run *sr)
{
	sr->inner_priv = r->priv;
	r->priv = sr;
}

static void serial_destroy(struct strategy *s)
{
	struct serial_strat *ss = s->priv;

	strategy_free(ss->inner);
	free(ss);
	s->priv = NULL;
}

static int serial_estimate(struct strategy *s, struct strat_campaign *c,
			   const struct strat_observation *obs)
{
	struct strategy *in = INNER(s);

	return in->ops->estimate ? in->ops->estimate(in, c, obs) : 0;
}

static int serial_campaign_begin(struct strategy *s, struct strat_campaign *c)
{
	struct strategy *in = INNER(s);

	return in->ops->campaign_begin ? in->ops->campaign_begin(in, c) : 0;
}

static void serial_campaign_end(struct strategy *s, struct strat_campaign *c)
{
	struct strategy *in = INNER(s);

	if (in->ops->campaign_end)
		in->ops->campaign_end(in, c);
}

static void serial_run_begin(struct strategy *s, struct strat_run *r)
{
	struct serial_strat *ss = s->priv;
	struct serial_run *sr = xcalloc(1, sizeof(*sr));

	serial_list_init(&sr->l, ss->mode, r->seed);
	r->priv = NULL;
	if (ss->inner->ops->run_begin)
		ss->inner->ops->run_begin(ss->inner, r);
	sr->inner_priv = r->priv;
	r->priv = sr;
}

static void serial_config_json(struct strategy *s, struct strat_run *r, struct json *j)
{
	struct strategy *in = INNER(s);
	struct serial_run *sr;

	if (!in->ops->config_json)
		return;
	sr = enter(r);
	in->ops->config_json(in, r, j);
	leave(r, sr);
}

static void serial_run_end(struct strategy *s, struct strat_run *r, struct strat_campaign *c,
			   const struct strat_outcome *o)
{
	struct strategy *in = INNER(s);
	struct serial_run *sr = r->priv;

	if (!sr)
		return;
	enter(r);
	if (in->ops->run_end)
		in->ops->run_end(in, r, c, o);
	serial_list_free(&sr->l);
	free(sr);
	r->priv = NULL;
}

static void serial_thread_start(struct strategy *s, struct strat_run *r, struct strat_thread *t)
{
	struct strategy *in = INNER(s);
	struct serial_run *sr;

	if (!in->ops->thread_start)
		return;
	sr = enter(r);
	in->ops->thread_start(in, r, t);
	leave(r, sr);
}

static void serial_event(struct strategy *s, struct strat_run *r, const struct cs_event *e,
			 struct strat_thread *t)
{
	struct strategy *in = INNER(s);
	struct serial_run *sr;

	if (!in->ops->event)
		return;
	sr = enter(r);
	in->ops->event(in, r, e, t);
	leave(r, sr);
}

/* Every point waits for the all-parked note: who goes next is the decision. */
static void serial_point(struct strategy *s, struct strat_run *r, const struct strat_point *p,
			 struct strat_decision *d)
{
	struct serial_run *sr = r->priv;

	serial_list_add(&sr->l, (size_t)(p->t - r->threads), p->k);
	d->v = STRAT_PARK;
}

static void serial_all_parked(struct strategy *s, struct strat_run *r, const struct policy_note *n)
{
	struct serial_run *sr = r->priv;
	size_t pick;

	if (n->ts_ns <= sr->l.last_pick_ns)
		return; /* a note from before our last release */
	r->drain(r);
	pick = serial_list_choose(&sr->l, r);
	if (pick != SIZE_MAX)
		serial_list_release(&sr->l, r, pick);
}

static const struct strategy_ops serial_ops = {
	.name = "serial",
	.summary = "--serial: one thread at a time, the next one by a fixed or seeded rule",
	.destroy = serial_destroy,
	.estimate = serial_estimate,
	.campaign_begin = serial_campaign_begin,
	.campaign_end = serial_campaign_end,
	.run_begin = serial_run_begin,
	.config_json = serial_config_json,
	.run_end = serial_run_end,
	.thread_start = serial_thread_start,
	.event = serial_event,
	.point = serial_point,
	.all_parked = serial_all_parked,
};

struct strategy *serial_wrap(struct strategy *inner, enum cs_serial_mode mode)
{
	struct strategy *s = xcalloc(1, sizeof(*s));
	struct serial_strat *ss = xcalloc(1, sizeof(*ss));

	ss->inner = inner;
	ss->mode = mode;
	s->ops = &serial_ops;
	s->spec = xstrdup(inner->spec);
	s->priv = ss;
	/* Serial steers the synchronization points whatever the inner does. */
	s->flags = (inner->flags & (STRAT_F_ACCESS | STRAT_F_ESTIMATE)) | STRAT_F_STEERS |
		   STRAT_F_SYNC_POINTS | STRAT_F_SERIAL;
	/* Runs at once if what it wraps decides nothing in a run, or only
	 * from that run's state (its own list is the run's). */
	if (!(inner->flags & STRAT_F_STEERS) || (inner->flags & STRAT_F_JOBS))
		s->flags |= STRAT_F_JOBS;
	s->replay = STRAT_REPLAY_ORDER;
	s->sched_serial = mode;
	return s;
}
