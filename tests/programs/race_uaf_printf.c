// SPDX-License-Identifier: MIT
/*
 * race_uaf_printf — a use after free whose window starts at an unlock and
 * ends at a plain access, with only stdio calls inside: no pthread call,
 * so no synchronization point, lies in the window. Only a decision point
 * on the stdio calls themselves (glibc locks the stream inside, with its
 * own lock no pthread probe sees) lets a strategy that switches threads at
 * points hold the logger inside it.
 *
 * The logger takes the current job from the job slot under slot_lock,
 * unlocks, formats a line about it into the job log with fprintf, flushes
 * the log, and then marks the job logged through the pointer it kept: no
 * reference holds the job alive past the unlock. The reaper unpublishes
 * the job under slot_lock, poisons and frees it. A reaper that runs inside
 * the logger's window (after its unlock, before the mark) frees the job
 * under its feet: the mark reads the poison and asserts. (The magic sits
 * past the first 16 bytes, which glibc's free() reuses for its own links,
 * so the poison survives the free; no ASan needed.)
 *
 * The job log is a memory stream (fmemopen), fully buffered: neither the
 * fprintf nor the fflush makes a system call, so the kernel has no reason
 * to switch the logger out in its window. main creates the reaper only
 * once the logger has announced itself (sem_post, before its critical
 * section), and the reaper computes a digest (REAP_WORK iterations, no
 * call) before it takes slot_lock: natively the logger's few microseconds
 * of window are long over when the reaper frees, and a plain run exits 0.
 */
#include <assert.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>

#define LIVE	  0x10661e5L
#define POISON	  0xdeadbeefL
#define REAP_WORK (1UL << 22) /* iterations of the reaper's digest */

struct job {
	long reserved[2];    /* free() writes its tcache links here */
	volatile long magic; /* volatile: the poison store is not dead before free() */
	long id;
	int logged;
	char name[16];
};

static pthread_mutex_t slot_lock = PTHREAD_MUTEX_INITIALIZER;
static struct job *slot; /* under slot_lock */
static sem_t logger_up;	 /* posted by the logger when it starts */
static char log_buf[1 << 16];
static FILE *job_log;

__attribute__((noinline)) static void mark_logged(struct job *j)
{
	long magic = j->magic;

	if (magic == POISON)
		fprintf(stderr, "race_uaf_printf: job marked after free\n");
	assert(magic == LIVE);
	j->logged = 1;
}

static void *logger(void *arg)
{
	struct job *j;

	sem_post(&logger_up);
	pthread_mutex_lock(&slot_lock);
	j = slot; /* BUG: kept past the unlock with no reference */
	pthread_mutex_unlock(&slot_lock);
	if (!j)
		return arg;
	fprintf(job_log, "job %ld (%s): started\n", j->id, j->name);
	fflush(job_log);
	mark_logged(j); /* j may have been freed since the unlock */
	return arg;
}

/* The reaper's own work before it reaps: a digest of its records. */
static volatile unsigned long reap_digest;

static void *reaper(void *arg)
{
	unsigned long digest = 0;
	struct job *j;

	for (unsigned long i = 0; i < REAP_WORK; i++)
		digest = digest * 31 + i;
	reap_digest = digest;
	pthread_mutex_lock(&slot_lock);
	j = slot;
	slot = NULL;
	pthread_mutex_unlock(&slot_lock);
	if (j) {
		j->magic = POISON;
		free(j);
	}
	return arg;
}

int main(void)
{
	struct job *j = calloc(1, sizeof(*j));
	pthread_t l, r;

	if (!j || sem_init(&logger_up, 0, 0))
		return 2;
	j->magic = LIVE;
	j->id = 7;
	snprintf(j->name, sizeof(j->name), "backup");
	slot = j;
	job_log = fmemopen(log_buf, sizeof(log_buf), "w");
	if (!job_log || setvbuf(job_log, NULL, _IOFBF, 1 << 12))
		return 2;
	if (pthread_create(&l, NULL, logger, NULL))
		return 2;
	sem_wait(&logger_up); /* the reaper starts once the logger runs */
	if (pthread_create(&r, NULL, reaper, NULL))
		return 2;
	pthread_join(l, NULL);
	pthread_join(r, NULL);
	fclose(job_log);
	printf("race_uaf_printf: %s", log_buf);
	return 0;
}
