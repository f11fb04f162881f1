// SPDX-License-Identifier: MIT
/*
 * threads N [ITERS] — N threads (default 4) each add ITERS (default 20000)
 * times to a mutex-protected counter; all are joined and the total is
 * checked. Exit 0 when the total is N*ITERS. The scheduler's load tests
 * run it (64 threads included).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long total;
static int iters;

static void *worker(void *arg)
{
	for (int i = 0; i < iters; i++) {
		pthread_mutex_lock(&m);
		total++;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t *t;

	iters = argc > 2 ? atoi(argv[2]) : 20000;
	if (n < 1 || iters < 0)
		return 2;
	t = calloc(n, sizeof(*t));
	for (int i = 0; i < n; i++)
		if (pthread_create(&t[i], NULL, worker, NULL))
			return 3;
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("threads %d total %ld\n", n, total);
	return total == (long)n * iters ? 0 : 1;
}
