// SPDX-License-Identifier: MIT
/* initramfs.c: newc archives (read back with cpio(1)), ELF dependency
 * resolution, and carry's path replay (merged-/usr symlinks, link loops,
 * links to directories inside a carried tree). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <utime.h>

#include "vm/initramfs.h"
#include "tap.h"
#include "lib/array_size.h"
#include "lib/file.h"
#include "lib/xalloc.h"

static void check_normalize(void)
{
	static const char *const cases[][2] = {
		{ "/a//b/./c/", "/a/b/c" }, { "/a/b/../c", "/a/c" }, { "/..", "/" }, { "/", "/" },
		{ "/a/../../b", "/b" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		char *n = initramfs_path_normalize(cases[i][0]);

		tap_is_str(n, cases[i][1], "initramfs_path_normalize(%s)", cases[i][0]);
		free(n);
	}
}

/* Write an archive by hand, unpack it with cpio(1), compare. */
static void check_newc(const char *dir)
{
	char *arc = xasprintf("%s/a.cpio", dir), *cmd, *got, *host;
	struct cpio_writer w;
	struct stat st;
	FILE *f = fopen(arc, "w"), *f2;
	int rc;

	initramfs_init(&w, f);
	tap_is_int(initramfs_add_dir(&w, "/d", 0755), 0, "add a directory");
	tap_is_int(initramfs_add_data(&w, "/d/f", 0640, "hello\n", 6), 0, "add a file");
	tap_is_int(initramfs_add_symlink(&w, "/d/l", "f"), 0, "add a symlink");
	initramfs_add_data(&w, "/d/f", 0640, "twice\n", 6);
	host = xasprintf("%s/host-file", dir);
	f2 = fopen(host, "w");
	fputs("from the host\n", f2);
	fclose(f2);
	utime(host, &(struct utimbuf){ .actime = 1234567890, .modtime = 1234567890 });
	tap_is_int(initramfs_add_file(&w, "/d/h", 0644, host), 0, "add a host file");
	free(host);
	tap_is_int(initramfs_finish(&w), 0, "finish the archive");
	tap_is_int(w.bytes % 512, 0, "archive padded to 512 bytes (so another can follow)");
	initramfs_free(&w);
	fclose(f);

	cmd = xasprintf("mkdir -p %s/x && cd %s/x && cpio -idm --quiet <%s", dir, dir, arc);
	rc = system(cmd);
	free(cmd);
	tap_is_int(rc, 0, "cpio(1) reads the archive");
	cmd = xasprintf("%s/x/d/l", dir);
	got = file_read(cmd, NULL);
	tap_is_str(got ? got : "", "hello\n", "file content through the symlink (first add wins)");
	free(got);
	tap_ok(lstat(cmd, &st) == 0 && S_ISLNK(st.st_mode), "symlink kept as a symlink");
	free(cmd);
	cmd = xasprintf("%s/x/d/f", dir);
	tap_ok(stat(cmd, &st) == 0 && (st.st_mode & 07777) == 0640, "file mode kept");
	free(cmd);
	cmd = xasprintf("%s/x/d/h", dir);
	tap_ok(stat(cmd, &st) == 0 && st.st_mtime == 1234567890, "host file mtime kept");
	free(cmd);
	free(arc);
}

static void check_elf(const char *dir)
{
	struct elf_deps d;
	char *lib, *txt = xasprintf("%s/plain.txt", dir);
	size_t i;
	bool libc = false;
	FILE *f = fopen(txt, "w");

	fputs("not an elf\n", f);
	fclose(f);
	tap_is_int(initramfs_elf_deps("/proc/self/exe", &d), 0, "read this test's ELF");
	tap_ok(d.is_elf && !d.is_static && strstr(d.interp, "ld-linux-x86-64.so.2"),
	       "dynamic, interpreter %s", d.interp);
	for (i = 0; i < d.n_needed; i++)
		libc = libc || !strcmp(d.needed[i], "libc.so.6");
	tap_ok(libc, "DT_NEEDED lists libc.so.6");
	initramfs_elf_deps_free(&d);

	tap_is_int(initramfs_elf_deps("/bin/busybox", &d), 0, "read busybox");
	tap_ok(d.is_elf && d.is_static, "busybox-static is static");
	initramfs_elf_deps_free(&d);
	initramfs_elf_deps(txt, &d);
	tap_ok(!d.is_elf, "a text file is not ELF");
	initramfs_elf_deps_free(&d);
	tap_is_int(initramfs_elf_deps("/nonexistent", &d), -ENOENT, "missing file is ENOENT");

	lib = initramfs_find_library("libc.so.6", "/proc/self/exe", NULL);
	tap_ok(lib && lib[0] == '/' && strstr(lib, "/libc.so.6"), "libc.so.6 found at %s",
	       lib ? lib : "(null)");
	free(lib);
	lib = initramfs_find_library("libnot-a-real-library.so.9", "/proc/self/exe", NULL);
	tap_ok(!lib, "an unknown library is not found");
	free(lib);
	free(txt);
}

static char *make_file(const char *dir, const char *name)
{
	char *p = xasprintf("%s/%s", dir, name);
	FILE *f = fopen(p, "w");

	if (f) {
		fputs(name, f);
		fclose(f);
	}
	return p;
}

/* `concsched vm --carry DIR -- DIR/run.sh`: the command is carried first,
 * leaving DIR (and DIR/sub) in the archive as bare parents; carrying DIR
 * afterwards must still bring all of it. An excluded directory is never
 * walked. */
static void check_carry_after_its_file(struct cpio_writer *w, const char *dir)
{
	char *top = xasprintf("%s/job", dir), *sub = xasprintf("%s/job/sub", dir);
	char *run, *deep, *other, *data, *skip = xasprintf("%s/job/skip", dir), *hidden;

	mkdir(top, 0755);
	mkdir(sub, 0755);
	mkdir(skip, 0755);
	run = make_file(top, "run.sh");
	deep = make_file(sub, "deep.sh");
	other = make_file(top, "other.txt");
	data = make_file(sub, "data.txt");
	hidden = make_file(skip, "hidden.txt");
	initramfs_exclude(w, skip);
	tap_is_int(initramfs_carry(w, deep) || initramfs_carry(w, run), 0,
		   "carry DIR/sub/deep.sh, DIR/run.sh");
	tap_ok(!initramfs_has(w, other), "DIR's other files not there yet");
	tap_is_int(initramfs_carry(w, top), 0, "then carry DIR");
	tap_ok(initramfs_has(w, other), "DIR's other file arrives");
	tap_ok(initramfs_has(w, data), "DIR/sub's other file arrives");
	tap_ok(!initramfs_has(w, hidden), "an excluded directory inside DIR is not walked");
	free(top);
	free(sub);
	free(skip);
	free(run);
	free(deep);
	free(other);
	free(data);
	free(hidden);
}

static void check_carry(const char *dir)
{
	char self[4096], *p, *arc = xasprintf("%s/c.cpio", dir);
	struct cpio_writer w;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	FILE *f = fopen(arc, "w");
	struct stat st;

	self[n > 0 ? n : 0] = 0;
	initramfs_init(&w, f);
	tap_is_int(initramfs_carry(&w, self), 0, "carry this test binary");
	tap_ok(initramfs_has(&w, self), "the binary is at its own path");
	p = realpath("/lib/x86_64-linux-gnu/libc.so.6", NULL);
	tap_ok(p && initramfs_has(&w, p), "libc carried at its real path %s", p ? p : "");
	free(p);
	if (lstat("/lib", &st) == 0 && S_ISLNK(st.st_mode))
		tap_ok(initramfs_has(&w, "/lib"), "merged-/usr symlink /lib replayed");
	else
		tap_skip("/lib is not a symlink here", "merged-/usr symlink /lib replayed");
	p = realpath("/lib64/ld-linux-x86-64.so.2", NULL);
	tap_ok(p && initramfs_has(&w, p), "the ELF interpreter is carried");
	free(p);

	/* A link to / inside a carried directory must not carry the machine. */
	p = xasprintf("%s/tree", dir);
	mkdir(p, 0755);
	free(p);
	p = xasprintf("%s/tree/root", dir);
	symlink("/", p);
	free(p);
	p = xasprintf("%s/tree/loop", dir);
	symlink("loop", p);
	free(p);
	p = xasprintf("%s/tree", dir);
	n = w.n_paths;
	tap_is_int(initramfs_carry(&w, p), 0, "carry a tree holding a link to / and a self-loop");
	tap_ok(w.n_paths - n < 10, "the link to / did not carry the machine (%zu new paths)",
	       w.n_paths - n);
	free(p);
	check_carry_after_its_file(&w, dir);
	tap_is_int(initramfs_carry(&w, "/nonexistent/file"), -ENOENT,
		   "carrying a missing path fails");
	tap_is_int(initramfs_carry(&w, "relative"), -EINVAL, "carrying a relative path fails");
	initramfs_finish(&w);
	initramfs_free(&w);
	fclose(f);
	free(arc);
}

int main(void)
{
	char dir[] = "/tmp/concsched-initramfs-test.XXXXXX";
	char *cmd;

	tap_plan(40);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	check_normalize();
	check_newc(dir);
	check_elf(dir);
	check_carry(dir);
	cmd = xasprintf("rm -rf %s", dir);
	if (system(cmd))
		tap_diag("could not remove %s", dir);
	free(cmd);
	return tap_done();
}
