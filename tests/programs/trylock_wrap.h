// SPDX-License-Identifier: MIT
/*
 * trylock_wrap.h — the body of race_trylock_wrap (BREAK_STUCK_LOCK 1) and
 * clean_trylock_wrap (BREAK_STUCK_LOCK 0): a lock wrapper built on
 * pthread_mutex_trylock, two workers, ROUNDS critical sections each. PROG
 * names the program in its messages.
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#define WORKERS 2
#define ROUNDS	3
#define TRIES	100

struct trylock {
	pthread_mutex_t mutex;
};

static struct trylock table_lock = { PTHREAD_MUTEX_INITIALIZER };
static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int inside; /* workers inside table_lock's sections */
static long entries;	    /* under table_lock */
static long stats_ops;	    /* under stats_lock */

static void tl_lock(struct trylock *l)
{
	for (int i = 0; i < TRIES; i++) {
		if (pthread_mutex_trylock(&l->mutex) == 0)
			return;
		sched_yield();
	}
#if BREAK_STUCK_LOCK
	/* BUG: the holder is taken to be stuck; go on as if we held the lock */
#else
	pthread_mutex_lock(&l->mutex); /* the holder is only slow: wait for it */
#endif
}

static void tl_unlock(struct trylock *l)
{
	pthread_mutex_unlock(&l->mutex);
}

/* A worker's own work before its sections: a digest of its batch, longer
 * for later workers (PREPARE_WORK iterations per id, no call), so that the
 * second worker's sections come long after the first's in a plain run. */
#define PREPARE_WORK (1UL << 23)
static volatile unsigned long batch_digest[WORKERS];

static void prepare_batch(long id)
{
	unsigned long digest = 0;

	for (unsigned long i = 0; i < id * PREPARE_WORK; i++)
		digest = digest * 31 + i;
	batch_digest[id] = digest;
}

/* Set by the first worker when it starts; main creates the second after. */
static int first_running; /* __atomic */

static void *worker(void *arg)
{
	long id = (long)arg;

	__atomic_store_n(&first_running, 1, __ATOMIC_RELEASE);
	prepare_batch(id);
	for (int r = 0; r < ROUNDS; r++) {
		tl_lock(&table_lock);
		inside++;
		if (inside != 1)
			fprintf(stderr, PROG ": worker %ld shares the section\n", id);
		assert(inside == 1);
		entries++;
		pthread_mutex_lock(&stats_lock);
		stats_ops++;
		pthread_mutex_unlock(&stats_lock);
		inside--;
		tl_unlock(&table_lock);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[WORKERS];

	for (long i = 0; i < WORKERS; i++) {
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 2;
		if (i == 0)
			while (!__atomic_load_n(&first_running, __ATOMIC_ACQUIRE))
				sched_yield(); /* the second starts once the first runs */
	}
	for (int i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	if (entries != WORKERS * ROUNDS || stats_ops != WORKERS * ROUNDS) {
		fprintf(stderr, PROG ": %ld entries, %ld stats, want %d\n", entries, stats_ops,
			WORKERS * ROUNDS);
		return 1;
	}
	return 0;
}
