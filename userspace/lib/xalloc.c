// SPDX-License-Identifier: MIT
/* Allocation that cannot fail (xalloc.h). */
#include "lib/xalloc.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
