// SPDX-License-Identifier: MIT
/*
 * race_start_order — the bug needs the workers to begin in the order
 * opposite to their creation.
 *
 * main creates three shard workers, 0, 1 and 2, in that order, and joins
 * them. The pool wires its merge chain by arrival: a worker's first
 * instruction swaps itself in as the latest arrival (an atomic exchange,
 * no synchronization call), and its shard is merged into the shard of
 * the worker that arrived just before it. The merge code expects each
 * link to point at an earlier-created worker; a link to a later-created
 * one (a "backward" link) it repairs by merging the other way. Two
 * backward links in a row — worker 2 first, then 1, then 0, the one
 * order of six with two — make the second repair count shard 2's records
 * twice; the final tally says so and the program aborts.
 *
 * Natively each worker begins right after its creation, and main waits
 * for it to begin (a start-up handshake, at most 20 ms, yielding) before
 * it creates the next one: worker 0 arrives first and there is no
 * backward link. Only a worker held before its first instruction for
 * longer than the handshake's 20 ms, twice in a row, gives the failure;
 * without the handshake a stalled vCPU under TCG reversed the starts in
 * up to 13 of 100 plain runs in the VM. The failure needs both worker 0 and
 * worker 1 held before their first instruction until the later-created
 * ones have begun — a new thread's start as a decision point.
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WORKERS		  3
#define RECORDS_PER_SHARD 1000
#define NO_WORKER	  (-1)
#define START_WAIT_NS	  (20 * 1000 * 1000) /* 20 ms */

static int last_arrival = NO_WORKER; /* __atomic: the latest worker to begin */
static int behind[WORKERS];	     /* the worker that arrived before w */
static long shard[WORKERS];	     /* records counted in w's shard */
static int begun;		     /* __atomic: workers that have begun */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* The pool's start-up handshake: wait, yielding, until n workers have
 * begun, for START_WAIT_NS at most — a worker that late is taken to begin
 * on its own. Not a synchronization call: a worker held before its first
 * instruction stays held, and main goes on after the wait. */
static void await_start(int n)
{
	uint64_t deadline = now_ns() + START_WAIT_NS;

	while (__atomic_load_n(&begun, __ATOMIC_ACQUIRE) < n && now_ns() < deadline)
		sched_yield();
}

static void *shard_worker(void *arg)
{
	int self = (int)(long)arg;
	long n;

	/* First thing: join the merge chain behind the previous arrival. */
	behind[self] = __atomic_exchange_n(&last_arrival, self, __ATOMIC_ACQ_REL);
	__atomic_fetch_add(&begun, 1, __ATOMIC_RELEASE);
	for (n = 0; n < RECORDS_PER_SHARD; n++)
		shard[self]++;
	return NULL;
}

/* Merge the shards along the arrival chain, from the last arrival back:
 * each worker's shard into the one of the worker that arrived before it.
 * A backward link (the earlier arrival was created later) is repaired by
 * merging the other way. BUG: the repair empties the other shard only
 * after a forward link; after a repair it takes the other shard for
 * emptied already, which holds for one backward link, not for two in a
 * row: that shard's records are then counted twice. */
static long merge_chain(void)
{
	int w = __atomic_load_n(&last_arrival, __ATOMIC_ACQUIRE), into;
	int repaired = 0;

	while (w != NO_WORKER && behind[w] != NO_WORKER) {
		into = behind[w];
		if (into < w) {
			shard[into] += shard[w];
			shard[w] = 0;
			repaired = 0;
		} else { /* backward link: merge the other way */
			shard[w] += shard[into];
			if (!repaired)
				shard[into] = 0;
			repaired = 1;
		}
		w = into;
	}
	return shard[0] + shard[1] + shard[2];
}

int main(void)
{
	pthread_t t[WORKERS];
	long total;
	int i;

	for (i = 0; i < WORKERS; i++) {
		if (pthread_create(&t[i], NULL, shard_worker, (void *)(long)i))
			return 2;
		await_start(i + 1);
	}
	for (i = 0; i < WORKERS; i++)
		pthread_join(t[i], NULL);
	total = merge_chain();
	if (total != WORKERS * RECORDS_PER_SHARD) {
		fprintf(stderr,
			"race_start_order: merged %ld records, expected %d (arrivals %d<-%d<-%d)\n",
			total, WORKERS * RECORDS_PER_SHARD, behind[0], behind[1], behind[2]);
		abort();
	}
	return 0;
}
