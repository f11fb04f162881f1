// SPDX-License-Identifier: MIT
/* GA operators for the search over noise configurations (seed 004 §5). */
#include "strategies/ga.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"

/* Basic seedings a read-write configuration may use for reads and writes
 * (seed 004 §4.3 combines sleep and yield, with busyWait and wait). */
static const enum noise_seeding rw_seedings[] = { NOISE_SEED_YIELD, NOISE_SEED_SLEEP,
						  NOISE_SEED_BUSYWAIT, NOISE_SEED_WAIT };
#define RW_SEEDINGS ((int32_t)(sizeof(rw_seedings) / sizeof(rw_seedings[0])))
#define LEVEL_MAX   1000

const struct ga_gene_spec ga_noise_spec[GA_NOISE_GENES] = {
	[GA_G_FREQ] = { "freq", 0, 1000, true },
	[GA_G_PLACEMENT] = { "placement", 0, NOISE_PLACE__COUNT - 1, false },
	[GA_G_SEEDING] = { "seeding", 0, NOISE_SEED__COUNT - 1, false },
	[GA_G_STRENGTH] = { "strength", 0, LEVEL_MAX, true },
	[GA_G_READ_SEED] = { "read_seeding", 0, RW_SEEDINGS - 1, false },
	[GA_G_READ_STRENGTH] = { "read_strength", 0, LEVEL_MAX, true },
	[GA_G_WRITE_SEED] = { "write_seeding", 0, RW_SEEDINGS - 1, false },
	[GA_G_WRITE_STRENGTH] = { "write_strength", 0, LEVEL_MAX, true },
	[GA_G_HALT_ONE] = { "halt_one", 0, 1, false },
	[GA_G_TIMEOUT] = { "timeout_tamper", 0, 1, false },
};

void ga_params_default(struct ga_params *p)
{
	p->pop_size = 20;
	p->tournament = 4;
	p->elites = 2;
	p->crossover_p = 0.25;
	p->mutation_p = 0.01;
}

int ga_init(struct ga *g, const struct ga_gene_spec *spec, uint32_t ngenes,
	    const struct ga_params *par, uint64_t seed)
{
	memset(g, 0, sizeof(*g));
	if (!ngenes || ngenes > GA_MAX_GENES || !par->pop_size || par->pop_size > GA_MAX_POP ||
	    par->elites > par->pop_size || !par->tournament)
		return -EINVAL;
	for (uint32_t i = 0; i < ngenes; i++)
		if (spec[i].min > spec[i].max)
			return -EINVAL;
	g->spec = spec;
	g->ngenes = ngenes;
	g->par = *par;
	rng_seed(&g->rng, seed);
	for (uint32_t i = 0; i < par->pop_size; i++) {
		ga_random_genome(g, g->pop[i].genes);
		g->pop[i].needs_eval = true;
	}
	return 0;
}

void ga_random_genome(struct ga *g, int32_t *genes)
{
	for (uint32_t i = 0; i < g->ngenes; i++)
		genes[i] = (int32_t)rng_range(&g->rng, g->spec[i].min, g->spec[i].max);
}

uint32_t ga_fittest_of(const struct ga *g, const uint32_t *cand, uint32_t n)
{
	uint32_t best = cand[0];

	for (uint32_t i = 1; i < n; i++)
		if (g->pop[cand[i]].fitness > g->pop[best].fitness)
			best = cand[i];
	return best;
}

uint32_t ga_select_tournament(struct ga *g)
{
	uint32_t cand[GA_MAX_POP], n = g->par.tournament;

	if (n < 1)
		n = 1;
	if (n > GA_MAX_POP)
		n = GA_MAX_POP;
	for (uint32_t i = 0; i < n; i++)
		cand[i] = (uint32_t)rng_below(&g->rng, g->par.pop_size);
	return ga_fittest_of(g, cand, n);
}

uint32_t ga_select_proportional(struct ga *g)
{
	double total = 0, x;

	for (uint32_t i = 0; i < g->par.pop_size; i++)
		total += g->pop[i].fitness > 0 ? g->pop[i].fitness : 0;
	if (!(total > 0))
		return (uint32_t)rng_below(&g->rng, g->par.pop_size);
	x = rng_double(&g->rng) * total;
	for (uint32_t i = 0; i < g->par.pop_size; i++) {
		double f = g->pop[i].fitness > 0 ? g->pop[i].fitness : 0;

		if (x < f)
			return i;
		x -= f;
	}
	/* Rounding left x just past the last slice: the last positive one. */
	for (uint32_t i = g->par.pop_size; i-- > 0;)
		if (g->pop[i].fitness > 0)
			return i;
	return 0;
}

void ga_crossover_uniform(struct ga *g, int32_t *a, int32_t *b)
{
	for (uint32_t i = 0; i < g->ngenes; i++) {
		int32_t t;

		if (!rng_chance(&g->rng, g->par.crossover_p))
			continue;
		t = a[i];
		a[i] = b[i];
		b[i] = t;
	}
}

/* Gaussian step for an ordinal gene: sigma = 10 % of the range, at least 2
 * (seed 004 §5.4.2). Out-of-range draws are redrawn a few times, then
 * clamped, so the gene never leaves its range. */
static int32_t mutate_ordinal(struct ga *g, const struct ga_gene_spec *s, int32_t v)
{
	double sigma = 0.1 * ((double)s->max - s->min);
	int64_t x = v;

	if (sigma < 2)
		sigma = 2;
	for (int tries = 0; tries < 8; tries++) {
		x = v + llround(rng_gauss(&g->rng) * sigma);
		if (x >= s->min && x <= s->max)
			return (int32_t)x;
	}
	return (int32_t)(x < s->min ? s->min : s->max);
}

void ga_mutate(struct ga *g, int32_t *genes)
{
	for (uint32_t i = 0; i < g->ngenes; i++) {
		const struct ga_gene_spec *s = &g->spec[i];

		if (!rng_chance(&g->rng, g->par.mutation_p))
			continue;
		if (s->ordinal)
			genes[i] = mutate_ordinal(g, s, genes[i]);
		else /* non-ordinal: any value of the range, the current one included */
			genes[i] = (int32_t)rng_range(&g->rng, s->min, s->max);
	}
}

void ga_set_fitness(struct ga *g, uint32_t i, double fitness)
{
	struct ga_individual *ind = &g->pop[i];

	ind->fitness_sum += fitness;
	ind->evals++;
	ind->fitness = ind->fitness_sum / ind->evals;
	ind->needs_eval = false;
}

static int cmp_by_fitness(const void *a, const void *b, void *arg)
{
	const struct ga *g = arg;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	double fx = g->pop[x].fitness, fy = g->pop[y].fitness;

	if (fx != fy)
		return fx > fy ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void add_child(struct ga_individual *next, uint32_t *n, const int32_t *genes,
		      uint32_t ngenes)
{
	struct ga_individual *c = &next[(*n)++];

	memset(c, 0, sizeof(*c));
	memcpy(c->genes, genes, ngenes * sizeof(*genes));
	c->needs_eval = true;
}

int ga_next_generation(struct ga *g)
{
	struct ga_individual *next;
	uint32_t order[GA_MAX_POP], n = 0, size = g->par.pop_size;

	for (uint32_t i = 0; i < size; i++) {
		if (g->pop[i].needs_eval)
			return -EAGAIN;
		order[i] = i;
	}
	next = xcalloc(size, sizeof(*next));
	qsort_r(order, size, sizeof(*order), cmp_by_fitness, g);
	/* Elites keep their evaluations and get another one (seed 004: rare
	 * failures need more than one set of 5 runs to show). */
	for (; n < g->par.elites; n++) {
		next[n] = g->pop[order[n]];
		next[n].needs_eval = true;
	}
	while (n < size) {
		int32_t a[GA_MAX_GENES], b[GA_MAX_GENES];

		memcpy(a, g->pop[ga_select_tournament(g)].genes, sizeof(a));
		memcpy(b, g->pop[ga_select_proportional(g)].genes, sizeof(b));
		ga_crossover_uniform(g, a, b);
		ga_mutate(g, a);
		ga_mutate(g, b);
		add_child(next, &n, a, g->ngenes);
		if (n < size)
			add_child(next, &n, b, g->ngenes);
	}
	memcpy(g->pop, next, size * sizeof(*next));
	free(next);
	g->generation++;
	return 0;
}

double ga_fitness(double wgoldilock_sc, uint64_t warnings, uint64_t failures, double time_ms)
{
	if (!(time_ms > 0))
		time_ms = 1;
	return (wgoldilock_sc + 1000.0 * (double)warnings + 10000.0 * (double)failures) / time_ms;
}

/* ---- genome <-> noise configuration ------------------------------------ */

/* Strength level 0..1000 maps log-uniformly onto [min, max] of the
 * seeding: one step of the level gene is a constant ratio, so Gaussian
 * mutation moves 20 µs and 20 ms strengths by similar factors. */
static uint32_t level_to_strength(enum noise_seeding kind, int32_t level)
{
	uint32_t min, max;
	double lo, hi, v;

	noise_strength_range(kind, &min, &max);
	lo = log1p(min);
	hi = log1p(max);
	v = expm1(lo + (hi - lo) * level / LEVEL_MAX);
	if (v < min)
		return min;
	return v > max ? max : (uint32_t)llround(v);
}

static int32_t strength_to_level(enum noise_seeding kind, uint32_t strength)
{
	uint32_t min, max;
	double lo, hi;

	noise_strength_range(kind, &min, &max);
	if (max == min)
		return 0;
	lo = log1p(min);
	hi = log1p(max);
	return (int32_t)llround((log1p(strength) - lo) / (hi - lo) * LEVEL_MAX);
}

static int32_t rw_index(enum noise_seeding kind)
{
	for (int32_t i = 0; i < RW_SEEDINGS; i++)
		if (rw_seedings[i] == kind)
			return i;
	return 0;
}

static void gene_seeding(struct noise_seed_cfg *s, enum noise_seeding kind, int32_t level)
{
	s->kind = kind;
	s->lo = s->hi = level_to_strength(kind, level);
}

void ga_genome_to_noise(const int32_t *g, struct noise_config *c)
{
	memset(c, 0, sizeof(*c));
	c->freq = (uint32_t)g[GA_G_FREQ];
	c->placement = (enum noise_placement)g[GA_G_PLACEMENT];
	gene_seeding(&c->seed, (enum noise_seeding)g[GA_G_SEEDING], g[GA_G_STRENGTH]);
	if (c->placement == NOISE_PLACE_READ_WRITE) {
		gene_seeding(&c->read, rw_seedings[g[GA_G_READ_SEED]], g[GA_G_READ_STRENGTH]);
		gene_seeding(&c->write, rw_seedings[g[GA_G_WRITE_SEED]], g[GA_G_WRITE_STRENGTH]);
	} else {
		c->read = c->write = c->seed;
	}
	c->halt_one = g[GA_G_HALT_ONE] != 0;
	c->timeout_tamper = g[GA_G_TIMEOUT] != 0;
}

static uint32_t midpoint(const struct noise_seed_cfg *s)
{
	return (uint32_t)(((uint64_t)s->lo + s->hi) / 2);
}

/* Inverse of ga_genome_to_noise up to strength rounding; a strength range
 * becomes its midpoint. */
void ga_noise_to_genome(const struct noise_config *c, int32_t *g)
{
	memset(g, 0, GA_NOISE_GENES * sizeof(*g));
	g[GA_G_FREQ] = (int32_t)c->freq;
	g[GA_G_PLACEMENT] = c->placement;
	g[GA_G_SEEDING] = c->seed.kind;
	g[GA_G_STRENGTH] = strength_to_level(c->seed.kind, midpoint(&c->seed));
	g[GA_G_READ_SEED] = rw_index(c->read.kind);
	g[GA_G_READ_STRENGTH] = strength_to_level(c->read.kind, midpoint(&c->read));
	g[GA_G_WRITE_SEED] = rw_index(c->write.kind);
	g[GA_G_WRITE_STRENGTH] = strength_to_level(c->write.kind, midpoint(&c->write));
	g[GA_G_HALT_ONE] = c->halt_one;
	g[GA_G_TIMEOUT] = c->timeout_tamper;
}
