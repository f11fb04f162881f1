// SPDX-License-Identifier: MIT
/*
 * uaf_printf.h — the body of race_uaf_printf (HOLD_REFERENCE 0) and
 * clean_uaf_printf (HOLD_REFERENCE 1): a logger takes the current job from
 * the job slot under slot_lock, unlocks, formats a line about it into the
 * job log with fprintf, flushes the log, then marks the job through the
 * pointer it kept; a reaper unpublishes the job under slot_lock and drops
 * the slot's reference. PROG names the program in its messages.
 *
 * The job log is a memory stream (fmemopen), fully buffered: neither the
 * fprintf nor the fflush makes a system call, so the kernel has no reason
 * to switch the logger out of its window. main creates the reaper only
 * once the logger has announced itself (sem_post, before its critical
 * section), and the reaper computes a digest (REAP_WORK iterations, no
 * call) before it takes slot_lock: natively the logger's few microseconds
 * of window are long over when the reaper frees.
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
	int refs; /* under slot_lock */
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
		fprintf(stderr, PROG ": job marked after free\n");
	assert(magic == LIVE);
	j->logged = 1;
}

#if HOLD_REFERENCE
/* Drop one reference under slot_lock; the last one poisons and frees the
 * job. */
static void job_put(struct job *j)
{
	int last;

	pthread_mutex_lock(&slot_lock);
	last = --j->refs == 0;
	pthread_mutex_unlock(&slot_lock);
	if (last) {
		j->magic = POISON;
		free(j);
	}
}
#endif

/* The reaper drops the slot's reference: the logger may hold one. */
static void reap(struct job *j)
{
#if HOLD_REFERENCE
	job_put(j);
#else
	j->magic = POISON; /* BUG: the logger kept j with no reference */
	free(j);
#endif
}

static void *logger(void *arg)
{
	struct job *j;

	sem_post(&logger_up);
	pthread_mutex_lock(&slot_lock);
	j = slot;
#if HOLD_REFERENCE
	if (j)
		j->refs++; /* correct: the job lives until job_put */
#endif
	pthread_mutex_unlock(&slot_lock);
	if (!j)
		return arg;
	fprintf(job_log, "job %ld (%s): started\n", j->id, j->name);
	fflush(job_log);
	mark_logged(j); /* without a reference, j may be freed since the unlock */
#if HOLD_REFERENCE
	job_put(j);
#endif
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
	if (j)
		reap(j);
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
	j->refs = 1; /* the slot's */
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
	printf(PROG ": %s", log_buf);
	return 0;
}
