// SPDX-License-Identifier: MIT
/*
 * pipeline_ledger.h — the body of race_pipeline_ledger (FINISH_LOCKED 0)
 * and clean_pipeline_ledger (FINISH_LOCKED 1). PROG names the program in
 * its messages.
 *
 * Two streams, each a producer and a consumer joined by a ring of RING
 * blocks (a mutex and two condition variables). A block is WORDS longs
 * and a checksum; the producer fills it, the consumer recomputes and
 * checks the checksum, so every block is WORDS plain stores and WORDS
 * plain loads of shared memory: the streams' 75 and 150 blocks make
 * about 1.8 million accesses per run, with about 1,600 synchronization
 * calls. Shared bookkeeping, the ledger:
 * blocks_in (each producer, per block) and blocks_out (each consumer, in
 * batches: it counts blocks locally and adds the count every FLUSH_EVERY
 * blocks, ledger_flush()), both under ledger_lock, and checked by main at
 * the end (blocks_out == blocks_in == all blocks, or exit 1). The bug: a
 * consumer's last batch is added without the lock (consumer_finish), so
 * the other consumer's flush between its read and its write is lost.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

#define STREAMS	    2
#define RING	    4
#define WORDS	    4096
#define FLUSH_EVERY 8

static const long stream_blocks[STREAMS] = { 75, 150 };

struct block {
	long seq; /* -1: the end of the stream */
	long checksum;
	long word[WORDS];
};

struct ring {
	pthread_mutex_t lock;
	pthread_cond_t not_empty, not_full;
	unsigned head, tail; /* under lock; head - tail blocks queued */
	struct block slot[RING];
};

static struct ring rings[STREAMS];

static pthread_mutex_t ledger_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
	long blocks_in;	 /* under ledger_lock */
	long blocks_out; /* under ledger_lock */
} ledger;

static void ring_put(struct ring *r, long seq, long stream)
{
	struct block *b;
	long sum = 0;

	pthread_mutex_lock(&r->lock);
	while (r->head - r->tail == RING)
		pthread_cond_wait(&r->not_full, &r->lock);
	b = &r->slot[r->head % RING];
	pthread_mutex_unlock(&r->lock); /* only the producer writes a free slot */
	b->seq = seq;
	for (long i = 0; i < WORDS && seq >= 0; i++) {
		b->word[i] = (seq * WORDS + i) ^ stream;
		sum += b->word[i];
	}
	b->checksum = sum;
	pthread_mutex_lock(&r->lock);
	r->head++;
	pthread_cond_signal(&r->not_empty);
	pthread_mutex_unlock(&r->lock);
}

/* Checks and retires the oldest block; returns its seq (-1 at the end). */
static long ring_take(struct ring *r)
{
	struct block *b;
	long sum = 0, seq;

	pthread_mutex_lock(&r->lock);
	while (r->head == r->tail)
		pthread_cond_wait(&r->not_empty, &r->lock);
	b = &r->slot[r->tail % RING];
	pthread_mutex_unlock(&r->lock); /* only the consumer reads a full slot */
	seq = b->seq;
	for (long i = 0; i < WORDS && seq >= 0; i++)
		sum += b->word[i];
	if (seq >= 0 && sum != b->checksum) {
		fprintf(stderr, PROG ": block %ld: checksum %ld, want %ld\n", seq, sum,
			b->checksum);
		assert(sum == b->checksum);
	}
	pthread_mutex_lock(&r->lock);
	r->tail++;
	pthread_cond_signal(&r->not_full);
	pthread_mutex_unlock(&r->lock);
	return seq;
}

static void *producer(void *arg)
{
	long s = (long)arg;

	for (long seq = 0; seq < stream_blocks[s]; seq++) {
		ring_put(&rings[s], seq, s);
		pthread_mutex_lock(&ledger_lock);
		ledger.blocks_in++;
		pthread_mutex_unlock(&ledger_lock);
	}
	ring_put(&rings[s], -1, s);
	return NULL;
}

__attribute__((noinline)) static void ledger_flush(long done)
{
	pthread_mutex_lock(&ledger_lock);
	ledger.blocks_out += done;
	pthread_mutex_unlock(&ledger_lock);
}

/* The end of a stream: the last batch goes to the ledger. */
__attribute__((noinline)) static void consumer_finish(long done)
{
#if FINISH_LOCKED
	ledger_flush(done);
#else
	/* BUG: the one update without ledger_lock, a read and a write (as the
	 * compiler keeps them when something sits between: a bounds check, a
	 * log call; here an empty asm). A bare `+=` compiles to one add to
	 * memory, which no scheduler can split and the VM's emulation runs
	 * whole: docs/strategies.md "race_pipeline_ledger". */
	long out = ledger.blocks_out;

	__asm__ volatile("" ::: "memory");
	ledger.blocks_out = out + done;
#endif
}

static void *consumer(void *arg)
{
	long s = (long)arg, done = 0;

	while (ring_take(&rings[s]) >= 0) {
		if (++done == FLUSH_EVERY) {
			ledger_flush(done);
			done = 0;
		}
	}
	consumer_finish(done);
	return NULL;
}

int main(void)
{
	pthread_t prod[STREAMS], cons[STREAMS];
	long all = 0;

	for (long s = 0; s < STREAMS; s++) {
		pthread_mutex_init(&rings[s].lock, NULL);
		pthread_cond_init(&rings[s].not_empty, NULL);
		pthread_cond_init(&rings[s].not_full, NULL);
		all += stream_blocks[s];
	}
	for (long s = 0; s < STREAMS; s++)
		if (pthread_create(&cons[s], NULL, consumer, (void *)s) ||
		    pthread_create(&prod[s], NULL, producer, (void *)s))
			return 2;
	for (int s = 0; s < STREAMS; s++) {
		pthread_join(prod[s], NULL);
		pthread_join(cons[s], NULL);
	}
	if (ledger.blocks_in != all || ledger.blocks_out != all) {
		fprintf(stderr, PROG ": ledger in %ld out %ld, want %ld\n", ledger.blocks_in,
			ledger.blocks_out, all);
		return 1;
	}
	return 0;
}
