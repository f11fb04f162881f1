// SPDX-License-Identifier: MIT
/*
 * Figure 2 of seed 000: two threads, each takes lock m twice. The order is
 * forced without any extra synchronization call (an atomic flag and a
 * sleep), so one run always shows the same lock sequence
 * 2a 4a 2b 4b and exactly the SP pairs <2a,4a> <4a,2b> <2b,4b>.
 * The tests find lines by the markers in the comments (2a, create1, ...).
 */
#include <pthread.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static int done1, done2;

static void *thread1(void *arg)
{
	pthread_mutex_lock(&m);	  /* 2a */
	pthread_mutex_unlock(&m); /* 3a */
	pthread_mutex_lock(&m);	  /* 4a */
	pthread_mutex_unlock(&m); /* 5a */
	__atomic_store_n(&done1, 1, __ATOMIC_RELEASE);
	return arg;
}

static void *thread2(void *arg)
{
	while (!__atomic_load_n(&done1, __ATOMIC_ACQUIRE))
		usleep(1000);
	pthread_mutex_lock(&m);	  /* 2b */
	pthread_mutex_unlock(&m); /* 3b */
	pthread_mutex_lock(&m);	  /* 4b */
	pthread_mutex_unlock(&m); /* 5b */
	__atomic_store_n(&done2, 1, __ATOMIC_RELEASE);
	return arg;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, thread1, NULL); /* create1 */
	pthread_create(&b, NULL, thread2, NULL); /* create2 */
	while (!__atomic_load_n(&done2, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(50000);	       /* both threads have exited: the joins never block */
	pthread_join(a, NULL); /* join1 */
	pthread_join(b, NULL); /* join2 */
	return 0;
}
