// SPDX-License-Identifier: MIT
/*
 * clean_rwlock — WRITERS threads move amounts between ACCOUNTS balances
 * under the write lock of a pthread rwlock, keeping their sum at TOTAL;
 * READERS threads add up the balances under the read lock and check the
 * sum. A writer also checks that no reader is inside (readers count
 * themselves in and out atomically) and readers check that no writer is
 * (the writer raises a flag while it holds the lock). No bug: correct
 * under every interleaving; exits 0, or aborts (assert) / exits 1.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define ACCOUNTS 4
#define TOTAL	 400
#define WRITERS	 2
#define READERS	 3
#define ROUNDS	 100

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static long balance[ACCOUNTS] = { 100, 100, 100, 100 };
static int writing;    /* under the write lock */
static int readers_in; /* __atomic */

static void *writer(void *arg)
{
	int id = (int)(long)arg, from, to;

	for (int i = 0; i < ROUNDS; i++) {
		from = (id + i) % ACCOUNTS;
		to = (id + 3 * i + 1) % ACCOUNTS;
		pthread_rwlock_wrlock(&rw);
		assert(__atomic_load_n(&readers_in, __ATOMIC_RELAXED) == 0 && !writing);
		writing = 1;
		balance[from] -= i % 7 + 1;
		balance[to] += i % 7 + 1;
		writing = 0;
		pthread_rwlock_unlock(&rw);
	}
	return NULL;
}

static void *reader(void *arg)
{
	long sum;

	for (int i = 0; i < ROUNDS; i++) {
		pthread_rwlock_rdlock(&rw);
		__atomic_add_fetch(&readers_in, 1, __ATOMIC_RELAXED);
		assert(!writing);
		sum = 0;
		for (int k = 0; k < ACCOUNTS; k++)
			sum += balance[k];
		assert(sum == TOTAL);
		__atomic_sub_fetch(&readers_in, 1, __ATOMIC_RELAXED);
		pthread_rwlock_unlock(&rw);
	}
	return arg;
}

int main(void)
{
	pthread_t w[WRITERS], r[READERS];
	long sum = 0;

	for (long i = 0; i < WRITERS; i++)
		pthread_create(&w[i], NULL, writer, (void *)i);
	for (int i = 0; i < READERS; i++)
		pthread_create(&r[i], NULL, reader, NULL);
	for (int i = 0; i < WRITERS; i++)
		pthread_join(w[i], NULL);
	for (int i = 0; i < READERS; i++)
		pthread_join(r[i], NULL);
	for (int k = 0; k < ACCOUNTS; k++)
		sum += balance[k];
	if (sum != TOTAL) {
		fprintf(stderr, "clean_rwlock: sum %ld, want %d\n", sum, TOTAL);
		return 1;
	}
	return 0;
}
