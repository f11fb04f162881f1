/* SPDX-License-Identifier: MIT */
/*
 * Minimal TAP 13 producer for C unit tests. Every test binary starts with
 * tap_plan(N) and ends with tap_done(); prove checks the plan.
 */
#ifndef CONCSCHED_TAP_H
#define CONCSCHED_TAP_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tap_n, tap_failed, tap_planned;

static inline void tap_plan(int n)
{
	tap_planned = n;
	printf("TAP version 13\n1..%d\n", n);
	fflush(stdout);
}

static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

static inline int tap_ok(int cond, const char *fmt, ...)
{
	va_list ap;

	printf("%sok %d - ", cond ? "" : "not ", ++tap_n);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	if (!cond)
		tap_failed++;
	return cond;
}

static inline void tap_skip(const char *reason, const char *what)
{
	printf("ok %d - %s # SKIP %s\n", ++tap_n, what, reason);
}

#define tap_is_int(got, want, ...)                                                                 \
	({                                                                                         \
		long long _g = (long long)(got), _w = (long long)(want);                           \
		int _r = tap_ok(_g == _w, __VA_ARGS__);                                            \
		if (!_r)                                                                           \
			tap_diag("  got %lld, want %lld", _g, _w);                                 \
		_r;                                                                                \
	})

#define tap_is_dbl(got, want, eps, ...)                                                            \
	({                                                                                         \
		double _g = (got), _w = (want);                                                    \
		int _r = tap_ok(_g - _w <= (eps) && _w - _g <= (eps), __VA_ARGS__);                \
		if (!_r)                                                                           \
			tap_diag("  got %.9g, want %.9g", _g, _w);                                 \
		_r;                                                                                \
	})

#define tap_is_str(got, want, ...)                                                                 \
	({                                                                                         \
		const char *_g = (got), *_w = (want);                                              \
		int _r = tap_ok(_g && _w && !strcmp(_g, _w), __VA_ARGS__);                         \
		if (!_r)                                                                           \
			tap_diag("  got '%s', want '%s'", _g ? _g : "(null)", _w ? _w : "(null)"); \
		_r;                                                                                \
	})

/* The machine's speed scale (tools/test-speed; tools/run-test exports it as
 * CS_TEST_SCALE): limits a test waits within grow with it. */
static inline double tap_scale(void)
{
	const char *s = getenv("CS_TEST_SCALE");
	double v = s ? atof(s) : 1;

	return v >= 1 ? v : 1;
}

/* tap_poll(EXPR, MS): EXPR, evaluated every 10 ms until it holds or MS
 * milliseconds times the speed scale have passed; its last value. For what
 * the kernel does after a call returns (a killed process reaped, a child at
 * its first line), instead of a fixed sleep. */
#define tap_poll(expr, ms)                                                                         \
	({                                                                                         \
		long tap_poll_left_ = (long)((ms)*tap_scale() / 10);                               \
		int tap_poll_ok_;                                                                  \
		while (!(tap_poll_ok_ = !!(expr)) && tap_poll_left_-- > 0)                         \
			usleep(10000);                                                             \
		tap_poll_ok_;                                                                      \
	})

static inline int tap_done(void)
{
	if (tap_n != tap_planned)
		tap_diag("planned %d tests but ran %d", tap_planned, tap_n);
	return tap_failed || tap_n != tap_planned ? 1 : 0;
}

#endif
