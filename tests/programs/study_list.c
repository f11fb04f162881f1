// SPDX-License-Identifier: MIT
/*
 * study_list — seed 000 style subject (LinkedList2 / synchronizedList):
 * a linked list guarded by one mutex, twelve methods that each take it at
 * their own call site (12 lock sites on one lock, so up to 144 SP pairs),
 * driven by two threads that each call a deterministic sequence of
 * methods. main fills the list before and checks it after the threads.
 *
 *   study_list [OPS [SEED]]   OPS calls per thread (default 16), SEED the
 *                             workload seed (default 1)
 *
 * Same arguments, same method sequences; only the interleaving varies.
 * Exit 0 when the list is consistent at the end (count matches the nodes,
 * tail is the last node), 1 otherwise, 2 on a usage error.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct node {
	int v;
	struct node *next;
};

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static struct node *head, *tail;
static int count;

#define NOINL __attribute__((noinline))

static NOINL void list_add(int v)
{
	struct node *n = malloc(sizeof(*n));

	n->v = v;
	n->next = NULL;
	pthread_mutex_lock(&list_lock); /* site add */
	if (tail)
		tail->next = n;
	else
		head = n;
	tail = n;
	count++;
	pthread_mutex_unlock(&list_lock);
}

static NOINL void list_add_first(int v)
{
	struct node *n = malloc(sizeof(*n));

	n->v = v;
	pthread_mutex_lock(&list_lock); /* site addFirst */
	n->next = head;
	head = n;
	if (!tail)
		tail = n;
	count++;
	pthread_mutex_unlock(&list_lock);
}

static NOINL int list_remove_first(void)
{
	struct node *n;
	int v = -1;

	pthread_mutex_lock(&list_lock); /* site removeFirst */
	n = head;
	if (n) {
		head = n->next;
		if (!head)
			tail = NULL;
		count--;
		v = n->v;
	}
	pthread_mutex_unlock(&list_lock);
	free(n);
	return v;
}

static NOINL int list_remove(int v)
{
	struct node *n, *prev = NULL;

	pthread_mutex_lock(&list_lock); /* site remove */
	for (n = head; n && n->v != v; n = n->next)
		prev = n;
	if (n) {
		if (prev)
			prev->next = n->next;
		else
			head = n->next;
		if (tail == n)
			tail = prev;
		count--;
	}
	pthread_mutex_unlock(&list_lock);
	free(n);
	return n != NULL;
}

static NOINL int list_contains(int v)
{
	struct node *n;

	pthread_mutex_lock(&list_lock); /* site contains */
	for (n = head; n && n->v != v; n = n->next)
		;
	pthread_mutex_unlock(&list_lock);
	return n != NULL;
}

static NOINL int list_size(void)
{
	int c;

	pthread_mutex_lock(&list_lock); /* site size */
	c = count;
	pthread_mutex_unlock(&list_lock);
	return c;
}

static NOINL int list_is_empty(void)
{
	int e;

	pthread_mutex_lock(&list_lock); /* site isEmpty */
	e = head == NULL;
	pthread_mutex_unlock(&list_lock);
	return e;
}

static NOINL int list_get(int idx)
{
	struct node *n;
	int v = -1;

	pthread_mutex_lock(&list_lock); /* site get */
	for (n = head; n && idx > 0; n = n->next)
		idx--;
	if (n)
		v = n->v;
	pthread_mutex_unlock(&list_lock);
	return v;
}

static NOINL int list_index_of(int v)
{
	struct node *n;
	int i = 0;

	pthread_mutex_lock(&list_lock); /* site indexOf */
	for (n = head; n && n->v != v; n = n->next)
		i++;
	pthread_mutex_unlock(&list_lock);
	return n ? i : -1;
}

static NOINL int list_peek_last(void)
{
	int v;

	pthread_mutex_lock(&list_lock); /* site peekLast */
	v = tail ? tail->v : -1;
	pthread_mutex_unlock(&list_lock);
	return v;
}

static NOINL long list_sum(void)
{
	struct node *n;
	long s = 0;

	pthread_mutex_lock(&list_lock); /* site sum (iterate) */
	for (n = head; n; n = n->next)
		s += n->v;
	pthread_mutex_unlock(&list_lock);
	return s;
}

static NOINL int list_set(int idx, int v)
{
	struct node *n;
	int old = -1;

	pthread_mutex_lock(&list_lock); /* site set */
	for (n = head; n && idx > 0; n = n->next)
		idx--;
	if (n) {
		old = n->v;
		n->v = v;
	}
	pthread_mutex_unlock(&list_lock);
	return old;
}

/* Consistency check, called by main alone at the end (not a method). */
static int list_check(void)
{
	struct node *n, *last = NULL;
	int c = 0, ok;

	pthread_mutex_lock(&list_lock); /* site check */
	for (n = head; n; n = n->next) {
		last = n;
		c++;
	}
	ok = c == count && last == tail;
	pthread_mutex_unlock(&list_lock);
	return ok;
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
	unsigned s = seed * 7919u + (unsigned)id * 104729u;
	volatile long sink = 0;
	int i;

	for (i = 0; i < ops; i++) {
		int v = (int)(id * 1000 + next_rand(&s) % 50);

		switch (next_rand(&s) % 11) {
		case 0:
			list_add(v);
			break;
		case 1:
			list_add_first(v);
			break;
		case 2:
			sink += list_remove_first();
			break;
		case 3:
			sink += list_remove(v);
			break;
		case 4:
			sink += list_contains(v);
			break;
		case 5:
			sink += list_size();
			break;
		case 6:
			sink += list_is_empty();
			break;
		case 7:
			sink += list_get(i % 8);
			break;
		case 8:
			sink += list_index_of(v);
			break;
		case 9:
			sink += list_peek_last() + list_sum();
			break;
		default:
			sink += list_set(i % 5, v);
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
		fprintf(stderr, "usage: study_list [OPS [SEED]]\n");
		return 2;
	}
	for (i = 0; i < 6; i++)
		list_add((int)i);
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, client, (void *)(i + 1));
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (!list_check()) {
		fprintf(stderr, "study_list: inconsistent list\n");
		return 1;
	}
	printf("size %d\n", list_size());
	return 0;
}
