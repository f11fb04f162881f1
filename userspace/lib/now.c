// SPDX-License-Identifier: MIT
/* The time now (now.h). */
#include "lib/now.h"

#include <time.h>

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

uint64_t now_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t now_realtime_ns(void)
{
	return clock_ns(CLOCK_REALTIME);
}
