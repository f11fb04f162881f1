// SPDX-License-Identifier: MIT
/*
 * race_ws_deque — a tiny lock-free work-stealing deque (Chase-Lev shape,
 * fixed array, no growth) with an ordering bug in the owner's pop. The
 * owner (main) pushes ITEMS items at the bottom and pops them back from
 * the bottom while a thief steals from the top with a CAS on `top`.
 *
 * A correct pop first publishes the smaller bottom and only then reads
 * top, so a thief that could still reach the popped slot is one the
 * owner sees (t == b) and settles with a CAS. This pop reads top first
 * and publishes bottom after (plain volatile load, then store): a thief
 * that steals in between goes on seeing the old bottom, so it can steal
 * its way down to the slot the owner is popping, while the owner, trusting
 * the stale top ("two or more left, no CAS needed"), takes the same last
 * element. Every item must be taken exactly once; an item taken twice
 * makes main exit 1.
 *
 * The owner starts popping right after creating the thief, and the thief
 * has to finish two steals between two adjacent instructions of the
 * owner's pop, so a plain run practically never fails (exit 0): the thief
 * mostly finds the deque empty already. A pause of the owner at its store
 * to `bottom` in pop(), long enough for the thief to run, opens the window.
 */
#include <pthread.h>
#include <stdio.h>

#define ITEMS 6
#define EMPTY (-1)

static int buf[ITEMS];
/* owner: plain accesses; thief: __atomic. One cache line each, as usual. */
static volatile long top __attribute__((aligned(64)));
static volatile long bottom __attribute__((aligned(64)));
static int taken[ITEMS]; /* __atomic increments */
static int done;	 /* __atomic */

static void push(int item)
{
	long b = bottom;

	buf[b] = item;
	__atomic_store_n(&bottom, b + 1, __ATOMIC_RELEASE);
}

__attribute__((noinline)) int pop(void)
{
	long b = bottom - 1;
	long t = top; /* BUG: read before the new bottom is published */
	int item;

	bottom = b;
	if (t > b) { /* empty */
		bottom = b + 1;
		return EMPTY;
	}
	item = buf[b];
	if (t < b) /* "at least two left": no thief can reach slot b. Stale t: wrong */
		return item;
	/* the last element: the thief may want it too, the CAS decides */
	if (!__atomic_compare_exchange_n(&top, &t, t + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		item = EMPTY;
	bottom = b + 1;
	return item;
}

__attribute__((noinline)) int steal(void)
{
	long t = __atomic_load_n(&top, __ATOMIC_SEQ_CST);
	long b = __atomic_load_n(&bottom, __ATOMIC_SEQ_CST);
	int item;

	if (t >= b)
		return EMPTY;
	item = buf[t];
	if (!__atomic_compare_exchange_n(&top, &t, t + 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
		return EMPTY; /* another taker won slot t */
	return item;
}

static void *thief(void *arg)
{
	int item;

	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE)) {
		item = steal();
		if (item != EMPTY)
			__atomic_add_fetch(&taken[item], 1, __ATOMIC_RELAXED);
	}
	return arg;
}

int main(void)
{
	pthread_t t;
	int item, bad = 0;

	for (int i = 0; i < ITEMS; i++)
		push(i);
	pthread_create(&t, NULL, thief, NULL);
	while ((item = pop()) != EMPTY)
		__atomic_add_fetch(&taken[item], 1, __ATOMIC_RELAXED);
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	for (int i = 0; i < ITEMS; i++)
		if (taken[i] != 1) {
			fprintf(stderr, "race_ws_deque: item %d taken %d times\n", i, taken[i]);
			bad = 1;
		}
	return bad;
}
