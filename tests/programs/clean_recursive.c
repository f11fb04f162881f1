// SPDX-License-Identifier: MIT
/*
 * clean_recursive — a PTHREAD_MUTEX_RECURSIVE mutex taken re-entrantly:
 * THREADS threads each call nest(DEPTH) ROUNDS times; nest() locks the
 * mutex and recurses, so a thread holds it DEPTH times over, and at the
 * innermost level a trylock must succeed (a recursive mutex lets its
 * owner in again). Under the mutex the thread checks it is the holder and
 * that the shared nesting depth matches its own recursion level. No bug:
 * correct under every interleaving; exits 0, or aborts (assert) / exits 1.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define THREADS 4
#define ROUNDS	50
#define DEPTH	3

static pthread_mutex_t rm;
static pthread_t holder; /* under rm */
static int depth;	 /* under rm */
static long entries;	 /* under rm */

static void nest(int level)
{
	pthread_mutex_lock(&rm);
	if (depth == 0)
		holder = pthread_self();
	assert(pthread_equal(holder, pthread_self()));
	assert(depth == DEPTH - level);
	depth++;
	entries++;
	if (level > 1) {
		nest(level - 1);
	} else {
		int rc = pthread_mutex_trylock(&rm); /* re-entry by the owner: 0 */

		assert(rc == 0);
		pthread_mutex_unlock(&rm);
	}
	assert(depth == DEPTH - level + 1 && pthread_equal(holder, pthread_self()));
	depth--;
	pthread_mutex_unlock(&rm);
}

static void *worker(void *arg)
{
	for (int i = 0; i < ROUNDS; i++)
		nest(DEPTH);
	return arg;
}

int main(void)
{
	pthread_mutexattr_t attr;
	pthread_t t[THREADS];

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rm, &attr);
	pthread_mutexattr_destroy(&attr);
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	if (entries != THREADS * ROUNDS * DEPTH || depth != 0) {
		fprintf(stderr, "clean_recursive: entries %ld depth %d\n", entries, depth);
		return 1;
	}
	return 0;
}
