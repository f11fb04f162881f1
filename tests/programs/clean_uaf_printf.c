// SPDX-License-Identifier: MIT
/*
 * clean_uaf_printf — race_uaf_printf with its bug fixed: the logger takes a
 * reference to the job under slot_lock, so the job outlives the logger's
 * window (unlock, fprintf and fflush to a memory stream, the mark) whoever
 * runs in between; the last of the slot and the logger to drop its
 * reference frees it. The reaper unpublishes the job under slot_lock and
 * drops the slot's reference. No interleaving, and no hold of the logger at
 * its stdio calls, can fail it: exits 0, or aborts if the mark ever saw a
 * freed job.
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
		fprintf(stderr, "clean_uaf_printf: job marked after free\n");
	assert(magic == LIVE);
	j->logged = 1;
}

/* Drop one reference under slot_lock; the last one frees the job. */
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

static void *logger(void *arg)
{
	struct job *j;

	sem_post(&logger_up);
	pthread_mutex_lock(&slot_lock);
	j = slot;
	if (j)
		j->refs++; /* correct: the job lives until job_put */
	pthread_mutex_unlock(&slot_lock);
	if (!j)
		return arg;
	fprintf(job_log, "job %ld (%s): started\n", j->id, j->name);
	fflush(job_log);
	mark_logged(j);
	job_put(j);
	return arg;
}

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
		job_put(j); /* the slot's reference */
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
	sem_wait(&logger_up);
	if (pthread_create(&r, NULL, reaper, NULL))
		return 2;
	pthread_join(l, NULL);
	pthread_join(r, NULL);
	fclose(job_log);
	printf("clean_uaf_printf: %s", log_buf);
	return 0;
}
