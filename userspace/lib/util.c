// SPDX-License-Identifier: MIT
#include "lib/util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
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
