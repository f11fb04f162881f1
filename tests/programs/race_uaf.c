// SPDX-License-Identifier: MIT
/*
 * race_uaf — a use after free. `current` points to a live session. The
 * user loads the pointer, checks it is not NULL, then reads the session;
 * the closer unpublishes the session (current = NULL), poisons it and
 * frees it. Nothing (no lock, no reference count) keeps the session alive
 * between the user's check and its use, so a closer that runs in between
 * frees it under the user's feet: the user then reads the poison and its
 * assertion aborts. (The magic sits past the first 16 bytes, which glibc's
 * free() reuses for its own links, so the poison survives the free; no
 * ASan needed.) The window is the two instructions between the user's
 * load of current and its load of s->magic, and the closer starts tens of
 * microseconds after the user, so a plain run practically always exits 0.
 * A pause of the user right after its check opens the window.
 *
 * main creates the second thread only once the first is running (the
 * first_running flag), so that a first thread the kernel happens to start
 * late does not run side by side with the second: plain runs stay apart.
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define LIVE   0x5e55105eL
#define POISON 0xdeadbeefL

struct session {
	long reserved[2];    /* free() writes its tcache links here */
	volatile long magic; /* volatile: the poison store is not dead before free() */
	long requests;
};

struct session *volatile current;

__attribute__((noinline)) long use_session(void)
{
	struct session *s = current; /* check ... */
	long magic;

	if (s == NULL)
		return 0;
	magic = s->magic; /* ... then use, with nothing holding s alive */
	if (magic == POISON)
		fprintf(stderr, "race_uaf: session used after free\n");
	assert(magic != POISON);
	return magic;
}

__attribute__((noinline)) void close_session(void)
{
	struct session *s = current;

	current = NULL;
	s->magic = POISON;
	free(s);
}

/* Set by the first thread when it starts; main creates the second after. */
static int first_running; /* __atomic */

static void *user(void *arg)
{
	__atomic_store_n(&first_running, 1, __ATOMIC_RELEASE);
	use_session();
	return arg;
}

static void *closer(void *arg)
{
	close_session();
	return arg;
}

int main(void)
{
	struct session *s = calloc(1, sizeof(*s));
	pthread_t u, c;

	if (!s)
		return 2;
	s->magic = LIVE;
	current = s;
	pthread_create(&u, NULL, user, NULL);
	while (!__atomic_load_n(&first_running, __ATOMIC_ACQUIRE))
		sched_yield(); /* the second thread starts once the first runs */
	pthread_create(&c, NULL, closer, NULL);
	pthread_join(u, NULL);
	pthread_join(c, NULL);
	return 0;
}
