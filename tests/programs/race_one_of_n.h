// SPDX-License-Identifier: MIT
/*
 * race_one_of_n.h — the body of race_one_of_10, race_one_of_20 and
 * race_one_of_100 (each defines HANDLERS, then includes this file).
 *
 * A server's HANDLERS request handlers each serve ROUNDS requests,
 * counting them in `served` under served_lock. One of them, the stats
 * handler (number HANDLERS / 2), first reports the hash table's geometry:
 * it reads `capacity` and then `mask` and asserts mask == capacity - 1.
 * The resizer, created after every handler, grows the table by storing
 * the new capacity and then the new mask, two plain stores with no lock.
 * The geometry is torn only for a reader whose two loads straddle one of
 * the resizer's stores (or whose loads the two stores straddle): only the
 * stats handler reads it, so the bug needs that one thread of HANDLERS to
 * interleave with the resizer's two accesses. The other handlers share
 * only `served`, under its lock. Natively the stats handler reads the
 * geometry as soon as it starts, and the resizer starts after main has
 * created the HANDLERS / 2 handlers that follow: a plain run practically
 * always exits 0. A pause of the stats handler between its loads while the
 * resizer stores (or of the resizer between its stores while the stats
 * handler reads) aborts.
 *
 * main creates the handlers after the stats handler only once the stats
 * handler is running (the stats_running flag), so that a stats handler the
 * kernel happens to start late does not run side by side with the
 * resizer: plain runs stay apart (without it, 1 of 19 plain runs of
 * race_one_of_20 failed in the VM, where TCG runs the two vCPUs in turns).
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
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

/* Set by the stats handler when it starts; main creates the rest after. */
static int stats_running; /* __atomic */

static void report_geometry(void)
{
	long cap, msk;

	__atomic_store_n(&stats_running, 1, __ATOMIC_RELEASE);
	read_geometry(&cap, &msk);
	if (msk != cap - 1)
		fprintf(stderr, "race_one_of_%d: torn geometry capacity=%ld mask=%ld\n", HANDLERS,
			cap, msk);
	assert(msk == cap - 1);
}

static void *handler(void *arg)
{
	long id = (long)arg;

	if (id == STATS_HANDLER)
		report_geometry();
	for (int r = 0; r < ROUNDS; r++) {
		pthread_mutex_lock(&served_lock);
		served++;
		pthread_mutex_unlock(&served_lock);
	}
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

	for (long i = 0; i < HANDLERS; i++) {
		if (pthread_create(&h[i], NULL, handler, (void *)i))
			return 2;
		if (i == STATS_HANDLER)
			while (!__atomic_load_n(&stats_running, __ATOMIC_ACQUIRE))
				sched_yield(); /* the rest start once the stats handler runs */
	}
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
