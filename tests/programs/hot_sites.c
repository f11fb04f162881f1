// SPDX-License-Identifier: MIT
/*
 * hot_sites — many hot access sites, and one race after them: the probe
 * budget's target (tests/host/55-probe-budget.t). Two workers each read a
 * table they share through 32 load instructions of their own, ROUNDS times
 * (default 1500, under the default probe cap of 2000 hits a thread: the
 * cap alone closes none of those sites), and then each adds its sum to
 * `total` with no lock: a data race, one access each, after the hot loop.
 * Without the probe budget every one of the 96,000 loads is probed; with
 * it the hot sites close once the run's hits pass the budget, and the
 * race on total, which comes after, must still be seen. No bug makes it
 * fail: it always exits 0 (the race is a warning, not a failure).
 *
 *   hot_sites [ROUNDS]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTABLE 32

static volatile long table[NTABLE];
volatile long total;
static long rounds = 1500;

/* Four loads of the table, each its own instruction (table is volatile). */
#define LOAD4(i)                                                                                   \
	do {                                                                                       \
		s += table[i];                                                                     \
		s += table[i + 1];                                                                 \
		s += table[i + 2];                                                                 \
		s += table[i + 3];                                                                 \
	} while (0)

static void *worker(void *arg)
{
	long s = 0;

	for (long r = 0; r < rounds; r++) {
		LOAD4(0);
		LOAD4(4);
		LOAD4(8);
		LOAD4(12);
		LOAD4(16);
		LOAD4(20);
		LOAD4(24);
		LOAD4(28);
	}
	total = total + s; /* the race: no lock */
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t[2];

	if (argc > 1)
		rounds = atol(argv[1]);
	for (int i = 0; i < NTABLE; i++)
		table[i] = i;
	for (int i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("hot_sites: total %ld\n", total);
	return 0;
}
