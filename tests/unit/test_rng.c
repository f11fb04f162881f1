// SPDX-License-Identifier: MIT
/* rng.c: known answers (the stream must never change: replays depend on
 * it), ranges, and rough distribution checks with a fixed seed. */
#include <math.h>

#include "lib/rng.h"
#include "tap.h"

int main(void)
{
	struct cs_rng r = { { 1, 2, 3, 4 } }, a, b;
	uint64_t sm = 0, first, second;
	int out = 0, counts[7] = { 0 }, flat = 1, differ = 0;
	double sum = 0, sum2 = 0;

	tap_plan(9);
	tap_ok(rng_splitmix64(&sm) == 0xe220a8397b1dcdafULL,
	       "splitmix64 from state 0 gives the reference first value");
	first = rng_next(&r);
	second = rng_next(&r);
	tap_ok(first == 11520 && second == 0,
	       "xoshiro256** from {1,2,3,4} gives the reference 11520, 0");

	rng_seed(&a, 42);
	rng_seed(&b, 42);
	for (int i = 0; i < 1000; i++)
		differ += rng_next(&a) != rng_next(&b);
	tap_is_int(differ, 0, "same seed, same stream");
	tap_ok(rng_derive(7, 0) != rng_derive(7, 1) && rng_derive(7, 1) != rng_derive(8, 1) &&
		       rng_derive(7, 1) == rng_derive(7, 1),
	       "derived run seeds differ per stream and per campaign seed, and repeat");

	rng_seed(&r, 1);
	for (int i = 0; i < 70000; i++) {
		uint64_t x = rng_below(&r, 7);
		int64_t y = rng_range(&r, -3, 3);

		out += x >= 7 || y < -3 || y > 3;
		counts[x]++;
	}
	for (int k = 0; k < 7; k++)
		flat &= counts[k] > 9500 && counts[k] < 10500;
	tap_is_int(out, 0, "below() and range() stay in bounds");
	tap_ok(flat, "below(7) is flat");
	tap_ok(rng_below(&r, 0) == 0 && rng_range(&r, 5, 5) == 5 && !rng_chance(&r, 0) &&
		       rng_chance(&r, 1) && !rng_permille(&r, 0) && rng_permille(&r, 1000),
	       "degenerate bounds and probabilities");
	for (int i = 0; i < 100000; i++) {
		double g = rng_gauss(&r);

		sum += g;
		sum2 += g * g;
	}
	tap_ok(fabs(sum / 1e5) < 0.02 && fabs(sqrt(sum2 / 1e5) - 1) < 0.02, "gauss: mean 0, sd 1");
	out = 0;
	for (int i = 0; i < 100000; i++) {
		double d = rng_double(&r);

		out += d < 0 || d >= 1;
	}
	tap_is_int(out, 0, "double() is in [0, 1)");
	return tap_done();
}
