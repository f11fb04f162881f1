/* SPDX-License-Identifier: MIT */
/* Commands as a POSIX shell sees them. */
#ifndef CONCSCHED_SHELL_H
#define CONCSCHED_SHELL_H

#include <stddef.h>

/* First executable NAME in $PATH (a default PATH when unset); malloc'd or NULL. */
char *shell_find_in_path(const char *name);
/* s for a POSIX shell: as is when it needs no quoting, else in single
 * quotes. Into buf (truncated to len). */
const char *shell_quote(const char *s, char *buf, size_t len);

#endif
