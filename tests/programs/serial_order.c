// SPDX-License-Identifier: MIT
/*
 * serial_order N [WORK_US] — main starts N workers; each takes a ticket
 * when it first runs, then busy-works WORK_US (default 2000) microseconds
 * while checking whether another worker is working at the same time.
 * Prints "order 3,1,2,... overlap K": the order in which the workers
 * started and how many times two ran at once. Under serial mode overlap
 * must be 0 and the order follows the next-thread policy.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_int ticket, inside, overlap;
static int order[256], work_us;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	long long t;

	order[atomic_fetch_add(&ticket, 1)] = id;
	atomic_fetch_add(&inside, 1);
	t = now_ns();
	while (now_ns() - t < work_us * 1000LL)
		if (atomic_load(&inside) > 1) {
			atomic_fetch_add(&overlap, 1);
			break;
		}
	atomic_fetch_sub(&inside, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4;
	pthread_t t[256];

	work_us = argc > 2 ? atoi(argv[2]) : 2000;
	if (n < 1 || n > 256)
		return 2;
	for (int i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)(long)(i + 1));
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("order ");
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", order[i]);
	printf(" overlap %d\n", atomic_load(&overlap));
	return 0;
}
