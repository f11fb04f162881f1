/* SPDX-License-Identifier: MIT */
/* The time now, in nanoseconds. */
#ifndef CONCSCHED_NOW_H
#define CONCSCHED_NOW_H

#include <stdint.h>

uint64_t now_ns(void);		/* CLOCK_MONOTONIC */
uint64_t now_realtime_ns(void); /* CLOCK_REALTIME */

#endif
