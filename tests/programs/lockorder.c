// SPDX-License-Identifier: MIT
/*
 * lockorder ROUNDS — two threads race for one mutex every round. A asks
 * first: it sets a flag and calls a_lock() at once; B waits for the flag,
 * spins 3 ms, then locks. Unperturbed, A wins every round. A scheduler
 * that parks A at a_lock() until B has finished hands the win to B: the
 * lock-order flip (KERNEL.md Q3). B unlocks through b_unlock() so a
 * release can be tied to that event. Prints "A-first N B-first M".
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t round_start, round_end;
static atomic_int a_asked;
static int first; /* 'A' or 'B', written under m */
static int rounds;

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

__attribute__((noinline)) void a_lock(pthread_mutex_t *mx)
{
	pthread_mutex_lock(mx);
}

/* B's unlock, a function of its own so a point can sit on it. */
__attribute__((noinline)) void b_unlock(pthread_mutex_t *mx)
{
	pthread_mutex_unlock(mx);
}

static void take(int who)
{
	if (!first)
		first = who;
}

static void *thread_a(void *arg)
{
	for (int i = 0; i < rounds; i++) {
		pthread_barrier_wait(&round_start);
		atomic_store(&a_asked, 1);
		a_lock(&m);
		take('A');
		pthread_mutex_unlock(&m);
		pthread_barrier_wait(&round_end);
	}
	return NULL;
}

static void *thread_b(void *arg)
{
	unsigned long long t;

	for (int i = 0; i < rounds; i++) {
		pthread_barrier_wait(&round_start);
		while (!atomic_load(&a_asked))
			;
		t = now_ns();
		while (now_ns() - t < 3000000ULL)
			;
		pthread_mutex_lock(&m);
		take('B');
		b_unlock(&m);
		pthread_barrier_wait(&round_end);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int a_first = 0, b_first = 0;
	pthread_t ta, tb;

	rounds = argc > 1 ? atoi(argv[1]) : 10;
	pthread_barrier_init(&round_start, NULL, 3);
	pthread_barrier_init(&round_end, NULL, 3);
	pthread_create(&ta, NULL, thread_a, NULL);
	pthread_create(&tb, NULL, thread_b, NULL);
	for (int i = 0; i < rounds; i++) {
		first = 0;
		atomic_store(&a_asked, 0);
		pthread_barrier_wait(&round_start);
		pthread_barrier_wait(&round_end);
		if (first == 'A')
			a_first++;
		else
			b_first++;
	}
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	printf("A-first %d B-first %d\n", a_first, b_first);
	return 0;
}
