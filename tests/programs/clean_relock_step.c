// SPDX-License-Identifier: MIT
/*
 * clean_relock_step — SQLite's serialized mode in small (issue 32): each
 * connection has a recursive mutex that every API call takes, and the
 * calls nest. step() locks it and, when the statement ran to its end
 * already, calls reset() itself, which locks it again (sqlite3_step's
 * automatic sqlite3_reset); both take an allocator mutex of default type
 * inside (sqlite3Malloc's). THREADS threads, two to a connection, each run
 * ROUNDS steps. Under the connection mutex a thread checks it is the
 * holder and that the nesting depth is its own. No bug: correct under
 * every interleaving; exits 0, or aborts (assert) / exits 1.
 *
 *   clean_relock_step [ROUNDS [HOLD_MS]]
 *
 * HOLD_MS > 0: a thread's last reset waits HOLD_MS for a busy peer while
 * it holds its connection's mutex twice over (SQLite's busy handler
 * sleeps holding it), so the program is slow, never stuck:
 * tests/host/57-relock-timeout.t runs it past a run timeout with enough
 * rounds to truncate the controller's thread model (RUN_MAX_ACTIONS) and
 * wants a hang, never a deadlock.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define THREADS 8
#define CONNS	(THREADS / 2)

struct conn {
	pthread_mutex_t mu; /* recursive */
	pthread_t holder;   /* under mu */
	int depth;	    /* under mu: nesting of the holder's calls */
	int done;	    /* under mu: the statement ran to its end */
	long steps;	    /* under mu */
};

static struct conn conns[CONNS];
static pthread_mutex_t mem_mu = PTHREAD_MUTEX_INITIALIZER; /* default type */
static long mem_used;					   /* under mem_mu */
/* 300 rounds took 23-29 s a steered run in the VM (TCG, 2026-11-29): 100 */
static int rounds = 100, hold_ms;

static void mem_touch(void)
{
	pthread_mutex_lock(&mem_mu);
	mem_used++;
	pthread_mutex_unlock(&mem_mu);
}

/* Enter an API call: the mutex, again if this thread holds it. */
static void enter(struct conn *c, int depth)
{
	pthread_mutex_lock(&c->mu);
	if (c->depth == 0)
		c->holder = pthread_self();
	assert(pthread_equal(c->holder, pthread_self()));
	assert(c->depth == depth);
	c->depth++;
}

static void leave(struct conn *c, int depth)
{
	assert(c->depth == depth + 1 && pthread_equal(c->holder, pthread_self()));
	c->depth--;
	pthread_mutex_unlock(&c->mu);
}

static void reset(struct conn *c, int depth, int last)
{
	enter(c, depth);
	mem_touch();
	c->done = 0;
	if (last && hold_ms > 0) { /* the busy handler: wait for a peer */
		struct timespec ts = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };

		nanosleep(&ts, NULL);
	}
	leave(c, depth);
}

static void step(struct conn *c, int last)
{
	enter(c, 0);
	if (c->done)
		reset(c, 1, last); /* held already: the re-lock */
	mem_touch();
	c->steps++;
	c->done = 1;
	leave(c, 0);
}

static void *worker(void *arg)
{
	struct conn *c = &conns[(long)arg / 2];

	for (int i = 0; i < rounds; i++)
		step(c, i == rounds - 1);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_mutexattr_t attr;
	pthread_t t[THREADS];

	if (argc > 1)
		rounds = atoi(argv[1]);
	if (argc > 2)
		hold_ms = atoi(argv[2]);
	if (rounds < 1 || hold_ms < 0) {
		fprintf(stderr, "usage: clean_relock_step [ROUNDS [HOLD_MS]]\n");
		return 2;
	}
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	for (int i = 0; i < CONNS; i++)
		pthread_mutex_init(&conns[i].mu, &attr);
	pthread_mutexattr_destroy(&attr);
	for (long i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < CONNS; i++)
		if (conns[i].steps != 2L * rounds || conns[i].depth != 0) {
			fprintf(stderr, "clean_relock_step: connection %d: %ld steps, depth %d\n",
				i, conns[i].steps, conns[i].depth);
			return 1;
		}
	if (mem_used != 2L * THREADS * rounds - CONNS) {
		fprintf(stderr, "clean_relock_step: %ld allocations\n", mem_used);
		return 1;
	}
	return 0;
}
