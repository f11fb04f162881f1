/* SPDX-License-Identifier: MIT */
/*
 * Race-warning suppressions (issue 32, `run --suppressions FILE`), read
 * in Helgrind's (Valgrind's) or ThreadSanitizer's format, one file may mix
 * both:
 *
 *   {                              race:zlib_inflate*
 *      pool_races                  race:^yarn_
 *      Helgrind:Race               race:libfoo.so
 *      fun:pool_get
 *      obj:*libfoo.so*
 *   }
 *
 * A warning has one frame per access: the racing instruction's function,
 * source file and object (no call stacks). A Valgrind entry of kind
 * Helgrind:Race matches an access when its first frame line (fun: glob on
 * the function, obj: glob on the object path, src: glob on the file) does;
 * an entry whose frames start with "..." matches when any of its frame
 * lines does. Other kinds (Helgrind:Misc, Memcheck:...) are read and
 * ignored. A TSan `race:PATTERN` matches when PATTERN is found in the
 * function, the source file or the object path (`*` any characters, `^`
 * and `$` anchor it at an end), as TSan's do; its other types (thread:,
 * mutex:, called_from_lib: ...) are ignored. A warning is suppressed when
 * a suppression matches either of its accesses.
 *
 * The defaults (suppress_new) suppress races inside the C runtime: libc,
 * ld.so, libstdc++ and libgcc_s (their accesses are probed only with
 * --sites-object).
 */
#ifndef CONCSCHED_SUPPRESS_H
#define CONCSCHED_SUPPRESS_H

#include <stdbool.h>
#include <stddef.h>

/* Where one access of a warning is: any field may be NULL (unknown). */
struct suppress_frame {
	const char *function;
	const char *file;
	const char *object;
};

struct suppressions;

/* The defaults only. */
struct suppressions *suppress_new(void);
void suppress_free(struct suppressions *s);
/* Add the suppressions of a file: 0, -errno when it cannot be read, or
 * -EINVAL on a malformed entry (one line on stderr with file:line). */
int suppress_load(struct suppressions *s, const char *path);
/* The name of the suppression that matches either access, or NULL. */
const char *suppress_race(const struct suppressions *s, const struct suppress_frame *a,
			  const struct suppress_frame *b);
/* Suppressions read (the defaults included). */
size_t suppress_count(const struct suppressions *s);

#endif
