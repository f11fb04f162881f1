// SPDX-License-Identifier: MIT
/*
 * Two threads share the counter of lib/libsharedsync.so (shared_worker);
 * then the program counts the bytes of that library's code, and of libc's,
 * that differ in its memory from the files: a uprobe breakpoint (int3) the
 * kernel put in this process's copy of a library is one. A campaign's
 * probes belong in its target's copy, not in a bystander's
 * (tests/host/54-probe-scope.t). The third count is libc's changed bytes
 * within 64 bytes of a stdio output function's entry (where concsched's
 * probe on it sits, tests/unit/test_probes.c).
 *
 *   probe_scope OUT              write the counts to OUT: "LIB LIBC STDIO"
 *   probe_scope OUT READY GO     then create READY, wait until GO exists
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void *shared_worker(void *arg);
int shared_total(void);

struct changed {
	const char *lib; /* a part of its file name */
	long n;		 /* -1: not found or unreadable */
	long stdio;	 /* of them, in a stdio window */
};

/* The stdio output functions concsched probes (userspace/kernel/sync.c). */
static const char *const stdio_fns[] = {
	"printf",  "__printf_chk", "vprintf",	    "__vprintf_chk", "puts",
	"putchar", "fprintf",	   "__fprintf_chk", "vfprintf",	     "__vfprintf_chk",
	"fflush",  "fputs",	   "fputc",	    "putc",	     "fwrite",
};
#define NSTDIO (sizeof(stdio_fns) / sizeof(stdio_fns[0]))
static const unsigned char *stdio_at[NSTDIO];

static int in_stdio_window(const unsigned char *p)
{
	size_t i;

	for (i = 0; i < NSTDIO; i++)
		if (stdio_at[i] && p >= stdio_at[i] && p < stdio_at[i] + 64)
			return 1;
	return 0;
}

/* Bytes of the library's executable segments unlike the file's. */
static int count_changed(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct changed *c = arg;
	long *changed = &c->n;
	int fd, i;

	(void)size;
	if (!strstr(info->dlpi_name, c->lib))
		return 0;
	fd = open(info->dlpi_name, O_RDONLY);
	if (fd < 0)
		return 1;
	*changed = 0;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const unsigned char *mem = (const unsigned char *)(info->dlpi_addr + ph->p_vaddr);
		unsigned char *file;
		size_t k;

		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		file = malloc(ph->p_filesz);
		if (!file ||
		    pread(fd, file, ph->p_filesz, (off_t)ph->p_offset) != (ssize_t)ph->p_filesz) {
			free(file);
			close(fd);
			*changed = -1;
			return 1;
		}
		for (k = 0; k < ph->p_filesz; k++) {
			if (mem[k] == file[k])
				continue;
			(*changed)++;
			c->stdio += in_stdio_window(&mem[k]);
		}
		free(file);
	}
	close(fd);
	return 1;
}

static int write_count(const char *out)
{
	struct changed lib = { "libsharedsync.so", -1, 0 }, libc = { "libc.so", -1, 0 };
	size_t i;
	FILE *f;

	for (i = 0; i < NSTDIO; i++)
		stdio_at[i] = dlsym(RTLD_DEFAULT, stdio_fns[i]);
	dl_iterate_phdr(count_changed, &lib);
	dl_iterate_phdr(count_changed, &libc);
	f = fopen(out, "w");
	if (!f)
		return 1;
	fprintf(f, "%ld %ld %ld\n", lib.n, libc.n, libc.stdio);
	return fclose(f) != 0;
}

int main(int argc, char **argv)
{
	pthread_t t[2];
	int rc, fd, i;

	if (argc != 2 && argc != 4) {
		fprintf(stderr, "usage: %s OUT [READY GO]\n", argv[0]);
		return 2;
	}
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, shared_worker, NULL);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	rc = write_count(argv[1]);
	if (argc == 2 || rc)
		return rc;
	fd = open(argv[2], O_WRONLY | O_CREAT, 0644);
	if (fd < 0)
		return 1;
	close(fd);
	while (access(argv[3], F_OK))
		usleep(10000);
	return shared_total() == 6 ? 0 : 1;
}
