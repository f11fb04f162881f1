// SPDX-License-Identifier: MIT
/*
 * A shared counter incremented by two threads, with or without a lock:
 *   counter racy [N]     each thread does `counter++` N times unprotected
 *                        (a data race: a race warning, not a failure)
 *   counter locked [N]   the same under one pthread mutex (no warning)
 * Either way it exits 0 (the racy one may lose increments; it prints the
 * total). The increments sit in noinline functions on a volatile global so
 * each one is a load and a store the access probes see.
 * tests/host/42-run-access.t.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

volatile long counter;
static pthread_mutex_t counter_lock = PTHREAD_MUTEX_INITIALIZER;
static long iterations = 50;
static int locked;

__attribute__((noinline)) void counter_inc(void)
{
	counter++;
}

static void *worker(void *arg)
{
	long i;

	(void)arg;
	for (i = 0; i < iterations; i++) {
		if (locked)
			pthread_mutex_lock(&counter_lock);
		counter_inc();
		if (locked)
			pthread_mutex_unlock(&counter_lock);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	int i;

	if (argc < 2 || (strcmp(argv[1], "racy") && strcmp(argv[1], "locked"))) {
		fprintf(stderr, "usage: counter racy|locked [N]\n");
		return 2;
	}
	locked = !strcmp(argv[1], "locked");
	if (argc > 2)
		iterations = atol(argv[2]);
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("counter %ld of %ld\n", counter, 2 * iterations);
	return 0;
}
