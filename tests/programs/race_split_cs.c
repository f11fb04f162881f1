// SPDX-License-Identifier: MIT
/*
 * race_split_cs — an update split over two critical sections of one lock
 * (an atomicity violation). The mover moves 50 from checking to savings:
 * it debits checking under `lock`, unlocks, and credits savings under
 * `lock` again. The auditor reads both under `lock` and asserts the total
 * is 100. An auditor that gets the lock between the mover's two sections
 * sees 50 missing and aborts. That gap is one unlock and one lock call,
 * and the auditor starts tens of microseconds after the mover, so a plain
 * run practically always exits 0. A pause at the mover's second
 * pthread_mutex_lock opens it.
 *
 * main creates the second thread only once the first is running (the
 * first_running flag), so that a first thread the kernel happens to start
 * late does not run side by side with the second: plain runs stay apart.
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long checking = 100, savings; /* under lock; sum 100 */

/* Set by the first thread when it starts; main creates the second after. */
static int first_running; /* __atomic */

static void *mover(void *arg)
{
	__atomic_store_n(&first_running, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&lock);
	checking -= 50;
	pthread_mutex_unlock(&lock);
	/* BUG: the state is inconsistent here, yet the lock is free */
	pthread_mutex_lock(&lock);
	savings += 50;
	pthread_mutex_unlock(&lock);
	return arg;
}

static void *auditor(void *arg)
{
	long total;

	pthread_mutex_lock(&lock);
	total = checking + savings;
	pthread_mutex_unlock(&lock);
	if (total != 100)
		fprintf(stderr, "race_split_cs: total %ld, want 100\n", total);
	assert(total == 100);
	return arg;
}

int main(void)
{
	pthread_t m, a;

	pthread_create(&m, NULL, mover, NULL);
	while (!__atomic_load_n(&first_running, __ATOMIC_ACQUIRE))
		sched_yield(); /* the second thread starts once the first runs */
	pthread_create(&a, NULL, auditor, NULL);
	pthread_join(m, NULL);
	pthread_join(a, NULL);
	return 0;
}
