// SPDX-License-Identifier: MIT
/* Directory trees: mkdir -p, rm -rf, cp -a, mv (tree.h). */
#include "lib/tree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/xalloc.h"

int tree_mkdir_p(const char *path, unsigned mode)
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

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (type == FTW_DP ? rmdir(path) : unlink(path))
		return errno == ENOENT ? 0 : -errno;
	return 0;
}

int tree_remove(const char *path)
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

int tree_copy(const char *from, const char *to)
{
	int err = copy_tree_rec(from, to);

	if (err && err != -EEXIST)
		tree_remove(to);
	return err;
}

int tree_move(const char *from, const char *to)
{
	int err;

	if (!rename(from, to))
		return 0;
	if (errno != EXDEV)
		return -errno;
	err = tree_copy(from, to);
	if (!err)
		tree_remove(from);
	return err;
}
