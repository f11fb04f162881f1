/* SPDX-License-Identifier: MIT */
/* What concsched says when it crashes itself (not its target). */
#ifndef CONCSCHED_CRASH_H
#define CONCSCHED_CRASH_H

/* On SIGSEGV, SIGBUS, SIGFPE, SIGILL or SIGABRT in concsched's own code:
 * one line naming the signal, the faulting address, the thread and the
 * build, then the backtrace (frames as "binary(+offset)", for
 * `addr2line -f -e BINARY OFFSET` on the same build), on stderr; then the
 * signal's default action (the exit status of a crash, a core file where
 * the system keeps them). Only async-signal-safe calls in the handler. */
void crash_report_install(void);
/* A line the report ends with (printf format; NULL: none), e.g. where a
 * campaign's stored runs are; kept until the next call. */
void crash_report_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
