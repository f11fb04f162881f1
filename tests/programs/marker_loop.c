// SPDX-License-Identifier: MIT
/*
 * marker_loop CALLS [THREADS] [GAP_US] — every thread calls marker() CALLS
 * times, spinning GAP_US (default 200) microseconds between calls, and
 * reports how long the calls took: "calls N p50_us X max_us Y". A point on
 * marker() (park, delay, yield) is what the scheduler tests and benchmarks
 * measure; the program checks nothing itself.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static int calls, gap_us;
static long *durations;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

__attribute__((noinline)) void marker(int i)
{
	__asm__ volatile("" ::"r"(i) : "memory");
}

static void *worker(void *arg)
{
	long *d = arg;
	long long t;

	for (int i = 0; i < calls; i++) {
		t = now_ns();
		marker(i);
		d[i] = (long)(now_ns() - t);
		t = now_ns();
		while (now_ns() - t < gap_us * 1000LL)
			;
	}
	return NULL;
}

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int nthreads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t *t;
	long n;

	calls = argc > 1 ? atoi(argv[1]) : 10;
	gap_us = argc > 3 ? atoi(argv[3]) : 200;
	if (calls < 1 || nthreads < 1)
		return 2;
	durations = calloc((size_t)calls * nthreads, sizeof(*durations));
	t = calloc(nthreads, sizeof(*t));
	for (int i = 0; i < nthreads; i++)
		pthread_create(&t[i], NULL, worker, durations + (long)i * calls);
	for (int i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	n = (long)calls * nthreads;
	qsort(durations, n, sizeof(*durations), cmp_long);
	printf("calls %ld p50_us %ld max_us %ld\n", n, durations[n / 2] / 1000,
	       durations[n - 1] / 1000);
	return 0;
}
