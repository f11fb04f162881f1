// SPDX-License-Identifier: MIT
/*
 * Condition-variable handoff: the consumer waits for `ready`; the producer
 * can only take the mutex once the consumer sits in pthread_cond_wait
 * (the consumer holds it until then), then sets ready and signals. So the
 * signal always wakes the waiter: HBPair has exactly one signal->wakeup
 * task (signal site -> wait site).
 */
#include <pthread.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
static int ready, waiting;

static void *consumer(void *arg)
{
	pthread_mutex_lock(&m); /* consumer-lock */
	__atomic_store_n(&waiting, 1, __ATOMIC_RELEASE);
	while (!ready)
		pthread_cond_wait(&c, &m); /* wait */
	pthread_mutex_unlock(&m);	   /* consumer-unlock */
	return arg;
}

static void *producer(void *arg)
{
	while (!__atomic_load_n(&waiting, __ATOMIC_ACQUIRE))
		usleep(1000);
	usleep(20000);		/* the consumer is in cond_wait by now */
	pthread_mutex_lock(&m); /* producer-lock */
	ready = 1;
	pthread_cond_signal(&c);  /* signal */
	pthread_mutex_unlock(&m); /* producer-unlock */
	return arg;
}

int main(void)
{
	pthread_t p, q;

	pthread_create(&p, NULL, consumer, NULL);
	pthread_create(&q, NULL, producer, NULL);
	pthread_join(p, NULL);
	pthread_join(q, NULL);
	return 0;
}
