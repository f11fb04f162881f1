/* SPDX-License-Identifier: MIT */
/*
 * Allocation that cannot fail (git's xmalloc family, the x prefix): a failed
 * allocation prints "concsched: out of memory" and aborts, the only place the
 * controller aborts. A zero size allocates one byte.
 */
#ifndef CONCSCHED_XALLOC_H
#define CONCSCHED_XALLOC_H

#include <stddef.h>

void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t size);
char *xstrdup(const char *s);
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
