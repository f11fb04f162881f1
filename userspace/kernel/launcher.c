// SPDX-License-Identifier: MIT
#include "kernel/launcher.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <pwd.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sched.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
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
	/* Until its exec, it is neither concsched nor its spawner. */
	prctl(PR_SET_NAME, "cs-gated");
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
static pid_t fork_into_cgroup(int cgfd, __u64 flags)
{
#if defined(SYS_clone3) && defined(CLONE_INTO_CGROUP)
	struct clone_args ca;

	memset(&ca, 0, sizeof(ca));
	ca.flags = flags | (cgfd >= 0 ? CLONE_INTO_CGROUP : 0);
	/* clone3 refuses an exit signal with CLONE_PARENT (EINVAL): such a
	 * child gets the caller's own, SIGCHLD (the spawner was forked). */
	ca.exit_signal = flags & CLONE_PARENT ? 0 : SIGCHLD;
	ca.cgroup = cgfd >= 0 ? (__u64)cgfd : 0;
	return (pid_t)syscall(SYS_clone3, &ca, sizeof(ca));
#else
	(void)cgfd;
	(void)flags;
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

/* ---- the spawner ------------------------------------------------------------------ */

/* A request: this header, then len bytes: argc NUL-terminated argv
 * strings, then the cwd's if SPAWN_CWD. Its descriptors ride along
 * (SCM_RIGHTS) in this order: the gate's read end, the exec-error pipe's
 * write end, then those its flags name, in the flags' order. */
enum {
	SPAWN_SCHED_EXT = 1 << 0,
	SPAWN_DROP = 1 << 1,
	SPAWN_CWD = 1 << 2,
	SPAWN_CGROUP = 1 << 3,
	SPAWN_STDIN = 1 << 4,
	SPAWN_STDOUT = 1 << 5,
	SPAWN_STDERR = 1 << 6,
};

#define SPAWN_MAX_FDS 7
#define SPAWN_MAX     (64 * 1024) /* larger requests: the controller forks itself */
#define SPAWN_WAIT_MS 10000

struct spawn_req {
	uint32_t flags;
	uint32_t argc;
	uint32_t len;
	uint32_t uid;
	uint32_t gid;
};

struct spawn_rep {
	int32_t pid; /* > 0, or 0 and err */
	int32_t err;
	int32_t moved; /* born in the cgroup */
};

/* Fork and exec the spawner. Under launch_lock: its fork may copy no
 * other run's child ends of the gate pipes. */
static int spawner_start(struct launch_spawner *sp)
{
	pid_t parent = getpid(), pid;
	int sv[2];

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		int err = -errno;

		close(sv[0]);
		close(sv[1]);
		return err;
	}
	if (pid == 0) {
		/* Gone with the controller, and out of the terminal's
		 * process group: ^C is the controller's to handle. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(1);
		setpgid(0, 0);
		unblock_signals();
		if (sv[1] == LAUNCH_SPAWNER_FD)
			fcntl(sv[1], F_SETFD, 0);
		else if (dup2(sv[1], LAUNCH_SPAWNER_FD) < 0)
			_exit(1);
		execl("/proc/self/exe", LAUNCH_SPAWNER_ARGV0, (char *)NULL);
		_exit(127);
	}
	close(sv[1]);
	sp->fd = sv[0];
	sp->pid = pid;
	return 0;
}

void launch_spawner_stop(struct launch_spawner *sp)
{
	int status;

	if (sp->pid <= 0)
		return;
	close(sp->fd); /* it reads EOF and exits */
	while (waitpid(sp->pid, &status, 0) < 0 && errno == EINTR)
		;
	sp->fd = -1;
	sp->pid = 0;
}

bool launch_spawner_is(int argc, char **argv)
{
	int type = 0;
	socklen_t len = sizeof(type);

	return argc == 1 && !strcmp(argv[0], LAUNCH_SPAWNER_ARGV0) &&
	       !getsockopt(LAUNCH_SPAWNER_FD, SOL_SOCKET, SO_TYPE, &type, &len) &&
	       type == SOCK_SEQPACKET;
}

/* The child of the spawner: the controller is its parent (CLONE_PARENT),
 * so the controller reaps it, sets its group and gets its SIGCHLD. */
static pid_t spawn_child(int cgfd)
{
	if (cgfd >= 0)
		return fork_into_cgroup(cgfd, CLONE_PARENT);
	return (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, 0);
}

#if defined(__x86_64__) && defined(SYS_clone3) && defined(CLONE_INTO_CGROUP)
/* A child that shares its parent's memory until its exec (CLONE_VM, as
 * posix_spawn's): its clone copies no page tables and its exec tears
 * none down. A fork did both every run: ~14% of a -j 2 campaign's CPU
 * time in the spawner, and a -j 1 campaign runs 31-40% more runs a second
 * without the controller's (docs/perf.md). The child runs child_run on a
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

/* The gated child, sharing its parent's memory until its exec: the
 * spawner's (parent: the controller, CLONE_PARENT) or the controller's
 * (-j 1). It closes close_a and close_b (the caller's ends of its pipes,
 * the spawner's socket; -1: none). Its pid, or -1 with errno (the caller
 * then clones the usual way). */
static pid_t spawn_shared(struct spawned **list, bool parent, int cgfd,
			  const struct launch_opts *lo, int gate_rd, int err_wr, int close_a,
			  int close_b)
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
	ca.flags = CLONE_VM | (parent ? CLONE_PARENT : 0) | CLONE_CHILD_CLEARTID |
		   (cgfd >= 0 ? CLONE_INTO_CGROUP : 0);
	/* clone3 refuses an exit signal beside CLONE_PARENT (fork_into_cgroup) */
	ca.exit_signal = parent ? 0 : SIGCHLD;
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

int launch_spawner_main(void)
{
#ifdef SPAWN_STACK
	struct spawned *spawned = NULL;
#endif
	char *buf = xcalloc(1, SPAWN_MAX);
	int fd = LAUNCH_SPAWNER_FD;

	fcntl(fd, F_SETFD, FD_CLOEXEC); /* no target inherits it */
	prctl(PR_SET_NAME, "cs-spawner");
	/* The targets get the user's environment, not what the controller
	 * set for a --check command before this spawner started. */
	unsetenv("CONCSCHED_RUN");
	unsetenv("CONCSCHED_EXIT");
	unsetenv("CONCSCHED_OUT_FILE");
	for (;;) {
		union {
			char b[CMSG_SPACE(SPAWN_MAX_FDS * sizeof(int))];
			struct cmsghdr align;
		} cm;
		struct iovec iov = { .iov_base = buf, .iov_len = SPAWN_MAX };
		struct msghdr m = { .msg_iov = &iov,
				    .msg_iovlen = 1,
				    .msg_control = cm.b,
				    .msg_controllen = sizeof(cm.b) };
		int fds[SPAWN_MAX_FDS], nfds = 0, k = 2, i;
		struct spawn_rep rep = { 0 };
		struct launch_opts lo = { .stdin_fd = -1, .stdout_fd = -1, .stderr_fd = -1 };
		struct spawn_req q;
		char **argv = NULL, *p, *end;
		struct cmsghdr *c;
		int cgfd = -1;
		ssize_t n;
		pid_t pid;

		n = recvmsg(fd, &m, MSG_CMSG_CLOEXEC);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0); /* the controller closed its end, or is gone */
		for (c = CMSG_FIRSTHDR(&m); c; c = CMSG_NXTHDR(&m, c))
			if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
				nfds = (int)((c->cmsg_len - CMSG_LEN(0)) / sizeof(int));
				if (nfds > SPAWN_MAX_FDS)
					nfds = SPAWN_MAX_FDS;
				memcpy(fds, CMSG_DATA(c), (size_t)nfds * sizeof(int));
			}
		rep.err = EINVAL;
		if ((size_t)n < sizeof(q) || nfds < 2)
			goto reply;
		memcpy(&q, buf, sizeof(q));
		if (q.len != (size_t)n - sizeof(q) || q.argc == 0 || q.argc > q.len)
			goto reply;
		argv = xcalloc(q.argc + 1, sizeof(*argv));
		p = buf + sizeof(q);
		end = p + q.len;
		for (i = 0; i < (int)q.argc + !!(q.flags & SPAWN_CWD); i++) {
			char *z = memchr(p, '\0', (size_t)(end - p));

			if (!z)
				goto reply;
			if (i < (int)q.argc)
				argv[i] = p;
			else
				lo.cwd = p;
			p = z + 1;
		}
		if (q.flags & SPAWN_CGROUP && k < nfds)
			cgfd = fds[k++];
		if (q.flags & SPAWN_STDIN && k < nfds)
			lo.stdin_fd = fds[k++];
		if (q.flags & SPAWN_STDOUT && k < nfds)
			lo.stdout_fd = fds[k++];
		if (q.flags & SPAWN_STDERR && k < nfds)
			lo.stderr_fd = fds[k++];
		lo.argv = argv;
		lo.sched_ext = q.flags & SPAWN_SCHED_EXT;
		lo.drop_privs = q.flags & SPAWN_DROP;
		lo.uid = q.uid;
		lo.gid = q.gid;
		pid = -1;
#ifdef SPAWN_STACK
		spawned_sweep(&spawned);
		pid = spawn_shared(&spawned, true, cgfd, &lo, fds[0], fds[1], LAUNCH_SPAWNER_FD,
				   -1);
#endif
		if (pid < 0)
			pid = spawn_child(cgfd);
		rep.moved = pid >= 0 && cgfd >= 0;
		if (pid < 0 && cgfd >= 0) /* a kernel without CLONE_INTO_CGROUP */
			pid = spawn_child(-1);
		if (pid == 0) {
			/* Not the spawner's socket: if the spawner died
			 * before it answered, the controller must read EOF,
			 * not wait for this child's exec. */
			close(fd);
			child_run(&lo, fds[0], fds[1]);
		}
		rep.pid = pid > 0 ? pid : 0;
		rep.err = pid > 0 ? 0 : errno;
	reply:
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		free(argv);
		if (send(fd, &rep, sizeof(rep), MSG_NOSIGNAL) != sizeof(rep))
			_exit(0);
	}
}

/* Ask the spawner for the gated child: 0, or -errno; -E2BIG: too large a
 * request, the caller forks itself. spawn_answer collects the child. */
static int spawn_ask(int sfd, const struct launch_opts *o, int gate_rd, int err_wr, int cgfd)
{
	union {
		char b[CMSG_SPACE(SPAWN_MAX_FDS * sizeof(int))];
		struct cmsghdr align;
	} cm;
	struct spawn_req q = { .uid = o->uid, .gid = o->gid };
	int fds[SPAWN_MAX_FDS], nfds = 0;
	size_t len = 0, i;
	struct iovec iov[2];
	struct msghdr m = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = cm.b };
	struct cmsghdr *c;
	char *strs;
	ssize_t n;

	for (i = 0; o->argv[i]; i++)
		len += strlen(o->argv[i]) + 1;
	q.argc = (uint32_t)i;
	if (o->cwd)
		len += strlen(o->cwd) + 1;
	if (len + sizeof(q) > SPAWN_MAX)
		return -E2BIG;
	strs = xcalloc(1, len ? len : 1);
	for (len = 0, i = 0; o->argv[i]; i++) {
		memcpy(strs + len, o->argv[i], strlen(o->argv[i]) + 1);
		len += strlen(o->argv[i]) + 1;
	}
	if (o->cwd) {
		memcpy(strs + len, o->cwd, strlen(o->cwd) + 1);
		len += strlen(o->cwd) + 1;
	}
	q.len = (uint32_t)len;
	fds[nfds++] = gate_rd;
	fds[nfds++] = err_wr;
	q.flags = (o->sched_ext ? SPAWN_SCHED_EXT : 0) | (o->drop_privs ? SPAWN_DROP : 0) |
		  (o->cwd ? SPAWN_CWD : 0);
	if (cgfd >= 0) {
		q.flags |= SPAWN_CGROUP;
		fds[nfds++] = cgfd;
	}
	if (o->stdin_fd >= 0) {
		q.flags |= SPAWN_STDIN;
		fds[nfds++] = o->stdin_fd;
	}
	if (o->stdout_fd >= 0) {
		q.flags |= SPAWN_STDOUT;
		fds[nfds++] = o->stdout_fd;
	}
	if (o->stderr_fd >= 0) {
		q.flags |= SPAWN_STDERR;
		fds[nfds++] = o->stderr_fd;
	}
	iov[0] = (struct iovec){ .iov_base = &q, .iov_len = sizeof(q) };
	iov[1] = (struct iovec){ .iov_base = strs, .iov_len = len };
	m.msg_controllen = CMSG_SPACE((size_t)nfds * sizeof(int));
	c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN((size_t)nfds * sizeof(int));
	memcpy(CMSG_DATA(c), fds, (size_t)nfds * sizeof(int));
	do
		n = sendmsg(sfd, &m, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	free(strs);
	return n < 0 ? -errno : 0;
}

/* The spawner's answer to spawn_ask: the child's pid, or -errno. */
static pid_t spawn_answer(int sfd, bool *moved)
{
	struct spawn_rep rep;
	ssize_t n;

	/* A clone takes microseconds: a spawner that has not answered in
	 * SPAWN_WAIT_MS is stuck (stopped?) and taken for dead. */
	do {
		struct pollfd pfd = { .fd = sfd, .events = POLLIN };

		n = poll(&pfd, 1, SPAWN_WAIT_MS);
		if (n == 0)
			return -ETIMEDOUT;
		if (n > 0)
			n = recv(sfd, &rep, sizeof(rep), MSG_DONTWAIT);
	} while (n < 0 && (errno == EINTR || errno == EAGAIN));
	if (n != sizeof(rep))
		return n < 0 ? -errno : -EPIPE;
	if (rep.pid <= 0)
		return -(rep.err ? rep.err : EIO);
	*moved = rep.moved;
	return rep.pid;
}

/* ---- launching --------------------------------------------------------------------- */

/* A spawner to ask: true when sp runs (started now if need be). */
static bool spawner_up(struct launch_spawner *sp)
{
	int err;

	if (!sp || sp->broken)
		return false;
	if (sp->pid > 0)
		return true;
	cs_lock_acquire(&launch_lock);
	err = spawner_start(sp);
	cs_lock_release(&launch_lock);
	if (err) {
		cs_warn("cannot start the launcher's spawner (%s): the controller forks the "
			"targets itself",
			strerror(-err));
		sp->broken = true;
	}
	return !err;
}

/* What a request to sp came to (the pid, or -errno from spawn_ask or
 * spawn_answer): the pid; 0: fork instead (too large a request);
 * -ECONNRESET: the spawner died with the request (the next request starts
 * a new one; after two deaths in a row the controller forks); or the
 * spawner's -errno. */
static pid_t spawn_result(struct launch_spawner *sp, pid_t pid)
{
	if (pid == -EPIPE || pid == -ECONNRESET || pid == -ETIMEDOUT) {
		/* Gone (killed?) or stuck. */
		if (pid == -ETIMEDOUT)
			kill(sp->pid, SIGKILL);
		launch_spawner_stop(sp);
		if (++sp->deaths >= 2) {
			cs_warn("the launcher's spawner died twice in a row: the controller forks "
				"the targets itself");
			sp->broken = true;
		}
		return -ECONNRESET;
	}
	if (pid > 0)
		sp->deaths = 0;
	return pid == -E2BIG ? 0 : pid;
}

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
	if (cg->path && !moved && run_cgroup_add(cg, pid))
		run_cgroup_destroy(cg);
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
		run_cgroup_destroy(cg);
	if (o->own_cgroup && (cg->path || !run_cgroup_create(cg)))
		return open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	return -1;
}

int launch_ask(const struct launch_opts *o, struct launch *l)
{
	int gate[2], errp[2], cgfd, err;

	memset(l, 0, sizeof(*l));
	l->gate_fd = l->err_fd = -1;
	/* A spawner that died with the request is started again (after two
	 * deaths in a row it is not, and launch_prepare forks). */
	while (spawner_up(o->spawner)) {
		if (pipe2(gate, O_CLOEXEC))
			return -errno;
		if (pipe2(errp, O_CLOEXEC)) {
			err = -errno;
			close(gate[0]);
			close(gate[1]);
			return err;
		}
		cgfd = launch_cg_open(o, l);
		err = spawn_ask(o->spawner->fd, o, gate[0], errp[1], cgfd);
		/* The request carries the child's ends: ours can go. */
		close(gate[0]);
		close(errp[1]);
		if (cgfd >= 0)
			close(cgfd);
		if (!err) {
			l->gate_fd = gate[1];
			l->err_fd = errp[0];
			l->asked = true;
			return 0;
		}
		close(gate[1]);
		close(errp[0]);
		if (err == -E2BIG || spawn_result(o->spawner, err) != -ECONNRESET)
			break;
	}
	return 0; /* nothing asked: launch_prepare forks */
}

/* The child launch_ask asked for: its pid, or -errno (the spawner died:
 * -ECONNRESET); then the ask is over. */
static pid_t launch_answer(struct launch_spawner *sp, struct launch *l, bool *moved)
{
	pid_t pid = spawn_answer(sp->fd, moved);

	l->asked = false;
	if (pid <= 0) {
		/* A child the dead spawner may have made reads EOF at its
		 * gate and exits. */
		close(l->gate_fd);
		close(l->err_fd);
		l->gate_fd = l->err_fd = -1;
	}
	return spawn_result(sp, pid);
}

int launch_take(const struct launch_opts *o, struct launch *l)
{
	bool moved = false;
	pid_t pid;

	if (!l->asked)
		return launch_prepare(o, l);
	pid = launch_answer(o->spawner, l, &moved);
	if (pid > 0) {
		launch_got(l, pid, moved);
		return 0;
	}
	/* The spawner died with it: ask again, with new pipes. */
	return pid == -ECONNRESET ? launch_prepare(o, l) : pid;
}

#ifdef SPAWN_STACK
/* The controller's own shared-memory children's blocks (under launch_lock). */
static struct spawned *launch_spawned;
#endif

int launch_prepare(const struct launch_opts *o, struct launch *l)
{
	int gate[2], errp[2], cgfd, err;
	bool moved = false;
	pid_t pid = -1;

	err = launch_ask(o, l);
	if (err)
		return err;
	if (l->asked)
		return launch_take(o, l);
	/* No spawner (or none that works): the controller forks. */
	cgfd = launch_cg_open(o, l);
	/* -j N: no other run's fork may copy this run's child ends of the
	 * pipes (its errp write end would hold launch_release's read open
	 * until that other child's exec). From the pipes to their close. */
	cs_lock_acquire(&launch_lock);
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
		pid = spawn_shared(&launch_spawned, false, cgfd, o, gate[0], errp[1], gate[1],
				   errp[0]);
		if (pid < 0)
#endif
			pid = fork_into_cgroup(cgfd, 0);
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
	cs_lock_release(&launch_lock);
	l->gate_fd = gate[1];
	l->err_fd = errp[0];
	return 0;
fail:
	cs_lock_release(&launch_lock);
	if (cgfd >= 0)
		close(cgfd);
	run_cgroup_destroy(launch_cg(l));
	return err;
}

void launch_cancel(struct launch_spawner *sp, struct launch *l)
{
	bool moved;
	pid_t pid;

	if (!l->asked)
		return;
	/* Closed, the gate reads EOF: the child exits without its exec. */
	close(l->gate_fd);
	close(l->err_fd);
	l->gate_fd = l->err_fd = -1;
	pid = launch_answer(sp, l, &moved);
	if (pid <= 0)
		return;
	l->pid = pid;
	if (launch_wait(l, 2000) != 1)
		launch_kill(l);
	l->pid = 0;
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
	run_cgroup_kill(launch_cg(l));
	kill(-l->pid, SIGKILL);
	kill(l->pid, SIGKILL);
	launch_wait(l, 0);
}

void launch_end(struct launch *l)
{
	if (l->pid <= 0 || l->ended)
		return;
	l->ended = true;
	if (!l->reaped)
		launch_kill(l);

	if (l->kept && l->kept->path) {
		if (!run_cgroup_reusable(l->kept))
			run_cgroup_destroy(l->kept); /* the next launch makes another */
	} else if (l->cg.path)
		run_cgroup_destroy(&l->cg);
	else if (l->own_cgroup)
		kill(-l->pid, SIGKILL); /* what is left of its process group */
}
