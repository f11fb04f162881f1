// SPDX-License-Identifier: MIT
/*
 * clean_spinflag — each round the setter writes a payload inside a
 * lock-protected section, then publishes the round number in an atomic
 * flag (__atomic release store). The spinner spin-waits on the flag with
 * sched_yield() (acquire loads), checks the payload both directly and under
 * the lock, and acknowledges through a second flag the setter spins on
 * before the next round. No bug: the release/acquire pairs order the
 * payload before the flag under every interleaving; exits 0, or 1 when the
 * spinner saw a stale payload.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

#define ROUNDS 10

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long payload_a, payload_b; /* written under m */
static int ready, acked;	  /* __atomic only */
static int bad;

static void *setter(void *arg)
{
	for (int r = 1; r <= ROUNDS; r++) {
		pthread_mutex_lock(&m);
		payload_a = r;
		payload_b = 2L * r;
		pthread_mutex_unlock(&m);
		__atomic_store_n(&ready, r, __ATOMIC_RELEASE);
		while (__atomic_load_n(&acked, __ATOMIC_ACQUIRE) != r)
			sched_yield();
	}
	return arg;
}

static void *spinner(void *arg)
{
	long a, b;

	for (int r = 1; r <= ROUNDS; r++) {
		while (__atomic_load_n(&ready, __ATOMIC_ACQUIRE) != r)
			sched_yield();
		a = payload_a;
		b = payload_b;
		pthread_mutex_lock(&m);
		if (a != r || b != 2L * r || payload_a != r || payload_b != 2L * r) {
			fprintf(stderr, "clean_spinflag: round %d saw %ld %ld\n", r, a, b);
			bad = 1;
		}
		pthread_mutex_unlock(&m);
		__atomic_store_n(&acked, r, __ATOMIC_RELEASE);
	}
	return arg;
}

int main(void)
{
	pthread_t s, w;

	pthread_create(&w, NULL, spinner, NULL);
	pthread_create(&s, NULL, setter, NULL);
	pthread_join(s, NULL);
	pthread_join(w, NULL);
	return bad;
}
