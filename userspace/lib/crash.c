// SPDX-License-Identifier: MIT
/* What concsched says when it crashes itself (crash.h). */
#include "lib/crash.h"

#include <execinfo.h>
#include <stdarg.h>
#include <stdio.h>
#include <signal.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/array_size.h"

#ifndef CONCSCHED_VERSION
#define CONCSCHED_VERSION "?"
#endif

static const int crash_signals[] = { SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT };

/* crash_report_note's line; written whole before it is published. */
static char notes[2][512];
static const char *volatile note;

void crash_report_note(const char *fmt, ...)
{
	char *buf;
	va_list ap;

	if (!fmt) {
		note = NULL;
		return;
	}
	buf = notes[note == notes[0]];
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(notes[0]), fmt, ap);
	va_end(ap);
	note = buf;
}

static void put(const char *s)
{
	size_t n = strlen(s);

	while (n) {
		ssize_t w = write(STDERR_FILENO, s, n);

		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

/* v in base 10 or 16 into buf (at least 24 bytes), async-signal-safe. */
static const char *num(char *buf, unsigned long v, unsigned base)
{
	char *p = buf + 23;

	*p = '\0';
	do {
		*--p = "0123456789abcdef"[v % base];
		v /= base;
	} while (v);
	if (base == 16) {
		*--p = 'x';
		*--p = '0';
	}
	return p;
}

static void crash_handler(int sig, siginfo_t *si, void *uc)
{
	void *frames[64];
	char b[24];
	int n;

	const char *abbrev = sigabbrev_np(sig);

	put("concsched: internal error: ");
	put(abbrev ? "SIG" : "signal ");
	put(abbrev ? abbrev : num(b, (unsigned long)sig, 10));
	if ((si->si_code == SI_USER || si->si_code == SI_TKILL) && si->si_pid == getpid()) {
		put(" raised by concsched itself"); /* abort(), a failed assert */
	} else if (si->si_code == SI_USER || si->si_code == SI_TKILL) {
		put(" sent by pid ");
		put(num(b, (unsigned long)si->si_pid, 10));
	} else if (sig != SIGABRT) {
		put(" at address ");
		put(num(b, (unsigned long)(uintptr_t)si->si_addr, 16));
	}
	put(" in thread ");
	put(num(b, (unsigned long)syscall(SYS_gettid), 10));
	put(" of concsched " CONCSCHED_VERSION "; please report it with the lines below\n");
	n = backtrace(frames, (int)ARRAY_SIZE(frames));
	backtrace_symbols_fd(frames, n, STDERR_FILENO);
	if (note) {
		put("concsched: ");
		put(note);
		put("\n");
	}
	/* SA_RESETHAND: the default action now; a fault re-faults on
	 * return, a sent signal is delivered again once the handler ends. */
	raise(sig);
}

void crash_report_install(void)
{
	struct sigaction sa;
	void *warm[1];
	size_t i;

	/* backtrace() loads libgcc_s on its first call: not in a handler. */
	backtrace(warm, 1);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = crash_handler;
	sa.sa_flags = SA_SIGINFO | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < ARRAY_SIZE(crash_signals); i++)
		sigaction(crash_signals[i], &sa, NULL);
}
