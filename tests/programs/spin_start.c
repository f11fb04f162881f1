// SPDX-License-Identifier: MIT
/*
 * spin_start ROUNDS — a new thread released while its creator spins on
 * sched_yield for it. Each round main creates a worker and spins, calling
 * sched_yield, until the worker has started; the worker first calls
 * started() (the point to park it at: `--park-at started`), sets the
 * flag and returns; main joins it. Under `concsched sched --serial` with
 * the worker parked at started() and released a little later, the
 * released worker has to take the serial token from the spinning main;
 * on another vCPU it can wait seconds for it (docs/sched.md, "A released
 * thread behind a spinning token holder": open). Prints "rounds N max_us
 * M" (the longest round). A reproducer, in no test yet.
 */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_int running;

__attribute__((noinline)) void started(void)
{
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	started();
	atomic_store(&running, 1);
	return arg;
}

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1;
	long long t0, max = 0;
	pthread_t t;

	for (int i = 0; i < rounds; i++) {
		atomic_store(&running, 0);
		t0 = now_us();
		if (pthread_create(&t, NULL, worker, NULL))
			return 2;
		while (!atomic_load(&running))
			sched_yield();
		pthread_join(t, NULL);
		if (now_us() - t0 > max)
			max = now_us() - t0;
	}
	printf("rounds %d max_us %lld\n", rounds, max);
	return 0;
}
