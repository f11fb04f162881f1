// SPDX-License-Identifier: MIT
/*
 * clean_once — THREADS threads each call pthread_once(&table_once,
 * table_init) and then read the table it built: a heap array of ENTRIES
 * squares and a global count, written by whichever thread runs the
 * routine, read by every thread after its own pthread_once returned.
 * Every thread then checks the table and adds its sum to its own slot.
 * No bug: pthread_once orders the routine before every caller's return,
 * so no read of the table races with its writes under any interleaving;
 * exits 0, or 1 if a thread saw a half-built table.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define THREADS 4
#define ENTRIES 64

static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static long *table;	/* heap, written by table_init only */
static int table_count; /* written by table_init only */
static int inits;	/* how many times table_init ran */
static long sums[THREADS];

static void table_init(void)
{
	table = malloc(ENTRIES * sizeof(*table));
	if (!table)
		abort();
	for (int i = 0; i < ENTRIES; i++)
		table[i] = (long)i * i;
	table_count = ENTRIES;
	inits++;
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	long sum = 0;

	pthread_once(&table_once, table_init);
	if (table_count != ENTRIES)
		return (void *)1;
	for (int i = 0; i < table_count; i++) {
		if (table[i] != (long)i * i)
			return (void *)1;
		sum += table[i];
	}
	sums[id] = sum;
	return NULL;
}

int main(void)
{
	pthread_t t[THREADS];
	int bad = 0;

	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++) {
		void *r;

		pthread_join(t[i], &r);
		bad |= r != NULL || sums[i] != sums[0];
	}
	if (bad || inits != 1) {
		fprintf(stderr, "clean_once: inits %d, a thread saw a half-built table: %d\n",
			inits, bad);
		return 1;
	}
	free(table);
	return 0;
}
