// SPDX-License-Identifier: MIT
/*
 * serial_order N [WORK_US [MAIN_US]] — main starts N workers, busy-working
 * MAIN_US (default 0) microseconds after each start; each worker takes a
 * ticket when it first runs, then busy-works WORK_US (default 2000)
 * microseconds while checking whether another worker is working at the
 * same time. Prints "order 3,1,2,... overlap K early E": the order in
 * which the workers started, how many times two ran at once, and how many
 * workers started before main had started them all. Under serial mode
 * overlap must be 0 and the order follows the next-thread policy; under
 * serial FIFO with a slice longer than main's work, early must be 0 (main
 * holds the token until it waits for the workers).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_int ticket, inside, overlap, started_all, early;
static int order[256], work_us;

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void spin_us(int us)
{
	long long t = now_ns();

	while (now_ns() - t < us * 1000LL)
		;
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	long long t;

	order[atomic_fetch_add(&ticket, 1)] = id;
	if (!atomic_load(&started_all))
		atomic_fetch_add(&early, 1);
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
	int main_us = argc > 3 ? atoi(argv[3]) : 0;
	pthread_t t[256];

	work_us = argc > 2 ? atoi(argv[2]) : 2000;
	if (n < 1 || n > 256)
		return 2;
	for (int i = 0; i < n; i++) {
		pthread_create(&t[i], NULL, worker, (void *)(long)(i + 1));
		spin_us(main_us);
	}
	atomic_store(&started_all, 1);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	printf("order ");
	for (int i = 0; i < n; i++)
		printf("%s%d", i ? "," : "", order[i]);
	printf(" overlap %d early %d\n", atomic_load(&overlap), atomic_load(&early));
	return 0;
}
