/* SPDX-License-Identifier: MIT */
/*
 * Seeded pseudo-random numbers for every policy engine (noise, PCT, GA,
 * TSA-h). Deterministic replay depends on it: the same seed gives the same
 * stream on every machine and build, so nothing here may use libc rand(),
 * time, or floating-point tricks whose result depends on the platform.
 *
 * Generator: xoshiro256** (Blackman & Vigna), state filled from the seed by
 * splitmix64 (the seeding their paper recommends). No global state: each
 * engine owns its struct cs_rng.
 */
#ifndef CONCSCHED_RNG_H
#define CONCSCHED_RNG_H

#include <stdbool.h>
#include <stdint.h>

struct cs_rng {
	uint64_t s[4];
};

/* One splitmix64 step: advances *state and returns a well-mixed value. */
uint64_t rng_splitmix64(uint64_t *state);

/* Seed from a 64-bit value (any value, including 0). */
void rng_seed(struct cs_rng *r, uint64_t seed);
/* Independent stream for sub-component `stream` of a campaign seed, e.g.
 * the seed of run i is rng_derive(campaign_seed, i). */
uint64_t rng_derive(uint64_t seed, uint64_t stream);

uint64_t rng_next(struct cs_rng *r);
/* Uniform in [0, n); n == 0 returns 0. Unbiased (rejection sampling). */
uint64_t rng_below(struct cs_rng *r, uint64_t n);
/* Uniform in [lo, hi] inclusive; lo > hi returns lo. */
int64_t rng_range(struct cs_rng *r, int64_t lo, int64_t hi);
/* Uniform double in [0, 1) with 53 random bits. */
double rng_double(struct cs_rng *r);
/* True with probability p (p <= 0 never, p >= 1 always). */
bool rng_chance(struct cs_rng *r, double p);
/* True with probability permille/1000. */
bool rng_permille(struct cs_rng *r, unsigned permille);
/* Standard normal deviate (Box-Muller, one value per call). */
double rng_gauss(struct cs_rng *r);

#endif
