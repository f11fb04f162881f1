// SPDX-License-Identifier: MIT
/*
 * links_destroy (userspace/kernel/links.c; root, skipped otherwise): five
 * uprobe links on a function of this test, given with NULL slots between
 * and after them, are all gone when it returns (their ids no longer name a
 * link), and the probed function no longer runs the program; an empty or
 * all-NULL set returns; sync_probes_detach leaves no link either.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kernel/links.h"
#include "kernel/sync.h"
#include "sync.skel.h"
#include "tap.h"

#define NSLOTS 8

/* The probed function: not inlined, so each call enters it. */
__attribute__((noinline)) int links_probe_target(int x)
{
	__asm__ volatile("" ::: "memory");
	return x + 1;
}

static __u32 link_id(struct bpf_link *l)
{
	struct bpf_link_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_link_get_info_by_fd(bpf_link__fd(l), &info, &len))
		return 0;
	return info.id;
}

/* How many of the ids still name a link. */
static int live(const __u32 *ids, int n)
{
	int i, fd, alive = 0;

	for (i = 0; i < n; i++) {
		fd = bpf_link_get_fd_by_id(ids[i]);
		if (fd >= 0) {
			alive++;
			close(fd);
		}
	}
	return alive;
}

/* The program's run count (bpf_stats_enabled must be on). */
static unsigned long long prog_runs(struct bpf_program *p)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_prog_get_info_by_fd(bpf_program__fd(p), &info, &len))
		return 0;
	return info.run_cnt;
}

int main(void)
{
	static const int slot_of[] = { 1, 2, 4, 5, 6 }; /* 0, 3, 7: NULL */
	struct sync_probe_opts o = { 0 };
	struct bpf_link *links[NSLOTS] = { 0 }, *none[3] = { 0 };
	struct sync_probes sp;
	char self[PATH_MAX];
	__u32 ids[5] = { 0 };
	unsigned long long before, after;
	int i, n = 0, stats_fd;
	ssize_t len;

	tap_plan(6);
	if (geteuid() != 0) {
		for (i = 0; i < 6; i++)
			tap_skip("needs root (uprobes)", "links_destroy");
		return tap_done();
	}
	len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	self[len > 0 ? len : 0] = '\0';
	memset(&sp, 0, sizeof(sp));
	if (sync_probes_open(&sp, &o)) {
		tap_ok(0, "sync probes open");
		return tap_done();
	}
	for (i = 0; i < 5; i++) {
		links[slot_of[i]] = bpf_program__attach_uprobe_multi(
			sp.skel->progs.cs_sync_enter, getpid(), self, "links_probe_target", NULL);
		if (!links[slot_of[i]])
			break;
		ids[n++] = link_id(links[slot_of[i]]);
	}
	tap_is_int(n, 5, "five uprobe links on links_probe_target");
	tap_is_int(live(ids, n), 5, "each id names a live link");

	/* The links run the program: bpf_stats counts its runs. */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	before = prog_runs(sp.skel->progs.cs_sync_enter);
	links_probe_target(1);
	after = prog_runs(sp.skel->progs.cs_sync_enter);
	tap_ok(stats_fd >= 0 && after - before == 5,
	       "a call runs the program once a link (%llu runs)", after - before);

	links_destroy(links, NSLOTS);
	tap_is_int(live(ids, n), 0, "after links_destroy no id names a link");
	before = prog_runs(sp.skel->progs.cs_sync_enter);
	links_probe_target(2);
	after = prog_runs(sp.skel->progs.cs_sync_enter);
	tap_ok(stats_fd >= 0 && after == before, "the probed function no longer runs the program");
	if (stats_fd >= 0)
		close(stats_fd);

	/* Nothing to destroy: returns at once (a crash fails the plan). */
	links_destroy(none, 0);
	links_destroy(none, 3);

	/* sync_probes_detach destroys through links_destroy too. */
	sp.links[0] = bpf_program__attach_uprobe_multi(sp.skel->progs.cs_sync_enter, getpid(), self,
						       "links_probe_target", NULL);
	sp.links[1] = bpf_program__attach_uprobe_multi(sp.skel->progs.cs_sync_enter, getpid(), self,
						       "links_probe_target", NULL);
	sp.nlinks = 2;
	ids[0] = sp.links[0] ? link_id(sp.links[0]) : 0;
	ids[1] = sp.links[1] ? link_id(sp.links[1]) : 0;
	sync_probes_detach(&sp);
	tap_ok(ids[0] && ids[1] && live(ids, 2) == 0 && sp.nlinks == 0,
	       "sync_probes_detach leaves no link");
	sync_probes_close(&sp);
	return tap_done();
}
