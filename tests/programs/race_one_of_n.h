// SPDX-License-Identifier: MIT
/*
 * race_one_of_n.h — the body of race_one_of_10, race_one_of_20 and
 * race_one_of_100 (each defines HANDLERS, then includes this file).
 *
 * A server's HANDLERS request handlers each serve ROUNDS requests,
 * counting them in `served` under served_lock. One of them, the stats
 * handler (number HANDLERS / 2), then reports the hash table's geometry:
 * it reads `capacity` and then `mask` and asserts mask == capacity - 1.
 * The resizer, created after every handler, grows the table by storing
 * the new capacity and then the new mask, two plain stores with no lock.
 * The geometry is torn only for a reader whose two loads straddle one of
 * the resizer's stores (or whose loads the two stores straddle): only the
 * stats handler reads it, so the bug needs that one thread of HANDLERS to
 * interleave with the resizer's two accesses. The other handlers share
 * only `served`, under its lock. Natively the stores are adjacent
 * instructions and the stats handler has long finished when the resizer
 * starts, so a plain run practically always exits 0; a pause of the
 * resizer between its stores while the stats handler reads (or of the
 * stats handler between its loads while the resizer stores) aborts.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define ROUNDS	      2
#define STATS_HANDLER (HANDLERS / 2)

static pthread_mutex_t served_lock = PTHREAD_MUTEX_INITIALIZER;
static long served; /* under served_lock */

/* Invariant between resizes: mask == capacity - 1. No lock. */
volatile long capacity = 16, mask = 15;

__attribute__((noinline)) void resize_table(long new_capacity)
{
	capacity = new_capacity;
	mask = new_capacity - 1;
}

__attribute__((noinline)) void read_geometry(long *cap, long *msk)
{
	*cap = capacity;
	*msk = mask;
}

static void *handler(void *arg)
{
	long id = (long)arg, cap, msk;

	for (int r = 0; r < ROUNDS; r++) {
		pthread_mutex_lock(&served_lock);
		served++;
		pthread_mutex_unlock(&served_lock);
	}
	if (id != STATS_HANDLER)
		return NULL;
	read_geometry(&cap, &msk);
	if (msk != cap - 1)
		fprintf(stderr, "race_one_of_%d: torn geometry capacity=%ld mask=%ld\n", HANDLERS,
			cap, msk);
	assert(msk == cap - 1);
	return NULL;
}

static void *resizer(void *arg)
{
	resize_table(64);
	return arg;
}

int main(void)
{
	pthread_t h[HANDLERS], r;

	for (long i = 0; i < HANDLERS; i++)
		if (pthread_create(&h[i], NULL, handler, (void *)i))
			return 2;
	if (pthread_create(&r, NULL, resizer, NULL))
		return 2;
	for (int i = 0; i < HANDLERS; i++)
		pthread_join(h[i], NULL);
	pthread_join(r, NULL);
	if (served != HANDLERS * ROUNDS) {
		fprintf(stderr, "race_one_of_%d: served %ld, want %d\n", HANDLERS, served,
			HANDLERS * ROUNDS);
		return 1;
	}
	return 0;
}
