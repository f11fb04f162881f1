// SPDX-License-Identifier: MIT
/*
 * clean_lockwrap — a portable lock wrapper with a debug-build owner check,
 * used by 4 threads in a loop. lw_lock() takes the mutex and records the
 * owner; lw_unlock() asserts that the caller is the recorded owner and that
 * pthread_mutex_trylock() on the mutex it holds fails with EBUSY (it really
 * is locked) before it unlocks. So every trylock in this program fails: a
 * tool that took a failed trylock for an acquisition, or let a second
 * thread into the section, would trip an assertion. No bug: correct under
 * every interleaving; exits 0, or 1 when the total is off.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS	200

struct lockwrap {
	pthread_mutex_t mutex;
	pthread_t owner;
	int held;
};

static struct lockwrap lw = { .mutex = PTHREAD_MUTEX_INITIALIZER };
static long total;

static void lw_lock(struct lockwrap *l)
{
	pthread_mutex_lock(&l->mutex);
	assert(!l->held);
	l->owner = pthread_self();
	l->held = 1;
}

static void lw_unlock(struct lockwrap *l)
{
	int rc;

	assert(l->held && pthread_equal(l->owner, pthread_self()));
	rc = pthread_mutex_trylock(&l->mutex); /* debug owner check: must be EBUSY */
	assert(rc == EBUSY);
	l->held = 0;
	pthread_mutex_unlock(&l->mutex);
}

static void *worker(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		lw_lock(&lw);
		total++;
		lw_unlock(&lw);
	}
	return arg;
}

int main(void)
{
	pthread_t t[THREADS];

	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	if (total != THREADS * ROUNDS) {
		fprintf(stderr, "clean_lockwrap: total %ld, want %d\n", total, THREADS * ROUNDS);
		return 1;
	}
	return 0;
}
