// SPDX-License-Identifier: MIT
#include "kernel/launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/util.h"

/* Child-side failure report: which step, and errno. */
struct launch_err {
	int step;
	int err;
};

enum { STEP_GATE = 1, STEP_SCHED, STEP_GROUPS, STEP_GID, STEP_UID, STEP_CWD, STEP_EXEC };

static const char *const step_names[] = {
	[STEP_GATE] = "wait for the controller",
	[STEP_SCHED] = "switch to SCHED_EXT",
	[STEP_GROUPS] = "drop supplementary groups",
	[STEP_GID] = "setgid",
	[STEP_UID] = "setuid",
	[STEP_CWD] = "chdir",
	[STEP_EXEC] = "exec",
};

int launch_resolve_user(const char *user, uid_t *uid, gid_t *gid, bool *drop)
{
	const char *su = getenv("SUDO_UID"), *sg = getenv("SUDO_GID");
	struct passwd *pw;
	uint64_t v;

	*drop = false;
	*uid = getuid();
	*gid = getgid();
	if (user) {
		if (parse_u64(user, &v) == 0)
			pw = getpwuid((uid_t)v);
		else
			pw = getpwnam(user);
		if (!pw) {
			cs_err("--user %s: no such user", user);
			return -ENOENT;
		}
		*uid = pw->pw_uid;
		*gid = pw->pw_gid;
		*drop = *uid != geteuid() || *gid != getegid();
		return 0;
	}
	if (geteuid() == 0 && su && sg && parse_u64(su, &v) == 0) {
		*uid = (uid_t)v;
		if (parse_u64(sg, &v) == 0)
			*gid = (gid_t)v;
		*drop = *uid != 0;
	}
	return 0;
}

static void child_fail(int fd, int step)
{
	struct launch_err e = { step, errno };

	if (write(fd, &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

static void child_run(const struct launch_opts *o, int gate_rd, int err_wr)
{
	struct sched_param sp = { 0 };
	char c;

	setpgid(0, 0);
	if (read(gate_rd, &c, 1) != 1)
		_exit(127); /* controller gave up before releasing us */
	close(gate_rd);
	if (o->stdin_fd >= 0)
		dup2(o->stdin_fd, 0);
	if (o->stdout_fd >= 0)
		dup2(o->stdout_fd, 1);
	if (o->stderr_fd >= 0)
		dup2(o->stderr_fd, 2);
	if (o->sched_ext && sched_setscheduler(0, SCHED_EXT, &sp))
		child_fail(err_wr, STEP_SCHED);
	/* Raw system calls: libc's setuid() family signals every thread it
	 * knows of, and a raw clone3 child of a campaign with -j N still
	 * looks multithreaded to libc; the child is one thread. */
	if (o->drop_privs) {
		if (syscall(SYS_setgroups, 0, NULL))
			child_fail(err_wr, STEP_GROUPS);
		if (syscall(SYS_setgid, o->gid))
			child_fail(err_wr, STEP_GID);
		if (syscall(SYS_setuid, o->uid))
			child_fail(err_wr, STEP_UID);
	}
	/* After the credential change: commit_creds() clears pdeath_signal. */
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (o->cwd && chdir(o->cwd))
		child_fail(err_wr, STEP_CWD);
	signal(SIGPIPE, SIG_DFL);
	execv(o->argv[0], o->argv);
	child_fail(err_wr, STEP_EXEC);
}

/* fork() straight into the cgroup whose directory cgfd is: moving a
 * process in afterwards (a write to cgroup.procs) waits for an RCU grace
 * period, 5-15 ms a run here (docs/perf.md). -1 with errno when the kernel
 * cannot (before 5.7): the caller forks and moves it. The child makes only
 * system calls until its exec (child_run), so a raw clone3 child is as
 * safe as fork()'s, even beside the other runs' threads of -j N. */
static pid_t fork_into_cgroup(int cgfd)
{
#if defined(SYS_clone3) && defined(CLONE_INTO_CGROUP)
	struct clone_args ca;

	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_INTO_CGROUP;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = (__u64)cgfd;
	return (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
#else
	errno = ENOSYS;
	return -1;
#endif
}

/* Not a pthread mutex: concsched's pthread calls trap into the campaign's
 * own libc uprobes (util.h struct cs_lock). */
static struct cs_lock launch_lock;

/* The controller's mappings of BPF maps (a probe object's 8 MiB event
 * ring buffer is mapped twice, its data maps once) are page tables a fork
 * copies and the child's exec tears down again, every run: ~16% of a
 * campaign's CPU time on the host (docs/perf.md). The child, on its way to
 * exec, never touches them: they are not copied (MADV_DONTFORK). */
void launch_dontfork_bpf_maps(void)
{
	char *line = NULL;
	size_t cap = 0;
	FILE *f = fopen("/proc/self/maps", "re");

	if (!f)
		return;
	while (getline(&line, &cap, f) > 0) {
		unsigned long lo, hi;

		if (!strstr(line, "anon_inode:bpf-map") || sscanf(line, "%lx-%lx", &lo, &hi) != 2)
			continue;
		madvise((void *)lo, hi - lo, MADV_DONTFORK);
	}
	free(line);
	fclose(f);
}

int launch_prepare(const struct launch_opts *o, struct launch *l)
{
	int gate[2], errp[2], cgfd = -1;
	bool moved = false;
	pid_t pid = -1;

	memset(l, 0, sizeof(*l));
	l->gate_fd = l->err_fd = -1;
	/* -j N: no other run's fork may copy this run's child ends of the
	 * pipes (its errp write end would hold launch_release's read open
	 * until that other child's exec). From the pipes to their close. */
	cs_lock_acquire(&launch_lock);
	if (pipe2(gate, O_CLOEXEC)) {
		cs_lock_release(&launch_lock);
		return -errno;
	}
	if (pipe2(errp, O_CLOEXEC)) {
		int err = -errno;

		close(gate[0]);
		close(gate[1]);
		cs_lock_release(&launch_lock);
		return err;
	}
	fflush(NULL);
	l->own_cgroup = o->own_cgroup;
	if (o->own_cgroup && !run_cgroup_create(&l->cg)) {
		cgfd = open(l->cg.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cgfd >= 0) {
			pid = fork_into_cgroup(cgfd);
			moved = pid >= 0;
			close(cgfd);
		}
	}
	if (!moved)
		pid = fork();
	if (pid < 0) {
		int err = -errno;

		run_cgroup_destroy(&l->cg);
		close(gate[0]);
		close(gate[1]);
		close(errp[0]);
		close(errp[1]);
		cs_lock_release(&launch_lock);
		return err;
	}
	if (pid == 0) {
		close(gate[1]);
		close(errp[0]);
		child_run(o, gate[0], errp[1]);
	}
	/* Both sides set the group so neither can race a kill(-pid). */
	setpgid(pid, pid);
	/* Into its cgroup while it waits at the gate (unless it was born
	 * there): it execs there. */
	if (l->cg.path && !moved && run_cgroup_add(&l->cg, pid))
		run_cgroup_destroy(&l->cg);
	close(gate[0]);
	close(errp[1]);
	cs_lock_release(&launch_lock);
	l->pid = pid;
	l->gate_fd = gate[1];
	l->err_fd = errp[0];
	return 0;
}

int launch_release(struct launch *l, const char *prog)
{
	struct launch_err e;
	ssize_t n;

	if (write(l->gate_fd, "g", 1) != 1) {
		int err = -errno;

		close(l->gate_fd);
		l->gate_fd = -1;
		return err;
	}
	close(l->gate_fd);
	l->gate_fd = -1;
	do
		n = read(l->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n != sizeof(e))
		return 0; /* EOF: exec succeeded */
	if (e.step == STEP_SCHED && e.err == EINVAL)
		cs_err("%s: cannot switch to SCHED_EXT: no sched_ext scheduler is loaded "
		       "(kernel without sched_ext? try --vm)",
		       prog);
	else
		cs_err("%s: %s failed: %s", prog,
		       e.step > 0 && e.step < (int)ARRAY_SIZE(step_names) ? step_names[e.step]
									  : "launch",
		       strerror(e.err));
	launch_wait(l, 0);
	return -e.err;
}

int launch_reap(struct launch *l)
{
	int status;
	pid_t r;

	if (l->reaped)
		return 1;
	do
		r = waitpid(l->pid, &status, WNOHANG);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (r != l->pid)
		return 0;
	l->reaped = true;
	l->status = status;
	return 1;
}

int launch_wait(struct launch *l, unsigned timeout_ms)
{
	uint64_t deadline = now_ns() + (uint64_t)timeout_ms * 1000000ULL;
	int status;
	pid_t r;

	if (l->reaped)
		return 1;
	for (;;) {
		r = waitpid(l->pid, &status, timeout_ms ? WNOHANG : 0);
		if (r == l->pid) {
			l->reaped = true;
			l->status = status;
			return 1;
		}
		if (r < 0 && errno != EINTR)
			return -errno;
		if (timeout_ms && now_ns() >= deadline)
			return 0;
		if (timeout_ms)
			usleep(2000);
	}
}

void launch_kill(struct launch *l)
{
	if (l->pid <= 0)
		return;
	if (l->gate_fd >= 0) {
		close(l->gate_fd); /* child exits on EOF */
		l->gate_fd = -1;
	}
	if (l->err_fd >= 0) {
		close(l->err_fd);
		l->err_fd = -1;
	}
	run_cgroup_kill(&l->cg);
	kill(-l->pid, SIGKILL);
	kill(l->pid, SIGKILL);
	launch_wait(l, 0);
}

void launch_end(struct launch *l)
{
	if (l->pid <= 0)
		return;
	if (!l->reaped)
		launch_kill(l);

	if (l->cg.path)
		run_cgroup_destroy(&l->cg);
	else if (l->own_cgroup)
		kill(-l->pid, SIGKILL); /* what is left of its process group */
}
