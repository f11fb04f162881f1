// SPDX-License-Identifier: MIT
/*
 * VM runner (vm.h, docs/vm.md). One run:
 *   1. base initramfs (static busybox + tools/vm-init.sh as /init), cached
 *      under self_cache_dir()/vm keyed by the content hash of both;
 *   2. a per-run newc archive appended to a copy of it: the command, its
 *      libraries, --carry paths, concsched itself, env.sh and cmd.sh;
 *   3. qemu with the cached kernel, the console on ttyS0 into a temp file,
 *      and four virtio-serial ports: cs.stdout and cs.stderr into pipes we
 *      forward, cs.ctl (status lines) into a pipe we parse, cs.out (a tar of
 *      the guest's /out) into a temp file we extract after qemu is gone.
 * The guest enforces the time limit itself, so /out comes back after a
 * timeout too; the host keeps a looser deadline of its own and kills qemu
 * if the guest misses it. qemu gets PR_SET_PDEATHSIG and its own process
 * group, and is killed and reaped on every path out of vm_run().
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "vm/initramfs.h"
#include "vm/vm_base.h"
#include "lib/array_size.h"
#include "lib/file.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/shell.h"
#include "lib/tree.h"
#include "lib/xalloc.h"
#include "vm/vm.h"

#define QEMU_BIN "qemu-system-x86_64"
/* Seconds the guest may take from qemu start to running the command. TCG
 * boots in 2-8 s here (KERNEL.md Q6); the margin covers a loaded host. */
#define VM_BOOT_LIMIT_S	 120
#define VM_BOOT_ATTEMPTS 3 /* boots that never reach the command */
/* Extra seconds the host grants past the guest's own timeout before it
 * kills qemu, and after the command ended for /out and poweroff. */
#define VM_GRACE_S	  30
#define VM_LOG_TAIL_LINES 25

/* Guest PATH, as vm-init.sh sets it. */
static const char *const guest_path_dirs[] = {
	"/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin",
};

static bool is_applet(const struct vm_base *b, const char *name)
{
	size_t len = strlen(name);
	const char *p = b->applet_list;

	while (p && *p) {
		size_t l = strcspn(p, "\n");

		if (l == len && !strncmp(p, name, len))
			return true;
		p += l + (p[l] == '\n');
	}
	return false;
}

/* Single-quote for sh: 'it'\''s'. */
static void sh_quote(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++) {
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	}
	fputc('\'', f);
}

static bool env_name_ok(const char *kv)
{
	const char *p = kv;

	if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_'))
		return false;
	for (p++; *p && *p != '='; p++)
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= '0' && *p <= '9') || *p == '_'))
			return false;
	return *p == '=';
}

/* Everything one run needs on the host; freed by vm_ctx_free(). */
struct vm_ctx {
	const struct vm_opts *o;
	struct vm_base base;
	char *tmpdir, *initrd, *console, *qemu_log, *out_tar;
	char *kernel;
	char *cwd;
	char **argv; /* possibly with argv[0] made absolute */
	pid_t qemu;
	int out_r, err_r, ctl_r, str_r; /* str: cs.stream, only with chan_fn */
	int out_w, err_w, ctl_w, str_w;
	char ctl[4096];
	size_t ctl_len;
	bool booted, notfound, started, ended, timed_out, outdone;
	int exit_code, tar_status;
	double up_start, up_end;
	uint64_t t_spawn, t_start;
};

static char *abs_path(const char *cwd, const char *p)
{
	char *joined = p[0] == '/' ? xstrdup(p) : xasprintf("%s/%s", cwd, p);
	char *norm = initramfs_path_normalize(joined);

	free(joined);
	return norm;
}

static bool dir_in_guest_path(const char *file)
{
	const char *slash = strrchr(file, '/');
	size_t i, len = slash ? (size_t)(slash - file) : 0;

	for (i = 0; i < ARRAY_SIZE(guest_path_dirs); i++)
		if (strlen(guest_path_dirs[i]) == len && !strncmp(guest_path_dirs[i], file, len))
			return true;
	return false;
}

/* argv[0] as the guest will exec it, carried if it comes from the host. */
static int resolve_command(struct vm_ctx *c, struct cpio_writer *w)
{
	const char *name = c->o->argv[0];
	char *host;
	struct stat st;
	int err;

	if (!strcmp(name, "concsched")) {
		/* The guest runs the very concsched that started it, installed
		 * or not: it is carried anyway. */
		char self[PATH_MAX];
		ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (n > 0) {
			self[n] = 0;
			c->argv[0] = xstrdup(self);
			return initramfs_carry(w, self);
		}
	}
	if (!strchr(name, '/')) {
		if (is_applet(&c->base, name))
			return 0;
		host = shell_find_in_path(name);
		if (!host) {
			log_err("%s: command not found (not in PATH, not a busybox applet)", name);
			return -ENOENT;
		}
		/* Run it from where it is on the host; bare names only work
		 * when that directory is on the guest's PATH. */
		if (!dir_in_guest_path(host))
			c->argv[0] = xstrdup(host);
	} else {
		host = abs_path(c->cwd, name);
		if (stat(host, &st)) {
			log_err("%s: %s", name, strerror(errno));
			free(host);
			return -ENOENT;
		}
		if (!S_ISREG(st.st_mode)) {
			log_err("%s: not a regular file", name);
			free(host);
			return -EINVAL;
		}
	}
	err = initramfs_carry(w, host);
	free(host);
	return err;
}

/* Arguments naming existing host files are carried too, so that
 * `concsched vm -- concsched run ./prog` finds ./prog in the guest. */
static int carry_file_args(struct vm_ctx *c, struct cpio_writer *w)
{
	char *const *a;
	int err = 0;

	for (a = c->o->argv + 1; *a && !err; a++) {
		struct stat st;
		char *p;

		if (!strchr(*a, '/'))
			continue;
		p = abs_path(c->cwd, *a);
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode))
			err = initramfs_carry(w, p);
		free(p);
	}
	return err;
}

static int write_run_scripts(struct vm_ctx *c, struct cpio_writer *w)
{
	const struct vm_opts *o = c->o;
	char *buf = NULL;
	size_t len = 0, i;
	FILE *f;
	int err;

	f = open_memstream(&buf, &len);
	fprintf(f, "CS_TIMEOUT=%u\nCS_OUT=%d\nCS_STREAM=%d\nCS_CWD=", o->timeout_s,
		o->out_dir ? 1 : 0, o->chan_fn ? 1 : 0);
	sh_quote(f, c->cwd);
	fputs("\nCS_ARGV0=", f);
	sh_quote(f, c->argv[0]);
	fputc('\n', f);
	fclose(f);
	err = initramfs_add_data(w, "/.concsched/run/env.sh", 0644, buf, len);
	free(buf);
	if (err)
		return err;

	buf = NULL;
	f = open_memstream(&buf, &len);
	fprintf(f, "export HOME=/root TERM=linux CONCSCHED_VM=1 CONCSCHED_OUT=%s\n", VM_GUEST_OUT);
	for (i = 0; o->env && o->env[i]; i++) {
		fputs("export ", f);
		sh_quote(f, o->env[i]);
		fputc('\n', f);
	}
	fputs("exec", f);
	for (i = 0; c->argv[i]; i++) {
		fputc(' ', f);
		sh_quote(f, c->argv[i]);
	}
	fputc('\n', f);
	fclose(f);
	err = initramfs_add_data(w, "/.concsched/run/cmd.sh", 0755, buf, len);
	free(buf);
	return err;
}

static int copy_fd(int in, int out)
{
	char buf[65536];
	ssize_t n;

	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			return -EIO;
	return n < 0 ? -errno : 0;
}

/* Per-run archive: what the command needs, appended to the cached base. */
static int build_initrd(struct vm_ctx *c)
{
	static const char *const layout[] = { "/bin",	  "/sbin",     "/lib",	  "/lib64",
					      "/usr/bin", "/usr/sbin", "/usr/lib" };
	const struct vm_opts *o = c->o;
	struct cpio_writer w;
	char self[PATH_MAX], *tmp;
	int in, out, err;
	size_t i;
	ssize_t n;
	FILE *f;

	in = open(c->base.cpio, O_RDONLY | O_CLOEXEC);
	out = open(c->initrd, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	err = in < 0 || out < 0 ? -errno : copy_fd(in, out);
	if (in >= 0)
		close(in);
	if (err) {
		if (out >= 0)
			close(out);
		log_err("cannot write %s: %s", c->initrd, strerror(-err));
		return err;
	}
	f = fdopen(out, "a");
	if (!f) {
		err = -errno;
		close(out);
		return err;
	}
	initramfs_init(&w, f);
	/* The base archive's directories are the guest's own (/proc, /tmp...). */
	for (i = 0; i < vm_base_ndirs; i++)
		initramfs_exclude(&w, vm_base_dirs[i]);
	/* `--carry /tmp` must not pull in the archive being written. */
	tmp = initramfs_path_normalize(c->tmpdir);
	initramfs_exclude(&w, tmp);
	free(tmp);
	err = 0;
	/* Same top-level shape as the host (merged /usr symlinks included), so
	 * every carried path resolves the same way in the guest. */
	for (i = 0; i < ARRAY_SIZE(layout) && !err; i++)
		if (access(layout[i], F_OK) == 0)
			err = initramfs_carry_skeleton(&w, layout[i]);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (!err && n > 0) {
		self[n] = 0;
		err = initramfs_carry(&w, self);
	}
	err = err ?: resolve_command(c, &w);
	for (i = 0; o->carry && o->carry[i] && !err; i++) {
		char *p = abs_path(c->cwd, o->carry[i]);

		err = initramfs_carry(&w, p);
		free(p);
	}
	err = err ?: carry_file_args(c, &w);
	if (!err && access(c->cwd, F_OK) == 0)
		err = initramfs_carry_skeleton(&w, c->cwd);
	err = err ?: write_run_scripts(c, &w);
	err = err ?: initramfs_finish(&w);
	if (err == -EIO || err == -EFBIG)
		log_err("cannot write the VM initramfs %s: %s", c->initrd, strerror(-err));
	log_debug("vm: initramfs: %u files, %llu bytes carried", w.files,
		  (unsigned long long)w.payload);
	initramfs_free(&w);
	if (fclose(f) && !err)
		err = -errno;
	return err;
}

static void vm_ctx_free(struct vm_ctx *c)
{
	const char *files[] = { c->initrd, c->console, c->qemu_log, c->out_tar };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(files); i++) {
		if (files[i])
			unlink(files[i]);
		free((void *)files[i]);
	}
	if (c->tmpdir)
		rmdir(c->tmpdir);
	free(c->tmpdir);
	free(c->kernel);
	free(c->cwd);
	if (c->argv && c->argv[0] != c->o->argv[0])
		free(c->argv[0]);
	free(c->argv);
	vm_base_free(&c->base);
	for (i = 0; i < 8; i++) {
		int *fds[] = { &c->out_r, &c->err_r, &c->ctl_r, &c->str_r,
			       &c->out_w, &c->err_w, &c->ctl_w, &c->str_w };

		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
}

static void vm_kill(struct vm_ctx *c)
{
	if (c->qemu <= 0)
		return;
	kill(c->qemu, SIGKILL);
	while (waitpid(c->qemu, NULL, 0) < 0 && errno == EINTR)
		;
	c->qemu = 0;
}

static char **qemu_argv(struct vm_ctx *c, const char *accel)
{
	const struct vm_opts *o = c->o;
	char **a = xcalloc(64, sizeof(*a));
	int n = 0;

	a[n++] = xstrdup(QEMU_BIN);
	a[n++] = xstrdup("-nodefaults");
	a[n++] = xstrdup("-no-user-config");
	a[n++] = xstrdup("-nographic");
	a[n++] = xstrdup("-no-reboot");
	a[n++] = xstrdup("-accel");
	/* Multi-threaded TCG panics the guest when a sched_ext scheduler is
	 * loaded and unloaded (KERNEL.md Q6): one TCG thread for all vCPUs. */
	a[n++] = xstrdup(!strcmp(accel, "kvm") ? "kvm" : "tcg,thread=single");
	a[n++] = xstrdup("-cpu");
	a[n++] = xstrdup("max");
	a[n++] = xstrdup("-smp");
	a[n++] = xasprintf("%u", o->cpus ? o->cpus : 2);
	a[n++] = xstrdup("-m");
	a[n++] = xasprintf("%u", o->mem_mb ? o->mem_mb : 1024);
	a[n++] = xstrdup("-kernel");
	a[n++] = xstrdup(c->kernel);
	a[n++] = xstrdup("-initrd");
	a[n++] = xstrdup(c->initrd);
	a[n++] = xstrdup("-append");
	/* panic=-1 + oops=panic + -no-reboot: any guest oops ends qemu at once,
	 * and the host reports it from the console log. loglevel=5 after quiet:
	 * warnings (WARN_ON splats) reach the console too, errors and worse
	 * only otherwise. no_timer_check: the boot's check that the timer
	 * interrupt arrives within a few loops fails when the host starves a
	 * TCG vCPU ("IO-APIC + timer doesn't work!" panic, 2 boots of about
	 * 70 at load average 11; docs/vm.md). */
	a[n++] = xasprintf("console=ttyS0 panic=-1 oops=panic quiet loglevel=5 "
			   "8250.nr_uarts=1 mitigations=off random.trust_cpu=on no_timer_check %s",
			   getenv("CONCSCHED_VM_APPEND") ?: "");
	a[n++] = xstrdup("-chardev");
	a[n++] = xasprintf("file,id=con,path=%s", c->console);
	a[n++] = xstrdup("-serial");
	a[n++] = xstrdup("chardev:con");
	a[n++] = xstrdup("-device");
	a[n++] = xstrdup("virtio-serial-pci,id=vs");
	a[n++] = xstrdup("-chardev");
	a[n++] = xasprintf("file,id=cso,path=/dev/fd/%d", c->out_w);
	a[n++] = xstrdup("-device");
	a[n++] = xstrdup("virtserialport,bus=vs.0,chardev=cso,name=cs.stdout");
	a[n++] = xstrdup("-chardev");
	a[n++] = xasprintf("file,id=cse,path=/dev/fd/%d", c->err_w);
	a[n++] = xstrdup("-device");
	a[n++] = xstrdup("virtserialport,bus=vs.0,chardev=cse,name=cs.stderr");
	a[n++] = xstrdup("-chardev");
	a[n++] = xasprintf("file,id=csc,path=/dev/fd/%d", c->ctl_w);
	a[n++] = xstrdup("-device");
	a[n++] = xstrdup("virtserialport,bus=vs.0,chardev=csc,name=cs.ctl");
	a[n++] = xstrdup("-chardev");
	a[n++] = xasprintf("file,id=cst,path=%s", c->out_tar);
	a[n++] = xstrdup("-device");
	a[n++] = xstrdup("virtserialport,bus=vs.0,chardev=cst,name=cs.out");
	if (c->str_w >= 0) {
		a[n++] = xstrdup("-chardev");
		a[n++] = xasprintf("file,id=css,path=/dev/fd/%d", c->str_w);
		a[n++] = xstrdup("-device");
		a[n++] = xstrdup("virtserialport,bus=vs.0,chardev=css,name=cs.stream");
	}
	return a;
}

static void free_argv(char **a)
{
	size_t i;

	for (i = 0; a && a[i]; i++)
		free(a[i]);
	free(a);
}

static int spawn_qemu(struct vm_ctx *c, char **argv)
{
	pid_t parent = getpid();
	int logfd;
	pid_t pid;

	logfd = open(c->qemu_log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (logfd < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(logfd);
		return -errno;
	}
	if (pid == 0) {
		int devnull = open("/dev/null", O_RDONLY);
		sigset_t none;

		/* Dies with us, even on SIGKILL; its own process group keeps a
		 * terminal's ^C for us, so we can tear it down in order. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(127);
		setpgid(0, 0);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		signal(SIGPIPE, SIG_DFL);
		dup2(devnull, 0);
		dup2(logfd, 1);
		dup2(logfd, 2);
		fcntl(c->out_w, F_SETFD, 0);
		fcntl(c->err_w, F_SETFD, 0);
		fcntl(c->ctl_w, F_SETFD, 0);
		if (c->str_w >= 0)
			fcntl(c->str_w, F_SETFD, 0);
		execvp(argv[0], argv);
		dprintf(2, "exec %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	close(logfd);
	c->qemu = pid;
	c->t_spawn = now_ns();
	return 0;
}

static void ctl_line(struct vm_ctx *c, char *line)
{
	double up;
	int v;

	log_debug("vm: guest: %s", line);
	if (!strncmp(line, "boot ", 5)) {
		c->booted = true;
	} else if (!strcmp(line, "notfound")) {
		c->notfound = true;
	} else if (sscanf(line, "start %lf", &up) == 1) {
		c->started = true;
		c->up_start = up;
		c->t_start = now_ns();
		if (c->o->chan_fn)
			c->o->chan_fn(VM_CHAN_STARTED, NULL, (c->t_start - c->t_spawn) / 1000000,
				      c->o->chan_arg);
	} else if (sscanf(line, "exit %d %lf", &v, &up) == 2) {
		c->ended = true;
		c->exit_code = v;
		c->up_end = up;
	} else if (sscanf(line, "timeout %lf", &up) == 1) {
		c->ended = c->timed_out = true;
		c->up_end = up;
	} else if (sscanf(line, "outdone %d", &v) == 1) {
		c->outdone = true;
		c->tar_status = v;
	}
}

static void ctl_feed(struct vm_ctx *c, const char *data, size_t n)
{
	char *nl;

	if (n > sizeof(c->ctl) - 1 - c->ctl_len)
		n = sizeof(c->ctl) - 1 - c->ctl_len;
	memcpy(c->ctl + c->ctl_len, data, n);
	c->ctl_len += n;
	c->ctl[c->ctl_len] = 0;
	while ((nl = strchr(c->ctl, '\n'))) {
		*nl = 0;
		ctl_line(c, c->ctl);
		c->ctl_len -= nl + 1 - c->ctl;
		memmove(c->ctl, nl + 1, c->ctl_len + 1);
	}
}

/* Forward a chunk; a closed reader (EPIPE) just stops the forwarding. */
static void forward(int fd, const char *buf, size_t n, bool *broken)
{
	while (n && !*broken) {
		ssize_t w = write(fd, buf, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			*broken = true;
			return;
		}
		buf += w;
		n -= w;
	}
}

static volatile sig_atomic_t vm_signalled;

static void vm_on_signal(int sig)
{
	vm_signalled = sig;
}

/* $CONCSCHED_VM_BOOT_LIMIT: seconds, 1-3600; 0 when unset or not that
 * (vm_check_opts refuses the latter). The test suite sets it, scaled with
 * the machine's speed, so that a stalled boot costs less than 120 s. */
static unsigned vm_boot_limit_env(void)
{
	const char *env = getenv("CONCSCHED_VM_BOOT_LIMIT");
	unsigned long v;
	char *end;

	if (!env || !*env)
		return 0;
	errno = 0;
	v = strtoul(env, &end, 10);
	return !errno && !*end && v >= 1 && v <= 3600 ? (unsigned)v : 0;
}

/* --boot-limit, else $CONCSCHED_VM_BOOT_LIMIT, else 120. */
static unsigned vm_boot_limit_s(const struct vm_opts *o)
{
	unsigned env;

	if (o->boot_limit_s)
		return o->boot_limit_s;
	env = vm_boot_limit_env();
	return env ? env : VM_BOOT_LIMIT_S;
}

static uint64_t vm_deadline(const struct vm_ctx *c)
{
	const uint64_t s = 1000000000ULL;

	if (!c->started)
		return c->t_spawn + vm_boot_limit_s(c->o) * s;
	if (!c->o->timeout_s)
		return UINT64_MAX;
	return c->t_start + (uint64_t)(c->o->timeout_s + VM_GRACE_S) * s;
}

static bool out_tar_grew(const struct vm_ctx *c, off_t *size)
{
	struct stat st;

	if (stat(c->out_tar, &st) || st.st_size == *size)
		return false;
	*size = st.st_size;
	return true;
}

/* Pump the pipes until qemu is gone and they are drained. Returns 1 when we
 * had to kill qemu for a missed deadline, 0 otherwise. */
static int vm_pump(struct vm_ctx *c, int out_fd, int err_fd)
{
	bool out_broken = false, err_broken = false, killed = false;
	void (*fn)(enum vm_chan, const void *, size_t, void *) = c->o->chan_fn;
	uint64_t last_progress = 0;
	off_t tar_size = 0;
	char buf[65536];

	while (c->out_r >= 0 || c->err_r >= 0 || c->ctl_r >= 0 || c->str_r >= 0) {
		struct pollfd p[4] = { { c->out_r, POLLIN, 0 },
				       { c->err_r, POLLIN, 0 },
				       { c->ctl_r, POLLIN, 0 },
				       { c->str_r, POLLIN, 0 } };
		int *fds[4] = { &c->out_r, &c->err_r, &c->ctl_r, &c->str_r };
		uint64_t deadline, now;
		int i;

		if (vm_signalled && c->qemu > 0)
			vm_kill(c);
		if (poll(p, 4, 100) < 0 && errno != EINTR)
			break;
		for (i = 0; i < 4; i++) {
			ssize_t n;

			if (p[i].fd < 0 || !(p[i].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			n = read(p[i].fd, buf, sizeof(buf));
			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				close(*fds[i]);
				*fds[i] = -1;
			} else if (i == 2) {
				ctl_feed(c, buf, n);
			} else if (i == 3) {
				fn(VM_CHAN_STREAM, buf, (size_t)n, c->o->chan_arg);
			} else if (fn) {
				fn(i == 0 ? VM_CHAN_STDOUT : VM_CHAN_STDERR, buf, (size_t)n,
				   c->o->chan_arg);
			} else if (i == 0) {
				forward(out_fd, buf, n, &out_broken);
			} else {
				forward(err_fd, buf, n, &err_broken);
			}
		}
		if (c->qemu > 0 && waitpid(c->qemu, NULL, WNOHANG) == c->qemu)
			c->qemu = 0;
		now = now_ns();
		/* After the command, /out may be large: the grace period runs
		 * from the last byte of tar that arrived. */
		if (c->ended && (!last_progress || out_tar_grew(c, &tar_size)))
			last_progress = now;
		deadline = c->ended ? last_progress + VM_GRACE_S * 1000000000ULL : vm_deadline(c);
		if (c->qemu > 0 && now > deadline) {
			log_debug("vm: deadline passed, killing qemu");
			vm_kill(c);
			killed = true;
		}
	}
	vm_kill(c);
	return killed;
}

/* The console log line that best says why the guest died. */
static void death_reason(struct vm_ctx *c, char *out, size_t len, int killed)
{
	static const char *const marks[] = { "Kernel panic", "Oops", "BUG:", "general protection",
					     "Attempted to kill init" };
	char *log = file_read(c->console, NULL), *line, *save = NULL, *best = NULL;
	size_t i, best_rank = ARRAY_SIZE(marks);

	for (line = log ? strtok_r(log, "\r\n", &save) : NULL; line;
	     line = strtok_r(NULL, "\r\n", &save))
		for (i = 0; i < best_rank; i++)
			if (strstr(line, marks[i])) {
				best = line;
				best_rank = i;
				break;
			}
	/* Drop the printk timestamp: "[    4.55] Kernel panic - ..." */
	if (best && best[0] == '[' && strchr(best, ']'))
		best = strchr(best, ']') + 1 + (strchr(best, ']')[1] == ' ');
	if (best)
		snprintf(out, len, "guest kernel died: %s", best);
	else if (killed && !c->started)
		snprintf(out, len, "guest did not start the command within %u s",
			 vm_boot_limit_s(c->o));
	else if (killed)
		snprintf(out, len, "guest stopped responding after the command started");
	else
		snprintf(out, len, "qemu exited before the command finished%s",
			 c->booted ? "" : " (the guest never reached /init)");
	free(log);
}

/* After a normal run, surface what the guest kernel complained about (a
 * WARN, a BUG, sched_ext ejecting a scheduler): with `quiet` only
 * warnings and worse reach the console, so every such line matters. */
static void warn_kernel_complaints(const char *path)
{
	static const char *const marks[] = { "WARNING:", "BUG:", "sched_ext:", "Oops" };
	char *log = file_read(path, NULL), *line, *save = NULL;
	unsigned shown = 0;
	size_t i;

	for (line = log ? strtok_r(log, "\r\n", &save) : NULL; line && shown < 5;
	     line = strtok_r(NULL, "\r\n", &save))
		for (i = 0; i < ARRAY_SIZE(marks); i++)
			if (strstr(line, marks[i])) {
				log_warn("vm: guest kernel: %s", line);
				shown++;
				break;
			}
	free(log);
}

static void print_tail(const char *path, const char *what, int lines)
{
	size_t len, i;
	char *s = file_read(path, &len);
	int nl = 0;

	if (!s || !len) {
		free(s);
		return;
	}
	for (i = len; i > 0; i--)
		if (s[i - 1] == '\n' && ++nl > lines)
			break;
	fprintf(stderr, "---- %s (last %d lines of %s) ----\n%s%s", what, lines, path, s + i,
		s[len - 1] == '\n' ? "" : "\n");
	free(s);
}

static void print_file(const char *path, const char *what)
{
	char *s = file_read(path, NULL);

	if (s && *s)
		fprintf(stderr, "---- %s ----\n%s%s", what, s,
			s[strlen(s) - 1] == '\n' ? "" : "\n");
	free(s);
}

static int extract_out(struct vm_ctx *c)
{
	struct stat st;
	char *cmd;
	int err, rc;

	if (stat(c->out_tar, &st) || st.st_size == 0)
		return -ENODATA;
	err = tree_mkdir_p(c->o->out_dir, 0755);
	if (err) {
		log_err("cannot create %s: %s", c->o->out_dir, strerror(-err));
		return err;
	}
	/* GNU tar refuses members with ".." and strips leading "/". */
	cmd = xasprintf("tar -x --no-same-owner -f '%s' -C '%s' 2>/dev/null", c->out_tar,
			c->o->out_dir);
	rc = system(cmd);
	free(cmd);
	return rc == 0 ? 0 : -EIO;
}

static int copy_path(const char *from, const char *to)
{
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	int err = in < 0 || out < 0 ? -errno : copy_fd(in, out);

	if (in >= 0)
		close(in);
	if (out >= 0 && close(out) && !err)
		err = -errno;
	return err;
}

static const char *const tmp_files[] = { "initrd.cpio", "console.log", "qemu.log", "out.tar" };

/* A SIGKILLed concsched cannot clean up (its qemu dies with it through
 * PDEATHSIG): remove the temp dirs of runs whose process is gone. Only
 * the files we create are removed, never anything else found there. */
static void remove_stale_tmpdirs(const char *tmp)
{
	DIR *d = opendir(tmp);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		int pid;
		size_t i;
		char *dir;

		if (sscanf(e->d_name, "concsched-vm.%d.", &pid) != 1 || pid <= 0 ||
		    kill(pid, 0) == 0 || errno != ESRCH)
			continue;
		for (i = 0; i < ARRAY_SIZE(tmp_files); i++) {
			char *f = xasprintf("%s/%s/%s", tmp, e->d_name, tmp_files[i]);

			unlink(f);
			free(f);
		}
		dir = xasprintf("%s/%s", tmp, e->d_name);
		rmdir(dir);
		free(dir);
	}
	if (d)
		closedir(d);
}

static int vm_prepare(struct vm_ctx *c)
{
	const char *t = getenv("TMPDIR");
	int p[4][2], i, err;
	char cwd[PATH_MAX];
	char *qemu;

	c->kernel = vm_host_kernel_path();
	if (!c->kernel)
		return -ENOENT;
	qemu = shell_find_in_path(QEMU_BIN);
	if (!qemu) {
		log_err("%s not found in PATH (run: sudo make deps, it installs qemu-system-x86)",
			QEMU_BIN);
		return -ENOENT;
	}
	free(qemu);
	err = vm_base_get(&c->base);
	if (err)
		return err;
	if (c->o->cwd)
		c->cwd = initramfs_path_normalize(c->o->cwd);
	else
		c->cwd = xstrdup(getcwd(cwd, sizeof(cwd)) ? cwd : "/");
	remove_stale_tmpdirs(t && *t ? t : "/tmp");
	c->tmpdir = xasprintf("%s/concsched-vm.%d.XXXXXX", t && *t ? t : "/tmp", (int)getpid());
	if (!mkdtemp(c->tmpdir)) {
		err = -errno;
		log_err("cannot create a temporary directory %s: %s", c->tmpdir, strerror(errno));
		free(c->tmpdir);
		c->tmpdir = NULL;
		return err;
	}
	c->initrd = xasprintf("%s/%s", c->tmpdir, tmp_files[0]);
	c->console = xasprintf("%s/%s", c->tmpdir, tmp_files[1]);
	c->qemu_log = xasprintf("%s/%s", c->tmpdir, tmp_files[2]);
	c->out_tar = xasprintf("%s/%s", c->tmpdir, tmp_files[3]);
	for (i = 0; i < 4; i++)
		if ((i < 3 || c->o->chan_fn) && pipe2(p[i], O_CLOEXEC))
			return -errno;
	c->out_r = p[0][0], c->out_w = p[0][1];
	c->err_r = p[1][0], c->err_w = p[1][1];
	c->ctl_r = p[2][0], c->ctl_w = p[2][1];
	if (c->o->chan_fn)
		c->str_r = p[3][0], c->str_w = p[3][1];
	return 0;
}

static int vm_check_opts(const struct vm_opts *o)
{
	size_t i;

	if (!o->argv || !o->argv[0] || !o->argv[0][0]) {
		log_err("vm: no command given");
		return -EINVAL;
	}
	for (i = 0; o->env && o->env[i]; i++)
		if (!env_name_ok(o->env[i])) {
			log_err("vm: bad environment variable '%s' (want NAME=VALUE)", o->env[i]);
			return -EINVAL;
		}
	if (o->cwd && o->cwd[0] != '/') {
		log_err("vm: the guest working directory must be absolute: %s", o->cwd);
		return -EINVAL;
	}
	if (getenv("CONCSCHED_VM_BOOT_LIMIT") && *getenv("CONCSCHED_VM_BOOT_LIMIT") &&
	    !vm_boot_limit_env()) {
		log_err("vm: CONCSCHED_VM_BOOT_LIMIT=%s: want seconds, 1 to 3600",
			getenv("CONCSCHED_VM_BOOT_LIMIT"));
		return -EINVAL;
	}
	return 0;
}

static void vm_collect(struct vm_ctx *c, struct vm_result *r, int killed)
{
	const struct vm_opts *o = c->o;

	r->boot_s = c->started ? (c->t_start - c->t_spawn) / 1e9 : 0;
	r->guest_boot_s = c->started ? c->up_start : 0;
	r->cmd_s = c->ended ? c->up_end - c->up_start : 0;
	if (vm_signalled) {
		r->outcome = VM_INTERRUPTED;
		r->signal = vm_signalled;
		snprintf(r->reason, sizeof(r->reason), "interrupted by signal %d",
			 (int)vm_signalled);
	} else if (c->timed_out) {
		r->outcome = VM_TIMEOUT;
		snprintf(r->reason, sizeof(r->reason),
			 "command ran longer than %u s and was killed", o->timeout_s);
	} else if (c->ended) {
		r->outcome = VM_EXITED;
		r->exit_code = c->exit_code;
	} else if (killed && c->started && o->timeout_s) {
		r->outcome = VM_TIMEOUT;
		snprintf(r->reason, sizeof(r->reason),
			 "command ran longer than %u s and the guest did not stop it (qemu killed)",
			 o->timeout_s);
	} else {
		r->outcome = VM_DIED;
		death_reason(c, r->reason, sizeof(r->reason), killed);
	}
	if (o->out_dir) {
		int err = extract_out(c);

		r->out_complete = !err && c->outdone && c->tar_status == 0;
		if (err == -EIO)
			log_warn("vm: %s: the guest's %s arrived damaged; kept what could be read",
				 o->out_dir, VM_GUEST_OUT);
	}
}

/* One boot: prepare, spawn qemu, pump, collect. *stalled: the guest
 * died or hung before it started the command. */
static int vm_boot_once(const struct vm_opts *o, struct vm_result *r, bool last, bool *stalled)
{
	struct vm_ctx c = {
		.o = o,
		.out_r = -1,
		.err_r = -1,
		.ctl_r = -1,
		.str_r = -1,
		.out_w = -1,
		.err_w = -1,
		.ctl_w = -1,
		.str_w = -1,
	};
	char **qargv = NULL;
	struct stat st;
	size_t i, n, v;
	int err, killed = 0;

	*stalled = false;
	for (n = 0; o->argv[n]; n++)
		;
	/* A concsched in the guest says as much as this one: --verbose goes
	 * with it. */
	v = n && !strcmp(o->argv[0], "concsched") && log_verbose > 0 ? (size_t)log_verbose : 0;
	c.argv = xcalloc(n + v + 1, sizeof(*c.argv));
	c.argv[0] = o->argv[0];
	for (i = 0; i < v; i++)
		c.argv[1 + i] = "--verbose";
	if (n > 1)
		memcpy(c.argv + 1 + v, o->argv + 1, (n - 1) * sizeof(*c.argv));
	err = vm_prepare(&c);
	if (err)
		goto cleanup;
	err = build_initrd(&c);
	if (err)
		goto cleanup;
	if (!stat(c.initrd, &st))
		r->initrd_bytes = st.st_size;
	if (vm_signalled) {
		err = -EINTR;
		goto cleanup;
	}
	snprintf(r->accel, sizeof(r->accel), "%s", vm_host_kvm_usable() ? "kvm" : "tcg");
	qargv = qemu_argv(&c, r->accel);
	err = spawn_qemu(&c, qargv);
	if (err) {
		log_err("cannot start %s: %s", QEMU_BIN, strerror(-err));
		goto cleanup;
	}
	/* Only qemu may hold the write ends, or the pipes never reach EOF. */
	close(c.out_w), close(c.err_w), close(c.ctl_w);
	if (c.str_w >= 0)
		close(c.str_w);
	c.out_w = c.err_w = c.ctl_w = c.str_w = -1;
	killed = vm_pump(&c, o->stdout_fd >= 0 ? o->stdout_fd : STDOUT_FILENO,
			 o->stderr_fd >= 0 ? o->stderr_fd : STDERR_FILENO);
	if (c.notfound) {
		log_err("%s: command not found in the guest", c.argv[0]);
		err = -ENOENT;
		goto cleanup;
	}
	vm_collect(&c, r, killed);
	*stalled = r->outcome == VM_DIED && !c.started && !c.ended;
	if (*stalled && !last) {
		/* vm_run says it boots again; the last boot's log tells why */
	} else if (r->outcome == VM_DIED) {
		print_tail(c.console, "guest kernel log", VM_LOG_TAIL_LINES);
		print_file(c.qemu_log, "qemu");
	} else if (o->show_log) {
		print_file(c.console, "guest kernel log");
	} else {
		warn_kernel_complaints(c.console);
	}
	if (o->keep_log && copy_path(c.console, o->keep_log))
		log_warn("vm: cannot write the kernel log to %s: %s", o->keep_log, strerror(errno));
cleanup:
	vm_kill(&c);
	free_argv(qargv);
	vm_ctx_free(&c);
	return err;
}

int vm_run(const struct vm_opts *o, struct vm_result *r)
{
	struct sigaction sa = { .sa_handler = vm_on_signal }, old[4];
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };
	uint64_t t0 = now_ns();
	bool stalled = false;
	int err, attempt;
	size_t i;

	memset(r, 0, sizeof(*r));
	err = vm_check_opts(o);
	if (err)
		return err;
	vm_signalled = 0;
	for (i = 0; i < ARRAY_SIZE(sigs); i++) {
		sa.sa_handler = sigs[i] == SIGPIPE ? SIG_IGN : vm_on_signal;
		sigaction(sigs[i], &sa, &old[i]);
	}
	/* A TCG guest now and then stops or panics early in its boot on a
	 * loaded host (the console ends in the kernel's first seconds;
	 * 14-sched-targets, 1 boot in 20 beside another VM). Nothing of the
	 * command has run then, so booting again loses nothing. */
	for (attempt = 1; attempt <= VM_BOOT_ATTEMPTS; attempt++) {
		memset(r, 0, sizeof(*r));
		err = vm_boot_once(o, r, attempt == VM_BOOT_ATTEMPTS, &stalled);
		if (err || !stalled || vm_signalled || attempt == VM_BOOT_ATTEMPTS)
			break;
		log_warn("vm: %s; booting again (attempt %d of %d)", r->reason, attempt + 1,
			 VM_BOOT_ATTEMPTS);
	}
	r->boot_attempts = attempt;
	for (i = 0; i < ARRAY_SIZE(sigs); i++)
		sigaction(sigs[i], &old[i], NULL);
	r->total_s = (now_ns() - t0) / 1e9;
	return err;
}
