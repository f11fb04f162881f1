/* SPDX-License-Identifier: MIT */
/*
 * Genetic search over noise configurations: the TNCS approach of seed 004
 * section 5 (ALGORITHMS.md §7). An individual is a vector of integer genes,
 * each with a range and a flag saying whether its values are ordered;
 * the noise configuration genes come first, test parameters may follow.
 *
 * Operators, with seed 004's final parameters as defaults: population 20;
 * of the two parents of each crossover one is chosen by a tournament of 4
 * and the other by fitness-proportional selection (the "combination" the
 * paper found slightly best); uniform crossover swapping each gene with
 * p = 0.25; per-gene mutation p = 0.01, Gaussian with sigma = 10 % of the
 * range (at least 2) for ordinal genes, a uniform redraw for the others;
 * 2 elites carried over and re-evaluated. Fitness:
 * (WGoldiLockSC + 1000 warnings + 10000 failures) / time_ms.
 *
 * The caller evaluates individuals (5 runs each in the paper) and reports
 * fitness; everything here is deterministic from the seed.
 */
#ifndef CONCSCHED_GA_H
#define CONCSCHED_GA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strategies/noise.h"
#include "lib/rng.h"

#define GA_MAX_GENES 32
#define GA_MAX_POP   256

struct ga_gene_spec {
	const char *name;
	int32_t min, max;
	bool ordinal;
};

struct ga_params {
	uint32_t pop_size;   /* 20   */
	uint32_t tournament; /* 4    */
	uint32_t elites;     /* 2    */
	double crossover_p;  /* 0.25 */
	double mutation_p;   /* 0.01 */
};

struct ga_individual {
	int32_t genes[GA_MAX_GENES];
	double fitness; /* mean over its evaluations        */
	double fitness_sum;
	uint32_t evals;
	bool needs_eval; /* new, or an elite to re-evaluate */
};

struct ga {
	const struct ga_gene_spec *spec;
	uint32_t ngenes;
	struct ga_params par;
	struct ga_individual pop[GA_MAX_POP];
	uint32_t generation;
	struct cs_rng rng;
};

void ga_params_default(struct ga_params *p);
/* Random initial population. 0 or -EINVAL (bad sizes or ranges). */
int ga_init(struct ga *g, const struct ga_gene_spec *spec, uint32_t ngenes,
	    const struct ga_params *par, uint64_t seed);

/* Operators (exposed for tests and for callers that breed by hand). */
void ga_random_genome(struct ga *g, int32_t *genes);
/* The fittest of the given candidates (ties: the earliest). */
uint32_t ga_fittest_of(const struct ga *g, const uint32_t *cand, uint32_t n);
/* Tournament: par.tournament draws with replacement, the fittest wins. */
uint32_t ga_select_tournament(struct ga *g);
/* Roulette wheel on fitness (negative counts as 0; all 0: uniform). */
uint32_t ga_select_proportional(struct ga *g);
/* Uniform crossover in place: each gene swapped with par.crossover_p. */
void ga_crossover_uniform(struct ga *g, int32_t *a, int32_t *b);
/* Per-gene mutation with par.mutation_p; stays within each gene's range. */
void ga_mutate(struct ga *g, int32_t *genes);

/* Record one evaluation of individual i (its fitness is the mean). */
void ga_set_fitness(struct ga *g, uint32_t i, double fitness);
/* Breed the next generation: elites first (kept, flagged for
 * re-evaluation), then children. -EAGAIN if some individual still needs
 * an evaluation. */
int ga_next_generation(struct ga *g);

/* Seed 004 §5.5.1; time_ms <= 0 counts as 1 ms. */
double ga_fitness(double wgoldilock_sc, uint64_t warnings, uint64_t failures, double time_ms);

/* ---- noise configurations as genomes ----------------------------------- */

enum ga_noise_gene {
	GA_G_FREQ = 0,	/* per mille, ordinal                          */
	GA_G_PLACEMENT, /* enum noise_placement                        */
	GA_G_SEEDING,	/* enum noise_seeding                          */
	GA_G_STRENGTH,	/* 0-1000: log scale over the seeding's range  */
	GA_G_READ_SEED, /* basic seeding for reads (read-write)        */
	GA_G_READ_STRENGTH,
	GA_G_WRITE_SEED,
	GA_G_WRITE_STRENGTH,
	GA_G_HALT_ONE, /* 0/1 */
	GA_G_TIMEOUT,  /* 0/1 */
	GA_NOISE_GENES,
};

extern const struct ga_gene_spec ga_noise_spec[GA_NOISE_GENES];

void ga_genome_to_noise(const int32_t *genes, struct noise_config *c);
void ga_noise_to_genome(const struct noise_config *c, int32_t *genes);

#endif
