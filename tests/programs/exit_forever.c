// SPDX-License-Identifier: MIT
/*
 * exit_forever — main returns while its worker takes and drops a lock in
 * an endless loop: the worker never stops on its own, so a strategy that
 * holds the end of the process back until the other threads are done
 * would wait for ever. The scheduler's watchdog lets every park go within
 * its bound (1 s), so each steered run still ends. Correct: exits 0.
 */
#include <pthread.h>

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static long count; /* under count_lock */

static void *worker(void *arg)
{
	for (;;) {
		pthread_mutex_lock(&count_lock);
		count++;
		pthread_mutex_unlock(&count_lock);
	}
	return arg;
}

int main(void)
{
	pthread_t w;

	if (pthread_create(&w, NULL, worker, NULL))
		return 2;
	return 0;
}
