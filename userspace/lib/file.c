// SPDX-License-Identifier: MIT
/* One file's bytes (file.h). */
#include "lib/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/fnv1a64.h"
#include "lib/xalloc.h"

char *file_read(const char *path, size_t *len)
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

char *file_read_line(const char *path)
{
	char *s = file_read(path, NULL);

	if (s)
		s[strcspn(s, "\n")] = 0;
	return s;
}

int file_write_all(int fd, const void *p, size_t n)
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
