// SPDX-License-Identifier: MIT
/* xoshiro256** seeded by splitmix64; see rng.h for why it exists. */
#include "lib/rng.h"

#include <math.h>

uint64_t rng_splitmix64(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_seed(struct cs_rng *r, uint64_t seed)
{
	uint64_t sm = seed;

	for (int i = 0; i < 4; i++)
		r->s[i] = rng_splitmix64(&sm);
}

uint64_t rng_derive(uint64_t seed, uint64_t stream)
{
	uint64_t sm = seed ^ (stream * 0xd1342543de82ef95ULL);

	/* Two rounds so that neighbouring (seed, stream) pairs diverge fully. */
	rng_splitmix64(&sm);
	return rng_splitmix64(&sm);
}

static inline uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct cs_rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t rng_below(struct cs_rng *r, uint64_t n)
{
	uint64_t x, limit;

	if (n == 0)
		return 0;
	/* Reject the top partial bucket so every residue is equally likely. */
	limit = UINT64_MAX - UINT64_MAX % n;
	do {
		x = rng_next(r);
	} while (x >= limit);
	return x % n;
}

int64_t rng_range(struct cs_rng *r, int64_t lo, int64_t hi)
{
	if (lo >= hi)
		return lo;
	return lo + (int64_t)rng_below(r, (uint64_t)hi - (uint64_t)lo + 1);
}

double rng_double(struct cs_rng *r)
{
	return (double)(rng_next(r) >> 11) * 0x1.0p-53;
}

bool rng_chance(struct cs_rng *r, double p)
{
	if (p <= 0)
		return false;
	if (p >= 1)
		return true;
	return rng_double(r) < p;
}

bool rng_permille(struct cs_rng *r, unsigned permille)
{
	if (permille == 0)
		return false;
	if (permille >= 1000)
		return true;
	return rng_below(r, 1000) < permille;
}

double rng_gauss(struct cs_rng *r)
{
	double u1, u2;

	do {
		u1 = rng_double(r);
	} while (u1 <= 0);
	u2 = rng_double(r);
	return sqrt(-2.0 * log(u1)) * cos(2.0 * M_PI * u2);
}
