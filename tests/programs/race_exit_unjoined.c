// SPDX-License-Identifier: MIT
/*
 * race_exit_unjoined — main returns without joining its workers, and the
 * bug needs both workers to run, in the order opposite to their start,
 * before the process exits.
 *
 * A daemon-style main starts an outbox flusher and then a producer, and
 * returns: exit() ends the process, and the workers with it, wherever they
 * are (the outbox is best effort). The flusher sets the outbox up under
 * outbox_lock: it assumes it runs before any producer, asserts the outbox
 * is still empty and installs a fresh buffer. The producer queues a record
 * under outbox_lock without waiting for the flusher to be up. A producer
 * that queues its record before the flusher's set-up breaks the flusher's
 * assumption: the flusher finds a record it would drop, says so and
 * aborts. That takes the flusher held at its pthread_mutex_lock until the
 * producer, started later, has queued, and all of it before main's exit
 * ends the process. Natively the flusher runs its set-up right after it
 * starts, tens of microseconds before the producer exists, and a producer
 * or flusher that has not got that far when main exits never does: a
 * plain run practically always exits 0.
 *
 * main creates the producer only once the flusher is running (the
 * flusher_running flag), so that a flusher the kernel happens to start
 * late does not run side by side with the producer: plain runs stay apart.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OUTBOX_BYTES 256

static pthread_mutex_t outbox_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	char *buf;		 /* NULL until the flusher or the first producer sets it */
	size_t used;		 /* bytes queued */
	int records;		 /* records queued */
} outbox;			 /* under outbox_lock */
static char early[OUTBOX_BYTES]; /* a producer's buffer before set-up */

/* Set by the flusher when it starts; main creates the producer after. */
static int flusher_running; /* __atomic */

static void *flusher(void *arg)
{
	__atomic_store_n(&flusher_running, 1, __ATOMIC_RELEASE);
	pthread_mutex_lock(&outbox_lock);
	/* BUG: "we start first" — nothing makes the producer wait for us */
	if (outbox.records != 0) {
		fprintf(stderr,
			"race_exit_unjoined: %d record(s) queued before the flusher was up\n",
			outbox.records);
		abort();
	}
	outbox.buf = calloc(1, OUTBOX_BYTES);
	outbox.used = 0;
	pthread_mutex_unlock(&outbox_lock);
	return arg;
}

static void *producer(void *arg)
{
	static const char record[] = "started\n";

	pthread_mutex_lock(&outbox_lock);
	if (!outbox.buf)
		outbox.buf = early;
	if (outbox.used + sizeof(record) <= OUTBOX_BYTES) {
		memcpy(outbox.buf + outbox.used, record, sizeof(record));
		outbox.used += sizeof(record);
		outbox.records++;
	}
	pthread_mutex_unlock(&outbox_lock);
	return arg;
}

int main(void)
{
	pthread_t f, p;

	if (pthread_create(&f, NULL, flusher, NULL))
		return 2;
	while (!__atomic_load_n(&flusher_running, __ATOMIC_ACQUIRE))
		sched_yield(); /* the producer starts once the flusher runs */
	if (pthread_create(&p, NULL, producer, NULL))
		return 2;
	return 0; /* BUG: neither worker is joined */
}
