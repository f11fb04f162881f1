// SPDX-License-Identifier: MIT
/*
 * Seed 000 (TSA): SP requirement estimation (AC1-AC4) and the Algorithm 1
 * scheduling controller as an event-driven engine. See tsa.h for the
 * interface and docs/strategies.md for the choices the paper leaves open.
 */
#include "strategies/tsa.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/rng.h"
#include "lib/util.h"

/* ---- small u64 -> u64 open-addressing map (locks, sites) -------------- */

struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap, count;
};

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static void u64map_clear(struct u64map *m)
{
	if (m->used)
		memset(m->used, 0, m->cap);
	m->count = 0;
}

static size_t u64map_slot(const struct u64map *m, uint64_t key)
{
	size_t i = mix64(key) & (m->cap - 1);

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static void u64map_grow(struct u64map *m)
{
	struct u64map n = { 0 };

	n.cap = m->cap ? m->cap * 2 : 64;
	n.keys = xcalloc(n.cap, sizeof(*n.keys));
	n.vals = xcalloc(n.cap, sizeof(*n.vals));
	n.used = xcalloc(n.cap, 1);
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->used[i])
			continue;
		j = u64map_slot(&n, m->keys[i]);
		n.used[j] = 1;
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
		n.count++;
	}
	u64map_free(m);
	*m = n;
}

static uint64_t *u64map_find(const struct u64map *m, uint64_t key)
{
	size_t i;

	if (!m->count)
		return NULL;
	i = u64map_slot(m, key);
	return m->used[i] ? &m->vals[i] : NULL;
}

/* Value slot for key, inserted as 0 if absent. */
static uint64_t *u64map_ref(struct u64map *m, uint64_t key)
{
	size_t i;

	if ((m->count + 1) * 4 > m->cap * 3)
		u64map_grow(m);
	i = u64map_slot(m, key);
	if (!m->used[i]) {
		m->used[i] = 1;
		m->keys[i] = key;
		m->vals[i] = 0;
		m->count++;
	}
	return &m->vals[i];
}

/* ---- thread model ------------------------------------------------------- */

void tsa_model_init(struct tsa_model *m)
{
	memset(m, 0, sizeof(*m));
}

void tsa_model_free(struct tsa_model *m)
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

int tsa_model_add_thread(struct tsa_model *m, int32_t creator, uint32_t create_pos)
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

int tsa_model_add_lock(struct tsa_model *m, uint32_t t, uint32_t site, uint64_t lock,
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

/* ---- pair sets ------------------------------------------------------------ */

static uint64_t pair_key(uint32_t x, uint32_t y)
{
	return (uint64_t)x << 32 | y;
}

void tsa_pairset_init(struct tsa_pairset *s)
{
	memset(s, 0, sizeof(*s));
}

void tsa_pairset_free(struct tsa_pairset *s)
{
	free(s->keys);
	free(s->flags);
	memset(s, 0, sizeof(*s));
}

static size_t pairset_slot(const struct tsa_pairset *s, uint64_t key)
{
	size_t i = mix64(key) & (s->cap - 1);

	while (s->flags[i] && s->keys[i] != key)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static void pairset_grow(struct tsa_pairset *s)
{
	struct tsa_pairset n;

	n.cap = s->cap ? s->cap * 2 : 64;
	n.count = s->count;
	n.keys = xcalloc(n.cap, sizeof(*n.keys));
	n.flags = xcalloc(n.cap, 1);
	for (size_t i = 0; i < s->cap; i++) {
		size_t j;

		if (!s->flags[i])
			continue;
		j = pairset_slot(&n, s->keys[i]);
		n.keys[j] = s->keys[i];
		n.flags[j] = s->flags[i];
	}
	free(s->keys);
	free(s->flags);
	*s = n;
}

unsigned tsa_pairset_add(struct tsa_pairset *s, uint32_t x, uint32_t y, unsigned flags)
{
	uint64_t key = pair_key(x, y);
	unsigned old;
	size_t i;

	flags &= 0xff;
	if (!flags)
		return tsa_pairset_get(s, x, y);
	if ((s->count + 1) * 4 > s->cap * 3)
		pairset_grow(s);
	i = pairset_slot(s, key);
	old = s->flags[i];
	if (!old) {
		s->keys[i] = key;
		s->count++;
	}
	s->flags[i] = old | flags;
	return old;
}

unsigned tsa_pairset_get(const struct tsa_pairset *s, uint32_t x, uint32_t y)
{
	if (!s->count)
		return 0;
	return s->flags[pairset_slot(s, pair_key(x, y))];
}

bool tsa_pairset_next(const struct tsa_pairset *s, size_t *pos, uint32_t *x, uint32_t *y,
		      unsigned *flags)
{
	for (; *pos < s->cap; (*pos)++) {
		size_t i = *pos;

		if (!s->flags[i])
			continue;
		*x = (uint32_t)(s->keys[i] >> 32);
		*y = (uint32_t)s->keys[i];
		*flags = s->flags[i];
		(*pos)++;
		return true;
	}
	return false;
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

/* ---- Algorithm 1 engine --------------------------------------------------- */

enum tsa_tstate {
	TSA_T_UNKNOWN = 0,
	TSA_T_RUNNING, /* enabled, not paused                              */
	TSA_T_PAUSED,  /* enabled, held by us before a lock action         */
	TSA_T_BLOCKED, /* not enabled: waiting in the kernel, sleeping     */
	TSA_T_EXITED,
};

struct tsa_tstate_rec {
	uint8_t state;
	bool pending;  /* a lock action is pending (before, no after yet) */
	uint32_t site; /* its site and lock                               */
	uint64_t lock;
	uint64_t since; /* engine clock when it became pending            */
};

struct tsa_lockrec {
	bool has_last; /* loc_last(m) defined in this run */
	bool held;
	uint32_t last;
	uint32_t holder;
};

/*
 * The coverage every run of a campaign shares (seed 000's covered and
 * uncovered sets): the campaign's engine owns it and each run's engine
 * (tsa_engine_run_new) points to it. Runs steered at once (run -j N) read
 * and write it from their own workers, and a pair one run covers must
 * change what the others pause at once, so every access during a run
 * holds `lock`: a futex, not a pthread mutex, because concsched's own
 * pthread calls would trap into the target's libc uprobes (lib/util.h).
 */
struct tsa_cover {
	struct cs_lock lock;
	struct tsa_pairset pairs;
	struct u64map site_uncovered; /* site -> num_cov_req               */
	uint64_t n_estimated, n_uncovered, n_covered, n_covered_estimated;
	/* Sites whose uncovered count reached 0, in that order. Append-only:
	 * each engine reads on from its own cursor (retired_seen), so every
	 * run learns of every retirement, whichever run covered the pair. */
	uint32_t *retired;
	size_t nretired, retcap;
};

struct tsa_engine {
	struct tsa_cover *cov;	     /* the campaign's coverage            */
	struct tsa_engine *campaign; /* a run's engine: the campaign's one;
				      * NULL for the campaign's own        */
	bool heuristic;
	struct cs_rng rng;

	/* Per run: touched by the run's own worker only. */
	struct tsa_tstate_rec *threads;
	uint32_t nthreads;
	struct u64map lock_index; /* lock id -> index into locks           */
	struct tsa_lockrec *locks;
	size_t nlocks, lockcap;
	uint64_t clock;
	struct tsa_stats stats; /* a run's engine: this run's, until run_end */
	size_t retired_seen;	/* how much of cov->retired was taken      */
};

const char *tsa_rule_name(enum tsa_rule r)
{
	static const char *const names[TSA_RULE__COUNT] = {
		[TSA_RULE_NONE] = "none", [TSA_RULE_1] = "rule1",	[TSA_RULE_2] = "rule2",
		[TSA_RULE_3] = "rule3",	  [TSA_RULE_RANDOM] = "random",
	};

	return (unsigned)r < TSA_RULE__COUNT ? names[r] : "?";
}

/* The helpers named *_locked and the site counting below run with
 * cov->lock held (or before any run engine exists). */

static void site_retire(struct tsa_cover *cov, uint32_t site)
{
	if (cov->nretired == cov->retcap) {
		cov->retcap = cov->retcap ? cov->retcap * 2 : 32;
		cov->retired = xrealloc(cov->retired, cov->retcap * sizeof(*cov->retired));
	}
	cov->retired[cov->nretired++] = site;
}

static void site_count_one(struct tsa_cover *cov, uint32_t site, int64_t d)
{
	uint64_t *n = u64map_ref(&cov->site_uncovered, site);

	*n += (uint64_t)d;
	if (d < 0 && !*n)
		site_retire(cov, site);
}

/* num_cov_req bookkeeping: <x,y> mentions x and y (once if x == y). */
static void site_count_add(struct tsa_cover *cov, uint32_t x, uint32_t y, int64_t d)
{
	site_count_one(cov, x, d);
	if (y != x)
		site_count_one(cov, y, d);
}

static uint32_t site_uncovered_locked(const struct tsa_cover *cov, uint32_t site)
{
	uint64_t *n = u64map_find(&cov->site_uncovered, site);

	return n ? (uint32_t)*n : 0;
}

static bool uncovered_locked(const struct tsa_cover *cov, uint32_t x, uint32_t y)
{
	return (tsa_pairset_get(&cov->pairs, x, y) & (TSA_PAIR_ESTIMATED | TSA_PAIR_COVERED)) ==
	       TSA_PAIR_ESTIMATED;
}

struct tsa_engine *tsa_engine_new(const struct tsa_pairset *estimated, bool heuristic)
{
	struct tsa_engine *e = xcalloc(1, sizeof(*e));
	struct tsa_cover *cov = xcalloc(1, sizeof(*cov));
	size_t pos = 0;
	uint32_t x, y;
	unsigned f;

	tsa_pairset_init(&cov->pairs);
	e->cov = cov;
	e->heuristic = heuristic;
	while (estimated && tsa_pairset_next(estimated, &pos, &x, &y, &f)) {
		if (!(f & TSA_PAIR_ESTIMATED))
			continue;
		if (tsa_pairset_add(&cov->pairs, x, y, TSA_PAIR_ESTIMATED))
			continue;
		cov->n_estimated++;
		cov->n_uncovered++;
		site_count_add(cov, x, y, 1);
	}
	cs_rng_seed(&e->rng, 0);
	return e;
}

struct tsa_engine *tsa_engine_run_new(struct tsa_engine *campaign)
{
	struct tsa_engine *e = xcalloc(1, sizeof(*e));

	if (campaign->campaign)
		campaign = campaign->campaign;
	e->cov = campaign->cov;
	e->campaign = campaign;
	e->heuristic = campaign->heuristic;
	cs_rng_seed(&e->rng, 0);
	/* Sites retired before now are in no tsa_pause_sites list the run
	 * will ask for: it has nothing to drop for them. */
	cs_lock_acquire(&e->cov->lock);
	e->retired_seen = e->cov->nretired;
	cs_lock_release(&e->cov->lock);
	return e;
}

void tsa_engine_free(struct tsa_engine *e)
{
	if (!e)
		return;
	if (!e->campaign) {
		tsa_pairset_free(&e->cov->pairs);
		u64map_free(&e->cov->site_uncovered);
		free(e->cov->retired);
		free(e->cov);
	}
	u64map_free(&e->lock_index);
	free(e->threads);
	free(e->locks);
	free(e);
}

/* Line 40: move <x,y> from uncovered to covered (or just record it). */
static void cover_pair(struct tsa_engine *e, uint32_t x, uint32_t y)
{
	struct tsa_cover *cov = e->cov;
	unsigned old;

	cs_lock_acquire(&cov->lock);
	old = tsa_pairset_add(&cov->pairs, x, y, TSA_PAIR_COVERED);
	if (!(old & TSA_PAIR_COVERED)) {
		cov->n_covered++;
		if (old & TSA_PAIR_ESTIMATED) {
			cov->n_covered_estimated++;
			cov->n_uncovered--;
			/* Under the lock too: the campaign's own stats are
			 * shared when it is given coverage during runs. */
			e->stats.newly_covered++;
			site_count_add(cov, x, y, -1);
		}
	}
	cs_lock_release(&cov->lock);
}

void tsa_engine_mark_covered(struct tsa_engine *e, uint32_t x, uint32_t y)
{
	cover_pair(e, x, y);
}

void tsa_run_begin(struct tsa_engine *e, uint64_t seed)
{
	free(e->threads);
	e->threads = NULL;
	e->nthreads = 0;
	u64map_clear(&e->lock_index);
	e->nlocks = 0;
	e->clock = 0;
	cs_rng_seed(&e->rng, seed);
	e->stats.runs++;
}

/* Add a run's counters to the campaign's. */
static void stats_add(struct tsa_stats *to, const struct tsa_stats *from)
{
	to->runs += from->runs;
	to->pauses += from->pauses;
	to->pauses_same_lock += from->pauses_same_lock;
	to->releases += from->releases;
	for (size_t i = 0; i < TSA_RULE__COUNT; i++)
		to->rule[i] += from->rule[i];
	to->forced += from->forced;
	to->lock_actions += from->lock_actions;
	to->newly_covered += from->newly_covered;
}

void tsa_run_end(struct tsa_engine *e)
{
	free(e->threads);
	e->threads = NULL;
	e->nthreads = 0;
	u64map_clear(&e->lock_index);
	e->nlocks = 0;
	if (!e->campaign)
		return;
	cs_lock_acquire(&e->cov->lock);
	stats_add(&e->campaign->stats, &e->stats);
	cs_lock_release(&e->cov->lock);
	memset(&e->stats, 0, sizeof(e->stats));
}

static struct tsa_tstate_rec *thread_rec(struct tsa_engine *e, uint32_t t)
{
	if (t >= e->nthreads) {
		uint32_t n = t + 1 > e->nthreads * 2 ? t + 1 : e->nthreads * 2;

		e->threads = xrealloc(e->threads, n * sizeof(*e->threads));
		memset(e->threads + e->nthreads, 0, (n - e->nthreads) * sizeof(*e->threads));
		e->nthreads = n;
	}
	if (e->threads[t].state == TSA_T_UNKNOWN)
		e->threads[t].state = TSA_T_RUNNING;
	return &e->threads[t];
}

static struct tsa_lockrec *lock_rec(struct tsa_engine *e, uint64_t lock)
{
	uint64_t *idx = u64map_find(&e->lock_index, lock);

	if (idx)
		return &e->locks[*idx];
	if (e->nlocks == e->lockcap) {
		e->lockcap = e->lockcap ? e->lockcap * 2 : 32;
		e->locks = xrealloc(e->locks, e->lockcap * sizeof(*e->locks));
	}
	memset(&e->locks[e->nlocks], 0, sizeof(*e->locks));
	*u64map_ref(&e->lock_index, lock) = e->nlocks;
	return &e->locks[e->nlocks++];
}

void tsa_thread_start(struct tsa_engine *e, uint32_t t)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	if (r->state != TSA_T_PAUSED)
		r->state = TSA_T_RUNNING;
}

void tsa_thread_blocked(struct tsa_engine *e, uint32_t t)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	if (r->state == TSA_T_RUNNING)
		r->state = TSA_T_BLOCKED;
}

void tsa_thread_runnable(struct tsa_engine *e, uint32_t t)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	if (r->state == TSA_T_BLOCKED)
		r->state = TSA_T_RUNNING;
}

void tsa_thread_exit(struct tsa_engine *e, uint32_t t)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	r->state = TSA_T_EXITED;
	r->pending = false;
}

uint32_t tsa_site_uncovered(const struct tsa_engine *e, uint32_t site)
{
	uint32_t n;

	cs_lock_acquire(&e->cov->lock);
	n = site_uncovered_locked(e->cov, site);
	cs_lock_release(&e->cov->lock);
	return n;
}

static bool paused_on_lock(const struct tsa_engine *e, uint64_t lock, uint32_t except)
{
	for (uint32_t t = 0; t < e->nthreads; t++)
		if (t != except && e->threads[t].state == TSA_T_PAUSED &&
		    e->threads[t].lock == lock)
			return true;
	return false;
}

enum tsa_verdict tsa_before_lock(struct tsa_engine *e, uint32_t t, uint32_t site, uint64_t lock)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	if (!r->pending || r->site != site || r->lock != lock)
		r->since = ++e->clock;
	r->pending = true;
	r->site = site;
	r->lock = lock;
	/* Lines 7-8: some uncovered <x,y> has x or y = loc(p) (as of now:
	 * another run may cover it the next moment, and that run's pairs
	 * count for this one at once). */
	if (tsa_site_uncovered(e, site)) {
		r->state = TSA_T_PAUSED;
		e->stats.pauses++;
		return TSA_PAUSE;
	}
	/* Lines 10-12: do not let p take a lock a paused action waits for. */
	if (paused_on_lock(e, lock, t)) {
		r->state = TSA_T_PAUSED;
		e->stats.pauses++;
		e->stats.pauses_same_lock++;
		return TSA_PAUSE;
	}
	if (r->state != TSA_T_BLOCKED)
		r->state = TSA_T_RUNNING;
	return TSA_PROCEED;
}

void tsa_after_lock(struct tsa_engine *e, uint32_t t, uint32_t site, uint64_t lock)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);
	struct tsa_lockrec *l = lock_rec(e, lock);

	if (r->state == TSA_T_PAUSED)
		e->stats.forced++;
	r->state = TSA_T_RUNNING;
	r->pending = false;
	e->stats.lock_actions++;
	if (l->has_last)
		cover_pair(e, l->last, site);
	l->has_last = true;
	l->last = site;
	l->held = true;
	l->holder = t;
}

void tsa_after_unlock(struct tsa_engine *e, uint32_t t, uint64_t lock)
{
	struct tsa_lockrec *l = lock_rec(e, lock);

	if (l->held && l->holder == t)
		l->held = false;
}

void tsa_lock_abandoned(struct tsa_engine *e, uint32_t t)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	if (r->state == TSA_T_PAUSED)
		r->state = TSA_T_RUNNING;
	r->pending = false;
}

void tsa_force_release(struct tsa_engine *e, uint32_t t)
{
	struct tsa_tstate_rec *r = thread_rec(e, t);

	if (r->state != TSA_T_PAUSED)
		return;
	r->state = TSA_T_RUNNING;
	e->stats.forced++;
}

bool tsa_all_enabled_paused(const struct tsa_engine *e)
{
	bool any = false;

	for (uint32_t t = 0; t < e->nthreads; t++) {
		if (e->threads[t].state == TSA_T_RUNNING)
			return false;
		any |= e->threads[t].state == TSA_T_PAUSED;
	}
	return any;
}

/* Is the lock of paused thread t held by another thread? Then its action is
 * not in enabled(s): releasing it would only block it in the kernel. */
static bool lock_held_by_other(struct tsa_engine *e, uint32_t t)
{
	uint64_t *idx = u64map_find(&e->lock_index, e->threads[t].lock);

	return idx && e->locks[*idx].held && e->locks[*idx].holder != t;
}

static int cmp_candidate(const void *a, const void *b, void *arg)
{
	const struct tsa_engine *e = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t sx = e->threads[x].since, sy = e->threads[y].since;

	if (sx != sy)
		return sx < sy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Paused actions the rules choose from, oldest pending first. Those whose
 * lock is free come first-class; if every paused action waits for a held
 * lock, all of them are candidates (progress over precision). */
static uint32_t release_candidates(struct tsa_engine *e, uint32_t *out)
{
	uint32_t n = 0;

	for (uint32_t t = 0; t < e->nthreads; t++)
		if (e->threads[t].state == TSA_T_PAUSED && !lock_held_by_other(e, t))
			out[n++] = t;
	if (!n)
		for (uint32_t t = 0; t < e->nthreads; t++)
			if (e->threads[t].state == TSA_T_PAUSED)
				out[n++] = t;
	qsort_r(out, n, sizeof(*out), cmp_candidate, e);
	return n;
}

static bool rule1_applies(struct tsa_engine *e, uint32_t t)
{
	uint64_t *idx = u64map_find(&e->lock_index, e->threads[t].lock);
	struct tsa_lockrec *l = idx ? &e->locks[*idx] : NULL;

	return l && l->has_last && uncovered_locked(e->cov, l->last, e->threads[t].site);
}

static bool rule2_applies(struct tsa_engine *e, uint32_t t)
{
	const struct tsa_tstate_rec *p = &e->threads[t];

	for (uint32_t u = 0; u < e->nthreads; u++) {
		const struct tsa_tstate_rec *q = &e->threads[u];

		if (u != t && q->state == TSA_T_PAUSED && q->lock == p->lock &&
		    uncovered_locked(e->cov, p->site, q->site))
			return true;
	}
	return false;
}

/* With cov->lock held: the rules read the shared coverage throughout. */
static uint32_t pick_release(struct tsa_engine *e, const uint32_t *cand, uint32_t n,
			     enum tsa_rule *rule)
{
	uint32_t best = 0;

	for (uint32_t i = 0; i < n; i++)
		if (rule1_applies(e, cand[i])) {
			*rule = TSA_RULE_1;
			return cand[i];
		}
	for (uint32_t i = 0; i < n; i++)
		if (rule2_applies(e, cand[i])) {
			*rule = TSA_RULE_2;
			return cand[i];
		}
	if (!e->heuristic) {
		*rule = TSA_RULE_RANDOM;
		return cand[cs_rng_below(&e->rng, n)];
	}
	/* Rule 3: the action whose site has the fewest uncovered requirements
	 * has the least to gain from staying paused. Ties (seed 000 leaves
	 * them open) go to a seeded choice among the tied actions: with a
	 * fixed tie-break, once rules 1 and 2 are spent every run replays the
	 * same releases and coverage stops growing whatever the seed
	 * (docs/studies/tsa.md, "Why tsa loses on hashset"). */
	uint32_t ties = 1;

	for (uint32_t i = 1; i < n; i++) {
		uint32_t ui = site_uncovered_locked(e->cov, e->threads[cand[i]].site);
		uint32_t ub = site_uncovered_locked(e->cov, e->threads[cand[best]].site);

		if (ui < ub) {
			best = i;
			ties = 1;
		} else if (ui == ub && cs_rng_below(&e->rng, ++ties) == 0) {
			best = i; /* reservoir sampling: each tied one 1/ties */
		}
	}
	*rule = TSA_RULE_3;
	return cand[best];
}

int tsa_choose_release(struct tsa_engine *e, struct tsa_release *out)
{
	uint32_t *cand, n, t;
	enum tsa_rule rule = TSA_RULE_NONE;

	cand = xcalloc(e->nthreads ? e->nthreads : 1, sizeof(*cand));
	n = release_candidates(e, cand);
	if (!n) {
		free(cand);
		return -EAGAIN;
	}
	cs_lock_acquire(&e->cov->lock);
	t = pick_release(e, cand, n, &rule);
	cs_lock_release(&e->cov->lock);
	free(cand);
	e->threads[t].state = TSA_T_RUNNING;
	e->stats.releases++;
	e->stats.rule[rule]++;
	if (out) {
		out->thread = t;
		out->rule = rule;
		out->site = e->threads[t].site;
		out->lock = e->threads[t].lock;
	}
	return 0;
}

size_t tsa_pause_sites(const struct tsa_engine *e, uint32_t *out, size_t max)
{
	const struct u64map *m = &e->cov->site_uncovered;
	size_t n = 0;

	cs_lock_acquire(&e->cov->lock);
	for (size_t i = 0; i < m->cap && n < max; i++)
		if (m->used[i] && m->vals[i])
			out[n++] = (uint32_t)m->keys[i];
	cs_lock_release(&e->cov->lock);
	return n;
}

size_t tsa_take_retired_sites(struct tsa_engine *e, uint32_t *out, size_t max)
{
	size_t n;

	cs_lock_acquire(&e->cov->lock);
	n = e->cov->nretired - e->retired_seen;
	if (n > max)
		n = max;
	if (n) /* nothing retired yet: no log to copy from */
		memcpy(out, e->cov->retired + e->retired_seen, n * sizeof(*out));
	e->retired_seen += n;
	cs_lock_release(&e->cov->lock);
	return n;
}

bool tsa_is_paused(const struct tsa_engine *e, uint32_t t)
{
	return t < e->nthreads && e->threads[t].state == TSA_T_PAUSED;
}

bool tsa_is_enabled(const struct tsa_engine *e, uint32_t t)
{
	return t < e->nthreads &&
	       (e->threads[t].state == TSA_T_RUNNING || e->threads[t].state == TSA_T_PAUSED);
}

bool tsa_is_uncovered(const struct tsa_engine *e, uint32_t x, uint32_t y)
{
	bool u;

	cs_lock_acquire(&e->cov->lock);
	u = uncovered_locked(e->cov, x, y);
	cs_lock_release(&e->cov->lock);
	return u;
}

bool tsa_is_covered(const struct tsa_engine *e, uint32_t x, uint32_t y)
{
	bool c;

	cs_lock_acquire(&e->cov->lock);
	c = tsa_pairset_get(&e->cov->pairs, x, y) & TSA_PAIR_COVERED;
	cs_lock_release(&e->cov->lock);
	return c;
}

uint64_t tsa_uncovered_count(const struct tsa_engine *e)
{
	uint64_t n;

	cs_lock_acquire(&e->cov->lock);
	n = e->cov->n_uncovered;
	cs_lock_release(&e->cov->lock);
	return n;
}

const struct tsa_stats *tsa_engine_stats(const struct tsa_engine *e)
{
	return &e->stats;
}

void tsa_engine_precision(const struct tsa_engine *e, struct tsa_precision *p)
{
	const struct tsa_cover *cov = e->cov;

	cs_lock_acquire(&e->cov->lock);
	p->estimated = cov->n_estimated;
	p->covered = cov->n_covered;
	p->covered_estimated = cov->n_covered_estimated;
	p->false_positives = cov->n_estimated - cov->n_covered_estimated;
	p->false_negatives = cov->n_covered - cov->n_covered_estimated;
	cs_lock_release(&e->cov->lock);
}

const struct tsa_pairset *tsa_engine_pairs(const struct tsa_engine *e)
{
	return &e->cov->pairs;
}
