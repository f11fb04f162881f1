// SPDX-License-Identifier: MIT
/*
 * race_torn_pair — a torn update of a pair. The writer sets the pair
 * (x, y) from (0, 0) to (1, 1) with two plain stores; the reader, with no
 * lock, loads x and then y and asserts x == y. Only a reader whose two
 * loads straddle one of the writer's stores sees the pair half updated
 * and aborts; the stores are adjacent instructions and the loads nearly
 * so, and the reader starts tens of microseconds after the writer, so a
 * plain run practically always exits 0. A pause of the writer between
 * its stores (or of the reader between its loads) opens the window.
 *
 * main creates the second thread only once the first is running (the
 * first_running flag), so that a first thread the kernel happens to start
 * late does not run side by side with the second: plain runs stay apart.
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

long x, y; /* invariant: x == y between updates */

__attribute__((noinline)) void set_pair(long v)
{
	x = v;
	y = v;
}

__attribute__((noinline)) void read_pair(long *a, long *b)
{
	*a = x;
	*b = y;
}

/* Set by the first thread when it starts; main creates the second after. */
static int first_running; /* __atomic */

static void *writer(void *arg)
{
	__atomic_store_n(&first_running, 1, __ATOMIC_RELEASE);
	set_pair(1);
	return arg;
}

static void *reader(void *arg)
{
	long a, b;

	read_pair(&a, &b);
	if (a != b)
		fprintf(stderr, "race_torn_pair: torn read x=%ld y=%ld\n", a, b);
	assert(a == b);
	return arg;
}

int main(void)
{
	pthread_t w, r;

	pthread_create(&w, NULL, writer, NULL);
	while (!__atomic_load_n(&first_running, __ATOMIC_ACQUIRE))
		sched_yield(); /* the second thread starts once the first runs */
	pthread_create(&r, NULL, reader, NULL);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	return 0;
}
