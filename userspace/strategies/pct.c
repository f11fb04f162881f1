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

int pct_init(struct pct *p, uint32_t depth, uint64_t k, uint64_t seed)
{
	memset(p, 0, sizeof(*p));
	if (depth < 1 || depth > PCT_MAX_DEPTH || k < 1 || depth - 1 > k)
		return -EINVAL;
	p->depth = depth;
	p->k = k;
	rng_seed(&p->rng, seed);
	/* d-1 distinct change points, uniform in [1, k]. */
	while (p->nchange < depth - 1) {
		uint64_t c = 1 + rng_below(&p->rng, k);
		bool dup = false;

		for (uint32_t i = 0; i < p->nchange; i++)
			dup |= p->change[i] == c;
		if (!dup)
			p->change[p->nchange++] = c;
	}
	qsort(p->change, p->nchange, sizeof(p->change[0]), cmp_u64);
	return 0;
}

int pct_init_focused(struct pct *p, uint32_t depth, uint64_t k, uint64_t seed)
{
	int err = pct_init(p, depth, k, seed);

	p->focused = !err;
	return err;
}

/* The steps the change points count: every step, or the focus steps. */
static uint64_t counted(const struct pct *p)
{
	return p->focused ? p->focus_steps : p->steps;
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

	if (!n)
		return -1;
	t = highest(p, runnable, n);
	if (p->next_change < p->nchange && p->change[p->next_change] == counted(p) + 1 &&
	    (!p->focused || p->threads[t].focus)) {
		/* Change point i (1-based): the thread about to run drops to i. */
		p->threads[t].demoted = 1;
		p->threads[t].yielded = 0;
		p->threads[t].low = ++p->next_change;
		t = highest(p, runnable, n);
	}
	p->picked_focus = p->threads[t].focus;
	return t;
}

void pct_thread_focus(struct pct *p, uint32_t t, bool focus)
{
	pct_thread_add(p, t);
	p->threads[t].focus = focus;
}

void pct_step(struct pct *p)
{
	p->steps++;
	p->focus_steps += p->focused && p->picked_focus;
	p->picked_focus = false;
	/* A change point nobody picked at (no step reached pct_pick) expires. */
	while (p->next_change < p->nchange && p->change[p->next_change] <= counted(p))
		p->next_change++;
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
