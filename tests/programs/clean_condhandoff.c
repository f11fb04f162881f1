// SPDX-License-Identifier: MIT
/*
 * clean_condhandoff — a producer hands ITEMS numbers one at a time to a
 * consumer through a one-slot buffer guarded by a mutex and two condition
 * variables. Both sides wait in a predicate loop (while, not if) under the
 * mutex and sleep a little now and then, so the hand-off happens both with
 * and without actual waiting. No bug: under every interleaving the
 * consumer gets 1..ITEMS in order; exits 0, or 1 on a wrong item.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

#define ITEMS 16

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static int slot, slot_full; /* under m */
static int bad;

static void *producer(void *arg)
{
	for (int i = 1; i <= ITEMS; i++) {
		if (i % 4 == 0)
			usleep(200);
		pthread_mutex_lock(&m);
		while (slot_full)
			pthread_cond_wait(&not_full, &m);
		slot = i;
		slot_full = 1;
		pthread_cond_signal(&not_empty);
		pthread_mutex_unlock(&m);
	}
	return arg;
}

static void *consumer(void *arg)
{
	int got;

	for (int want = 1; want <= ITEMS; want++) {
		if (want % 3 == 0)
			usleep(150);
		pthread_mutex_lock(&m);
		while (!slot_full)
			pthread_cond_wait(&not_empty, &m);
		got = slot;
		slot_full = 0;
		pthread_cond_signal(&not_full);
		pthread_mutex_unlock(&m);
		if (got != want) {
			fprintf(stderr, "clean_condhandoff: got %d, want %d\n", got, want);
			bad = 1;
		}
	}
	return arg;
}

int main(void)
{
	pthread_t p, c;

	pthread_create(&c, NULL, consumer, NULL);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	return bad;
}
