// SPDX-License-Identifier: MIT
/*
 * race_uaf_stdio — a use after free whose window lies between two
 * critical sections of one thread, with stdio calls inside the window.
 *
 * The reporter looks its session up in the session table under
 * table_lock and charges it, unlocks, prints two progress lines (printf and
 * fputs: stdio takes its own internal lock, which no pthread probe sees),
 * then locks again and charges the session once more through the pointer
 * it kept, without looking it up again and with no reference holding the
 * session alive. stdout is fully buffered (set up by main), so the window
 * has no system call: a write(2) there, whose return is where the kernel
 * preempts a thread for a newly woken one, let the closer in natively in 36
 * of 100 plain runs in the VM. The closer unpublishes the session under table_lock,
 * poisons it and frees it. A closer that runs inside the reporter's window
 * (after the first section, before the second) frees the session under
 * the reporter's feet: the second section reads the poison and asserts.
 * (The magic sits past the first 16 bytes, which glibc's free() reuses for
 * its own links, so the poison survives the free; no ASan needed.)
 * Natively the reporter's two sections and the stdio between them take a
 * few microseconds right after it starts, and the closer starts tens of
 * microseconds later: a plain run practically always exits 0. A pause of
 * the reporter inside its window (in the stdio calls, or at its second
 * pthread_mutex_lock) while the closer runs opens it.
 *
 * main creates the closer only once the reporter is running (the
 * reporter_running flag), so that a reporter the kernel happens to start
 * late does not run side by side with the closer, and the closer computes
 * a digest (CLOSE_WORK iterations, no call) before it takes table_lock:
 * plain runs stay apart (without the digest, 1 of 1000 host runs failed
 * under load).
 */
#include <assert.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>

#define LIVE	   0x5e55105eL
#define CLOSE_WORK (1UL << 22) /* iterations of the closer's digest */
#define POISON	   0xdeadbeefL

struct session {
	long reserved[2];    /* free() writes its tcache links here */
	volatile long magic; /* volatile: the poison store is not dead before free() */
	long charged;
	char name[16];
};

static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;
static struct session *table[1]; /* under table_lock */

/* Set by the reporter when it starts; main creates the closer after. */
static int reporter_running; /* __atomic */

__attribute__((noinline)) static void charge(struct session *s, long amount)
{
	long magic = s->magic;

	if (magic == POISON)
		fprintf(stderr, "race_uaf_stdio: session charged after free\n");
	assert(magic == LIVE);
	s->charged += amount;
}

static void *reporter(void *arg)
{
	struct session *s;

	__atomic_store_n(&reporter_running, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&table_lock);
	s = table[0]; /* BUG: kept past the unlock with no reference */
	if (s)
		charge(s, 10);
	pthread_mutex_unlock(&table_lock);
	if (!s)
		return arg;
	printf("report: session %s charged\n", s->name);
	fputs("report: charging again\n", stdout);
	pthread_mutex_lock(&table_lock);
	charge(s, 5); /* s may have been freed since the first section */
	pthread_mutex_unlock(&table_lock);
	return arg;
}

/* The closer's own work before it closes: a digest of its close record. */
static volatile unsigned long close_digest;

static void *closer(void *arg)
{
	struct session *s;
	unsigned long digest = 0;

	for (unsigned long i = 0; i < CLOSE_WORK; i++)
		digest = digest * 31 + i;
	close_digest = digest;
	pthread_mutex_lock(&table_lock);
	s = table[0];
	table[0] = NULL;
	pthread_mutex_unlock(&table_lock);
	if (s) {
		s->magic = POISON;
		free(s);
	}
	return arg;
}

int main(void)
{
	struct session *s = calloc(1, sizeof(*s));
	pthread_t r, c;

	if (!s)
		return 2;
	s->magic = LIVE;
	snprintf(s->name, sizeof(s->name), "alpha");
	table[0] = s;
	/* stdout's buffer is set up here, not in the window, and is written
	 * out at the exit only (a buffer far larger than the output) */
	setvbuf(stdout, NULL, _IOFBF, 1 << 16);
	printf("sessions: %d\n", 1);
	if (pthread_create(&r, NULL, reporter, NULL))
		return 2;
	while (!__atomic_load_n(&reporter_running, __ATOMIC_ACQUIRE))
		sched_yield(); /* the closer starts once the reporter runs */
	if (pthread_create(&c, NULL, closer, NULL))
		return 2;
	pthread_join(r, NULL);
	pthread_join(c, NULL);
	return 0;
}
