// SPDX-License-Identifier: MIT
/*
 * race_no_lock — a lost update with no lock at all. Two workers each add
 * 1 to a shared global ROUNDS times by reading it, computing the sum and
 * writing it back (counter is volatile: a separate load and store). If one
 * worker's load and store straddle the other's store, an increment is
 * lost and main exits 1. Each worker does only a few increments and the
 * second starts tens of microseconds after the first has finished them,
 * so a plain run practically always exits 0. A pause between a worker's
 * load and store of counter opens the window.
 *
 * main creates the second thread only once the first is running (the
 * first_running flag), so that a first thread the kernel happens to start
 * late does not run side by side with the second: plain runs stay apart.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#define ROUNDS 4

volatile long counter;

__attribute__((noinline)) void increment(void)
{
	long v = counter; /* read */

	counter = v + 1; /* compute, write */
}

/* Set by the first thread when it starts; main creates the second after. */
static int first_running; /* __atomic */

static void *worker(void *arg)
{
	__atomic_store_n(&first_running, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < ROUNDS; i++)
		increment();
	return arg;
}

int main(void)
{
	pthread_t t[2];

	for (int i = 0; i < 2; i++) {
		pthread_create(&t[i], NULL, worker, NULL);
		if (i == 0)
			while (!__atomic_load_n(&first_running, __ATOMIC_ACQUIRE))
				sched_yield(); /* the second starts once the first runs */
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (counter != 2 * ROUNDS) {
		fprintf(stderr, "race_no_lock: counter %ld, want %d\n", counter, 2 * ROUNDS);
		return 1;
	}
	return 0;
}
