// SPDX-License-Identifier: MIT
/* Messages on stderr (log.h). */
#include "lib/log.h"

#include <stdarg.h>
#include <stdio.h>

int log_verbose;

/* One line per message: stderr's lock held across its three writes, so
 * the -j workers' messages never interleave inside a line. */
static void vlog(const char *tag, const char *fmt, va_list ap)
{
	flockfile(stderr);
	fprintf(stderr, "concsched: %s", tag);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	funlockfile(stderr);
}

void log_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("", fmt, ap);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vlog("warning: ", fmt, ap);
	va_end(ap);
}

void log_debug(const char *fmt, ...)
{
	va_list ap;

	if (!log_verbose)
		return;
	va_start(ap, fmt);
	vlog("debug: ", fmt, ap);
	va_end(ap);
}
