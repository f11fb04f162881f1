// SPDX-License-Identifier: MIT
/*
 * Load-cost benchmark (issue 18): what the kernel's verifier spends on each
 * program of a probe object, the fixed cost every campaign, `observe` and
 * `-j` worker pays before its first run. Loads the object ROUNDS times
 * (as the campaign does, but without attaching anything) with the
 * verifier's statistics on (BPF_LOG_STATS) and prints, per program, the
 * median verification time and the instructions the verifier processed,
 * and the median wall time of the whole load (maps created, programs
 * verified, all freed again).
 *
 *   load_cost OBJECT.bpf.o [ROUNDS]     (root; default 5 rounds)
 * Prints a Markdown table (docs/perf.md, "The probe object's load").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <bpf/libbpf.h>

#define MAX_PROGS  32
#define MAX_ROUNDS 99
#define LOG_SIZE   4096

struct prog_cost {
	char name[64];
	long usec[MAX_ROUNDS];
	long insns;
};

static int cmp_long(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;

	return (x > y) - (x < y);
}

static long median(long *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_long);
	return v[n / 2];
}

static int silent(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_WARN)
		return vfprintf(stderr, fmt, ap);
	return 0;
}

/* One load: the programs' statistics into costs; the wall time in usec,
 * or -1. */
static long load_once(const char *path, struct prog_cost *costs, int *nprogs, int round)
{
	static char logs[MAX_PROGS][LOG_SIZE];
	struct bpf_object *obj = bpf_object__open_file(path, NULL);
	struct bpf_program *p;
	struct timespec t0, t1;
	int i = 0, err;

	if (!obj) {
		fprintf(stderr, "load_cost: %s: %s\n", path, strerror(errno));
		return -1;
	}
	bpf_object__for_each_program(p, obj)
	{
		if (i == MAX_PROGS)
			break;
		logs[i][0] = '\0';
		bpf_program__set_log_level(p, 4); /* BPF_LOG_STATS */
		bpf_program__set_log_buf(p, logs[i], LOG_SIZE);
		i++;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	err = bpf_object__load(obj);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (err) {
		fprintf(stderr, "load_cost: %s: load failed: %s\n", path, strerror(-err));
		bpf_object__close(obj);
		return -1;
	}
	i = 0;
	bpf_object__for_each_program(p, obj)
	{
		const char *v, *n;

		if (i == MAX_PROGS)
			break;
		snprintf(costs[i].name, sizeof(costs[i].name), "%s", bpf_program__name(p));
		v = strstr(logs[i], "verification time ");
		n = strstr(logs[i], "processed ");
		costs[i].usec[round] = v ? strtol(v + strlen("verification time "), NULL, 10) : -1;
		costs[i].insns = n ? strtol(n + strlen("processed "), NULL, 10) : -1;
		i++;
	}
	*nprogs = i;
	bpf_object__close(obj);
	return (t1.tv_sec - t0.tv_sec) * 1000000L + (t1.tv_nsec - t0.tv_nsec) / 1000;
}

int main(int argc, char **argv)
{
	static struct prog_cost costs[MAX_PROGS];
	long wall[MAX_ROUNDS], total = 0;
	int rounds = argc > 2 ? atoi(argv[2]) : 5, nprogs = 0, r, i;

	if (argc < 2 || rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: load_cost OBJECT.bpf.o [ROUNDS (1-%d)]\n", MAX_ROUNDS);
		return 2;
	}
	libbpf_set_print(silent);
	for (r = 0; r < rounds; r++) {
		wall[r] = load_once(argv[1], costs, &nprogs, r);
		if (wall[r] < 0)
			return 1;
	}
	printf("| program | verified in (median of %d) | instructions processed |\n", rounds);
	printf("|---|---:|---:|\n");
	for (i = 0; i < nprogs; i++) {
		long us = median(costs[i].usec, rounds);

		total += us;
		printf("| %s | %.1f ms | %ld |\n", costs[i].name, us / 1000.0, costs[i].insns);
	}
	printf("| all | %.1f ms | |\n", total / 1000.0);
	printf("\nThe whole load (maps and programs), median of %d: %.1f ms.\n", rounds,
	       median(wall, rounds) / 1000.0);
	return 0;
}
