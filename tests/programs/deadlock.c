// SPDX-License-Identifier: MIT
/*
 * Lock-order inversion that always deadlocks: thread A takes first then
 * second, thread B second then first, and a barrier makes both hold their
 * first lock before asking for the other. The run oracle must report the
 * cycle (who holds which lock, taken where, waiting where) at the timeout.
 *   ./deadlock          never returns
 */
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t first = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t second = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both_hold;

static void *thread_a(void *arg)
{
	pthread_mutex_lock(&first);
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(&second);
	pthread_mutex_unlock(&second);
	pthread_mutex_unlock(&first);
	return arg;
}

static void *thread_b(void *arg)
{
	pthread_mutex_lock(&second);
	pthread_barrier_wait(&both_hold);
	pthread_mutex_lock(&first);
	pthread_mutex_unlock(&first);
	pthread_mutex_unlock(&second);
	return arg;
}

int main(void)
{
	pthread_t a, b;

	pthread_barrier_init(&both_hold, NULL, 2);
	pthread_create(&a, NULL, thread_a, NULL);
	pthread_create(&b, NULL, thread_b, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	puts("no deadlock");
	return 0;
}
