// SPDX-License-Identifier: MIT
/*
 * bad_selfdeadlock — a self-deadlock on a default (non-recursive) mutex on
 * a rare path. Two workers each count themselves into `active`, take
 * table_lock, update the table, and when they see the other worker active
 * too (active == 2) call rebalance(), which takes table_lock again: the
 * caller already holds it, so the default mutex blocks it forever and the
 * other worker then blocks behind it (the program hangs). active reaches
 * 2 only when the two workers' enter..leave spans overlap, a few dozen
 * instructions each, while the second worker starts tens of microseconds
 * after the first: a plain run practically always exits 0. A pause at
 * the first worker's pthread_mutex_lock (or unlock) opens the window.
 *
 * main creates the second thread only once the first is running (the
 * first_running flag), so that a first thread the kernel happens to start
 * late does not run side by side with the second: plain runs stay apart.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

/* default type: not recursive */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static int active;		  /* __atomic */
static long table[2], rebalanced; /* under table_lock */

/* Meant for callers that do not hold table_lock. */
static void rebalance(void)
{
	pthread_mutex_lock(&table_lock); /* held already: hangs */
	table[0] = table[1] = (table[0] + table[1]) / 2;
	rebalanced++;
	pthread_mutex_unlock(&table_lock);
}

/* Set by the first thread when it starts; main creates the second after. */
static int first_running; /* __atomic */

static void *worker(void *arg)
{
	long id = (long)arg;

	__atomic_store_n(&first_running, 1, __ATOMIC_RELEASE);
	__atomic_add_fetch(&active, 1, __ATOMIC_RELAXED);
	pthread_mutex_lock(&table_lock);
	table[id] += 10;
	if (__atomic_load_n(&active, __ATOMIC_RELAXED) > 1) /* contended: the rare path */
		rebalance();
	pthread_mutex_unlock(&table_lock);
	__atomic_sub_fetch(&active, 1, __ATOMIC_RELAXED);
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	for (long i = 0; i < 2; i++) {
		pthread_create(&t[i], NULL, worker, (void *)i);
		if (i == 0)
			while (!__atomic_load_n(&first_running, __ATOMIC_ACQUIRE))
				sched_yield(); /* the second starts once the first runs */
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	printf("table %ld %ld rebalanced %ld\n", table[0], table[1], rebalanced);
	return 0;
}
