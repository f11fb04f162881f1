// SPDX-License-Identifier: MIT
#include "lib/util.h"

#include <dirent.h>
#include <errno.h>
#include <sys/syscall.h>
#include <linux/futex.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int cs_verbose;

static void vlog(const char *tag, const char *fmt, va_list ap)
{
	fprintf(stderr, "concsched: %s", tag);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

void cs_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void cs_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void cs_debug(const char *fmt, ...)
{
	va_list ap;

	if (!cs_verbose)
		return;
	va_start(ap, fmt);
	vlog("debug: ", fmt, ap);
	va_end(ap);
}

static void *oom(void *p)
{
	if (!p) {
		fputs("concsched: out of memory\n", stderr);
		abort();
	}
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	return oom(calloc(n ? n : 1, size ? size : 1));
}

void *xrealloc(void *p, size_t size)
{
	return oom(realloc(p, size ? size : 1));
}

char *xstrdup(const char *s)
{
	return oom(strdup(s));
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	return oom(r < 0 ? NULL : s);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t now_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

const char *cs_cache_dir(void)
{
	static char buf[PATH_MAX];
	const char *e;

	if ((e = getenv("CONCSCHED_CACHE")) && *e)
		snprintf(buf, sizeof(buf), "%s", e);
	else if ((e = getenv("XDG_CACHE_HOME")) && *e)
		snprintf(buf, sizeof(buf), "%s/concsched", e);
	else
		snprintf(buf, sizeof(buf), "%s/.cache/concsched",
			 (e = getenv("HOME")) && *e ? e : "/root");
	return buf;
}

const char *cs_self_dir(void)
{
	static char buf[PATH_MAX];
	ssize_t n;
	char *slash;

	if (buf[0])
		return buf;
	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	if (n <= 0) {
		strcpy(buf, ".");
		return buf;
	}
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (slash)
		*slash = 0;
	return buf;
}

char *cs_find_helper(const char *name)
{
	const char *e = getenv("CONCSCHED_LIBDIR");
	const char *self = cs_self_dir();
	char *cands[3];
	char *found = NULL;
	size_t i;

	cands[0] = e && *e ? xasprintf("%s/%s", e, name) : NULL;
	cands[1] = xasprintf("%s/../tools/%s", self, name);
	cands[2] = xasprintf("%s/../lib/concsched/%s", self, name);
	for (i = 0; i < ARRAY_SIZE(cands); i++) {
		if (!found && cands[i] && access(cands[i], X_OK) == 0)
			found = realpath(cands[i], NULL);
		free(cands[i]);
	}
	return found;
}

int mkdir_p(const char *path, unsigned mode)
{
	char *p = xstrdup(path), *s;
	int err = 0;

	for (s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = 0;
		if (mkdir(p, mode) && errno != EEXIST) {
			err = -errno;
			goto cleanup;
		}
		*s = '/';
	}
	if (mkdir(p, mode) && errno != EEXIST)
		err = -errno;
cleanup:
	free(p);
	return err;
}

char *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	size_t cap = 4096, n = 0;
	char *buf;
	ssize_t r;

	if (fd < 0)
		return NULL;
	buf = xcalloc(1, cap + 1);
	while ((r = read(fd, buf + n, cap - n)) > 0) {
		n += r;
		if (n == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap + 1);
		}
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

char *read_line_file(const char *path)
{
	char *s = read_file(path, NULL);

	if (s)
		s[strcspn(s, "\n")] = 0;
	return s;
}

uint64_t fnv1a64(const void *data, size_t len, uint64_t h)
{
	const unsigned char *p = data;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}

int file_hash_hex(const char *path, char out[17])
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	uint64_t h = FNV1A64_INIT;
	char buf[65536];
	ssize_t r;

	if (fd < 0)
		return -errno;
	while ((r = read(fd, buf, sizeof(buf))) > 0)
		h = fnv1a64(buf, r, h);
	close(fd);
	if (r < 0)
		return -EIO;
	snprintf(out, 17, "%016llx", (unsigned long long)h);
	return 0;
}

char *cs_find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	char *found = NULL;

	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin";
	while (*path && !found) {
		size_t len = strcspn(path, ":");
		char *cand = xasprintf("%.*s/%s", (int)len, path, name);
		struct stat st;

		if (len && stat(cand, &st) == 0 && S_ISREG(st.st_mode) && access(cand, X_OK) == 0)
			found = cand;
		else
			free(cand);
		path += len + (path[len] == ':');
	}
	return found;
}

const char *cs_shell_quote(const char *s, char *buf, size_t len)
{
	size_t pos = 0;
	const char *p;

	if (!len)
		return buf;
	if (*s && !strpbrk(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~")) {
		snprintf(buf, len, "%s", s);
		return buf;
	}
	if (len < 3) {
		buf[0] = '\0';
		return buf;
	}
	buf[pos++] = '\'';
	for (p = s; *p && pos + 5 < len; p++) {
		if (*p == '\'') {
			memcpy(buf + pos, "'\\''", 4);
			pos += 4;
		} else {
			buf[pos++] = *p;
		}
	}
	buf[pos++] = '\'';
	buf[pos] = '\0';
	return buf;
}

/* The invoking user is root: euid 0 and not a sudo from another user. */
static bool invoker_is_root(void)
{
	const char *su = getenv("SUDO_USER");

	return geteuid() == 0 && (!su || !*su || !strcmp(su, "root"));
}

/* This binary as the user would type it (see cs_self_command). */
static const char *self_path(void)
{
	static char buf[PATH_MAX + 8];
	char *self, *onpath, *real = NULL, cwd[PATH_MAX];
	const char *show;
	size_t n;

	if (buf[0])
		return buf;
	self = realpath("/proc/self/exe", NULL);
	onpath = cs_find_in_path("concsched");
	if (onpath)
		real = realpath(onpath, NULL);
	if (!self || (real && !strcmp(real, self))) {
		snprintf(buf, sizeof(buf), "concsched");
	} else {
		show = self;
		if (getcwd(cwd, sizeof(cwd)) && (n = strlen(cwd)) > 1 && !strncmp(self, cwd, n) &&
		    self[n] == '/')
			show = self + n + 1;
		if (!strchr(show, '/')) {
			char *dot = xasprintf("./%s", show);

			cs_shell_quote(dot, buf, sizeof(buf));
			free(dot);
		} else {
			cs_shell_quote(show, buf, sizeof(buf));
		}
	}
	free(self);
	free(onpath);
	free(real);
	return buf;
}

const char *cs_self_command(bool privileged)
{
	static char cmd[2][PATH_MAX + 16];
	const char *host = getenv("CONCSCHED_HOST_CMD"), *hsudo = getenv("CONCSCHED_HOST_SUDO");
	bool sudo;

	if (host && *host)
		sudo = hsudo && !strcmp(hsudo, "1");
	else
		sudo = !invoker_is_root();
	snprintf(cmd[privileged], sizeof(cmd[0]), "%s%s", privileged && sudo ? "sudo " : "",
		 host && *host ? host : self_path());
	return cmd[privileged];
}

void cs_self_command_env(const char **cmd, const char **sudo)
{
	static char c[PATH_MAX + 32];

	snprintf(c, sizeof(c), "CONCSCHED_HOST_CMD=%s", cs_self_command(false));
	*cmd = c;
	*sudo = !strncmp(cs_self_command(true), "sudo ", 5) ? "CONCSCHED_HOST_SUDO=1"
							    : "CONCSCHED_HOST_SUDO=0";
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP ? rmdir(path) : unlink(path))
		return errno == ENOENT ? 0 : -errno;
	return 0;
}

int cs_remove_tree(const char *path)
{
	struct stat st;
	int rc;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISDIR(st.st_mode))
		return unlink(path) && errno != ENOENT ? -errno : 0;
	rc = nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
	return rc < 0 ? -errno : rc;
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
	int in = open(from, O_RDONLY | O_CLOEXEC), out = -1, err = 0;
	char buf[65536];
	ssize_t n, w, off;

	if (in < 0)
		return -errno;
	out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode & 07777);
	if (out < 0) {
		err = -errno;
		close(in);
		return err;
	}
	while (!err && (n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0) {
			if (errno != EINTR)
				err = -errno;
			continue;
		}
		for (off = 0; off < n && !err; off += w) {
			w = write(out, buf + off, (size_t)(n - off));
			if (w < 0) {
				err = errno == EINTR ? 0 : -errno;
				w = 0;
			}
		}
	}
	if (!err && fchmod(out, mode & 07777))
		err = -errno;
	if (close(out) && !err)
		err = -errno;
	close(in);
	return err;
}

static int copy_tree_rec(const char *from, const char *to)
{
	struct stat st;
	struct dirent *e;
	DIR *d;
	int err = 0;

	if (lstat(from, &st))
		return -errno;
	if (S_ISLNK(st.st_mode)) {
		char target[PATH_MAX];
		ssize_t n = readlink(from, target, sizeof(target) - 1);

		if (n < 0)
			return -errno;
		target[n] = '\0';
		return symlink(target, to) ? -errno : 0;
	}
	if (S_ISREG(st.st_mode))
		return copy_file(from, to, st.st_mode);
	if (!S_ISDIR(st.st_mode))
		return 0; /* sockets, fifos, devices: not part of a campaign */
	if (mkdir(to, 0700))
		return -errno;
	d = opendir(from);
	if (!d)
		return -errno;
	while (!err && (e = readdir(d))) {
		char *f, *t;

		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		f = xasprintf("%s/%s", from, e->d_name);
		t = xasprintf("%s/%s", to, e->d_name);
		err = copy_tree_rec(f, t);
		free(f);
		free(t);
	}
	closedir(d);
	if (!err && chmod(to, st.st_mode & 07777))
		err = -errno;
	return err;
}

int cs_copy_tree(const char *from, const char *to)
{
	int err = copy_tree_rec(from, to);

	if (err && err != -EEXIST)
		cs_remove_tree(to);
	return err;
}

int cs_move_tree(const char *from, const char *to)
{
	int err;

	if (!rename(from, to))
		return 0;
	if (errno != EXDEV)
		return -errno;
	err = cs_copy_tree(from, to);
	if (!err)
		cs_remove_tree(from);
	return err;
}

int write_all(int fd, const void *p, size_t n)
{
	const char *b = p;

	while (n) {
		ssize_t w = write(fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return w < 0 ? -errno : -EIO;
		b += w;
		n -= (size_t)w;
	}
	return 0;
}

void cs_html_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '&':
			fputs("&amp;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		case '\'':
			fputs("&#39;", f);
			break;
		default:
			fputc(*s, f);
		}
	}
}

/* ---- a lock without pthread calls (util.h struct cs_lock) ------------------------------ */

static void futex_call(int *addr, int op, int val)
{
	syscall(SYS_futex, addr, op | FUTEX_PRIVATE_FLAG, val, NULL, NULL, 0);
}

void cs_lock_acquire(struct cs_lock *s)
{
	int c = 0;

	if (__atomic_compare_exchange_n(&s->held, &c, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return;
	if (c != 2)
		c = __atomic_exchange_n(&s->held, 2, __ATOMIC_ACQUIRE);
	while (c != 0) {
		futex_call(&s->held, FUTEX_WAIT, 2);
		c = __atomic_exchange_n(&s->held, 2, __ATOMIC_ACQUIRE);
	}
}

void cs_lock_release(struct cs_lock *s)
{
	if (__atomic_fetch_sub(&s->held, 1, __ATOMIC_RELEASE) != 1) {
		__atomic_store_n(&s->held, 0, __ATOMIC_RELEASE);
		futex_call(&s->held, FUTEX_WAKE, 1);
	}
}
