/* SPDX-License-Identifier: MIT */
/*
 * Launch the program under test (DESIGN.md "One run", step 1): clone; the
 * child puts itself in its own process group and waits on a gate pipe while
 * the controller attaches probes for its pid; on release it optionally
 * switches to SCHED_EXT (inherited by every thread and child), drops to the
 * invoking user and execs. A failed exec is reported back through a
 * close-on-exec pipe, so the caller gets the errno, not a silent exit 127.
 * With own_cgroup the child is moved into a cgroup v2 of its own
 * (cgroup.h) before the gate opens, so it execs there and everything it
 * starts stays there; launcher_end() kills what is left when the run ends
 * (without cgroup v2: the process group, said once).
 */
#ifndef CONCSCHED_LAUNCHER_H
#define CONCSCHED_LAUNCHER_H

#include <sched.h>
#include <stdbool.h>
#include <sys/types.h>

#include "kernel/cgroup.h"

#ifndef SCHED_EXT
#define SCHED_EXT 7 /* include/uapi/linux/sched.h; glibc lacks it */
#endif

struct launch_opts {
	char *const *argv; /* argv[0] is the resolved program path */
	/* NULL: the caller's environment. Else the child's own: a caller
	 * with other threads never changes its environment to pass one
	 * (setenv may free the array another thread reads). */
	char *const *envp;
	bool sched_ext;	 /* switch to SCHED_EXT before exec */
	bool drop_privs; /* setgid/setuid to uid/gid below before exec */
	uid_t uid;
	gid_t gid;
	int stdin_fd;	 /* -1: inherit */
	int stdout_fd;	 /* -1: inherit */
	int stderr_fd;	 /* -1: inherit */
	const char *cwd; /* NULL: inherit */
	/* NULL: inherit the caller's CPUs. Else the CPUs the child takes at
	 * its gate, before its exec (a caller that keeps to one CPU: -j
	 * workers, campaign.c). Must live until launcher_release returns. */
	const cpu_set_t *cpus;
	bool own_cgroup; /* a cgroup v2 for the target and all it starts */
	/* With own_cgroup: the caller's cgroup, kept from launch to launch
	 * (made here when its path is NULL; launcher_end removes it when the
	 * run left something in it, else the caller at its end with
	 * cgroup_destroy). NULL: one per launch. */
	struct run_cgroup *keep_cg;
	/* Stopped (ptrace) right after its exec, before its first
	 * instruction: the caller reads what it needs with launcher_at_exec,
	 * which then lets it go. */
	bool stop_at_exec;
};

struct launch {
	pid_t pid;   /* also the process group id */
	int gate_fd; /* write end; closed by launcher_release() */
	int err_fd;  /* read end of the exec-error pipe */
	bool reaped;
	int status;		 /* wait status once reaped */
	bool own_cgroup;	 /* asked for; cg.path NULL: fell back to the group */
	struct run_cgroup cg;	 /* the target's cgroup (one of its own) */
	struct run_cgroup *kept; /* or the caller's (opts.keep_cg) */
	bool born_in_cg;	 /* cloned into its cgroup (not moved in) */
	bool ended;		 /* launcher_end'ed */
};

/* The user to run the target as: --user NAME|UID, else SUDO_UID/SUDO_GID,
 * else the caller. 0 or -errno (unknown user, printed). */
int launcher_resolve_user(const char *user, uid_t *uid, gid_t *gid, bool *drop);

/* Make the gated child, a clone of the calling thread that shares the
 * controller's memory until its exec where the kernel allows (else a
 * fork); the controller is its parent, whichever thread (-j worker)
 * launched it. 0 or -errno. */
int launcher_prepare(const struct launch_opts *o, struct launch *l);
/* Open the gate. Returns 0 once the child has exec'd, or -errno of the
 * step that failed in the child (setscheduler, setuid, exec): printed. */
int launcher_release(struct launch *l, const char *prog);
/* For a launch with stop_at_exec, after launcher_release: wait for the
 * stop at the exec, call fn(pid, arg) while the new image stands still
 * (its maps are those of the exec), then let it run. 0 or -errno. */
int launcher_at_exec(struct launch *l, void (*fn)(pid_t pid, void *arg), void *arg);
/* Reap the child if it has exited, without waiting: 1 if it has (status in
 * l->status), 0 if not, -errno on error. */
int launcher_reap(struct launch *l);
/* Wait for the child's exit up to timeout_ms (0: forever). Returns 1 if it
 * exited (status in l->status), 0 on timeout, -errno on error. */
int launcher_wait(struct launch *l, unsigned timeout_ms);
/* SIGKILL the whole process group (and cgroup) and reap the leader. */
void launcher_kill(struct launch *l);
/* The run is over: kill whatever the target left running (its cgroup, or
 * without one its process group), reap the leader if needed, remove the
 * cgroup (a kept one stays for the next launch when nothing was left in
 * it and it was not killed: cgroup.h). For launches with own_cgroup. */
void launcher_end(struct launch *l);

/* Mark every mapping of a BPF map in this process MADV_DONTFORK: a fork
 * then does not copy their page tables. After new maps are mapped (a probe
 * object loaded, a ring buffer opened), before the next launch. */
void launcher_dontfork_bpf_maps(void);

#endif
