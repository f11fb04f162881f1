// SPDX-License-Identifier: MIT
/*
 * bad_lostwakeup — a lost wake-up. The waiter checks the `ready` flag
 * without holding the mutex and, seeing it clear, locks the mutex and
 * waits on the condition variable once (no predicate re-check under the
 * lock). The signaler sets `ready` and signals under the mutex. If the
 * signaler runs between the waiter's unlocked check and its
 * pthread_cond_wait(), the signal reaches nobody and the waiter sleeps
 * forever (the program hangs). The window is the waiter's check plus one
 * uncontended pthread_mutex_lock, while the signaler starts tens of
 * microseconds after the waiter: a plain run practically always exits 0.
 * A pause at the waiter's pthread_mutex_lock opens it.
 *
 * main creates the second thread only once the first is running (the
 * first_running flag), so that a first thread the kernel happens to start
 * late does not run side by side with the second: plain runs stay apart.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static volatile int ready;

/* Set by the first thread when it starts; main creates the second after. */
static int first_running; /* __atomic */

static void *waiter(void *arg)
{
	__atomic_store_n(&first_running, 1, __ATOMIC_RELEASE);
	if (!ready) { /* BUG: checked without m, not re-checked under it */
		pthread_mutex_lock(&m);
		pthread_cond_wait(&cv, &m);
		pthread_mutex_unlock(&m);
	}
	return arg;
}

static void *signaler(void *arg)
{
	pthread_mutex_lock(&m);
	ready = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&m);
	return arg;
}

int main(void)
{
	pthread_t w, s;

	pthread_create(&w, NULL, waiter, NULL);
	while (!__atomic_load_n(&first_running, __ATOMIC_ACQUIRE))
		sched_yield(); /* the second thread starts once the first runs */
	pthread_create(&s, NULL, signaler, NULL);
	pthread_join(w, NULL);
	pthread_join(s, NULL);
	puts("woken");
	return 0;
}
