/* SPDX-License-Identifier: MIT */
/*
 * Initramfs archives for the VM runner (docs/vm.md): a newc cpio writer
 * (the format the kernel unpacks, init/initramfs.c; concatenated archives
 * are unpacked one after the other) and "carry": copy a host file or
 * directory into the archive at the same absolute path, replaying every
 * symlink on the way, plus the ELF interpreter and all DT_NEEDED shared
 * libraries it needs, resolved with libelf, never by running ldd on it.
 */
#ifndef CONCSCHED_INITRAMFS_H
#define CONCSCHED_INITRAMFS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct cpio_writer {
	FILE *f;
	uint32_t ino;
	uint64_t bytes;	  /* archive size so far */
	uint64_t payload; /* regular-file bytes carried */
	unsigned files;
	unsigned dir_walk; /* > 0 while carry recurses into a directory */
	/* Every path already in the archive (or in an archive unpacked before
	 * it), so each appears once and parents precede children. */
	char **paths;
	size_t n_paths, cap_paths;
};

void initramfs_init(struct cpio_writer *w, FILE *f);
/* Mark a path as present without writing it (it comes from the base). */
void initramfs_mark(struct cpio_writer *w, const char *path);
bool initramfs_has(const struct cpio_writer *w, const char *path);
int initramfs_add_dir(struct cpio_writer *w, const char *path, mode_t mode);
int initramfs_add_symlink(struct cpio_writer *w, const char *path, const char *target);
int initramfs_add_data(struct cpio_writer *w, const char *path, mode_t mode, const void *data,
		       size_t len);
/* Regular file copied from host_path; 0 or -errno. */
int initramfs_add_file(struct cpio_writer *w, const char *path, mode_t mode, const char *host_path);
int initramfs_add_chardev(struct cpio_writer *w, const char *path, mode_t mode, unsigned major,
			  unsigned minor);
/* TRAILER!!! and zero padding to 512 bytes. 0 or -errno (write error). */
int initramfs_finish(struct cpio_writer *w);
void initramfs_free(struct cpio_writer *w);

/* What carry needs to know about an ELF file: its program interpreter
 * (empty when static) and its DT_NEEDED/DT_RUNPATH/DT_RPATH strings. */
struct elf_deps {
	bool is_elf;
	bool is_static;
	char interp[256];
	char **needed;
	size_t n_needed;
	char *runpath; /* DT_RUNPATH, else DT_RPATH; NULL if none */
};

/* 0 (is_elf false for non-ELF files) or -errno when unreadable. */
int initramfs_elf_deps(const char *path, struct elf_deps *d);
void initramfs_elf_deps_free(struct elf_deps *d);
/* The file the dynamic loader would pick for NEEDED of object OWNER:
 * RUNPATH/RPATH ($ORIGIN expanded), then the standard x86-64 directories.
 * Returns a malloc'd absolute path or NULL. */
char *initramfs_find_library(const char *needed, const char *owner, const char *runpath);

/* Copy PATH (absolute, as the guest will see it) into the archive: its
 * directories, the symlinks along it (and their targets), the file or,
 * recursively, the directory, and for every ELF file its interpreter and
 * libraries. 0 or -errno with one line printed. */
int initramfs_carry(struct cpio_writer *w, const char *path);

/* Like initramfs_carry, but a directory is carried without its contents (the
 * guest's /bin, /lib... and working directory exist, with the same
 * symlinks as on the host). */
int initramfs_carry_skeleton(struct cpio_writer *w, const char *path);

/* Mark PATH as present and never to be walked into by a later carry (the
 * base archive's directories, the runner's own temporary directory). */
void initramfs_exclude(struct cpio_writer *w, const char *path);

/* Lexically normalise an absolute path (collapse //, ., ..). malloc'd. */
char *initramfs_path_normalize(const char *path);

#endif
