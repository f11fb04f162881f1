// SPDX-License-Identifier: MIT
/*
 * lock_heavy — THREADS (8) threads each do ROUNDS (3000) rounds of
 * pthread_mutex_lock / unlock on a shared mutex and a
 * pthread_mutex_trylock (unlock when taken) on a second one, counting under
 * each lock. A correct program: main checks both counts and exits 0, or 1
 * on a wrong count. The per-event cost benchmark (tools/bench/
 * observe_cost.sh, issue 18): `concsched observe` against Helgrind on it.
 *   lock_heavy [THREADS [ROUNDS]]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER, side = PTHREAD_MUTEX_INITIALIZER;
static long count;	/* under lock */
static long side_count; /* under side */
static long rounds = 3000;

static void *worker(void *arg)
{
	long i, tried = 0;

	for (i = 0; i < rounds; i++) {
		pthread_mutex_lock(&lock);
		count++;
		pthread_mutex_unlock(&lock);
		if (pthread_mutex_trylock(&side) == 0) {
			side_count++;
			pthread_mutex_unlock(&side);
			tried++;
		}
	}
	return (void *)tried;
}

int main(int argc, char **argv)
{
	long threads = argc > 1 ? atol(argv[1]) : 8, taken = 0, i;
	pthread_t *t;

	if (argc > 2)
		rounds = atol(argv[2]);
	if (threads < 1 || threads > 1024 || rounds < 1) {
		fprintf(stderr, "usage: lock_heavy [THREADS (1-1024) [ROUNDS]]\n");
		return 2;
	}
	t = calloc((size_t)threads, sizeof(*t));
	if (!t)
		return 2;
	for (i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < threads; i++) {
		void *r;

		pthread_join(t[i], &r);
		taken += (long)r;
	}
	free(t);
	printf("count %ld side %ld\n", count, side_count);
	return count == threads * rounds && side_count == taken ? 0 : 1;
}
