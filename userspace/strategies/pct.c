// SPDX-License-Identifier: MIT
/* PCT scheduler choices (Burckhardt et al. 2010); see pct.h. */
#include "strategies/pct.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* n distinct change points of pool q, uniform in [1, k], sorted. */
static void draw(struct pct *p, enum pct_pool q, uint32_t n, uint64_t k)
{
	uint32_t first = p->nchange;

	while (p->nchange < first + n) {
		uint64_t c = 1 + rng_below(&p->rng, k);
		bool dup = false;

		for (uint32_t i = first; i < p->nchange; i++)
			dup |= p->change[i] == c;
		if (!dup) {
			p->change_pool[p->nchange] = (uint8_t)q;
			p->change[p->nchange++] = c;
		}
	}
	qsort(p->change + first, n, sizeof(p->change[0]), cmp_u64);
}

static int init(struct pct *p, uint32_t depth, uint64_t k, uint64_t seed)
{
	memset(p, 0, sizeof(*p));
	if (depth < 1 || depth > PCT_MAX_DEPTH || k < 1 || depth - 1 > k)
		return -EINVAL;
	p->depth = depth;
	p->k = k;
	rng_seed(&p->rng, seed);
	return 0;
}

int pct_init(struct pct *p, uint32_t depth, uint64_t k, uint64_t seed)
{
	int err = init(p, depth, k, seed);

	if (!err)
		draw(p, PCT_POOL_SYNC, depth - 1, k); /* every step is pool 0's */
	return err;
}

/* How many of n change points go to the synchronization pool: one when
 * n >= 2, the coin's when n = 1; then as many as a pool lacks room for
 * move to the other (n <= ksync + kcross). */
static uint32_t sync_share(uint32_t n, uint64_t ksync, uint64_t kcross, bool coin)
{
	uint64_t s = n >= 2 ? 1 : n == 1 && coin;

	if (n - s > kcross)
		s = n - kcross;
	return (uint32_t)(s > ksync ? ksync : s);
}

int pct_init_split(struct pct *p, uint32_t depth, uint64_t ksync, uint64_t kcross, uint64_t seed)
{
	int err = init(p, depth, ksync + kcross, seed);
	uint32_t nsync;

	if (err)
		return err;
	p->split = true;
	p->picked_pool = PCT_POOL_NONE;
	p->kpool[PCT_POOL_SYNC] = ksync;
	p->kpool[PCT_POOL_CROSS] = kcross;
	nsync = sync_share(depth - 1, ksync, kcross, rng_below(&p->rng, 2));
	draw(p, PCT_POOL_SYNC, nsync, ksync);
	draw(p, PCT_POOL_CROSS, depth - 1 - nsync, kcross);
	return 0;
}

/* The pool thread t's next step counts in. */
static enum pct_pool pool_of(const struct pct *p, uint32_t t)
{
	return p->split ? (enum pct_pool)p->threads[t].pool : PCT_POOL_SYNC;
}

/* The change point that thread t's next step is, if any: -1 if none. */
static int change_at(const struct pct *p, uint32_t t)
{
	enum pct_pool q = pool_of(p, t);

	if (q == PCT_POOL_NONE)
		return -1;
	for (uint32_t i = 0; i < p->nchange; i++)
		if (!(p->consumed >> i & 1) && p->change_pool[i] == q &&
		    p->change[i] == p->pool_steps[q] + 1)
			return (int)i;
	return -1;
}

void pct_free(struct pct *p)
{
	free(p->threads);
	p->threads = NULL;
	p->nthreads = 0;
}

void pct_thread_add(struct pct *p, uint32_t t)
{
	if (t >= p->nthreads) {
		uint32_t n = t + 1 > p->nthreads * 2 ? t + 1 : p->nthreads * 2;

		p->threads = xrealloc(p->threads, n * sizeof(*p->threads));
		memset(p->threads + p->nthreads, 0, (n - p->nthreads) * sizeof(*p->threads));
		p->nthreads = n;
	}
	if (p->threads[t].known)
		return;
	p->threads[t].known = 1;
	/* A fresh random key per thread orders the threads by a uniformly
	 * random permutation, whatever order they appear in. */
	p->threads[t].key = rng_next(&p->rng);
}

/* Does a run before b? */
static bool higher(const struct pct *p, uint32_t a, uint32_t b)
{
	const struct pct_thread *x = &p->threads[a], *y = &p->threads[b];

	if (x->yielded != y->yielded)
		return !x->yielded;
	if (x->yielded)
		return x->yseq < y->yseq;
	if (x->demoted != y->demoted)
		return !x->demoted;
	if (x->demoted)
		return x->low != y->low ? x->low > y->low : a < b;
	return x->key != y->key ? x->key > y->key : a < b;
}

static uint32_t highest(struct pct *p, const uint32_t *runnable, size_t n)
{
	uint32_t best = runnable[0];

	for (size_t i = 0; i < n; i++) {
		pct_thread_add(p, runnable[i]);
		if (higher(p, runnable[i], best))
			best = runnable[i];
	}
	return best;
}

int64_t pct_highest(struct pct *p, const uint32_t *runnable, size_t n)
{
	return n ? (int64_t)highest(p, runnable, n) : -1;
}

int64_t pct_pick(struct pct *p, const uint32_t *runnable, size_t n)
{
	uint32_t t;
	int i;

	if (!n)
		return -1;
	t = highest(p, runnable, n);
	while ((i = change_at(p, t)) >= 0) {
		/* Change point i: the thread about to run drops to the number
		 * of change points consumed so far, itself included. */
		p->consumed |= 1ULL << i;
		p->threads[t].demoted = 1;
		p->threads[t].yielded = 0;
		p->threads[t].low = ++p->next_change;
		t = highest(p, runnable, n);
	}
	p->picked_pool = (uint8_t)pool_of(p, t);
	return t;
}

void pct_thread_pool(struct pct *p, uint32_t t, enum pct_pool pool)
{
	pct_thread_add(p, t);
	p->threads[t].pool = (uint8_t)pool;
}

void pct_step(struct pct *p)
{
	p->steps++;
	if (p->picked_pool != PCT_POOL_NONE)
		p->pool_steps[p->picked_pool]++;
	p->picked_pool = p->split ? PCT_POOL_NONE : PCT_POOL_SYNC;
	/* A change point nobody picked at (no step reached pct_pick) expires. */
	for (uint32_t i = 0; i < p->nchange; i++)
		if (!(p->consumed >> i & 1) && p->change[i] <= p->pool_steps[p->change_pool[i]]) {
			p->consumed |= 1ULL << i;
			p->next_change++;
		}
}

void pct_yield(struct pct *p, uint32_t t)
{
	pct_thread_add(p, t);
	p->threads[t].yielded = 1;
	p->threads[t].yseq = ++p->yields;
}

uint32_t pct_priority(const struct pct *p, uint32_t t)
{
	const struct pct_thread *x;
	uint32_t rank = 0, yielded = 0, below = 0;

	if (t >= p->nthreads || !p->threads[t].known)
		return 0;
	x = &p->threads[t];
	for (uint32_t u = 0; u < p->nthreads; u++) {
		const struct pct_thread *y = &p->threads[u];

		if (!y->known || !y->yielded)
			continue;
		yielded++;
		below += u != t && x->yielded && higher(p, t, u);
	}
	if (x->yielded)
		return 1 + below;
	if (x->demoted)
		return yielded + x->low;
	for (uint32_t u = 0; u < p->nthreads; u++)
		if (u != t && p->threads[u].known && !p->threads[u].demoted &&
		    !p->threads[u].yielded && higher(p, t, u))
			rank++;
	return yielded + p->depth + rank;
}
