// SPDX-License-Identifier: MIT
/*
 * stencil — a numeric kernel with millions of memory accesses, and no bug:
 * the cost side of issue 12 item 6 (tools/bench/bugs/cost). NTHREADS
 * threads relax their own slices of a 1-D grid for ROUNDS rounds (Jacobi:
 * read three cells of `cur`, write one of `next`), a barrier between
 * rounds, and the grids swap. Each thread reads its neighbours' edge cells,
 * so both grids are shared; everything else a thread touches is its own.
 * At the end main checks the grid's sum against the serial formula
 * (a boundary-fixed Jacobi sweep keeps the sum of the inner cells plus
 * what flows in at the ends); a wrong sum exits 1.
 *
 *   stencil [CELLS [ROUNDS [NTHREADS]]]     default 4096 200 2:
 *                                           3.3 million accesses in the
 *                                           threads, as many in the check
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_THREADS 16
#define MAX_CELLS   (1L << 24)

static double *grid[2];
static long cells, rounds;
static int nthreads;
static pthread_barrier_t bar;

struct slice {
	long lo, hi; /* inner cells [lo, hi) */
};

static void *relax(void *arg)
{
	const struct slice *s = arg;

	for (long r = 0; r < rounds; r++) {
		const double *cur = grid[r & 1];
		double *next = grid[(r + 1) & 1];

		for (long i = s->lo; i < s->hi; i++)
			next[i] = (cur[i - 1] + cur[i] + cur[i + 1]) / 3.0;
		pthread_barrier_wait(&bar);
	}
	return NULL;
}

/* The same sweeps on one thread, for the check. */
static double serial_sum(void)
{
	size_t n = (size_t)(cells < MAX_CELLS ? cells : MAX_CELLS) + 2;
	double *a = calloc(n, sizeof(*a)), *b = calloc(n, sizeof(*b));
	double sum = 0;

	if (!a || !b)
		exit(2);
	for (long i = 0; i < cells + 2; i++)
		a[i] = b[i] = (double)(i % 7);
	for (long r = 0; r < rounds; r++) {
		double *cur = r & 1 ? b : a, *next = r & 1 ? a : b;

		for (long i = 1; i <= cells; i++)
			next[i] = (cur[i - 1] + cur[i] + cur[i + 1]) / 3.0;
	}
	for (long i = 0; i < cells + 2; i++)
		sum += (rounds & 1 ? b : a)[i];
	free(a);
	free(b);
	return sum;
}

int main(int argc, char **argv)
{
	pthread_t th[MAX_THREADS];
	struct slice sl[MAX_THREADS];
	double sum = 0, want;

	cells = argc > 1 ? atol(argv[1]) : 4096;
	rounds = argc > 2 ? atol(argv[2]) : 200;
	nthreads = argc > 3 ? atoi(argv[3]) : 2;
	if (cells < 1 || cells > MAX_CELLS || rounds < 1 || nthreads < 1 ||
	    nthreads > MAX_THREADS) {
		fprintf(stderr, "usage: stencil [CELLS (1-%ld) [ROUNDS [NTHREADS (1-%d)]]]\n",
			MAX_CELLS, MAX_THREADS);
		return 2;
	}
	grid[0] = calloc((size_t)cells + 2, sizeof(double));
	grid[1] = calloc((size_t)cells + 2, sizeof(double));
	if (!grid[0] || !grid[1])
		return 2;
	for (long i = 0; i < cells + 2; i++)
		grid[0][i] = grid[1][i] = (double)(i % 7);
	pthread_barrier_init(&bar, NULL, (unsigned)nthreads);
	for (int t = 0; t < nthreads; t++) {
		sl[t].lo = 1 + cells * t / nthreads;
		sl[t].hi = 1 + cells * (t + 1) / nthreads;
		pthread_create(&th[t], NULL, relax, &sl[t]);
	}
	for (int t = 0; t < nthreads; t++)
		pthread_join(th[t], NULL);
	for (long i = 0; i < cells + 2; i++)
		sum += grid[rounds & 1][i];
	want = serial_sum();
	if (sum != want) {
		fprintf(stderr, "stencil: sum %.17g, serial %.17g\n", sum, want);
		return 1;
	}
	printf("stencil: %ld cells, %ld rounds, %d threads: sum %.6f\n", cells, rounds, nthreads,
	       sum);
	return 0;
}
