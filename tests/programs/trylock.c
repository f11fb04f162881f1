// SPDX-License-Identifier: MIT
/*
 * A failing trylock: main holds m while the worker calls
 * pthread_mutex_trylock(&m) (EBUSY), then a succeeding one after main
 * released it. One trylock_fail event, and the failed attempt is not a
 * lock action (no SP pair mentions its site).
 */
#include <pthread.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int tried, released;

static void *worker(void *arg)
{
	if (pthread_mutex_trylock(&m) == 0) /* try-fail */
		pthread_mutex_unlock(&m);
	__atomic_store_n(&tried, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&released, __ATOMIC_ACQUIRE))
		usleep(1000);
	if (pthread_mutex_trylock(&m) == 0) /* try-ok */
		pthread_mutex_unlock(&m);
	return arg;
}

int main(void)
{
	pthread_t t;

	pthread_mutex_lock(&m); /* main-lock */
	pthread_create(&t, NULL, worker, NULL);
	while (!__atomic_load_n(&tried, __ATOMIC_ACQUIRE))
		usleep(1000);
	pthread_mutex_unlock(&m);
	__atomic_store_n(&released, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	return 0;
}
