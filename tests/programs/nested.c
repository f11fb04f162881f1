// SPDX-License-Identifier: MIT
/*
 * Nested locking in opposite orders (a potential deadlock that this run
 * never hits): thread1 takes a then b, thread2 — strictly after thread1
 * finished — takes b then a. GoodLock has exactly two tasks, a->b and
 * b->a, which form the cycle a deadlock detector warns about.
 */
#include <pthread.h>
#include <unistd.h>

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t b = PTHREAD_MUTEX_INITIALIZER;
static int done1;

static void *thread1(void *arg)
{
	pthread_mutex_lock(&a);	  /* t1-outer */
	pthread_mutex_lock(&b);	  /* t1-inner */
	pthread_mutex_unlock(&b); /* t1-unlock-b */
	pthread_mutex_unlock(&a); /* t1-unlock-a */
	__atomic_store_n(&done1, 1, __ATOMIC_RELEASE);
	return arg;
}

static void *thread2(void *arg)
{
	while (!__atomic_load_n(&done1, __ATOMIC_ACQUIRE))
		usleep(1000);
	pthread_mutex_lock(&b);	  /* t2-outer */
	pthread_mutex_lock(&a);	  /* t2-inner */
	pthread_mutex_unlock(&a); /* t2-unlock-a */
	pthread_mutex_unlock(&b); /* t2-unlock-b */
	return arg;
}

int main(void)
{
	pthread_t t1, t2;

	pthread_create(&t1, NULL, thread1, NULL);
	pthread_create(&t2, NULL, thread2, NULL);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return 0;
}
