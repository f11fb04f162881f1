/* SPDX-License-Identifier: MIT */
/* Small helpers every part of the controller uses: errors, memory, time. */
#ifndef CONCSCHED_UTIL_H
#define CONCSCHED_UTIL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

extern int cs_verbose;

/* One line on stderr, prefixed "concsched: ". */
void cs_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void cs_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Fatal allocation failure: the only place the controller aborts. */
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

uint64_t now_ns(void);		/* CLOCK_MONOTONIC */
uint64_t now_realtime_ns(void); /* CLOCK_REALTIME */

/* Strict number parsing: whole string, in range. 0 or -EINVAL/-ERANGE. */
int parse_u64(const char *s, uint64_t *out);
int parse_i64(const char *s, int64_t *out);
int parse_double(const char *s, double *out);

/* $CONCSCHED_CACHE, else $XDG_CACHE_HOME/concsched, else ~/.cache/concsched
 * (same rule as tools/vm-kernel.sh). Returns a static buffer. */
const char *cs_cache_dir(void);
/* Directory of the running binary (for tools/ and build/ lookups). */
const char *cs_self_dir(void);
/* Find a helper script: $CONCSCHED_LIBDIR/NAME, <self>/../tools/NAME,
 * <self>/../lib/concsched/NAME. Returns malloc'd path or NULL. */
char *cs_find_helper(const char *name);

/* First executable NAME in $PATH (a default PATH when unset); malloc'd or NULL. */
char *cs_find_in_path(const char *name);
/* s for a POSIX shell: as is when it needs no quoting, else in single
 * quotes. Into buf (truncated to len). */
const char *cs_shell_quote(const char *s, char *buf, size_t len);
/* How the user types this concsched again, for the commands it prints:
 * "concsched" when the one found on PATH is this binary, else the path of
 * the running binary (relative to the cwd when under it, "./x" in it),
 * with "sudo " in front when privileged and the invoking user is not root
 * (SUDO_USER set to another user, or euid != 0). In the VM the host's
 * answer comes in $CONCSCHED_HOST_CMD and $CONCSCHED_HOST_SUDO
 * (cs_self_command_env). Static buffers, one per value of privileged. */
const char *cs_self_command(bool privileged);
/* "CONCSCHED_HOST_CMD=..." and "CONCSCHED_HOST_SUDO=0|1" for a guest's
 * environment; static buffers. */
void cs_self_command_env(const char **cmd, const char **sudo);

/* mkdir -p; 0 or -errno. */
int mkdir_p(const char *path, unsigned mode);
/* rm -rf PATH without following symlinks; 0 or -errno (ENOENT is 0). */
int cs_remove_tree(const char *path);
/* cp -a FROM TO (directories, regular files with their modes, symlinks);
 * TO must not exist. 0 or -errno; a partial TO is removed. */
int cs_copy_tree(const char *from, const char *to);
/* mv FROM TO: rename(2), or across filesystems (EXDEV) a copy and the
 * removal of FROM. 0 or -errno. */
int cs_move_tree(const char *from, const char *to);
/* Read a whole small file into a malloc'd NUL-terminated buffer. */
char *read_file(const char *path, size_t *len);
/* s with <, >, &, " and ' escaped for HTML/SVG text and attributes. */
void cs_html_escape(FILE *f, const char *s);
/* Write all n bytes (retrying short writes and EINTR); 0 or -errno. */
int write_all(int fd, const void *p, size_t n);
/* First line of a small file, trailing newline removed; NULL on error. */
char *read_line_file(const char *path);
/* 64-bit FNV-1a. */
uint64_t fnv1a64(const void *data, size_t len, uint64_t h);
#define FNV1A64_INIT 0xcbf29ce484222325ULL
/* SHA-256-free content hash of a file (FNV-1a over the bytes), hex. */
int file_hash_hex(const char *path, char out[17]);

/* Exit status of every command on a usage or environment error. */
#define EXIT_USAGE 2

/* A lock without libc's pthread calls, for sections that run often (each
 * access event of `run -j N --access`): concsched's own pthread calls trap
 * into the campaign's libc uprobes, which are attached for every process.
 * A futex (Drepper, "Futexes are tricky", mutex 2): a waiter sleeps in the
 * kernel, so one that waits out another worker's --check burns no CPU.
 * held: 0 free, 1 held, 2 held with waiters. Not recursive. */
struct cs_lock {
	int held;
};

void cs_lock_acquire(struct cs_lock *s);
void cs_lock_release(struct cs_lock *s);

#endif
