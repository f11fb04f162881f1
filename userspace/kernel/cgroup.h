/* SPDX-License-Identifier: MIT */
/*
 * A cgroup v2 for the target's runs (cgroup.c, used by the launcher): the
 * target joins ROOT/concsched/<pid>-<n> before it execs, and at the end of
 * the run everything still in it (children that outlived main, daemons,
 * grandchildren that left the process group) is killed with cgroup.kill.
 * A campaign's worker keeps one such cgroup while its runs leave nothing
 * in it (cgroup_reusable) and removes it at the end; a launch of its
 * own removes its cgroup when it ends. ROOT is the cgroup2 mount (/sys/fs/cgroup, or
 * wherever /proc/self/mountinfo has one; $CONCSCHED_CGROUP_ROOT overrides).
 * Cgroups of a concsched that died (kill -9) are emptied and removed when
 * the next one sets up.
 */
#ifndef CONCSCHED_CGROUP_H
#define CONCSCHED_CGROUP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct run_cgroup {
	char *path;  /* NULL: none (cgroup v2 not usable) */
	bool killed; /* cgroup_kill'ed: not to be reused */
};

/* Create the next run's cgroup. 0, or -errno when cgroup v2 is not usable
 * here: the first failure in a process is said once (log_warn) with the
 * fallback, killing the process group. */
int cgroup_create(struct run_cgroup *cg);
/* Move pid into the cgroup. 0 or -errno (said once, as above). */
int cgroup_add(struct run_cgroup *cg, pid_t pid);
/* SIGKILL every process in the cgroup (cgroup.kill, or one by one on a
 * kernel without it); does not wait. */
void cgroup_kill(struct run_cgroup *cg);
/* Kill everything in it, wait (bounded) until it is empty, remove it. */
void cgroup_destroy(struct run_cgroup *cg);
/* Whether the cgroup can take the next run: it is empty and was never
 * killed. A campaign worker's runs share one while they leave nothing
 * behind (a mkdir and an rmdir a run each take the kernel's global cgroup
 * mutex, which -j workers share). Not after a kill: on this host's 6.18
 * kernel a child cloned (CLONE_INTO_CGROUP) into a cgroup that was once
 * killed through cgroup.kill is itself killed at birth. */
bool cgroup_reusable(const struct run_cgroup *cg);
/* Whether processes are still in the cgroup (cgroup.procs not empty). */
bool cgroup_populated(const struct run_cgroup *cg);

/* The id and depth (below the cgroup2 root) of the cgroup v2 directory
 * path, for a --cgroup selection. 0, or -ENOENT / -EINVAL (said with
 * log_err) when path is not a cgroup directory under /sys/fs/cgroup. */
int cgroup_id_level(const char *path, uint64_t *id, uint32_t *level);

#endif
