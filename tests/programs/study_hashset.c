// SPDX-License-Identifier: MIT
/*
 * study_hashset — seed 000 style subject (HashSet2): a striped hash set of
 * ints (Herlihy & Shavit's StripedHashSet). Four stripe mutexes guard the
 * buckets (bucket b belongs to stripe b % 4), a count mutex guards the
 * element count, and a resize mutex serialises resizes, which take every
 * stripe in order while holding it. Methods take their locks at their own
 * call sites: 13 lock sites on 6 locks, with nesting (resize, snapshot,
 * clear), so the SP requirements are spread over several locks and the
 * locksets matter. Two threads call deterministic method sequences; main
 * adds a few elements before and checks the set after.
 *
 *   study_hashset [OPS [SEED]]   OPS calls per thread (default 16),
 *                                SEED the workload seed (default 1)
 *
 * Exit 0 when the count matches the elements and every element sits in its
 * bucket, 1 otherwise, 2 on a usage error.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NSTRIPES 4
#define NOINL	 __attribute__((noinline))

struct entry {
	int key;
	struct entry *next;
};

static pthread_mutex_t stripe[NSTRIPES] = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER,
					    PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER };
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t resize_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry **table;
static int capacity = NSTRIPES; /* always a multiple of NSTRIPES */
static int count;
static int resizes;

static unsigned hash(int key)
{
	return (unsigned)key * 2654435761u >> 8;
}

static NOINL void hs_resize(int old_capacity)
{
	struct entry **nt;
	int i, ncap;

	pthread_mutex_lock(&resize_lock); /* site resize */
	for (i = 0; i < NSTRIPES; i++)
		pthread_mutex_lock(&stripe[i]); /* site resize-stripes */
	if (capacity == old_capacity) {		/* nobody resized in between */
		ncap = capacity * 2;
		nt = calloc((size_t)ncap, sizeof(*nt));
		for (i = 0; i < capacity; i++) {
			struct entry *e = table[i], *next;

			for (; e; e = next) {
				unsigned b = hash(e->key) % (unsigned)ncap;

				next = e->next;
				e->next = nt[b];
				nt[b] = e;
			}
		}
		free(table);
		table = nt;
		capacity = ncap;
		resizes++;
	}
	for (i = NSTRIPES - 1; i >= 0; i--)
		pthread_mutex_unlock(&stripe[i]);
	pthread_mutex_unlock(&resize_lock);
}

static NOINL int hs_add(int key)
{
	unsigned h = hash(key);
	pthread_mutex_t *l = &stripe[h % NSTRIPES];
	struct entry *e;
	int added = 0, cap, grow = 0;

	pthread_mutex_lock(l); /* site add */
	cap = capacity;
	for (e = table[h % (unsigned)cap]; e && e->key != key; e = e->next)
		;
	if (!e) {
		e = malloc(sizeof(*e));
		e->key = key;
		e->next = table[h % (unsigned)cap];
		table[h % (unsigned)cap] = e;
		added = 1;
	}
	pthread_mutex_unlock(l);
	if (added) {
		pthread_mutex_lock(&count_lock); /* site add-count */
		count++;
		grow = count > 2 * cap;
		pthread_mutex_unlock(&count_lock);
	}
	if (grow)
		hs_resize(cap);
	return added;
}

static NOINL int hs_remove(int key)
{
	unsigned h = hash(key);
	pthread_mutex_t *l = &stripe[h % NSTRIPES];
	struct entry **pe, *e;

	pthread_mutex_lock(l); /* site remove */
	for (pe = &table[h % (unsigned)capacity]; *pe && (*pe)->key != key; pe = &(*pe)->next)
		;
	e = *pe;
	if (e)
		*pe = e->next;
	pthread_mutex_unlock(l);
	if (!e)
		return 0;
	free(e);
	pthread_mutex_lock(&count_lock); /* site remove-count */
	count--;
	pthread_mutex_unlock(&count_lock);
	return 1;
}

static NOINL int hs_contains(int key)
{
	unsigned h = hash(key);
	pthread_mutex_t *l = &stripe[h % NSTRIPES];
	struct entry *e;

	pthread_mutex_lock(l); /* site contains */
	for (e = table[h % (unsigned)capacity]; e && e->key != key; e = e->next)
		;
	pthread_mutex_unlock(l);
	return e != NULL;
}

static NOINL int hs_size(void)
{
	int c;

	pthread_mutex_lock(&count_lock); /* site size */
	c = count;
	pthread_mutex_unlock(&count_lock);
	return c;
}

static NOINL int hs_is_empty(void)
{
	int c;

	pthread_mutex_lock(&count_lock); /* site isEmpty */
	c = count;
	pthread_mutex_unlock(&count_lock);
	return c == 0;
}

/* Weakly consistent iteration: one stripe at a time, under the resize lock. */
static NOINL long hs_snapshot_sum(void)
{
	long s = 0;
	int i, b;

	pthread_mutex_lock(&resize_lock); /* site snapshot */
	for (i = 0; i < NSTRIPES; i++) {
		pthread_mutex_lock(&stripe[i]); /* site snapshot-stripe */
		for (b = i; b < capacity; b += NSTRIPES) {
			struct entry *e;

			for (e = table[b]; e; e = e->next)
				s += e->key;
		}
		pthread_mutex_unlock(&stripe[i]);
	}
	pthread_mutex_unlock(&resize_lock);
	return s;
}

/* Remove every key of one residue class, stripe by stripe. */
static NOINL int hs_remove_if_mod(int mod, int r)
{
	int i, b, removed = 0;

	for (i = 0; i < NSTRIPES; i++) {
		pthread_mutex_lock(&stripe[i]); /* site removeIf-stripe */
		for (b = i; b < capacity; b += NSTRIPES) {
			struct entry **pe = &table[b];

			while (*pe) {
				struct entry *e = *pe;

				if (e->key % mod == r) {
					*pe = e->next;
					free(e);
					removed++;
				} else {
					pe = &e->next;
				}
			}
		}
		pthread_mutex_unlock(&stripe[i]);
	}
	pthread_mutex_lock(&count_lock); /* site removeIf-count */
	count -= removed;
	pthread_mutex_unlock(&count_lock);
	return removed;
}

/* main alone, at the end */
static int hs_check(void)
{
	int i, c = 0;

	pthread_mutex_lock(&resize_lock); /* site check */
	for (i = 0; i < capacity; i++) {
		struct entry *e;

		for (e = table[i]; e; e = e->next) {
			if (hash(e->key) % (unsigned)capacity != (unsigned)i) {
				pthread_mutex_unlock(&resize_lock);
				return 0;
			}
			c++;
		}
	}
	pthread_mutex_unlock(&resize_lock);
	return c == hs_size();
}

static int ops = 16;
static unsigned seed = 1;

static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

static void *client(void *arg)
{
	long id = (long)arg;
	unsigned s = seed * 6007u + (unsigned)id * 15485863u;
	volatile long sink = 0;
	int i;

	for (i = 0; i < ops; i++) {
		int k = (int)(next_rand(&s) % 40);

		switch (next_rand(&s) % 10) {
		case 0:
		case 1:
		case 2:
			sink += hs_add(k);
			break;
		case 3:
			sink += hs_add(k + 100 * (int)id);
			break;
		case 4:
			sink += hs_remove(k);
			break;
		case 5:
			sink += hs_contains(k);
			break;
		case 6:
			sink += hs_size();
			break;
		case 7:
			sink += hs_is_empty();
			break;
		case 8:
			sink += hs_snapshot_sum();
			break;
		default:
			sink += hs_remove_if_mod(7, (int)id);
			break;
		}
	}
	(void)sink;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	long i;

	if (argc > 1)
		ops = atoi(argv[1]);
	if (argc > 2)
		seed = (unsigned)strtoul(argv[2], NULL, 0);
	if (argc > 3 || ops < 1 || ops > 100000) {
		fprintf(stderr, "usage: study_hashset [OPS [SEED]]\n");
		return 2;
	}
	table = calloc((size_t)capacity, sizeof(*table));
	for (i = 0; i < 6; i++)
		hs_add((int)(i * 3));
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, client, (void *)(i + 1));
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (!hs_check()) {
		fprintf(stderr, "study_hashset: inconsistent set\n");
		return 1;
	}
	printf("size %d capacity %d resizes %d\n", hs_size(), capacity, resizes);
	return 0;
}
