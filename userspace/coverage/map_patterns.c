// SPDX-License-Identifier: MIT
/*
 * The 17 MAP patterns of seed 001 (table of ALGORITHMS.md section 2), an
 * exact offline matcher, a bounded-window online matcher, the domain
 * estimate with happens-before pruning, and the fork/join site order that
 * feeds the pruning. map_patterns.h documents the window and the keys.
 */
#include "coverage/map_patterns.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/array_size.h"
#include "lib/xalloc.h"

#define A  MAP_ROLE_A
#define B  MAP_ROLE_B
#define X  MAP_VAR_X
#define Y  MAP_VAR_Y
#define R_ 0
#define W_ 1

/* ALGORITHMS.md section 2 (the corrected table of seed 001). */
static const struct map_pattern patterns[MAP_NPATTERNS] = {
	{ 1, 2, 1, { { A, X, R_ }, { B, X, W_ } } },
	{ 2, 2, 1, { { A, X, W_ }, { B, X, R_ } } },
	{ 3, 2, 1, { { A, X, W_ }, { B, X, W_ } } },
	{ 4, 3, 1, { { A, X, R_ }, { B, X, W_ }, { A, X, R_ } } },
	{ 5, 3, 1, { { A, X, W_ }, { B, X, W_ }, { A, X, R_ } } },
	{ 6, 3, 1, { { A, X, W_ }, { B, X, R_ }, { A, X, W_ } } },
	{ 7, 3, 1, { { A, X, R_ }, { B, X, W_ }, { A, X, W_ } } },
	{ 8, 3, 1, { { A, X, W_ }, { B, X, W_ }, { A, X, W_ } } },
	{ 9, 4, 2, { { A, X, W_ }, { B, X, W_ }, { B, Y, W_ }, { A, Y, W_ } } },
	{ 10, 4, 2, { { A, X, W_ }, { B, Y, W_ }, { B, X, W_ }, { A, Y, W_ } } },
	{ 11, 4, 2, { { A, X, W_ }, { B, Y, W_ }, { A, Y, W_ }, { B, X, W_ } } },
	{ 12, 4, 2, { { A, X, W_ }, { B, X, R_ }, { B, Y, R_ }, { A, Y, W_ } } },
	{ 13, 4, 2, { { A, X, W_ }, { B, Y, R_ }, { B, X, R_ }, { A, Y, W_ } } },
	{ 14, 4, 2, { { A, X, R_ }, { B, X, W_ }, { B, Y, W_ }, { A, Y, R_ } } },
	{ 15, 4, 2, { { A, X, R_ }, { B, Y, W_ }, { B, X, W_ }, { A, Y, R_ } } },
	{ 16, 4, 2, { { A, X, R_ }, { B, Y, W_ }, { A, Y, R_ }, { B, X, W_ } } },
	{ 17, 4, 2, { { A, X, W_ }, { B, Y, R_ }, { A, Y, W_ }, { B, X, R_ } } },
};

const struct map_pattern *map_patterns_get(unsigned id)
{
	return id >= 1 && id <= MAP_NPATTERNS ? &patterns[id - 1] : NULL;
}

char *map_patterns_fmt(const struct map_pattern *p, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned i = 0; i < p->nsteps && off < len; i++) {
		const struct map_step *s = &p->step[i];

		off += snprintf(buf + off, len - off, "%s%c:%c %c", i ? ", " : "",
				s->role == A ? 'a' : 'b', s->write ? 'W' : 'R',
				s->var == X ? 'x' : 'y');
	}
	return buf;
}

char *map_patterns_instance_key(const struct map_instance *in, char *buf, size_t len)
{
	const struct map_pattern *p = map_patterns_get(in->pattern);
	size_t off;

	if (!p) {
		snprintf(buf, len, "p?");
		return buf;
	}
	off = snprintf(buf, len, "p%u v%u", p->id, in->x);
	if (p->nvars == 2 && off < len)
		off += snprintf(buf + off, len - off, " v%u", in->y);
	for (unsigned i = 0; i < p->nsteps && off < len; i++)
		off += snprintf(buf + off, len - off, " s%u", in->site[i]);
	return buf;
}

int map_patterns_instance_parse(const char *key, struct map_instance *out)
{
	const struct map_pattern *p;
	unsigned id, used, n;
	const char *s = key;

	memset(out, 0, sizeof(*out));
	if (sscanf(s, "p%u v%u%n", &id, &out->x, &used) != 2)
		return -EINVAL;
	p = map_patterns_get(id);
	if (!p)
		return -EINVAL;
	out->pattern = id;
	s += used;
	if (p->nvars == 2) {
		if (sscanf(s, " v%u%n", &out->y, &used) != 1)
			return -EINVAL;
		s += used;
	}
	for (n = 0; n < p->nsteps; n++) {
		if (sscanf(s, " s%u%n", &out->site[n], &used) != 1)
			return -EINVAL;
		s += used;
	}
	return *s ? -EINVAL : 0;
}

bool map_patterns_step_accepts(const struct map_step *step, unsigned op)
{
	return step->write ? cov_event_op_writes(op) : cov_event_op_reads(op);
}

static void emit(const struct map_instance *in, struct cov_taskset *out, size_t *nnew,
		 map_instance_fn hook, void *ctx)
{
	char key[160];
	int is_new;

	map_patterns_instance_key(in, key, sizeof(key));
	is_new = cov_event_taskset_add(out, key, 1);
	*nnew += is_new;
	if (hook)
		hook(ctx, in, is_new);
}

/* ---- exact offline matcher ---------------------------------------------------- */

/* A partial instance: the first k steps matched, with bindings. */
struct partial {
	uint8_t pattern, k;
	bool has_b, has_y;
	uint32_t a, b, x, y;
	uint32_t site[MAP_MAX_STEPS];
};

static void partial_key(const struct partial *p, char *buf, size_t len)
{
	size_t off = snprintf(buf, len, "%u %u %u %u:%u %u %u:%u", p->pattern, p->k, p->a, p->has_b,
			      p->b, p->x, p->has_y, p->y);

	for (unsigned i = 0; i < p->k && off < len; i++)
		off += snprintf(buf + off, len - off, " %u", p->site[i]);
}

/* Does ev play step p->k of its pattern? Fills the extended partial. */
static bool partial_extend(const struct partial *p, const struct cov_event *ev, struct partial *nx)
{
	const struct map_pattern *pat = map_patterns_get(p->pattern);
	const struct map_step *st = &pat->step[p->k];

	if (!map_patterns_step_accepts(st, ev->op))
		return false;
	*nx = *p;
	if (st->var == X) {
		if (ev->obj != p->x)
			return false;
	} else if (p->has_y) {
		if (ev->obj != p->y)
			return false;
	} else {
		if (ev->obj == p->x)
			return false;
		nx->has_y = true;
		nx->y = ev->obj;
	}
	if (st->role == A) {
		if (ev->thread != p->a)
			return false;
	} else if (p->has_b) {
		if (ev->thread != p->b)
			return false;
	} else {
		if (ev->thread == p->a)
			return false;
		nx->has_b = true;
		nx->b = ev->thread;
	}
	nx->site[p->k] = ev->site;
	nx->k = p->k + 1;
	return true;
}

struct partial_set {
	struct partial *v;
	size_t n, cap;
	struct cov_taskset seen;
};

static void partial_push(struct partial_set *ps, const struct partial *p)
{
	char key[160];

	partial_key(p, key, sizeof(key));
	if (!cov_event_taskset_add(&ps->seen, key, 1))
		return;
	if (ps->n == ps->cap) {
		ps->cap = ps->cap ? ps->cap * 2 : 256;
		ps->v = xrealloc(ps->v, ps->cap * sizeof(*ps->v));
	}
	ps->v[ps->n++] = *p;
}

static void complete(const struct partial *p, struct cov_taskset *out, size_t *nnew)
{
	struct map_instance in = { .pattern = p->pattern, .x = p->x, .y = p->y };

	memcpy(in.site, p->site, sizeof(in.site));
	emit(&in, out, nnew, NULL, NULL);
}

size_t map_patterns_exact_match(const struct cov_event *events, size_t n, struct cov_taskset *out)
{
	struct partial_set ps = { 0 };
	size_t nnew = 0;

	cov_event_taskset_init(&ps.seen);
	for (size_t e = 0; e < n; e++) {
		const struct cov_event *ev = &events[e];
		size_t before = ps.n;

		if (!cov_event_op_is_access(ev->op))
			continue;
		/* Extend partials that existed before this event (one step
		 * per event); the unextended partial stays (not adjacent). */
		for (size_t i = 0; i < before; i++) {
			struct partial nx;

			if (ps.v[i].k == map_patterns_get(ps.v[i].pattern)->nsteps)
				continue;
			if (!partial_extend(&ps.v[i], ev, &nx))
				continue;
			if (nx.k == map_patterns_get(nx.pattern)->nsteps)
				complete(&nx, out, &nnew);
			else
				partial_push(&ps, &nx);
		}
		for (unsigned id = 1; id <= MAP_NPATTERNS; id++) {
			struct partial p = { .pattern = id, .a = ev->thread, .x = ev->obj };

			if (!map_patterns_step_accepts(&patterns[id - 1].step[0], ev->op))
				continue;
			p.site[0] = ev->site;
			p.k = 1;
			partial_push(&ps, &p);
		}
	}
	free(ps.v);
	cov_event_taskset_free(&ps.seen);
	return nnew;
}

/* ---- online matcher ------------------------------------------------------------- */

struct acc_rec {
	uint64_t seq;
	uint32_t site;
	uint16_t op;
};

/* The last W accesses of one thread to one variable. */
struct ring {
	uint32_t thread;
	uint32_t n, head; /* head: slot of the next insertion */
	struct acc_rec *a;
};

struct mvar {
	uint32_t var;
	struct ring *rings;
	uint32_t nrings;
};

/* The last W distinct variables of one thread, most recent first. */
struct mthread {
	uint32_t *recent;
	uint32_t n;
};

struct map_online {
	unsigned window;
	uint64_t seq;
	struct mvar *vars;
	size_t nvars;
	struct cov_u64map var_index;
	struct mthread *threads;
	uint32_t nthreads;
	map_instance_fn hook;
	void *hook_ctx;
	/* 64-bit hashes of instances already put in the caller's task set:
	 * skips formatting and string hashing for repeats. Kept across runs
	 * like the task set itself. */
	struct cov_u64map seen;
};

struct map_online *map_patterns_online_new(unsigned window)
{
	struct map_online *mo = xcalloc(1, sizeof(*mo));

	mo->window = window ? window : MAP_WINDOW_DEFAULT;
	return mo;
}

unsigned map_patterns_online_window(const struct map_online *mo)
{
	return mo->window;
}

void map_patterns_online_set_hook(struct map_online *mo, map_instance_fn fn, void *ctx)
{
	mo->hook = fn;
	mo->hook_ctx = ctx;
}

void map_patterns_online_run_begin(struct map_online *mo)
{
	for (size_t i = 0; i < mo->nvars; i++) {
		for (uint32_t j = 0; j < mo->vars[i].nrings; j++)
			free(mo->vars[i].rings[j].a);
		free(mo->vars[i].rings);
	}
	free(mo->vars);
	mo->vars = NULL;
	mo->nvars = 0;
	cov_event_u64map_free(&mo->var_index);
	for (uint32_t t = 0; t < mo->nthreads; t++)
		free(mo->threads[t].recent);
	free(mo->threads);
	mo->threads = NULL;
	mo->nthreads = 0;
	mo->seq = 0;
}

void map_patterns_online_free(struct map_online *mo)
{
	if (!mo)
		return;
	map_patterns_online_run_begin(mo);
	cov_event_u64map_free(&mo->seen);
	free(mo);
}

static struct mvar *mvar_find(const struct map_online *mo, uint32_t var)
{
	uint64_t *idx = cov_event_u64map_get(&mo->var_index, var);

	return idx ? &mo->vars[*idx] : NULL;
}

static struct mvar *mvar_get(struct map_online *mo, uint32_t var)
{
	bool created;
	uint64_t *idx = cov_event_u64map_put(&mo->var_index, var, mo->nvars, &created);

	if (created) {
		mo->vars = xrealloc(mo->vars, (mo->nvars + 1) * sizeof(*mo->vars));
		memset(&mo->vars[mo->nvars], 0, sizeof(*mo->vars));
		mo->vars[mo->nvars].var = var;
		mo->nvars++;
	}
	return &mo->vars[*idx];
}

static struct ring *ring_get(struct map_online *mo, struct mvar *v, uint32_t thread)
{
	struct ring *r;

	for (uint32_t i = 0; i < v->nrings; i++)
		if (v->rings[i].thread == thread)
			return &v->rings[i];
	v->rings = xrealloc(v->rings, (v->nrings + 1) * sizeof(*v->rings));
	r = &v->rings[v->nrings++];
	memset(r, 0, sizeof(*r));
	r->thread = thread;
	r->a = xcalloc(mo->window, sizeof(*r->a));
	return r;
}

/* i-th newest record of a ring (0 = newest). */
static const struct acc_rec *ring_at(const struct map_online *mo, const struct ring *r, uint32_t i)
{
	return &r->a[(r->head + mo->window - 1 - i) % mo->window];
}

static struct mthread *mthread_get(struct map_online *mo, uint32_t t)
{
	if (t >= mo->nthreads) {
		uint32_t n = t + 16;

		mo->threads = xrealloc(mo->threads, n * sizeof(*mo->threads));
		memset(mo->threads + mo->nthreads, 0, (n - mo->nthreads) * sizeof(*mo->threads));
		mo->nthreads = n;
	}
	if (!mo->threads[t].recent)
		mo->threads[t].recent = xcalloc(mo->window, sizeof(uint32_t));
	return &mo->threads[t];
}

static void window_insert(struct map_online *mo, const struct cov_event *ev)
{
	struct ring *r = ring_get(mo, mvar_get(mo, ev->obj), ev->thread);
	struct mthread *th = mthread_get(mo, ev->thread);
	uint32_t i;

	r->a[r->head] = (struct acc_rec){ mo->seq, ev->site, ev->op };
	r->head = (r->head + 1) % mo->window;
	if (r->n < mo->window)
		r->n++;
	/* Move-to-front in the thread's recent-variable list. */
	for (i = 0; i < th->n && th->recent[i] != ev->obj; i++)
		;
	if (i == th->n && th->n < mo->window)
		th->n++;
	if (i == mo->window)
		i = mo->window - 1;
	memmove(&th->recent[1], &th->recent[0], i * sizeof(uint32_t));
	th->recent[0] = ev->obj;
}

/* Backward search state for the instances ending at the current access. */
struct back {
	struct map_online *mo;
	const struct map_pattern *p;
	const struct mthread *last_thread; /* thread of the last step */
	bool has_role[2], has_var[2];
	uint32_t role[2], var[2];
	uint32_t site[MAP_MAX_STEPS];
	struct cov_taskset *out;
	size_t nnew;
};

static void back_step(struct back *bk, int j, uint64_t limit);

/* MurmurHash3's 64-bit finalizer: a bijection with full avalanche. */
static uint64_t fmix64(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* Chained word by word; the top bit is cleared because ~0 is the map's
 * empty key. Unused sites of short patterns are zero. */
static uint64_t instance_hash(const struct map_instance *in)
{
	uint32_t w[3 + MAP_MAX_STEPS] = { in->pattern, in->x, in->y };
	uint64_t h = 0x243f6a8885a308d3ULL;

	memcpy(&w[3], in->site, sizeof(in->site));
	for (unsigned i = 0; i < ARRAY_SIZE(w); i++)
		h = fmix64(h ^ w[i]);
	return h >> 1;
}

static void back_try_ring(struct back *bk, int j, const struct ring *r, uint64_t limit)
{
	const struct map_step *st = &bk->p->step[j];
	bool bound = bk->has_role[st->role];

	if (bound && r->thread != bk->role[st->role])
		return;
	if (!bound && bk->has_role[!st->role] && r->thread == bk->role[!st->role])
		return;
	uint32_t tried[64], ntried = 0;

	bk->has_role[st->role] = true;
	bk->role[st->role] = r->thread;
	/* Newest first: an older record at a site already tried can only
	 * rebuild the same keys with fewer choices for earlier steps. */
	for (uint32_t i = 0; i < r->n; i++) {
		const struct acc_rec *a = ring_at(bk->mo, r, i);
		uint32_t k;

		if (a->seq >= limit || !map_patterns_step_accepts(st, a->op))
			continue;
		for (k = 0; k < ntried && tried[k] != a->site; k++)
			;
		if (k < ntried)
			continue;
		if (ntried < ARRAY_SIZE(tried))
			tried[ntried++] = a->site;
		bk->site[j] = a->site;
		back_step(bk, j - 1, a->seq);
	}
	bk->has_role[st->role] = bound;
}

static void back_try_var(struct back *bk, int j, uint32_t var, uint64_t limit)
{
	const struct mvar *v = mvar_find(bk->mo, var);

	if (!v)
		return;
	for (uint32_t i = 0; i < v->nrings; i++)
		back_try_ring(bk, j, &v->rings[i], limit);
}

static void back_step(struct back *bk, int j, uint64_t limit)
{
	const struct map_step *st;

	if (j < 0) {
		struct map_instance in = { .pattern = bk->p->id, .x = bk->var[X] };
		bool created;

		if (bk->p->nvars == 2)
			in.y = bk->var[Y];
		memcpy(in.site, bk->site, bk->p->nsteps * sizeof(in.site[0]));
		cov_event_u64map_put(&bk->mo->seen, instance_hash(&in), 1, &created);
		if (created)
			emit(&in, bk->out, &bk->nnew, bk->mo->hook, bk->mo->hook_ctx);
		else if (bk->mo->hook)
			bk->mo->hook(bk->mo->hook_ctx, &in, false);
		return;
	}
	st = &bk->p->step[j];
	if (bk->has_var[st->var]) {
		back_try_var(bk, j, bk->var[st->var], limit);
		return;
	}
	/* The other variable: both threads touched it, so it is among the
	 * last-step thread's recent variables if it is in the window. */
	bk->has_var[st->var] = true;
	for (uint32_t i = 0; i < bk->last_thread->n; i++) {
		uint32_t var = bk->last_thread->recent[i];

		if (var == bk->var[!st->var])
			continue;
		bk->var[st->var] = var;
		back_try_var(bk, j, var, limit);
	}
	bk->has_var[st->var] = false;
}

size_t map_patterns_online_feed(struct map_online *mo, const struct cov_event *ev,
				struct cov_taskset *out)
{
	struct back bk = { .mo = mo, .out = out };

	if (!cov_event_op_is_access(ev->op))
		return 0;
	mo->seq++;
	window_insert(mo, ev);
	bk.last_thread = mthread_get(mo, ev->thread);
	for (unsigned id = 1; id <= MAP_NPATTERNS; id++) {
		const struct map_pattern *p = &patterns[id - 1];
		const struct map_step *last = &p->step[p->nsteps - 1];

		if (!map_patterns_step_accepts(last, ev->op))
			continue;
		bk.p = p;
		memset(bk.has_role, 0, sizeof(bk.has_role));
		memset(bk.has_var, 0, sizeof(bk.has_var));
		memset(bk.var, 0, sizeof(bk.var));
		bk.has_role[last->role] = true;
		bk.role[last->role] = ev->thread;
		bk.has_var[last->var] = true;
		bk.var[last->var] = ev->obj;
		bk.site[p->nsteps - 1] = ev->site;
		back_step(&bk, p->nsteps - 2, mo->seq);
	}
	return bk.nnew;
}

/* ---- domain estimate ------------------------------------------------------------ */

static uint64_t sq(uint64_t v)
{
	return v * v;
}

uint64_t map_patterns_domain_formula(const struct map_var_sites *vars, size_t n)
{
	uint64_t total = 0;

	for (size_t i = 0; i < n; i++) {
		uint64_t r = vars[i].nreads, w = vars[i].nwrites;

		total += 2 * r * w + sq(w) + sq(r) * w + 3 * r * sq(w) + w * sq(w);
	}
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < n; j++) {
			uint64_t rx = vars[i].nreads, wx = vars[i].nwrites;
			uint64_t ry = vars[j].nreads, wy = vars[j].nwrites;

			if (i == j)
				continue;
			total += 3 * sq(wx) * sq(wy) + 6 * wx * rx * wy * ry;
		}
	}
	return total;
}

struct domain_walk {
	const struct map_pattern *p;
	const struct map_var_sites *xv, *yv;
	map_precedes_fn precedes;
	void *ctx;
	uint32_t site[MAP_MAX_STEPS];
	struct cov_taskset *keys;
	uint64_t count;
};

/* A later step at site t while an earlier step is at s: infeasible if t
 * can only happen before s. */
static bool order_ok(const struct domain_walk *dw, unsigned j, uint32_t t)
{
	if (!dw->precedes)
		return true;
	for (unsigned i = 0; i < j; i++)
		if (dw->site[i] != t && dw->precedes(dw->ctx, t, dw->site[i]))
			return false;
	return true;
}

static void domain_step(struct domain_walk *dw, unsigned j)
{
	const struct map_step *st;
	const struct map_var_sites *v;
	const uint32_t *sites;
	uint32_t nsites;

	if (j == dw->p->nsteps) {
		dw->count++;
		if (dw->keys) {
			struct map_instance in = { .pattern = dw->p->id, .x = dw->xv->var };
			char key[160];

			if (dw->yv)
				in.y = dw->yv->var;
			memcpy(in.site, dw->site, sizeof(in.site));
			cov_event_taskset_add(dw->keys,
					      map_patterns_instance_key(&in, key, sizeof(key)), 1);
		}
		return;
	}
	st = &dw->p->step[j];
	v = st->var == X ? dw->xv : dw->yv;
	sites = st->write ? v->writes : v->reads;
	nsites = st->write ? v->nwrites : v->nreads;
	for (uint32_t i = 0; i < nsites; i++) {
		if (!order_ok(dw, j, sites[i]))
			continue;
		dw->site[j] = sites[i];
		domain_step(dw, j + 1);
	}
}

uint64_t map_patterns_domain_estimate(const struct map_var_sites *vars, size_t n,
				      map_precedes_fn precedes, void *ctx, struct cov_taskset *keys)
{
	struct domain_walk dw = { .precedes = precedes, .ctx = ctx, .keys = keys };

	if (!precedes && !keys)
		return map_patterns_domain_formula(vars, n);
	for (unsigned id = 1; id <= MAP_NPATTERNS; id++) {
		dw.p = &patterns[id - 1];
		for (size_t i = 0; i < n; i++) {
			dw.xv = &vars[i];
			dw.yv = NULL;
			if (dw.p->nvars == 1) {
				domain_step(&dw, 0);
				continue;
			}
			for (size_t j = 0; j < n; j++) {
				if (j == i)
					continue;
				dw.yv = &vars[j];
				domain_step(&dw, 0);
			}
		}
	}
	return dw.count;
}

/* ---- fork/join site order --------------------------------------------------------- */

struct map_site_order {
	uint32_t nthreads;
	struct cov_u64map site_index;
	uint32_t *join, *meet; /* nsites x nthreads */
	size_t nsites, cap;
};

static uint32_t max_thread(const struct cov_event *events, size_t n)
{
	uint32_t m = 0;

	for (size_t i = 0; i < n; i++) {
		if (events[i].thread > m)
			m = events[i].thread;
		if ((events[i].op == CS_OP_CREATE || events[i].op == CS_OP_JOIN) &&
		    events[i].obj > m)
			m = events[i].obj;
	}
	return m;
}

static void vc_join(uint32_t *dst, const uint32_t *src, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		if (src[i] > dst[i])
			dst[i] = src[i];
}

static void order_record(struct map_site_order *o, uint32_t site, const uint32_t *vc)
{
	bool created;
	uint64_t *idx = cov_event_u64map_put(&o->site_index, site, o->nsites, &created);
	uint32_t T = o->nthreads;
	uint32_t *j, *m;

	if (created) {
		if (o->nsites == o->cap) {
			o->cap = o->cap ? o->cap * 2 : 64;
			o->join = xrealloc(o->join, o->cap * T * sizeof(uint32_t));
			o->meet = xrealloc(o->meet, o->cap * T * sizeof(uint32_t));
		}
		memcpy(&o->join[o->nsites * T], vc, T * sizeof(uint32_t));
		memcpy(&o->meet[o->nsites * T], vc, T * sizeof(uint32_t));
		o->nsites++;
		return;
	}
	j = &o->join[*idx * T];
	m = &o->meet[*idx * T];
	for (uint32_t i = 0; i < T; i++) {
		if (vc[i] > j[i])
			j[i] = vc[i];
		if (vc[i] < m[i])
			m[i] = vc[i];
	}
}

struct map_site_order *map_patterns_site_order_build(const struct cov_event *events, size_t n)
{
	struct map_site_order *o = xcalloc(1, sizeof(*o));
	uint32_t T = max_thread(events, n) + 1;
	uint32_t *vc = xcalloc((size_t)T * T, sizeof(uint32_t));

	o->nthreads = T;
	for (size_t i = 0; i < n; i++) {
		const struct cov_event *ev = &events[i];
		uint32_t *mine = &vc[(size_t)ev->thread * T];

		mine[ev->thread]++;
		if (ev->op == CS_OP_JOIN)
			vc_join(mine, &vc[(size_t)ev->obj * T], T);
		order_record(o, ev->site, mine);
		if (ev->op == CS_OP_CREATE)
			vc_join(&vc[(size_t)ev->obj * T], mine, T);
	}
	free(vc);
	return o;
}

void map_patterns_site_order_free(struct map_site_order *o)
{
	if (!o)
		return;
	cov_event_u64map_free(&o->site_index);
	free(o->join);
	free(o->meet);
	free(o);
}

bool map_patterns_site_order_precedes(void *order, uint32_t s, uint32_t t)
{
	const struct map_site_order *o = order;
	uint64_t *is, *it;
	const uint32_t *j, *m;

	if (s == t)
		return false;
	is = cov_event_u64map_get(&o->site_index, s);
	it = cov_event_u64map_get(&o->site_index, t);
	if (!is || !it)
		return false;
	j = &o->join[*is * o->nthreads];
	m = &o->meet[*it * o->nthreads];
	for (uint32_t i = 0; i < o->nthreads; i++)
		if (j[i] > m[i])
			return false;
	return true;
}
