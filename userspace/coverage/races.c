// SPDX-License-Identifier: MIT
/*
 * GoldiLocks-style race detection with short-circuit checks (races.h has
 * the rules; Elmas et al. PLDI'07, seed 004 section 3.2 / 5.5.1). Its
 * verdicts are the GoldiLock-SC metric; the race warnings come from the
 * happens-before detector (hb.c) fed the same events.
 *
 * Lazy update, as the paper's implementation does it (a list of the
 * synchronization events that each access's lockset has yet to see). Every GoldiLocks update rule
 * has the form "if x in GLS then add y" and changes each set on its own, so a sync event appends
 * its rule to one log (struct gls_rule) instead of visiting every live access record, and each
 * record keeps its position in that log. Only when a record is judged past the short-circuit checks
 * (SCT, SCL: they read no GLS) is the log replayed onto its set from its position, in order, and
 * its position moved to the end: the set is then the one the eager update would have built, so
 * every verdict and GLS text is the same (tests/unit/test_races.c compares them with the eager
 * rules on random event streams). A record overwritten by a new access (rec_set) skips the rules it
 * missed. Each (record, rule) pair is applied at most once, so the lazy update never does more rule
 * applications than the eager one did.
 *
 * The log's memory: at RACES_GLS_LOG_MAX rules (4 MiB), the records whose
 * position is in its oldest quarter are brought up to the end of that
 * quarter (eagerly, for those records and rules only) and the quarter is
 * dropped. A quarter, not everything, keeps the lazy benefit for recent
 * records and spreads the catch-up over the run. Worst case (no record is
 * ever judged or overwritten): every rule is applied to every record, as
 * the eager update did, only later, plus one scan of the records per
 * RACES_GLS_LOG_MAX / 4 rules.
 */
#include "coverage/races.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array_size.h"
#include "lib/xalloc.h"

/* GLS elements: kind in the top 4 bits, abstract id below. */
#define GLS_THREAD  (1u << 28)
#define GLS_SYNC    (2u << 28)
#define GLS_VAR	    (3u << 28)
#define GLS_BARRIER (4u << 28) /* a barrier's generations, two elements */
#define GLS_ID(e)   ((e) & ((1u << 28) - 1))
#define GLS_KIND(e) ((e) & ~((1u << 28) - 1))

struct gls {
	uint32_t *v; /* sorted */
	uint32_t n, cap;
	/* one bit per element (gls_bit): a clear bit says "not in" without
	 * the search, which the replay of the rule log asks at every rule */
	uint64_t bloom;
};

static uint64_t gls_bit(uint32_t e)
{
	return 1ULL << ((e ^ e >> 6 ^ e >> 12 ^ e >> 28) & 63);
}

struct gl_rec {
	struct race_access acc;
	struct gls gls;
	uint64_t pos; /* the log's rules before this one are in gls */
};

/* "if x in GLS then add y": every GoldiLocks update rule has this form. */
struct gls_rule {
	uint32_t x, y;
};

struct gl_var {
	uint32_t var;
	bool has_write;
	struct gl_rec write;
	struct gl_rec *reads; /* one per thread, since the last write */
	uint32_t nreads, capreads;
};

struct race_detector {
	struct gl_var *vars;
	size_t nvars;
	struct cov_u64map var_index;
	struct hb *hb; /* the race warnings */
	/* A barrier is one event, at its entry: a release there, and the
	 * acquire at the thread's next event, when it has left the barrier
	 * and every other party has entered it (their releases came first:
	 * one ordered stream). A barrier's generations alternate between two
	 * GLS elements: a party that left one and enters the next before a
	 * slower party's next event must not be acquired by that party, and
	 * by the time a generation reuses an element, what was released into
	 * it two generations before happens before anyway (so GLS sets grow
	 * by two elements a barrier, not one a round).
	 * barrier_acq: per thread, the element it acquires next (0 none);
	 * barrier_open: barrier -> its open generation's element. */
	struct barrier_wait {
		uint32_t elem, obj;
	} * barrier_acq;
	size_t nbarrier_acq;
	struct cov_u64map barrier_open;
	uint32_t barrier_next;
	/* The rule log (header comment): rules[i] is rule number
	 * log_base + i of the run. */
	struct gls_rule *rules;
	size_t nrules, caprules, log_max;
	uint64_t log_base;
};

static bool gls_has(const struct gls *g, uint32_t e)
{
	uint32_t lo = 0, hi = g->n;

	if (!(g->bloom & gls_bit(e)))
		return false;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;

		if (g->v[mid] == e)
			return true;
		if (g->v[mid] < e)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static void gls_add(struct gls *g, uint32_t e)
{
	uint32_t i;

	if (gls_has(g, e))
		return;
	if (g->n == g->cap) {
		g->cap = g->cap ? g->cap * 2 : 4;
		g->v = xrealloc(g->v, g->cap * sizeof(*g->v));
	}
	for (i = g->n; i > 0 && g->v[i - 1] > e; i--)
		g->v[i] = g->v[i - 1];
	g->v[i] = e;
	g->n++;
	g->bloom |= gls_bit(e);
}

static void gls_reset(struct gls *g, uint32_t e)
{
	g->n = 0;
	g->bloom = 0;
	gls_add(g, e);
}

static void gls_fmt(const struct gls *g, char *buf, size_t len)
{
	size_t off = snprintf(buf, len, "{");

	for (uint32_t i = 0; i < g->n && off < len; i++) {
		uint32_t e = g->v[i];
		char k = GLS_KIND(e) == GLS_THREAD ? 't' : GLS_KIND(e) == GLS_SYNC ? 'l' : 'v';

		off += snprintf(buf + off, len - off, "%s%c%u", i ? "," : "", k, GLS_ID(e));
	}
	if (off < len)
		snprintf(buf + off, len - off, "}");
}

struct race_detector *races_new(void)
{
	struct race_detector *rd = xcalloc(1, sizeof(*rd));

	rd->hb = hb_new();
	rd->log_max = RACES_GLS_LOG_MAX;
	return rd;
}

static void free_vars(struct race_detector *rd)
{
	for (size_t i = 0; i < rd->nvars; i++) {
		struct gl_var *v = &rd->vars[i];

		free(v->write.gls.v);
		for (uint32_t j = 0; j < v->nreads; j++)
			free(v->reads[j].gls.v);
		free(v->reads);
	}
	free(rd->vars);
	rd->vars = NULL;
	rd->nvars = 0;
	cov_event_u64map_free(&rd->var_index);
}

void races_free(struct race_detector *rd)
{
	if (!rd)
		return;
	free_vars(rd);
	hb_free(rd->hb);
	free(rd->barrier_acq);
	cov_event_u64map_free(&rd->barrier_open);
	free(rd->rules);
	free(rd);
}

void races_run_begin(struct race_detector *rd)
{
	free_vars(rd);
	if (rd->barrier_acq)
		memset(rd->barrier_acq, 0, rd->nbarrier_acq * sizeof(*rd->barrier_acq));
	cov_event_u64map_free(&rd->barrier_open);
	rd->barrier_next = 0;
	rd->nrules = 0;
	rd->log_base = 0;
	hb_run_begin(rd->hb);
}

void races_alloc(struct race_detector *rd, uint64_t addr, uint64_t size)
{
	hb_alloc(rd->hb, addr, size);
}

void races_sync_lost(struct race_detector *rd)
{
	hb_forget(rd->hb);
}

static uint64_t log_end(const struct race_detector *rd)
{
	return rd->log_base + rd->nrules;
}

/* Replay the log's rules from r's position up to position `to`. */
static void rec_catch_up(const struct race_detector *rd, struct gl_rec *r, uint64_t to)
{
	if (r->pos >= to)
		return;
	for (uint64_t p = r->pos; p < to; p++) {
		const struct gls_rule *rule = &rd->rules[p - rd->log_base];

		if (gls_has(&r->gls, rule->x))
			gls_add(&r->gls, rule->y);
	}
	r->pos = to;
}

/* Drop the log's oldest quarter, first bringing the records that still
 * need it past it. */
static void log_trim(struct race_detector *rd)
{
	size_t cut = rd->nrules / 4 ? rd->nrules / 4 : rd->nrules;
	uint64_t to = rd->log_base + cut;

	for (size_t i = 0; i < rd->nvars; i++) {
		struct gl_var *v = &rd->vars[i];

		if (v->has_write)
			rec_catch_up(rd, &v->write, to);
		for (uint32_t j = 0; j < v->nreads; j++)
			rec_catch_up(rd, &v->reads[j], to);
	}
	memmove(rd->rules, rd->rules + cut, (rd->nrules - cut) * sizeof(*rd->rules));
	rd->nrules -= cut;
	rd->log_base = to;
}

/* The GoldiLocks update of every live record, deferred (header comment). */
static void log_rule(struct race_detector *rd, uint32_t x, uint32_t y)
{
	if (rd->nrules >= rd->log_max)
		log_trim(rd);
	if (rd->nrules == rd->caprules) {
		rd->caprules = rd->caprules ? rd->caprules * 2 : 1024;
		rd->rules = xrealloc(rd->rules, rd->caprules * sizeof(*rd->rules));
	}
	rd->rules[rd->nrules++] = (struct gls_rule){ .x = x, .y = y };
}

void races_gls_log_limit(struct race_detector *rd, size_t rules)
{
	rd->log_max = rules ? rules : RACES_GLS_LOG_MAX;
}

static void sync_acquire(struct race_detector *rd, uint32_t t, uint32_t obj_elem)
{
	log_rule(rd, obj_elem, GLS_THREAD | t);
}

static void sync_release(struct race_detector *rd, uint32_t t, uint32_t obj_elem)
{
	log_rule(rd, GLS_THREAD | t, obj_elem);
}

/* Thread t, which entered a barrier, has left it: it acquires what that
 * generation's parties released, and the generation is complete (every
 * party entered it): the next party to enter opens a new one. */
static void barrier_left(struct race_detector *rd, uint32_t t)
{
	struct barrier_wait *w = &rd->barrier_acq[t];
	uint64_t *open = cov_event_u64map_get(&rd->barrier_open, w->obj);

	sync_acquire(rd, t, w->elem);
	if (open && *open == w->elem)
		*open = w->elem ^ 1; /* the other element of its pair */
	w->elem = 0;
}

static void barrier_enter(struct race_detector *rd, uint32_t t, uint32_t obj)
{
	bool created;
	uint64_t *open = cov_event_u64map_put(&rd->barrier_open, obj,
					      GLS_BARRIER | 2 * rd->barrier_next, &created);

	if (created)
		rd->barrier_next++; /* pair k: elements 2k and 2k + 1 */
	sync_release(rd, t, (uint32_t)*open);
	if (t >= rd->nbarrier_acq) {
		size_t n = t + 16;

		rd->barrier_acq = xrealloc(rd->barrier_acq, n * sizeof(*rd->barrier_acq));
		memset(rd->barrier_acq + rd->nbarrier_acq, 0,
		       (n - rd->nbarrier_acq) * sizeof(*rd->barrier_acq));
		rd->nbarrier_acq = n;
	}
	rd->barrier_acq[t].elem = (uint32_t)*open;
	rd->barrier_acq[t].obj = obj;
}

static bool feed_sync(struct race_detector *rd, const struct cov_event *ev)
{
	uint32_t o = GLS_SYNC | ev->obj;

	if (cov_event_op_sync_acquires(ev->op)) {
		sync_acquire(rd, ev->thread, o);
		return true;
	}
	if (cov_event_op_sync_releases(ev->op)) {
		sync_release(rd, ev->thread, o);
		return true;
	}
	switch (ev->op) {
	case CS_OP_BARRIER:
		barrier_enter(rd, ev->thread, ev->obj);
		return true;
	case CS_OP_CREATE: /* parent in GLS -> child too */
		log_rule(rd, GLS_THREAD | ev->thread, GLS_THREAD | ev->obj);
		return true;
	case CS_OP_JOIN: /* child in GLS -> joiner too */
		log_rule(rd, GLS_THREAD | ev->obj, GLS_THREAD | ev->thread);
		return true;
	default:
		return false;
	}
}

static struct gl_var *var_get(struct race_detector *rd, uint32_t var)
{
	bool created;
	uint64_t *idx = cov_event_u64map_put(&rd->var_index, var, rd->nvars, &created);

	if (created) {
		rd->vars = xrealloc(rd->vars, (rd->nvars + 1) * sizeof(*rd->vars));
		memset(&rd->vars[rd->nvars], 0, sizeof(*rd->vars));
		rd->vars[rd->nvars].var = var;
		rd->nvars++;
	}
	return &rd->vars[*idx];
}

/* Judge `cur` against one conflicting earlier record; only past the
 * short-circuit checks does its GLS need the rules it missed. */
static enum cov_goldi_state judge(const struct race_detector *rd, struct gl_rec *prev,
				  const struct race_access *cur)
{
	if (prev->acc.thread == cur->thread)
		return GOLDI_SCT;
	if (cov_event_lockset_meets(&prev->acc.held, &cur->held))
		return GOLDI_SCL;
	rec_catch_up(rd, prev, log_end(rd));
	if (gls_has(&prev->gls, GLS_THREAD | cur->thread))
		return GOLDI_LS;
	for (uint32_t i = 0; i < cur->held.n; i++)
		if (gls_has(&prev->gls, GLS_SYNC | cur->held.id[i]))
			return GOLDI_LS;
	return GOLDI_E;
}

static void check_one(const struct race_detector *rd, struct gl_rec *prev,
		      const struct race_access *cur, struct race_verdict *out)
{
	enum cov_goldi_state s;

	/* Two lock-prefixed read-modify-writes are both atomic: no race. */
	if (prev->acc.op == CS_OP_RW && cur->op == CS_OP_RW)
		return;
	s = judge(rd, prev, cur);
	if (s == GOLDI_LS && out->state < GOLDI_LS)
		gls_fmt(&prev->gls, out->gls, sizeof(out->gls));
	if (s > out->state)
		out->state = s;
}

static void rec_set(const struct race_detector *rd, struct gl_rec *r, const struct race_access *acc)
{
	r->acc = *acc;
	gls_reset(&r->gls, GLS_THREAD | acc->thread);
	r->pos = log_end(rd);
}

static void feed_access(struct race_detector *rd, const struct cov_event *ev,
			struct race_verdict *out)
{
	struct gl_var *v;
	struct race_access cur = {
		.thread = ev->thread, .site = ev->site, .op = ev->op, .held = ev->held
	};
	uint32_t atomic_elem = GLS_VAR | ev->obj;

	memset(out, 0, sizeof(*out));
	out->state = GOLDI_SCT;
	/* An atomic RMW first acquires what earlier atomics on it released. */
	if (ev->op == CS_OP_RW)
		sync_acquire(rd, ev->thread, atomic_elem);
	v = var_get(rd, ev->obj);
	if (v->has_write)
		check_one(rd, &v->write, &cur, out);
	if (cov_event_op_writes(ev->op))
		for (uint32_t j = 0; j < v->nreads; j++)
			check_one(rd, &v->reads[j], &cur, out);
	if (out->state != GOLDI_LS)
		out->gls[0] = '\0';

	if (cov_event_op_writes(ev->op)) {
		for (uint32_t j = 0; j < v->nreads; j++)
			free(v->reads[j].gls.v);
		v->nreads = 0;
		rec_set(rd, &v->write, &cur);
		v->has_write = true;
	} else {
		uint32_t j;

		for (j = 0; j < v->nreads && v->reads[j].acc.thread != ev->thread; j++)
			;
		if (j == v->nreads) {
			if (v->nreads == v->capreads) {
				v->capreads = v->capreads ? v->capreads * 2 : 4;
				v->reads = xrealloc(v->reads, v->capreads * sizeof(*v->reads));
			}
			memset(&v->reads[j], 0, sizeof(v->reads[j]));
			v->nreads++;
		}
		rec_set(rd, &v->reads[j], &cur);
	}
	if (ev->op == CS_OP_RW)
		sync_release(rd, ev->thread, atomic_elem);
}

int races_feed(struct race_detector *rd, const struct cov_event *ev, struct race_verdict *out)
{
	unsigned fresh = hb_feed(rd->hb, ev);

	if (ev->thread < rd->nbarrier_acq && rd->barrier_acq[ev->thread].elem)
		barrier_left(rd, ev->thread);
	if (cov_event_op_is_access(ev->op)) {
		feed_access(rd, ev, out);
		out->new_warnings = fresh;
		return 1;
	}
	feed_sync(rd, ev);
	return 0;
}

size_t races_warning_count(const struct race_detector *rd)
{
	return hb_warning_count(rd->hb);
}

const struct race_warning *races_warning_get(const struct race_detector *rd, size_t i)
{
	return hb_warning_get(rd->hb, i);
}

static const char *op_name(unsigned op)
{
	return op == CS_OP_READ ? "R" : op == CS_OP_WRITE ? "W" : "RW";
}

char *races_warning_fmt(const struct race_warning *w, char *buf, size_t len)
{
	char l1[96], l2[96];

	snprintf(buf, len, "race v%u: t%u %s s%u %s vs t%u %s s%u %s", w->var, w->first.thread,
		 op_name(w->first.op), w->first.site,
		 cov_event_lockset_fmt(&w->first.held, l1, sizeof(l1)), w->second.thread,
		 op_name(w->second.op), w->second.site,
		 cov_event_lockset_fmt(&w->second.held, l2, sizeof(l2)));
	return buf;
}

const char *races_goldi_state_name(enum cov_goldi_state s)
{
	static const char *const names[] = { "SCT", "SCL", "LS", "E" };

	return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "?";
}

/* WGoldiLockSC weights, seed 004 section 5.5.1. */
unsigned races_goldi_weight(enum cov_goldi_state s)
{
	static const unsigned weights[] = { 1, 5, 5, 10 };

	return (unsigned)s < ARRAY_SIZE(weights) ? weights[s] : 0;
}
