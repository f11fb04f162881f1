// SPDX-License-Identifier: MIT
/*
 * clean_barrier — THREADS threads go through PHASES phases separated by a
 * pthread barrier (two waits per phase). In phase p each thread writes p
 * into its own slot and counts itself into arrived[p]; after the first
 * wait every thread checks that all slots say p and that arrived[p] is
 * THREADS, and the one thread the barrier calls the serial thread counts
 * itself in serial[p]; after the second wait each checks serial[p] == 1.
 * No bug: the barrier orders it all under every interleaving; exits 0, or
 * aborts (assert) on a phase mix-up.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define PHASES	8

static pthread_barrier_t bar;
static int slot[THREADS];
static int arrived[PHASES]; /* __atomic increments */
static int serial[PHASES];  /* written by the serial thread only */

static void *worker(void *arg)
{
	int id = (int)(long)arg, r;

	for (int p = 0; p < PHASES; p++) {
		slot[id] = p;
		__atomic_add_fetch(&arrived[p], 1, __ATOMIC_RELAXED);
		r = pthread_barrier_wait(&bar);
		assert(r == 0 || r == PTHREAD_BARRIER_SERIAL_THREAD);
		for (int j = 0; j < THREADS; j++)
			assert(slot[j] == p);
		assert(__atomic_load_n(&arrived[p], __ATOMIC_RELAXED) == THREADS);
		if (r == PTHREAD_BARRIER_SERIAL_THREAD)
			serial[p]++;
		pthread_barrier_wait(&bar);
		assert(serial[p] == 1);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];

	pthread_barrier_init(&bar, NULL, THREADS);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int p = 0; p < PHASES; p++)
		if (arrived[p] != THREADS || serial[p] != 1) {
			fprintf(stderr, "clean_barrier: phase %d arrived %d serial %d\n", p,
				arrived[p], serial[p]);
			return 1;
		}
	return 0;
}
