// SPDX-License-Identifier: MIT
/*
 * race_wrong_lock — a shared counter "protected" by the wrong lock: each
 * worker locks its own mutex around `hits++`, so the two workers never
 * exclude each other. hits is volatile, so the increment is a load, an
 * add and a store; a worker whose load and store straddle the other's
 * store loses an update, and main exits 1 when the final count is short.
 * Each worker does only ROUNDS increments and the second starts tens of
 * microseconds after the first, so a plain run practically always exits 0.
 * A pause between a worker's load and store of hits opens the window.
 *
 * main creates the second thread only once the first is running (the
 * first_running flag), so that a first thread the kernel happens to start
 * late does not run side by side with the second: plain runs stay apart.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#define ROUNDS 3

struct worker {
	pthread_t thread;
	pthread_mutex_t lock; /* BUG: one per worker, not one for hits */
};

volatile long hits;

__attribute__((noinline)) void hit(void)
{
	hits++;
}

/* Set by the first thread when it starts; main creates the second after. */
static int first_running; /* __atomic */

static void *work(void *arg)
{
	struct worker *w = arg;

	__atomic_store_n(&first_running, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&w->lock);
		hit();
		pthread_mutex_unlock(&w->lock);
	}
	return NULL;
}

int main(void)
{
	struct worker w[2];

	for (int i = 0; i < 2; i++) {
		pthread_mutex_init(&w[i].lock, NULL);
		pthread_create(&w[i].thread, NULL, work, &w[i]);
		if (i == 0)
			while (!__atomic_load_n(&first_running, __ATOMIC_ACQUIRE))
				sched_yield(); /* the second starts once the first runs */
	}
	for (int i = 0; i < 2; i++)
		pthread_join(w[i].thread, NULL);
	if (hits != 2 * ROUNDS) {
		fprintf(stderr, "race_wrong_lock: hits %ld, want %d\n", hits, 2 * ROUNDS);
		return 1;
	}
	return 0;
}
