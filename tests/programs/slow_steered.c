// SPDX-License-Identifier: MIT
/*
 * Correct, and fast natively (a few ms), but slow under a strategy that
 * holds threads at their synchronization points: a worker takes a lock
 * 20 times while the main thread spins (sched_yield, no pthread call)
 * until the worker is done. A thread halted at a lock request until "every
 * other runnable thread is parked" waits for the scheduler's 1 s watchdog
 * each time, because the spinning main thread never parks: ~20 s steered.
 * Once steering stops the program ends at once. It must never be reported
 * as a hang (issue 13: "slow under steering").
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int done;
static int counter;

static void *worker(void *arg)
{
	for (int i = 0; i < 20; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	done = 1;
	return NULL;
}

int main(void)
{
	struct timespec t0, t;
	pthread_t th;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	pthread_create(&th, NULL, worker, NULL);
	while (!done) {
		sched_yield();
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 120) {
			fprintf(stderr, "slow_steered: gave up after 120 s\n");
			return 3;
		}
	}
	pthread_join(th, NULL);
	return counter == 20 ? 0 : 1;
}
