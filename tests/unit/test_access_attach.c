// SPDX-License-Identifier: MIT
/*
 * Access-probe attach (root; skipped otherwise): every site of
 * build/tests/programs/accesses attaches for a sleeping process, except one
 * forced onto a lock-prefixed instruction, which the kernel refuses and the
 * bisection leaves out without losing the others; detach leaves nothing.
 * The attach keeps libbpf quiet meanwhile and gives its print function
 * back, never as NULL (access_probes.c access_quiet_print: with -j N a
 * NULL stored while another worker's libbpf_print runs is a call to 0).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "kernel/access_probes.h"
#include "kernel/symbolize.h"
#include "tap.h"
#include "lib/self.h"

static int nprinted;

static int count_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	nprinted++;
	return 0;
}

int main(void)
{
	const char *inc[] = { "acc_*" };
	struct site_filter f = { .include = inc, .ninclude = 1 };
	struct access_probes_opts po = { .record_events = true };
	struct site_set set = { 0 };
	struct access_probes ap;
	libbpf_print_fn_t back;
	char prog[PATH_MAX + 64];
	size_t i, locked = SIZE_MAX;
	pid_t child;
	int err;

	tap_plan(7);
	if (geteuid() != 0) {
		for (i = 0; i < 7; i++)
			tap_skip("needs root (uprobes)", "access probe attach");
		return tap_done();
	}
	snprintf(prog, sizeof(prog), "%s/../programs/accesses", self_dir());
	site_finder_find(prog, &f, &set);
	for (i = 0; i < set.n; i++)
		if (set.sites[i].function && !strcmp(set.sites[i].function, "acc_atomic_add"))
			locked = i;
	tap_ok(locked != SIZE_MAX && set.sites[locked].probe_offset != set.sites[locked].offset,
	       "the lock add site is probed beside its instruction");
	if (locked == SIZE_MAX)
		return tap_done();
	/* Undo that: probe the lock-prefixed instruction itself. */
	set.sites[locked].probe_offset = set.sites[locked].offset;

	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	err = access_probes_load(&ap, &set, &po);
	if (!err) {
		libbpf_set_print(count_print);
		err = access_probes_attach(&ap, child, NULL);
		back = libbpf_set_print(NULL);
		tap_ok(back == count_print && !nprinted,
		       "the attach gives the caller's print function back, the refusal unsaid (%d "
		       "printed)",
		       nprinted);
	} else {
		tap_ok(false, "the attach gives the caller's print function back (not loaded)");
	}
	tap_is_int(err, 0, "access probes attach");
	tap_ok(!err && ap.attached == set.n - 1 && ap.candidates == set.n,
	       "all sites but the refused one attached (%zu of %zu)", ap.attached, set.n);
	tap_ok(!err && !ap.attached_site[locked] && ap.attached_site[locked ? 0 : 1],
	       "the refused site is the lock-prefixed one");
	/* As a campaign: libbpf silenced with NULL, the attach made again. */
	if (!err)
		err = access_probes_attach(&ap, child, NULL);
	back = libbpf_set_print(NULL);
	tap_ok(!err && back != NULL,
	       "attached again with libbpf silenced by NULL: silence comes back as a function, "
	       "never NULL");
	access_probes_close(&ap);
	tap_ok(ap.skel == NULL && ap.nlinks == 0, "closed: no links held");
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	site_finder_set_free(&set);
	symbolize_cache_flush();
	return tap_done();
}
