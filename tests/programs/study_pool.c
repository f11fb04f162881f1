// SPDX-License-Identifier: MIT
/*
 * study_pool — seed 000 style subject ("pool", an object/thread pool with
 * a cache): a fixed pool of two worker threads takes tasks from a bounded
 * work queue (queue mutex, conditions not-empty / not-full), looks each
 * task's key up in a memo cache (cache mutex), computes on a miss, counts
 * in a stats block (stats mutex) and reports completion (done mutex and
 * condition). main submits the tasks, waits for all of them and shuts the
 * pool down; a monitor thread polls queue length, stats and cache size and
 * evicts cache entries now and then. 18 lock sites on 4 mutexes, plus the
 * condition-variable waits and signals.
 *
 *   study_pool [TASKS [SEED]]   TASKS tasks (default 12), SEED the
 *                               workload seed (default 1)
 *
 * The task keys and the monitor's polls are fixed by the arguments; which
 * worker runs which task is up to the schedule. Exit 0 when every task
 * completed exactly once and the checksum matches, 1 otherwise, 2 on a
 * usage error.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINL	 __attribute__((noinline))
#define QCAP	 3
#define NWORKERS 2
#define NCACHE	 8

static pthread_mutex_t q_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t not_empty = PTHREAD_COND_INITIALIZER;
static pthread_cond_t not_full = PTHREAD_COND_INITIALIZER;
static int queue[QCAP], q_head, q_len, shutting_down;

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static int cache_key[NCACHE], cache_val[NCACHE], cache_used[NCACHE];

static pthread_mutex_t stats_lock = PTHREAD_MUTEX_INITIALIZER;
static int st_started, st_completed, st_hits, st_misses, st_exited, st_evictions;
static long st_checksum;

static pthread_mutex_t done_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t done_cond = PTHREAD_COND_INITIALIZER;
static int pending;

static int ntasks = 12;
static unsigned seed = 1;

static int compute(int key)
{
	int i, v = key;

	for (i = 0; i < 50; i++)
		v = (v * 31 + 7) % 10007;
	return v;
}

static NOINL void pool_submit(int key)
{
	pthread_mutex_lock(&done_lock); /* site submit-pending */
	pending++;
	pthread_mutex_unlock(&done_lock);

	pthread_mutex_lock(&q_lock); /* site submit */
	while (q_len == QCAP)
		pthread_cond_wait(&not_full, &q_lock);
	queue[(q_head + q_len) % QCAP] = key;
	q_len++;
	pthread_cond_signal(&not_empty);
	pthread_mutex_unlock(&q_lock);
}

/* Returns 0 and sets *key, or -1 when the pool shuts down and the queue is empty. */
static NOINL int pool_take(int *key)
{
	int r = -1;

	pthread_mutex_lock(&q_lock); /* site take */
	while (q_len == 0 && !shutting_down)
		pthread_cond_wait(&not_empty, &q_lock);
	if (q_len > 0) {
		*key = queue[q_head];
		q_head = (q_head + 1) % QCAP;
		q_len--;
		pthread_cond_signal(&not_full);
		r = 0;
	}
	pthread_mutex_unlock(&q_lock);
	return r;
}

static NOINL int cache_get(int key, int *val)
{
	int i, hit = 0;

	pthread_mutex_lock(&cache_lock); /* site cache-get */
	for (i = 0; i < NCACHE; i++)
		if (cache_used[i] && cache_key[i] == key) {
			*val = cache_val[i];
			hit = 1;
			break;
		}
	pthread_mutex_unlock(&cache_lock);
	return hit;
}

static NOINL void cache_put(int key, int val)
{
	int slot = key % NCACHE;

	pthread_mutex_lock(&cache_lock); /* site cache-put */
	cache_key[slot] = key;
	cache_val[slot] = val;
	cache_used[slot] = 1;
	pthread_mutex_unlock(&cache_lock);
}

static NOINL int cache_size(void)
{
	int i, n = 0;

	pthread_mutex_lock(&cache_lock); /* site cache-size */
	for (i = 0; i < NCACHE; i++)
		n += cache_used[i];
	pthread_mutex_unlock(&cache_lock);
	return n;
}

static NOINL int cache_evict(int slot)
{
	int was;

	pthread_mutex_lock(&cache_lock); /* site cache-evict */
	was = cache_used[slot % NCACHE];
	cache_used[slot % NCACHE] = 0;
	pthread_mutex_unlock(&cache_lock);
	if (was) {
		pthread_mutex_lock(&stats_lock); /* site stats-evict */
		st_evictions++;
		pthread_mutex_unlock(&stats_lock);
	}
	return was;
}

static NOINL void task_done(void)
{
	pthread_mutex_lock(&done_lock); /* site task-done */
	if (--pending == 0)
		pthread_cond_broadcast(&done_cond);
	pthread_mutex_unlock(&done_lock);
}

static void *worker(void *arg)
{
	int key, val;

	while (pool_take(&key) == 0) {
		int hit;

		pthread_mutex_lock(&stats_lock); /* site stats-start */
		st_started++;
		pthread_mutex_unlock(&stats_lock);

		hit = cache_get(key, &val);
		if (!hit) {
			val = compute(key);
			cache_put(key, val);
		}

		pthread_mutex_lock(&stats_lock); /* site stats-end */
		st_completed++;
		st_checksum += val;
		if (hit)
			st_hits++;
		else
			st_misses++;
		pthread_mutex_unlock(&stats_lock);
		task_done();
	}
	pthread_mutex_lock(&stats_lock); /* site worker-exit */
	st_exited++;
	pthread_mutex_unlock(&stats_lock);
	return arg;
}

static NOINL int pool_queue_length(void)
{
	int n;

	pthread_mutex_lock(&q_lock); /* site queue-length */
	n = q_len;
	pthread_mutex_unlock(&q_lock);
	return n;
}

static NOINL int pool_completed(void)
{
	int n;

	pthread_mutex_lock(&stats_lock); /* site get-stats */
	n = st_completed + st_hits - st_misses;
	pthread_mutex_unlock(&stats_lock);
	return n;
}

static NOINL int pool_pending(void)
{
	int n;

	pthread_mutex_lock(&done_lock); /* site get-pending */
	n = pending;
	pthread_mutex_unlock(&done_lock);
	return n;
}

static void *monitor(void *arg)
{
	volatile long sink = 0;
	int i, polls = ntasks / 2 + 1;

	for (i = 0; i < polls; i++) {
		sink += pool_queue_length();
		sink += pool_completed();
		if (i % 2)
			sink += pool_pending();
		if (i % 3 == 2)
			sink += cache_evict(i);
		else
			sink += cache_size();
	}
	(void)sink;
	return arg;
}

static NOINL void pool_await(void)
{
	pthread_mutex_lock(&done_lock); /* site await */
	while (pending > 0)
		pthread_cond_wait(&done_cond, &done_lock);
	pthread_mutex_unlock(&done_lock);
}

static NOINL void pool_shutdown(void)
{
	pthread_mutex_lock(&q_lock); /* site shutdown */
	shutting_down = 1;
	pthread_cond_broadcast(&not_empty);
	pthread_mutex_unlock(&q_lock);
}

static unsigned next_rand(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (*s >> 16) & 0x7fff;
}

int main(int argc, char **argv)
{
	pthread_t w[NWORKERS], mon;
	unsigned s;
	long expect = 0;
	int i, ok;

	if (argc > 1)
		ntasks = atoi(argv[1]);
	if (argc > 2)
		seed = (unsigned)strtoul(argv[2], NULL, 0);
	if (argc > 3 || ntasks < 1 || ntasks > 100000) {
		fprintf(stderr, "usage: study_pool [TASKS [SEED]]\n");
		return 2;
	}
	for (i = 0; i < NWORKERS; i++)
		pthread_create(&w[i], NULL, worker, NULL);
	pthread_create(&mon, NULL, monitor, NULL);
	s = seed * 2246822519u + 3u;
	for (i = 0; i < ntasks; i++) {
		int key = (int)(next_rand(&s) % 10);

		expect += compute(key);
		pool_submit(key);
	}
	pool_await();
	pool_shutdown();
	for (i = 0; i < NWORKERS; i++)
		pthread_join(w[i], NULL);
	pthread_join(mon, NULL);

	pthread_mutex_lock(&stats_lock); /* site final-stats */
	ok = st_started == ntasks && st_completed == ntasks && st_hits + st_misses == ntasks &&
	     st_exited == NWORKERS && st_checksum == expect;
	pthread_mutex_unlock(&stats_lock);
	if (!ok) {
		fprintf(stderr, "study_pool: lost or duplicated tasks\n");
		return 1;
	}
	printf("tasks %d hits %d misses %d evictions %d\n", ntasks, st_hits, st_misses,
	       st_evictions);
	return 0;
}
