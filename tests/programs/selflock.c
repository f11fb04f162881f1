// SPDX-License-Identifier: MIT
/*
 * selflock — a thread takes a default (non-recursive) mutex it already
 * holds: it blocks forever, a deadlock whose wait-for cycle is the thread
 * alone. No lock call of another thread is involved, so nothing marks the
 * second request as blocked except that its own thread holds the lock
 * (tests/host/40-run.t: a deadlock, also under a strategy with no
 * synchronization points).
 *   ./selflock          never returns
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *worker(void *arg)
{
	pthread_mutex_lock(&m);
	pthread_mutex_lock(&m); /* held already: blocks forever */
	pthread_mutex_unlock(&m);
	return arg;
}

int main(void)
{
	pthread_t t;

	pthread_create(&t, NULL, worker, NULL);
	pthread_join(t, NULL);
	puts("unreachable");
	return 0;
}
