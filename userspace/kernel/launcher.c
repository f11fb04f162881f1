// SPDX-License-Identifier: MIT
#include "kernel/launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/array_size.h"
#include "lib/futex_lock.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/parse.h"

/* Child-side failure report: which step, and errno. */
struct launch_err {
	int step;
	int err;
};

enum {
	STEP_GATE = 1,
	STEP_CPUS,
	STEP_SCHED,
	STEP_GROUPS,
	STEP_GID,
	STEP_UID,
	STEP_CWD,
	STEP_TRACE,
	STEP_EXEC
};

static const char *const step_names[] = {
	[STEP_GATE] = "wait for the controller",
	[STEP_CPUS] = "take the campaign's CPUs",
	[STEP_SCHED] = "switch to SCHED_EXT",
	[STEP_GROUPS] = "drop supplementary groups",
	[STEP_GID] = "setgid",
	[STEP_UID] = "setuid",
	[STEP_CWD] = "chdir",
	[STEP_TRACE] = "stop at the exec (ptrace)",
	[STEP_EXEC] = "exec",
};

int launcher_resolve_user(const char *user, uid_t *uid, gid_t *gid, bool *drop)
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
			log_err("--user %s: no such user", user);
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

static void unblock_signals(void)
{
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
}

static void child_run(const struct launch_opts *o, int gate_rd, int err_wr)
{
	struct sched_param sp = { 0 };
	char c;

	/* The target starts with no signal blocked, whichever thread of the
	 * controller (a -j worker blocks SIGINT/SIGTERM/SIGHUP) launched it. */
	unblock_signals();
	/* Until its exec, it is not concsched. */
	prctl(PR_SET_NAME, "cs-gated");
	setpgid(0, 0);
	if (read(gate_rd, &c, 1) != 1)
		_exit(127); /* controller gave up before releasing us */
	close(gate_rd);
	/* A -j worker keeps to one CPU (campaign.c): not its target, which
	 * runs where the campaign may, as it would without concsched. Before
	 * SCHED_EXT, so the scheduler never sees it narrowed. */
	if (o->cpus && syscall(SYS_sched_setaffinity, 0, sizeof(*o->cpus), o->cpus))
		child_fail(err_wr, STEP_CPUS);
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
	/* Last: the exec then stops the child with a SIGTRAP for its parent. */
	if (o->stop_at_exec && syscall(SYS_ptrace, PTRACE_TRACEME, 0, NULL, NULL))
		child_fail(err_wr, STEP_TRACE);
	execve(o->argv[0], o->argv, o->envp ? o->envp : environ);
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
	ca.flags = cgfd >= 0 ? CLONE_INTO_CGROUP : 0;
	ca.exit_signal = SIGCHLD;
	ca.cgroup = cgfd >= 0 ? (__u64)cgfd : 0;
	return (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
#else
	(void)cgfd;
	errno = ENOSYS;
	return -1;
#endif
}

/* Not a pthread mutex: concsched's pthread calls trap into the campaign's
 * own libc uprobes (lib/futex_lock.h). */
static struct futex_lock launch_lock;

/* The controller's mappings of BPF maps (a probe object's 8 MiB event
 * ring buffer is mapped twice, its data maps once) are page tables a fork
 * copies and the child's exec tears down again, every run: ~16% of a
 * campaign's CPU time on the host (docs/perf.md). The child, on its way to
 * exec, never touches them: they are not copied (MADV_DONTFORK). */
void launcher_dontfork_bpf_maps(void)
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

#if defined(__x86_64__) && defined(SYS_clone3) && defined(CLONE_INTO_CGROUP)
/* A child that shares the controller's memory until its exec (CLONE_VM,
 * as posix_spawn's): its clone copies no page tables and its exec tears
 * none down. A fork did both every run: a -j 1 campaign runs 31-40% more
 * runs a second without it, and -j N's workers clone their targets this
 * way too, from their own threads, where they once asked a spawner
 * process of their own (docs/perf.md). The child runs child_run on a
 * stack of its own, reading its request from a block of its own (the
 * parent goes on meanwhile); the kernel zeroes the block's tid when the
 * child's exec or exit releases the memory (CLONE_CHILD_CLEARTID), and the
 * parent unmaps such blocks at its next launch. Like a vfork child, it
 * makes only system calls on its way to exec. What it shares besides:
 * the calling thread's thread-local storage (a failed step's errno may
 * land in the caller's, which reads errno only right after its own
 * failed calls), and, until its setpgid, a terminal's ^C, whose handler
 * (the controller's, copied) would set in the shared memory the stop flag
 * the controller sets for the same ^C anyway. */
#define SPAWN_STACK (256 * 1024)
#define SPAWN_GUARD 4096

struct spawned {
	struct spawned *next;
	size_t size;	    /* of the mapping, SPAWN_STACK included */
	volatile pid_t tid; /* 0 once the child no longer uses the block */
	int gate_rd, err_wr;
	int close_fds[2]; /* the caller's descriptors the child closes, or -1 */
	struct launch_opts lo;
	char *argv[];
};

/* clone3(ca, size) whose child calls fn(arg) on ca's stack and exits with
 * its value: glibc has this internally but does not export it. */
long cs_clone3_fn(struct clone_args *ca, size_t size, int (*fn)(void *), void *arg);
__asm__(".text\n"
	".type cs_clone3_fn, @function\n"
	"cs_clone3_fn:\n"
	"\tmov %rdx, %r8\n" /* fn and arg: syscall keeps r8, r9 */
	"\tmov %rcx, %r9\n"
	"\tmov $435, %eax\n" /* SYS_clone3 */
	"\tsyscall\n"
	"\ttest %rax, %rax\n"
	"\tjz 1f\n"
	"\tret\n"
	"1:\txor %ebp, %ebp\n" /* the child, on its new stack */
	"\tmov %r9, %rdi\n"
	"\tcall *%r8\n"
	"\tmov %eax, %edi\n"
	"\tmov $60, %eax\n" /* SYS_exit */
	"\tsyscall\n"
	"\thlt\n"
	".size cs_clone3_fn, .-cs_clone3_fn\n");

static int spawned_run(void *arg)
{
	struct spawned *s = arg;

	if (s->close_fds[0] >= 0)
		close(s->close_fds[0]);
	if (s->close_fds[1] >= 0)
		close(s->close_fds[1]);
	child_run(&s->lo, s->gate_rd, s->err_wr);
	return 127;
}

/* Unmap the blocks of children past their exec (or gone). */
static void spawned_sweep(struct spawned **list)
{
	struct spawned **pp = list, *s;

	while ((s = *pp)) {
		if (s->tid) {
			pp = &s->next;
			continue;
		}
		*pp = s->next;
		munmap((char *)s - SPAWN_STACK, s->size);
	}
}

/* The gated child, sharing the controller's memory until its exec. It
 * closes close_a and close_b (the caller's ends of its pipes; -1: none).
 * Its pid, or -1 with errno (the caller then clones the usual way). */
static pid_t spawn_shared(struct spawned **list, int cgfd, const struct launch_opts *lo,
			  int gate_rd, int err_wr, int close_a, int close_b)
{
	struct clone_args ca;
	struct spawned *s;
	size_t argc, i, strs = 0, size;
	char *map, *p;
	long pid;

	for (argc = 0; lo->argv[argc]; argc++)
		strs += strlen(lo->argv[argc]) + 1;
	if (lo->cwd)
		strs += strlen(lo->cwd) + 1;
	size = SPAWN_STACK + sizeof(*s) + (argc + 1) * sizeof(char *) + strs;
	map = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1,
		   0);
	if (map == MAP_FAILED)
		return -1;
	/* A guard page under the stack, as a thread's. */
	if (mprotect(map, SPAWN_GUARD, PROT_NONE)) {
		munmap(map, size);
		return -1;
	}
	s = (struct spawned *)(map + SPAWN_STACK);
	s->size = size;
	s->tid = -1;
	s->gate_rd = gate_rd;
	s->err_wr = err_wr;
	s->close_fds[0] = close_a;
	s->close_fds[1] = close_b;
	s->lo = *lo;
	p = (char *)&s->argv[argc + 1];
	for (i = 0; i < argc; i++) {
		s->argv[i] = p;
		p = stpcpy(p, lo->argv[i]) + 1;
	}
	s->argv[argc] = NULL;
	s->lo.argv = s->argv;
	if (lo->cwd) {
		s->lo.cwd = p;
		strcpy(p, lo->cwd);
	}
	memset(&ca, 0, sizeof(ca));
	ca.flags = CLONE_VM | CLONE_CHILD_CLEARTID | (cgfd >= 0 ? CLONE_INTO_CGROUP : 0);
	ca.exit_signal = SIGCHLD;
	ca.child_tid = (__u64)(uintptr_t)&s->tid;
	ca.stack = (__u64)(uintptr_t)(map + SPAWN_GUARD);
	ca.stack_size = SPAWN_STACK - SPAWN_GUARD;
	ca.cgroup = cgfd >= 0 ? (__u64)cgfd : 0;
	pid = cs_clone3_fn(&ca, sizeof(ca), spawned_run, s);
	if (pid < 0) {
		munmap(map, size);
		errno = (int)-pid;
		return -1;
	}
	s->next = *list;
	*list = s;
	return (pid_t)pid;
}
#endif

/* The launch's cgroup: the caller's kept one, or its own. */
static struct run_cgroup *launch_cg(struct launch *l)
{
	return l->kept ? l->kept : &l->cg;
}

/* The gated child is pid: its group, its cgroup (unless it was born
 * there: it execs there). */
static void launch_got(struct launch *l, pid_t pid, bool moved)
{
	struct run_cgroup *cg = launch_cg(l);

	/* Both sides set the group so neither can race a kill(-pid). */
	setpgid(pid, pid);
	if (cg->path && !moved && cgroup_add(cg, pid))
		cgroup_destroy(cg);
	l->born_in_cg = cg->path && moved;
	l->pid = pid;
}

/* The launch's cgroup (made if need be), opened for CLONE_INTO_CGROUP;
 * -1 without one. */
static int launch_cg_open(const struct launch_opts *o, struct launch *l)
{
	struct run_cgroup *cg;

	l->own_cgroup = o->own_cgroup;
	l->kept = o->own_cgroup ? o->keep_cg : NULL;
	cg = launch_cg(l);
	if (cg->killed) /* not to be reused (cgroup.h) */
		cgroup_destroy(cg);
	if (o->own_cgroup && (cg->path || !cgroup_create(cg)))
		return open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return -1;
}

#ifdef SPAWN_STACK
/* The blocks of the children that share the controller's memory (under
 * launch_lock). */
static struct spawned *launch_spawned;
#endif

int launcher_prepare(const struct launch_opts *o, struct launch *l)
{
	int gate[2], errp[2], cgfd, err;
	bool moved = false;
	pid_t pid = -1;

	memset(l, 0, sizeof(*l));
	l->gate_fd = l->err_fd = -1;
	cgfd = launch_cg_open(o, l);
	/* -j N: no other run's clone may copy this run's child ends of the
	 * pipes (its errp write end would hold launcher_release's read open
	 * until that other child's exec). From the pipes to their close. */
	futex_lock_acquire(&launch_lock);
	if (pipe2(gate, O_CLOEXEC)) {
		err = -errno;
		goto fail;
	}
	if (pipe2(errp, O_CLOEXEC)) {
		err = -errno;
		close(gate[0]);
		close(gate[1]);
		goto fail;
	}
	fflush(NULL);
	if (cgfd >= 0) {
#ifdef SPAWN_STACK
		spawned_sweep(&launch_spawned);
		pid = spawn_shared(&launch_spawned, cgfd, o, gate[0], errp[1], gate[1], errp[0]);
		if (pid < 0)
#endif
			pid = fork_into_cgroup(cgfd);
		moved = pid >= 0;
	}
	if (!moved)
		pid = fork();
	if (pid == 0) {
		close(gate[1]);
		close(errp[0]);
		child_run(o, gate[0], errp[1]);
	}
	if (pid < 0) {
		err = -errno;
		close(gate[0]);
		close(gate[1]);
		close(errp[0]);
		close(errp[1]);
		goto fail;
	}
	if (cgfd >= 0)
		close(cgfd);
	launch_got(l, pid, moved);
	close(gate[0]);
	close(errp[1]);
	futex_lock_release(&launch_lock);
	l->gate_fd = gate[1];
	l->err_fd = errp[0];
	return 0;
fail:
	futex_lock_release(&launch_lock);
	if (cgfd >= 0)
		close(cgfd);
	cgroup_destroy(launch_cg(l));
	return err;
}

int launcher_release(struct launch *l, const char *prog)
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
		log_err("%s: cannot switch to SCHED_EXT: no sched_ext scheduler is loaded "
			"(kernel without sched_ext? try --vm)",
			prog);
	else
		log_err("%s: %s failed: %s", prog,
			e.step > 0 && e.step < (int)ARRAY_SIZE(step_names) ? step_names[e.step]
									   : "launch",
			strerror(e.err));
	launcher_wait(l, 0);
	return -e.err;
}

int launcher_at_exec(struct launch *l, void (*fn)(pid_t pid, void *arg), void *arg)
{
	int status;
	pid_t r;

	do
		r = waitpid(l->pid, &status, __WALL);
	while (r < 0 && errno == EINTR);
	if (r < 0)
		return -errno;
	if (!WIFSTOPPED(status)) { /* killed before its first instruction */
		l->reaped = true;
		l->status = status;
		return -ECHILD;
	}
	fn(l->pid, arg);
	/* Detaching with signal 0 drops the exec's SIGTRAP. */
	if (syscall(SYS_ptrace, PTRACE_DETACH, l->pid, NULL, NULL))
		return -errno;
	return 0;
}

int launcher_reap(struct launch *l)
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

int launcher_wait(struct launch *l, unsigned timeout_ms)
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

void launcher_kill(struct launch *l)
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
	cgroup_kill(launch_cg(l));
	kill(-l->pid, SIGKILL);
	kill(l->pid, SIGKILL);
	launcher_wait(l, 0);
}

void launcher_end(struct launch *l)
{
	if (l->pid <= 0 || l->ended)
		return;
	l->ended = true;
	if (!l->reaped)
		launcher_kill(l);

	if (l->kept && l->kept->path) {
		if (!cgroup_reusable(l->kept))
			cgroup_destroy(l->kept); /* the next launch makes another */
	} else if (l->cg.path)
		cgroup_destroy(&l->cg);
	else if (l->own_cgroup)
		kill(-l->pid, SIGKILL); /* what is left of its process group */
}
