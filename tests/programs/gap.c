// SPDX-License-Identifier: MIT
/*
 * gap ROUNDS [HOLD_MS [LATE_MS]] — how far does a thread run past a park
 * point? Each round a worker calls marker() and then counts loop
 * iterations until told to stop. The main thread waits HOLD_MS (default
 * 20) after the worker announced it is about to call marker(), then reads
 * the counter. Parked synchronously at marker() (KERNEL.md "Gap test") the
 * worker has executed 0 iterations; unparked, millions. Prints the address
 * of marker ("marker 0x...") and "rounds N zero Z max M" (iterations seen
 * at HOLD).
 *
 * After each read main calls read_done(): a release point
 * (`--release-at read_done`) that lets the worker go only once the count
 * was read, whatever the read's delay (tests/vm/11-sched-park.t).
 *
 * LATE_MS: a park that only a timer ends (the watchdog's LATE_MS) must
 * still hold at a read that came sooner than LATE_MS after the worker's
 * announcement (taken before its park): such a read must see 0. A read
 * that came later (a loaded host held main) tells nothing: the round is
 * "late", counted apart and in neither zero nor max. Prints
 * "rounds N zero Z max M late L" (tests/vm/12-sched-delay.t).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static atomic_int about_to_mark, stop;
static atomic_long count;
static _Atomic int64_t announced_ns; /* the worker's clock at its announcement */

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

__attribute__((noinline)) void marker(void)
{
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) void read_done(void)
{
	__asm__ volatile("" ::: "memory");
}

static void *worker(void *arg)
{
	atomic_store(&announced_ns, now_ns());
	atomic_store(&about_to_mark, 1);
	marker();
	while (!atomic_load(&stop))
		atomic_fetch_add(&count, 1);
	return NULL;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1, hold_ms = argc > 2 ? atoi(argv[2]) : 20;
	int late_ms = argc > 3 ? atoi(argv[3]) : 0;
	struct timespec hold = { hold_ms / 1000, (hold_ms % 1000) * 1000000L };
	long seen, max = 0;
	int zero = 0, late = 0;
	int64_t read_ns;
	pthread_t t;

	fprintf(stderr, "marker %p\n", (void *)marker);
	printf("marker %p\n", (void *)marker);
	for (int i = 0; i < rounds; i++) {
		atomic_store(&about_to_mark, 0);
		atomic_store(&stop, 0);
		atomic_store(&count, 0);
		pthread_create(&t, NULL, worker, NULL);
		while (!atomic_load(&about_to_mark))
			;
		nanosleep(&hold, NULL);
		seen = atomic_load(&count);
		read_ns = now_ns(); /* after the read: the read came no later */
		read_done();
		atomic_store(&stop, 1);
		pthread_join(t, NULL);
		if (late_ms && read_ns - atomic_load(&announced_ns) >= (int64_t)late_ms * 1000000) {
			late++;
			continue;
		}
		if (seen == 0)
			zero++;
		if (seen > max)
			max = seen;
	}
	if (late_ms)
		printf("rounds %d zero %d max %ld late %d\n", rounds, zero, max, late);
	else
		printf("rounds %d zero %d max %ld\n", rounds, zero, max);
	return 0;
}
