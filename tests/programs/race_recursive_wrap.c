// SPDX-License-Identifier: MIT
/*
 * race_recursive_wrap — a re-entrant lock wrapper built on a
 * PTHREAD_MUTEX_RECURSIVE mutex whose unlock clears the owner too late.
 * rl_lock() takes the mutex, counts the depth and, on a first
 * acquisition, records the owner;
 * rl_held() says whether the caller owns the lock (helpers assert it, as
 * "must be called with the lock held"); rl_unlock() drops the depth and,
 * when it reaches 0, unlocks the mutex and only then clears `owned` (the
 * bug: the clear belongs before the unlock). Each worker runs ROUNDS
 * sections: it takes the lock, then calls table_insert(), which takes it
 * again (re-entry) and asserts rl_held(). A worker that gets the mutex
 * between the other's unlock and its clear of `owned`, and checks after
 * that clear, finds the lock it holds marked free and aborts: the second
 * worker must be waiting for the mutex when the first unlocks, take it
 * before the first's clear, and check (after its re-entry, a pthread_mutex_lock
 * call) after it.
 * Natively the clear follows the unlock by a few instructions, and the
 * second worker starts tens of microseconds after the first has finished
 * its few sections: a plain run practically always exits 0.
 *
 * main creates the second worker only once the first is running (the
 * first_running flag), so that a first worker the kernel happens to start
 * late does not run side by side with the second: plain runs stay apart.
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#define WORKERS 2
#define ROUNDS	3

struct rlock {
	pthread_mutex_t mutex; /* PTHREAD_MUTEX_RECURSIVE */
	pthread_t owner;       /* valid while owned */
	volatile int owned;
	int depth; /* under mutex */
};

static struct rlock table_lock;
static long table[WORKERS * ROUNDS]; /* under table_lock */
static long inserted;		     /* under table_lock */

static int rl_init(struct rlock *l)
{
	pthread_mutexattr_t a;
	int rc;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	rc = pthread_mutex_init(&l->mutex, &a);
	pthread_mutexattr_destroy(&a);
	return rc;
}

static void rl_lock(struct rlock *l)
{
	pthread_mutex_lock(&l->mutex);
	if (l->depth++ == 0) { /* a first acquisition: record the owner */
		l->owner = pthread_self();
		l->owned = 1;
	}
}

static int rl_held(struct rlock *l)
{
	return l->owned && pthread_equal(l->owner, pthread_self());
}

__attribute__((noinline)) static void rl_unlock(struct rlock *l)
{
	int depth = --l->depth;

	pthread_mutex_unlock(&l->mutex);
	if (depth == 0)
		l->owned = 0; /* BUG: after the unlock, the next owner may have set it */
}

/* Must be called with table_lock held; takes it again (re-entry). */
static void table_insert(long key)
{
	rl_lock(&table_lock);
	if (!rl_held(&table_lock))
		fprintf(stderr, "race_recursive_wrap: table_lock held but marked free\n");
	assert(rl_held(&table_lock));
	table[inserted++] = key;
	rl_unlock(&table_lock);
}

/* Set by the first worker when it starts; main creates the second after. */
static int first_running; /* __atomic */

static void *worker(void *arg)
{
	long id = (long)arg;

	__atomic_store_n(&first_running, 1, __ATOMIC_RELEASE);
	for (int r = 0; r < ROUNDS; r++) {
		rl_lock(&table_lock);
		table_insert(id * ROUNDS + r);
		rl_unlock(&table_lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[WORKERS];

	if (rl_init(&table_lock))
		return 2;
	for (long i = 0; i < WORKERS; i++) {
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 2;
		if (i == 0)
			while (!__atomic_load_n(&first_running, __ATOMIC_ACQUIRE))
				sched_yield(); /* the second starts once the first runs */
	}
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	if (inserted != WORKERS * ROUNDS) {
		fprintf(stderr, "race_recursive_wrap: %ld inserted, want %d\n", inserted,
			WORKERS * ROUNDS);
		return 1;
	}
	return 0;
}
