/* SPDX-License-Identifier: MIT */
/* Messages on stderr, one line each, prefixed "concsched: ". */
#ifndef CONCSCHED_LOG_H
#define CONCSCHED_LOG_H

extern int log_verbose; /* --verbose: log_debug() prints */

void log_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));  /* "warning: " */
void log_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2))); /* "debug: " */

/* Exit status of every command on a usage or environment error. */
#define EXIT_USAGE 2

#endif
