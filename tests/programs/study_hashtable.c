// SPDX-License-Identifier: MIT
/*
 * study_hashtable — seed 000 style subject (HashTable2): a
 * java.util.Hashtable-like map int -> int whose every public method is
 * "synchronized": it takes the table's one mutex at its own call site
 * (13 lock sites on one lock; rehash runs inside put with the lock held).
 * Two client threads with different roles share it: a writer (put,
 * putIfAbsent, replace, remove, containsKey, size, get) and a reader (get,
 * containsKey, containsValue, keys, values, size, isEmpty, getOrDefault),
 * so the same-thread pairs come from two different method mixes and the
 * cross-thread pairs from their interleaving. main fills the table before
 * and checks it after.
 *
 *   study_hashtable [OPS [SEED]]   OPS calls per thread (default 16),
 *                                  SEED the workload seed (default 1)
 *
 * Exit 0 when the count matches the entries and each entry is in its
 * bucket, 1 otherwise, 2 on a usage error.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINL __attribute__((noinline))

struct entry {
	int key, value;
	struct entry *next;
};

static pthread_mutex_t ht_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry **table;
static int capacity = 5, count, rehashes;

static unsigned bucket(int key, int cap)
{
	return ((unsigned)key * 2654435761u >> 4) % (unsigned)cap;
}

/* Called with ht_lock held (like Hashtable.rehash). */
static void rehash(void)
{
	int ncap = capacity * 2 + 1, i;
	struct entry **nt = calloc((size_t)ncap, sizeof(*nt));

	for (i = 0; i < capacity; i++) {
		struct entry *e = table[i], *next;

		for (; e; e = next) {
			unsigned b = bucket(e->key, ncap);

			next = e->next;
			e->next = nt[b];
			nt[b] = e;
		}
	}
	free(table);
	table = nt;
	capacity = ncap;
	rehashes++;
}

static struct entry *find(int key)
{
	struct entry *e;

	for (e = table[bucket(key, capacity)]; e && e->key != key; e = e->next)
		;
	return e;
}

static void insert(int key, int value)
{
	struct entry *e = malloc(sizeof(*e));
	unsigned b;

	if (count >= capacity * 3 / 4)
		rehash();
	b = bucket(key, capacity);
	e->key = key;
	e->value = value;
	e->next = table[b];
	table[b] = e;
	count++;
}

static NOINL int ht_put(int key, int value)
{
	struct entry *e;
	int old = -1;

	pthread_mutex_lock(&ht_lock); /* site put */
	e = find(key);
	if (e) {
		old = e->value;
		e->value = value;
	} else {
		insert(key, value);
	}
	pthread_mutex_unlock(&ht_lock);
	return old;
}

static NOINL int ht_put_if_absent(int key, int value)
{
	struct entry *e;
	int old = -1;

	pthread_mutex_lock(&ht_lock); /* site putIfAbsent */
	e = find(key);
	if (e)
		old = e->value;
	else
		insert(key, value);
	pthread_mutex_unlock(&ht_lock);
	return old;
}

static NOINL int ht_replace(int key, int value)
{
	struct entry *e;
	int old = -1;

	pthread_mutex_lock(&ht_lock); /* site replace */
	e = find(key);
	if (e) {
		old = e->value;
		e->value = value;
	}
	pthread_mutex_unlock(&ht_lock);
	return old;
}

static NOINL int ht_get(int key)
{
	struct entry *e;
	int v;

	pthread_mutex_lock(&ht_lock); /* site get */
	e = find(key);
	v = e ? e->value : -1;
	pthread_mutex_unlock(&ht_lock);
	return v;
}

static NOINL int ht_get_or_default(int key, int def)
{
	struct entry *e;
	int v;

	pthread_mutex_lock(&ht_lock); /* site getOrDefault */
	e = find(key);
	v = e ? e->value : def;
	pthread_mutex_unlock(&ht_lock);
	return v;
}

static NOINL int ht_remove(int key)
{
	struct entry **pe, *e;
	int v = -1;

	pthread_mutex_lock(&ht_lock); /* site remove */
	for (pe = &table[bucket(key, capacity)]; *pe && (*pe)->key != key; pe = &(*pe)->next)
		;
	e = *pe;
	if (e) {
		*pe = e->next;
		v = e->value;
		count--;
	}
	pthread_mutex_unlock(&ht_lock);
	free(e);
	return v;
}

static NOINL int ht_contains_key(int key)
{
	int r;

	pthread_mutex_lock(&ht_lock); /* site containsKey */
	r = find(key) != NULL;
	pthread_mutex_unlock(&ht_lock);
	return r;
}

static NOINL int ht_contains_value(int value)
{
	int i, r = 0;

	pthread_mutex_lock(&ht_lock); /* site containsValue */
	for (i = 0; i < capacity && !r; i++) {
		struct entry *e;

		for (e = table[i]; e; e = e->next)
			if (e->value == value)
				r = 1;
	}
	pthread_mutex_unlock(&ht_lock);
	return r;
}

static NOINL int ht_size(void)
{
	int c;

	pthread_mutex_lock(&ht_lock); /* site size */
	c = count;
	pthread_mutex_unlock(&ht_lock);
	return c;
}

static NOINL int ht_is_empty(void)
{
	int c;

	pthread_mutex_lock(&ht_lock); /* site isEmpty */
	c = count;
	pthread_mutex_unlock(&ht_lock);
	return c == 0;
}

/* keys(): a copy of the key set, like Hashtable.keys() over a snapshot. */
static NOINL long ht_keys_sum(void)
{
	long s = 0;
	int i;

	pthread_mutex_lock(&ht_lock); /* site keys */
	for (i = 0; i < capacity; i++) {
		struct entry *e;

		for (e = table[i]; e; e = e->next)
			s += e->key;
	}
	pthread_mutex_unlock(&ht_lock);
	return s;
}

static NOINL long ht_values_sum(void)
{
	long s = 0;
	int i;

	pthread_mutex_lock(&ht_lock); /* site values */
	for (i = 0; i < capacity; i++) {
		struct entry *e;

		for (e = table[i]; e; e = e->next)
			s += e->value;
	}
	pthread_mutex_unlock(&ht_lock);
	return s;
}

/* main alone, at the end */
static int ht_check(void)
{
	int i, c = 0, ok = 1;

	pthread_mutex_lock(&ht_lock); /* site check */
	for (i = 0; i < capacity; i++) {
		struct entry *e;

		for (e = table[i]; e; e = e->next) {
			if (bucket(e->key, capacity) != (unsigned)i)
				ok = 0;
			c++;
		}
	}
	ok = ok && c == count;
	pthread_mutex_unlock(&ht_lock);
	return ok;
}

static int ops = 16;
static unsigned seed = 1;

static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

static void *writer(void *arg)
{
	unsigned s = seed * 31337u + 1u;
	volatile long sink = 0;
	int i;

	for (i = 0; i < ops; i++) {
		int k = (int)(next_rand(&s) % 32), v = (int)(next_rand(&s) % 100);

		switch (next_rand(&s) % 7) {
		case 0:
		case 1:
			sink += ht_put(k, v);
			break;
		case 2:
			sink += ht_put_if_absent(k, v);
			break;
		case 3:
			sink += ht_replace(k, v);
			break;
		case 4:
			sink += ht_remove(k);
			break;
		case 5:
			sink += ht_contains_key(k) + ht_get(k);
			break;
		default:
			sink += ht_size();
			break;
		}
	}
	(void)sink;
	return arg;
}

static void *reader(void *arg)
{
	unsigned s = seed * 27644437u + 2u;
	volatile long sink = 0;
	int i;

	for (i = 0; i < ops; i++) {
		int k = (int)(next_rand(&s) % 32);

		switch (next_rand(&s) % 8) {
		case 0:
			sink += ht_get(k);
			break;
		case 1:
			sink += ht_get_or_default(k, 0);
			break;
		case 2:
			sink += ht_contains_key(k);
			break;
		case 3:
			sink += ht_contains_value(k);
			break;
		case 4:
			sink += ht_keys_sum();
			break;
		case 5:
			sink += ht_values_sum();
			break;
		case 6:
			sink += ht_size();
			break;
		default:
			sink += ht_is_empty();
			break;
		}
	}
	(void)sink;
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t w, r;
	int i;

	if (argc > 1)
		ops = atoi(argv[1]);
	if (argc > 2)
		seed = (unsigned)strtoul(argv[2], NULL, 0);
	if (argc > 3 || ops < 1 || ops > 100000) {
		fprintf(stderr, "usage: study_hashtable [OPS [SEED]]\n");
		return 2;
	}
	table = calloc((size_t)capacity, sizeof(*table));
	for (i = 0; i < 8; i++)
		ht_put(i * 4, i);
	pthread_create(&w, NULL, writer, NULL);
	pthread_create(&r, NULL, reader, NULL);
	pthread_join(w, NULL);
	pthread_join(r, NULL);
	if (!ht_check()) {
		fprintf(stderr, "study_hashtable: inconsistent table\n");
		return 1;
	}
	printf("size %d capacity %d rehashes %d\n", ht_size(), capacity, rehashes);
	return 0;
}
