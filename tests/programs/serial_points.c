// SPDX-License-Identifier: MIT
/*
 * serial_points THREADS CALLS [WORK_US] — THREADS workers (at most 16)
 * each call point() CALLS times (at most 1000). A step is what a worker
 * runs after a point() call, up to its next call (or its exit): it logs
 * itself and busy-works WORK_US microseconds (default 100).
 *
 * Parked at every point() call in serial mode (concsched sched --serial
 * MODE --park-at point, release all-parked: the longest-parked thread
 * goes) the workers take turns, one step each: the log is a round robin.
 * A park that did not happen lets a worker run two steps in a row.
 * Prints "marker 0x..." (point's address), "steps N overlap K breaks B"
 * (K: steps during which another worker was inside its own step; B: steps
 * whose worker is not the one THREADS steps earlier) and "order ..." (the
 * worker of every step, one hex digit each).
 *
 * With SERIAL_POINTS_SHARED=FILE, copies of it running at once (concsched
 * sched --copies N) count their steps in FILE too, and each prints
 * "cross C": C of its steps saw a worker of another copy inside its own
 * step. Copies steered as targets of their own run at once (C > 0), each
 * still one thread at a time (overlap 0).
 *
 * Last it prints "blocked K faulted F": K steps slept in the kernel (a
 * voluntary context switch inside the step: serial mode then lets the next
 * thread run, by design), F steps took a page fault. Every page a step
 * touches is mapped before the workers start, so both are 0 unless
 * something outside the program took a page away.
 */
#define _GNU_SOURCE /* RUSAGE_THREAD */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define MAX_THREADS 16
#define MAX_CALLS   1000

static atomic_int nsteps, inside, overlap, cross, blocked, faulted;
static atomic_int *shared_inside; /* SERIAL_POINTS_SHARED: every copy's steps */
static int calls, work_us;
static unsigned char step_worker[MAX_THREADS * MAX_CALLS];

__attribute__((noinline)) void point(void)
{
	__asm__ volatile("" ::: "memory");
}

static long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void *worker(void *arg)
{
	int id = (int)(long)arg;
	struct rusage r;

	/* this thread's stack as deep as a step goes, before its first point */
	getrusage(RUSAGE_THREAD, &r);
	(void)now_ns();
	for (int c = 0; c < calls; c++) {
		struct rusage r0, r1;
		long long t;

		int seen = 0;

		point();
		getrusage(RUSAGE_THREAD, &r0);
		if (atomic_fetch_add(&inside, 1) != 0)
			atomic_fetch_add(&overlap, 1);
		if (shared_inside)
			atomic_fetch_add(shared_inside, 1);
		step_worker[atomic_fetch_add(&nsteps, 1)] = (unsigned char)id;
		t = now_ns();
		while (now_ns() - t < work_us * 1000LL)
			if (shared_inside && !seen &&
			    atomic_load(shared_inside) - atomic_load(&inside) > 0)
				seen = 1;
		if (seen)
			atomic_fetch_add(&cross, 1);
		getrusage(RUSAGE_THREAD, &r1);
		if (r1.ru_nvcsw != r0.ru_nvcsw)
			atomic_fetch_add(&blocked, 1);
		if (r1.ru_minflt + r1.ru_majflt != r0.ru_minflt + r0.ru_majflt)
			atomic_fetch_add(&faulted, 1);
		if (shared_inside)
			atomic_fetch_sub(shared_inside, 1);
		atomic_fetch_sub(&inside, 1);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 4, breaks = 0, s;
	pthread_t t[MAX_THREADS];

	calls = argc > 2 ? atoi(argv[2]) : 10;
	work_us = argc > 3 ? atoi(argv[3]) : 100;
	if (n < 1 || n > MAX_THREADS || calls < 1 || calls > MAX_CALLS || work_us < 0) {
		fprintf(stderr, "usage: serial_points THREADS(1-16) CALLS(1-1000) [WORK_US]\n");
		return 2;
	}
	if (getenv("SERIAL_POINTS_SHARED")) {
		int fd = open(getenv("SERIAL_POINTS_SHARED"), O_RDWR | O_CREAT, 0666);

		if (fd < 0 || ftruncate(fd, 4096)) {
			perror("serial_points: SERIAL_POINTS_SHARED");
			return 2;
		}
		shared_inside = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (shared_inside == MAP_FAILED) {
			perror("serial_points: mmap");
			return 2;
		}
		close(fd);
	}
	/* Every page a step touches is mapped before the first worker starts.
	 * A step that faulted on one could sleep in the kernel (the copies'
	 * shared page is made by whichever copy touches it first, and another
	 * copy faulting on it meanwhile waits on its lock), and a sleeping
	 * thread gives its serial token up: the next thread is released and
	 * runs while the sleeper is inside its step ("overlap"). Before this,
	 * the first step of every copy faulted (2026-11-29, 125 of 125 copies
	 * under --copies 2 and 3). */
	if (shared_inside)
		atomic_fetch_add(shared_inside, 0);
	for (size_t i = 0; i < sizeof(step_worker); i += 1024)
		((volatile unsigned char *)step_worker)[i] = 0;
	(void)now_ns();
	printf("marker %p\n", (void *)point);
	fflush(stdout);
	for (long i = 0; i < n; i++)
		pthread_create(&t[i], NULL, worker, (void *)i);
	for (int i = 0; i < n; i++)
		pthread_join(t[i], NULL);
	for (s = n; s < nsteps; s++)
		if (step_worker[s] != step_worker[s - n])
			breaks++;
	printf("steps %d overlap %d breaks %d\norder ", atomic_load(&nsteps), atomic_load(&overlap),
	       breaks);
	for (s = 0; s < nsteps; s++)
		printf("%x", step_worker[s]);
	printf("\n");
	if (shared_inside)
		printf("cross %d\n", atomic_load(&cross));
	printf("blocked %d faulted %d\n", atomic_load(&blocked), atomic_load(&faulted));
	return 0;
}
