// SPDX-License-Identifier: MIT
/*
 * Seed 000 (TSA): the thread model and SP requirement estimation, AC1-AC4
 * (tsa_estimate.h, docs/strategies.md for the choices the paper leaves
 * open).
 */
#include "strategies/tsa_estimate.h"

#include <errno.h>
#include <string.h>

#include "strategies/tsa_map.h"
#include "lib/fnv1a64.h"
#include "lib/xalloc.h"

/* ---- thread model ------------------------------------------------------- */

void tsa_estimate_model_init(struct tsa_model *m)
{
	memset(m, 0, sizeof(*m));
}

void tsa_estimate_model_free(struct tsa_model *m)
{
	for (uint32_t t = 0; t < m->nthreads; t++) {
		struct tsa_thread_model *tm = &m->threads[t];

		for (uint32_t i = 0; i < tm->nactions; i++)
			free(tm->actions[i].lockset);
		free(tm->actions);
	}
	free(m->threads);
	memset(m, 0, sizeof(*m));
}

int tsa_estimate_model_add_thread(struct tsa_model *m, int32_t creator, uint32_t create_pos)
{
	struct tsa_thread_model *tm;

	if (creator >= (int32_t)m->nthreads)
		return -EINVAL;
	if (m->nthreads == m->cap) {
		m->cap = m->cap ? m->cap * 2 : 8;
		m->threads = xrealloc(m->threads, m->cap * sizeof(*m->threads));
	}
	tm = &m->threads[m->nthreads];
	memset(tm, 0, sizeof(*tm));
	tm->creator = creator < 0 ? -1 : creator;
	tm->create_pos = create_pos;
	return (int)m->nthreads++;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sort and deduplicate in place; returns the new length. */
static uint32_t lockset_normalize(uint64_t *ls, uint32_t n)
{
	uint32_t out = 0;

	qsort(ls, n, sizeof(*ls), cmp_u64);
	for (uint32_t i = 0; i < n; i++)
		if (!out || ls[out - 1] != ls[i])
			ls[out++] = ls[i];
	return out;
}

int tsa_estimate_model_add_lock(struct tsa_model *m, uint32_t t, uint32_t site, uint64_t lock,
				const uint64_t *lockset, uint32_t nlockset)
{
	struct tsa_thread_model *tm;
	struct tsa_lock_action *a;

	if (t >= m->nthreads || (nlockset && !lockset))
		return -EINVAL;
	tm = &m->threads[t];
	if (tm->nactions == tm->cap) {
		tm->cap = tm->cap ? tm->cap * 2 : 16;
		tm->actions = xrealloc(tm->actions, tm->cap * sizeof(*tm->actions));
	}
	a = &tm->actions[tm->nactions++];
	a->site = site;
	a->lock = lock;
	a->lockset = NULL;
	a->nlockset = 0;
	if (nlockset) {
		a->lockset = xcalloc(nlockset, sizeof(*lockset));
		memcpy(a->lockset, lockset, nlockset * sizeof(*lockset));
		a->nlockset = lockset_normalize(a->lockset, nlockset);
	}
	return 0;
}

/* ---- estimation ----------------------------------------------------------- */

/* Locksets interned to small ids so that action classes compare cheaply;
 * id 0 is the empty set. */
struct ls_intern {
	uint64_t *pool;
	size_t plen, pcap;
	uint32_t *off, *len;
	uint32_t n, ncap;
	uint32_t *slots; /* id + 1, 0 = empty */
	uint64_t *hashes;
	size_t scap;
};

static uint64_t ls_hash(const uint64_t *ls, uint32_t n)
{
	return fnv1a64(ls, n * sizeof(*ls), FNV1A64_INIT ^ n);
}

static bool ls_equal(const struct ls_intern *in, uint32_t id, const uint64_t *ls, uint32_t n)
{
	return in->len[id] == n && !memcmp(in->pool + in->off[id], ls, n * sizeof(*ls));
}

static void ls_intern_rehash(struct ls_intern *in)
{
	size_t cap = in->scap ? in->scap * 2 : 64;
	uint32_t *slots = xcalloc(cap, sizeof(*slots));
	uint64_t *hashes = xcalloc(cap, sizeof(*hashes));

	for (size_t i = 0; i < in->scap; i++) {
		size_t j;

		if (!in->slots[i])
			continue;
		j = mix64(in->hashes[i]) & (cap - 1);
		while (slots[j])
			j = (j + 1) & (cap - 1);
		slots[j] = in->slots[i];
		hashes[j] = in->hashes[i];
	}
	free(in->slots);
	free(in->hashes);
	in->slots = slots;
	in->hashes = hashes;
	in->scap = cap;
}

static uint32_t ls_intern_add(struct ls_intern *in, const uint64_t *ls, uint32_t n)
{
	uint64_t h;
	size_t i;
	uint32_t id;

	if (!n)
		return 0;
	if ((in->n + 1) * 4 > in->scap * 3)
		ls_intern_rehash(in);
	h = ls_hash(ls, n);
	for (i = mix64(h) & (in->scap - 1); in->slots[i]; i = (i + 1) & (in->scap - 1))
		if (in->hashes[i] == h && ls_equal(in, in->slots[i] - 1, ls, n))
			return in->slots[i] - 1;
	if (in->n == in->ncap) {
		in->ncap = in->ncap ? in->ncap * 2 : 64;
		in->off = xrealloc(in->off, in->ncap * sizeof(*in->off));
		in->len = xrealloc(in->len, in->ncap * sizeof(*in->len));
	}
	while (in->plen + n > in->pcap) {
		in->pcap = in->pcap ? in->pcap * 2 : 256;
		in->pool = xrealloc(in->pool, in->pcap * sizeof(*in->pool));
	}
	id = in->n++;
	in->off[id] = (uint32_t)in->plen;
	in->len[id] = n;
	memcpy(in->pool + in->plen, ls, n * sizeof(*ls));
	in->plen += n;
	in->slots[i] = id + 1;
	in->hashes[i] = h;
	return id;
}

static void ls_intern_init(struct ls_intern *in)
{
	memset(in, 0, sizeof(*in));
	/* Reserve id 0 for the empty set so ls_intern_add(…, 0) == 0. */
	in->ncap = 64;
	in->off = xcalloc(in->ncap, sizeof(*in->off));
	in->len = xcalloc(in->ncap, sizeof(*in->len));
	in->n = 1;
}

static void ls_intern_free(struct ls_intern *in)
{
	free(in->pool);
	free(in->off);
	free(in->len);
	free(in->slots);
	free(in->hashes);
}

static bool ls_intersect(const struct ls_intern *in, uint32_t a, uint32_t b)
{
	const uint64_t *x = in->pool + in->off[a], *y = in->pool + in->off[b];
	uint32_t i = 0, j = 0, nx = in->len[a], ny = in->len[b];

	if (!a || !b)
		return false;
	while (i < nx && j < ny) {
		if (x[i] == y[j])
			return true;
		if (x[i] < y[j])
			i++;
		else
			j++;
	}
	return false;
}

/* One class of lock actions that the AC checks cannot tell apart: same
 * thread, site, lock and the three locksets the conditions read. For AC4
 * only the latest action of a class matters (a later q precedes fewer p). */
struct est_class {
	uint64_t lock;
	uint32_t thread, site;
	uint32_t ls;	  /* lockset(p)                                   */
	uint32_t ls_next; /* lockset(p, next(p)); 0 when next(p) is none  */
	uint32_t ls_prev; /* lockset(prev(p), p); 0 when prev(p) is none  */
	uint32_t index;	  /* position in the thread (max over the class)  */
};

static int cmp_class(const void *a, const void *b)
{
	const struct est_class *x = a, *y = b;

#define CMP_FIELD(f)                                                                               \
	if (x->f != y->f)                                                                          \
		return x->f < y->f ? -1 : 1;
	CMP_FIELD(lock)
	CMP_FIELD(thread)
	CMP_FIELD(site)
	CMP_FIELD(ls)
	CMP_FIELD(ls_next)
	CMP_FIELD(ls_prev)
	CMP_FIELD(index)
#undef CMP_FIELD
	return 0;
}

static bool same_class(const struct est_class *x, const struct est_class *y)
{
	return x->lock == y->lock && x->thread == y->thread && x->site == y->site &&
	       x->ls == y->ls && x->ls_next == y->ls_next && x->ls_prev == y->ls_prev;
}

/* q ≺ p (seed 000 §2.2.1): every action a thread did before creating t'
 * precedes every action of t'. We take the transitive closure along the
 * creation chain (a precedence relation is an order): q ≺ p when thread(q)
 * is an ancestor of thread(p) and q comes before the creation of the
 * child on the path to thread(p). */
static bool precedes(const struct tsa_model *m, uint32_t tq, uint32_t iq, uint32_t tp)
{
	uint32_t c = tp;

	for (uint32_t steps = 0; steps < m->nthreads; steps++) {
		int32_t parent = m->threads[c].creator;

		if (parent < 0)
			return false;
		if ((uint32_t)parent == tq)
			return iq < m->threads[c].create_pos;
		c = (uint32_t)parent;
	}
	return false; /* creation cycle: malformed model, no precedence */
}

/* lockset(i, j) for i = prev(j) in the same thread: the locks that guard
 * both i and j and are held continuously in between. A lock released and
 * re-acquired in between shows up as a lock action on it after i, so a lock
 * of lockset(i) ∩ lockset(j) is continuous iff its latest lock action
 * before j is before i. */
static uint32_t lockset_between(struct ls_intern *in, const struct tsa_lock_action *ai,
				const struct tsa_lock_action *aj, uint32_t i,
				const struct u64map *last, uint64_t *buf)
{
	uint32_t n = 0, x = 0, y = 0;

	while (x < ai->nlockset && y < aj->nlockset) {
		uint64_t l = ai->lockset[x];

		if (l < aj->lockset[y]) {
			x++;
			continue;
		}
		if (l > aj->lockset[y]) {
			y++;
			continue;
		}
		uint64_t *at = u64map_find(last, l);

		if (!at || *at < i)
			buf[n++] = l;
		x++;
		y++;
	}
	return ls_intern_add(in, buf, n);
}

static void estimate_add(struct tsa_pairset *out, struct tsa_estimate_stats *st, uint32_t x,
			 uint32_t y)
{
	if (!(tsa_pairset_add(out, x, y, TSA_PAIR_ESTIMATED) & TSA_PAIR_ESTIMATED))
		st->requirements++;
}

/* Walk one thread: AC1 pairs, and one class per action. */
static void estimate_thread(const struct tsa_model *m, uint32_t t, struct ls_intern *in,
			    struct u64map *last, struct est_class *cls, size_t *ncls,
			    struct tsa_pairset *out, struct tsa_estimate_stats *st)
{
	const struct tsa_thread_model *tm = &m->threads[t];
	size_t base = *ncls;
	uint64_t *buf = NULL;
	uint32_t bufcap = 0;

	u64map_clear(last);
	for (uint32_t j = 0; j < tm->nactions; j++) {
		const struct tsa_lock_action *aj = &tm->actions[j];
		struct est_class *c = &cls[base + j];
		uint64_t *prev = u64map_find(last, aj->lock);

		c->lock = aj->lock;
		c->thread = t;
		c->site = aj->site;
		c->ls = ls_intern_add(in, aj->lockset, aj->nlockset);
		c->ls_next = 0;
		c->ls_prev = 0;
		c->index = j;
		if (prev) {
			uint32_t i = (uint32_t)*prev;
			const struct tsa_lock_action *ai = &tm->actions[i];
			uint32_t need = ai->nlockset < aj->nlockset ? ai->nlockset : aj->nlockset;

			if (need > bufcap) {
				bufcap = need;
				buf = xrealloc(buf, bufcap * sizeof(*buf));
			}
			c->ls_prev = lockset_between(in, ai, aj, i, last, buf);
			cls[base + i].ls_next = c->ls_prev;
			/* AC1: q = next(p) in the same thread. */
			if (!(tsa_pairset_get(out, ai->site, aj->site) & TSA_PAIR_ESTIMATED))
				st->accepted_ac1++;
			estimate_add(out, st, ai->site, aj->site);
		}
		*u64map_ref(last, aj->lock) = j;
	}
	free(buf);
	*ncls = base + tm->nactions;
	st->lock_actions += tm->nactions;
}

/* AC2-AC4 for p and q of different threads on the same lock. */
static void estimate_cross(const struct tsa_model *m, const struct ls_intern *in,
			   const struct est_class *p, const struct est_class *q,
			   struct tsa_pairset *out, struct tsa_estimate_stats *st)
{
	st->candidates++;
	if (ls_intersect(in, p->ls_next, q->ls)) {
		st->rejected_ac2++;
		return;
	}
	if (ls_intersect(in, p->ls, q->ls_prev)) {
		st->rejected_ac3++;
		return;
	}
	if (precedes(m, q->thread, q->index, p->thread)) {
		st->rejected_ac4++;
		return;
	}
	estimate_add(out, st, p->site, q->site);
}

int tsa_estimate(const struct tsa_model *m, struct tsa_pairset *out, struct tsa_estimate_stats *st)
{
	struct tsa_estimate_stats local;
	struct est_class *cls;
	struct ls_intern in;
	struct u64map last = { 0 };
	size_t total = 0, ncls = 0, k = 0;

	if (!st)
		st = &local;
	memset(st, 0, sizeof(*st));
	for (uint32_t t = 0; t < m->nthreads; t++)
		total += m->threads[t].nactions;
	cls = xcalloc(total, sizeof(*cls));
	ls_intern_init(&in);
	for (uint32_t t = 0; t < m->nthreads; t++)
		estimate_thread(m, t, &in, &last, cls, &ncls, out, st);

	/* Collapse actions into classes, keeping each class's latest index. */
	qsort(cls, ncls, sizeof(*cls), cmp_class);
	for (size_t i = 0; i < ncls; i++) {
		if (k && same_class(&cls[k - 1], &cls[i]))
			cls[k - 1].index = cls[i].index;
		else
			cls[k++] = cls[i];
	}
	st->classes = k;

	/* Every ordered pair of classes on the same lock from two threads. */
	for (size_t g0 = 0, g1; g0 < k; g0 = g1) {
		for (g1 = g0; g1 < k && cls[g1].lock == cls[g0].lock; g1++)
			;
		for (size_t a = g0; a < g1; a++)
			for (size_t b = g0; b < g1; b++)
				if (cls[a].thread != cls[b].thread)
					estimate_cross(m, &in, &cls[a], &cls[b], out, st);
	}
	free(cls);
	u64map_free(&last);
	ls_intern_free(&in);
	return 0;
}
