// SPDX-License-Identifier: MIT
/*
 * Strategies tsa and tsa-h (seed 000, ALGORITHMS.md section 1) on the
 * contract, around the plain-C engine of tsa.c.
 *
 * Estimation: each observed run's thread model becomes a tsa_model (sites
 * are the campaign store's site ids, so requirements and covered SP tasks
 * use the same "@N" keys) and tsa_estimate keeps the pairs AC1-AC4 allow;
 * their union is stored as the campaign's "sp" requirements. Testing:
 * every lock request parks; tsa_before_lock decides PROCEED (released at
 * once) or PAUSE (kept); at each all-parked note tsa_choose_release picks
 * by rule 1, 2, 3 (tsa-h: random instead of 3), and the release is logged
 * with its rule (DECLOG_RELEASE, arg = enum tsa_rule), which is what
 * `report` counts and `replay` re-applies. Covered pairs carry across
 * runs. Runs at once (run -j N): each run has an engine of its own
 * (threads, locks, random generator, stats) over the campaign engine's
 * coverage, which a lock guards, so the in-run ops touch their own run's
 * state and the shared coverage only. docs/strategies.md, docs/run.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coverage/cov_event.h"
#include "coverage/syncov.h"
#include "kernel/policy.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/xalloc.h"
#include "strategies/strategy.h"
#include "strategies/tsa.h"
#include "strategies/tsa_model.h"

struct tsa_strat {
	bool hybrid;		/* tsa-h */
	struct tsa_engine *eng; /* the campaign's: the coverage, the totals */
	struct tsa_pairset est;
	struct tsa_estimate_stats st;
	unsigned observed;
};

struct tsa_strat_run {
	struct tsa_engine *eng; /* this run's, over the campaign's coverage */
	uint64_t *addr;		/* runtime address -> site id cache */
	uint32_t *id;
	size_t n;
	uint64_t last_release_ns;
	uint32_t exiting; /* 1 + the thread kept at exit(), 0: none */
};

static int tsa_init_common(struct strategy *s, bool hybrid, const char *opts, char *err,
			   size_t errlen)
{
	struct tsa_strat *ts;

	if (opts) {
		snprintf(err, errlen, "%s takes no options", s->ops->name);
		return -EINVAL;
	}
	ts = xcalloc(1, sizeof(*ts));
	ts->hybrid = hybrid;
	tsa_pairset_init(&ts->est);
	s->priv = ts;
	return 0;
}

static int tsa_init(struct strategy *s, const char *opts, char *err, size_t errlen)
{
	return tsa_init_common(s, false, opts, err, errlen);
}

static int tsa_h_init(struct strategy *s, const char *opts, char *err, size_t errlen)
{
	return tsa_init_common(s, true, opts, err, errlen);
}

static void tsa_destroy(struct strategy *s)
{
	struct tsa_strat *ts = s->priv;

	if (!ts)
		return;
	tsa_engine_free(ts->eng);
	tsa_pairset_free(&ts->est);
	free(ts);
	s->priv = NULL;
}

static int tsa_observed(struct strategy *s, struct strat_campaign *c,
			const struct strat_observation *obs)
{
	struct tsa_strat *ts = s->priv;

	ts->observed++;
	return tsa_model_estimate(obs->tm, obs->res, c->site_of, c->ctx, &ts->est, &ts->st);
}

/* "sp @X -> @Y" -> (X, Y), the key the store gives an SP task. */
static bool parse_sp_key(const char *key, uint32_t *x, uint32_t *y)
{
	unsigned long a, b;

	if (sscanf(key, "sp @%lu -> @%lu", &a, &b) != 2 || a > UINT32_MAX || b > UINT32_MAX)
		return false;
	*x = (uint32_t)a;
	*y = (uint32_t)b;
	return true;
}

static int carry_covered(const char *key, void *arg)
{
	uint32_t x, y;

	if (parse_sp_key(key, &x, &y))
		tsa_engine_mark_covered(arg, x, y);
	return 0;
}

static int tsa_campaign_start(struct strategy *s, struct strat_campaign *c)
{
	struct tsa_strat *ts = s->priv;
	size_t pos = 0;
	uint32_t x, y;
	unsigned flags;
	char key[64];

	ts->st.requirements = ts->est.count;
	while (tsa_pairset_next(&ts->est, &pos, &x, &y, &flags)) {
		snprintf(key, sizeof(key), "sp @%u -> @%u", x, y);
		c->add_requirement(c->ctx, "sp", key, "sp-estimate");
	}
	ts->eng = tsa_engine_new(&ts->est, !ts->hybrid);
	c->for_each_task(c->ctx, "sp", carry_covered, ts->eng);
	if (!c->quiet)
		fprintf(stderr,
			"concsched: tsa: %" PRIu64 " SP requirements from %u observed run%s "
			"(%" PRIu64 " lock actions; AC1 kept %" PRIu64 "; AC2/AC3/AC4 rejected "
			"%" PRIu64 "/%" PRIu64 "/%" PRIu64 ")\n",
			ts->st.requirements, ts->observed, ts->observed == 1 ? "" : "s",
			ts->st.lock_actions, ts->st.accepted_ac1, ts->st.rejected_ac2,
			ts->st.rejected_ac3, ts->st.rejected_ac4);
	return 0;
}

static void tsa_campaign_stop(struct strategy *s, struct strat_campaign *c)
{
	struct tsa_strat *ts = s->priv;
	const struct tsa_stats *st;
	struct tsa_precision p;

	if (!ts->eng || c->quiet)
		return;
	st = tsa_engine_stats(ts->eng);
	tsa_engine_precision(ts->eng, &p);
	fprintf(stderr,
		"concsched: tsa: estimated %" PRIu64 ", covered %" PRIu64 " (%" PRIu64
		" of them estimated), false positives %" PRIu64 ", false negatives %" PRIu64
		"; %" PRIu64 " pauses, releases by rule 1/2/3/random: %" PRIu64 "/%" PRIu64
		"/%" PRIu64 "/%" PRIu64 ", %" PRIu64 " forced (watchdog)\n",
		p.estimated, p.covered, p.covered_estimated, p.false_positives, p.false_negatives,
		st->pauses, st->rule[TSA_RULE_1], st->rule[TSA_RULE_2], st->rule[TSA_RULE_3],
		st->rule[TSA_RULE_RANDOM], st->forced);
}

static void tsa_run_start(struct strategy *s, struct strat_run *r)
{
	struct tsa_strat *ts = s->priv;
	struct tsa_strat_run *tr = xcalloc(1, sizeof(*tr));

	tr->eng = tsa_engine_run_new(ts->eng);
	tsa_run_begin(tr->eng, r->seed);
	r->priv = tr;
}

static void tsa_run_stop(struct strategy *s, struct strat_run *r, struct strat_campaign *c,
			 const struct strat_outcome *o)
{
	struct tsa_strat_run *tr = r->priv;
	size_t i;

	if (!tr)
		return;
	/* Pairs the harvest saw but the event stream missed (dropped events)
	 * count as covered too. */
	for (i = 0; o->cov && i < o->cov->tasks.n; i++) {
		const struct syncov_task *t = &o->cov->tasks.tasks[i];
		int64_t a, b;

		if (t->metric != SYNCOV_SP || t->nsites != 2)
			continue;
		a = c->site_of(c->ctx, t->sites[0]);
		b = c->site_of(c->ctx, t->sites[1]);
		if (a > 0 && b > 0)
			tsa_engine_mark_covered(tr->eng, (uint32_t)a, (uint32_t)b);
	}
	tsa_run_end(tr->eng); /* its stats into the campaign's */
	tsa_engine_free(tr->eng);
	free(tr->addr);
	free(tr->id);
	free(tr);
	r->priv = NULL;
}

static uint32_t runtime_site(struct strat_run *r, const struct cs_event *e)
{
	struct tsa_strat_run *tr = r->priv;
	uint32_t id;
	size_t i;

	for (i = 0; i < tr->n; i++)
		if (tr->addr[i] == e->site)
			return tr->id[i];
	id = r->site_id(r, e);
	if (!id)
		return 0;
	if (tr->n % 64 == 0) {
		tr->addr = xrealloc(tr->addr, (tr->n + 64) * sizeof(*tr->addr));
		tr->id = xrealloc(tr->id, (tr->n + 64) * sizeof(*tr->id));
	}
	tr->addr[tr->n] = e->site;
	tr->id[tr->n++] = id;
	return id;
}

static uint32_t thread_index(struct strat_run *r, struct strat_thread *t)
{
	return (uint32_t)(t - r->threads);
}

static void tsa_thread(struct strategy *s, struct strat_run *r, struct strat_thread *t)
{
	struct tsa_strat_run *tr = r->priv;

	tsa_thread_start(tr->eng, thread_index(r, t));
}

static void tsa_event(struct strategy *s, struct strat_run *r, const struct cs_event *e,
		      struct strat_thread *t)
{
	struct tsa_strat_run *tr = r->priv;
	struct tsa_engine *eng = tr->eng;
	uint32_t ti = thread_index(r, t), site;

	switch (e->op) {
	case CS_OP_LOCK:
	case CS_OP_TRYLOCK_OK:
	case CS_OP_RDLOCK:
	case CS_OP_WRLOCK:
	case CS_OP_COND_WAKE:
		site = runtime_site(r, e);
		if (site)
			tsa_after_lock(eng, ti, site, e->op == CS_OP_COND_WAKE ? e->arg : e->obj);
		break;
	case CS_OP_UNLOCK:
	case CS_OP_RWUNLOCK:
		tsa_after_unlock(eng, ti, e->obj);
		break;
	case CS_OP_COND_WAIT:
		tsa_after_unlock(eng, ti, e->arg);
		break;
	case CS_OP_TRYLOCK_FAIL:
		tsa_lock_abandoned(eng, ti);
		break;
	case CS_OP_EXIT:
		tsa_thread_exit(eng, ti);
		if (tr->exiting == ti + 1)
			tr->exiting = 0; /* let go by someone else (the watchdog) */
		break;
	default:
		break;
	}
}

/* A lock request: pause the thread when the engine says so. exit() while
 * other threads live: keep it for the all-parked note. */
static void tsa_point(struct strategy *s, struct strat_run *r, const struct strat_point *p,
		      struct strat_decision *d)
{
	struct tsa_strat_run *tr = r->priv;
	uint32_t site;
	enum tsa_verdict v;

	d->v = STRAT_PROCEED;
	if (p->e->op == CS_OP_PROC_EXIT) {
		/* The end of the process waits until no other thread can
		 * run and no paused request is left to release. */
		tr->exiting = thread_index(r, p->t) + 1;
		d->v = STRAT_PARK;
		return;
	}
	if (!cov_event_op_is_lock_request(p->e->op))
		return;
	site = runtime_site(r, p->e);
	if (!site) {
		log_debug("tsa: thread %s: lock request at 0x%" PRIx64 " has no site", p->t->path,
			  (uint64_t)p->e->site);
		return;
	}
	v = tsa_before_lock(tr->eng, thread_index(r, p->t), site, p->e->obj);
	if (log_verbose > 1)
		log_debug("tsa: thread %s requests lock 0x%" PRIx64 " at @%u: %s", p->t->path,
			  (uint64_t)p->e->obj, site, v == TSA_PAUSE ? "pause" : "proceed");
	if (v == TSA_PAUSE)
		d->v = STRAT_PARK;
}

static void tsa_all_parked(struct strategy *s, struct strat_run *r, const struct policy_note *n)
{
	struct tsa_strat_run *tr = r->priv;
	struct tsa_release rel;

	if (n->ts_ns <= tr->last_release_ns)
		return; /* from before our last release */
	r->drain(r);
	if (tsa_choose_release(tr->eng, &rel)) {
		if (!tr->exiting || tr->exiting > r->nthreads)
			return;
		rel.thread = tr->exiting - 1; /* nothing else waits: the exit */
		rel.rule = TSA_RULE_NONE;
		tr->exiting = 0;
	}
	if (rel.thread >= r->nthreads)
		return;
	tr->last_release_ns = now_ns();
	r->release(r, &r->threads[rel.thread], rel.rule);
}

#define TSA_OPS(ops_name, NAME, SUMMARY, INIT)                                                     \
	const struct strategy_ops ops_name = {                                                     \
		.name = NAME,                                                                      \
		.summary = SUMMARY,                                                                \
		.flags = STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ESTIMATE | STRAT_F_PICKS | \
			 STRAT_F_JOBS,                                                             \
		.replay = STRAT_REPLAY_ORDER,                                                      \
		.init = INIT,                                                                      \
		.destroy = tsa_destroy,                                                            \
		.estimate = tsa_observed,                                                          \
		.campaign_begin = tsa_campaign_start,                                              \
		.campaign_end = tsa_campaign_stop,                                                 \
		.run_begin = tsa_run_start,                                                        \
		.run_end = tsa_run_stop,                                                           \
		.thread_start = tsa_thread,                                                        \
		.event = tsa_event,                                                                \
		.point = tsa_point,                                                                \
		.all_parked = tsa_all_parked,                                                      \
	}

TSA_OPS(strat_tsa_ops, "tsa", "SP-directed (seed 000): pause lock requests, release by rules 1-3",
	tsa_init);
TSA_OPS(strat_tsa_h_ops, "tsa-h", "tsa with a random choice instead of rule 3 (seed 000's TSA-H)",
	tsa_h_init);
