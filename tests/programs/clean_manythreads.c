// SPDX-License-Identifier: MIT
/*
 * clean_manythreads — THREADS (32) threads each do ROUNDS short critical
 * sections, round i of thread t on mutex (t + i) % LOCKS of LOCKS (4). In
 * each section the thread checks it is alone (inside[k] goes 0 -> 1 -> 0)
 * and bumps count[k]. At the end main checks every count[k] against the
 * number of sections that used lock k, and the grand total. No bug:
 * correct under every interleaving; exits 0, or 1 on a wrong count.
 */
#include <pthread.h>
#include <stdio.h>

#define THREADS 32
#define ROUNDS	50
#define LOCKS	4

static pthread_mutex_t lock[LOCKS] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
				       PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
static long count[LOCKS]; /* count[k] under lock[k] */
static int inside[LOCKS]; /* inside[k] under lock[k] */
static int overlap;	  /* __atomic */

static void *worker(void *arg)
{
	int id = (int)(long)arg, k;

	for (int i = 0; i < ROUNDS; i++) {
		k = (id + i) % LOCKS;
		pthread_mutex_lock(&lock[k]);
		if (inside[k]++ != 0)
			__atomic_store_n(&overlap, 1, __ATOMIC_RELAXED);
		count[k]++;
		if (--inside[k] != 0)
			__atomic_store_n(&overlap, 1, __ATOMIC_RELAXED);
		pthread_mutex_unlock(&lock[k]);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	long want[LOCKS] = { 0 }, sum = 0;
	int bad = 0;

	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int id = 0; id < THREADS; id++)
		for (int i = 0; i < ROUNDS; i++)
			want[(id + i) % LOCKS]++;
	for (int k = 0; k < LOCKS; k++) {
		sum += count[k];
		if (count[k] != want[k]) {
			fprintf(stderr, "clean_manythreads: lock %d count %ld, want %ld\n", k,
				count[k], want[k]);
			bad = 1;
		}
	}
	if (overlap || sum != THREADS * ROUNDS) {
		fprintf(stderr, "clean_manythreads: overlap %d total %ld\n", overlap, sum);
		bad = 1;
	}
	return bad;
}
