// SPDX-License-Identifier: MIT
/*
 * Access-probe costs (issue 7 item 8), run by tools/bench/access_cost.sh:
 *  - attach: load + decode table + uprobe.multi attach of N sites of libc
 *    (first N sites found by the site finder) for one sleeping process,
 *    then detach;
 *  - per hit: a loop calling bench_hit(), whose one instruction
 *    "add dword ptr [rdi], 1" is a memory site, with no probe, with the
 *    empty access_bare program (the uprobe's own cost), with access_hit
 *    counting only, and with access_hit writing ring-buffer events.
 * Needs root. Output: markdown table rows.
 */
#include <bpf/libbpf.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "access.skel.h"
#include "kernel/access_probes.h"
#include "kernel/site_finder.h"
#include "kernel/symbolize.h"
#include "lib/log.h"
#include "lib/now.h"

__attribute__((noinline)) void bench_hit(int *p)
{
	__asm__ volatile("addl $1, (%0)" ::"r"(p) : "memory");
}

static int quiet(enum libbpf_print_level l, const char *f, va_list ap)
{
	return 0;
}

static void bench_attach(const struct site_set *all, size_t n)
{
	struct access_probes_opts po = { .record_events = false };
	struct site_set sub = *all;
	struct access_probes ap;
	uint64_t t0, t_open, t_close;
	pid_t child;

	if (all->n < n) {
		printf("| attach %zu sites | only %zu sites available | | |\n", n, all->n);
		return;
	}
	sub.n = n;
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	t0 = now_ns();
	if (access_probes_open(&ap, &sub, child, &po)) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return;
	}
	t_open = now_ns() - t0;
	t0 = now_ns();
	printf("| attach %zu libc sites | %zu attached | %.1f ms attach (%.1f ms with load) |", n,
	       ap.attached, ap.attach_ns / 1e6, t_open / 1e6);
	access_probes_close(&ap);
	t_close = now_ns() - t0;
	printf(" %.1f ms detach |\n", t_close / 1e6);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

/* Best of three loops: the host is a shared VM, noise only adds time. */
static double bench_loop(long loops)
{
	static int x;
	double best = 0;
	int rep;

	for (rep = 0; rep < 3; rep++) {
		uint64_t t0 = now_ns();
		double ns;
		long i;

		for (i = 0; i < loops; i++)
			bench_hit(&x);
		ns = (double)(now_ns() - t0) / (double)loops;
		if (!rep || ns < best)
			best = ns;
	}
	return best;
}

static void bench_hits(const char *self, long loops)
{
	const char *inc[] = { "bench_hit" };
	struct site_filter f = { .include = inc, .ninclude = 1 };
	struct site_set set = { 0 };
	struct access_probes_opts po = { .record_events = false };
	struct access_probes ap;
	struct access_bpf *skel;
	struct bpf_link *link;
	LIBBPF_OPTS(bpf_uprobe_multi_opts, o);
	unsigned long off;
	double none, bare, counted, events;

	if (site_finder_find(self, &f, &set) || set.n != 1) {
		printf("| per hit | bench_hit site not found (%zu) | | |\n", set.n);
		return;
	}
	none = bench_loop(loops);
	skel = access_bpf__open_and_load();
	off = set.sites[0].probe_offset;
	o.offsets = &off;
	o.cnt = 1;
	link = skel ? bpf_program__attach_uprobe_multi(skel->progs.access_bare, getpid(), self,
						       NULL, &o)
		    : NULL;
	bare = link ? bench_loop(loops) : -1;
	bpf_link__destroy(link);
	access_bpf__destroy(skel);
	counted = events = -1;
	if (access_probes_open(&ap, &set, getpid(), &po) == 0) {
		counted = bench_loop(loops);
		access_probes_close(&ap);
	}
	po.record_events = true;
	if (access_probes_open(&ap, &set, getpid(), &po) == 0) {
		events = bench_loop(loops);
		access_probes_poll(&ap, 0);
		printf("| events recorded | %zu of %ld calls | | |\n", ap.nevents, 3 * loops);
		access_probes_close(&ap);
	}
	printf("| per hit, %s | no probe %.0f ns | bare uprobe %.0f ns | access probe %.0f ns "
	       "counting, %.0f ns with events |\n",
	       set.sites[0].insn, none, bare, counted, events);
	site_finder_set_free(&set);
}

int main(int argc, char **argv)
{
	long loops = argc > 1 ? atol(argv[1]) : 20000;
	struct site_set libc = { 0 };
	char self[4096];
	ssize_t len;
	char *path;

	if (geteuid() != 0) {
		log_err("access_cost needs root (uprobes)");
		return 2;
	}
	libbpf_set_print(quiet);
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (len <= 0)
		return 2;
	self[len] = 0;
	path = site_finder_resolve_object(NULL, "libc");
	if (!path || site_finder_find(path, NULL, &libc)) {
		log_err("cannot decode libc");
		return 2;
	}
	printf("| measurement | result | | |\n|---|---|---|---|\n");
	bench_attach(&libc, 1000);
	bench_attach(&libc, 10000);
	bench_hits(self, loops);
	site_finder_set_free(&libc);
	free(path);
	symbolize_cache_flush();
	return 0;
}
