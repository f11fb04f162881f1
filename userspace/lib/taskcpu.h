/* SPDX-License-Identifier: MIT */
/*
 * Whether a thread ran: its scheduling counters from
 * /proc/PID/task/TID/stat (state, utime + stime in clock ticks) and
 * /proc/PID/task/TID/schedstat (time on a CPU in ns, times put on one).
 * A thread blocked for good in a lock request sleeps in the kernel and is
 * never put on a CPU; one that was, or is runnable, is not blocked for good
 * (the deadlock confirmation, run/run_timeout.c).
 */
#ifndef CONCSCHED_TASKCPU_H
#define CONCSCHED_TASKCPU_H

#include <stdbool.h>
#include <stdint.h>

struct taskcpu {
	uint64_t ticks;	 /* utime + stime (stat fields 14, 15)            */
	uint64_t run_ns; /* schedstat: time on a CPU; 0 when unknown     */
	uint64_t slices; /* schedstat: times put on a CPU; 0 when unknown */
	char state;	 /* stat field 3: 'R' running or runnable, 'S', ... */
};

/* Parse the text of stat and of schedstat (NULL: not available, e.g. a
 * kernel without CONFIG_SCHED_INFO); false when stat does not parse. */
bool taskcpu_parse(const char *stat, const char *schedstat, struct taskcpu *c);
/* Read thread tid of process tgid now; false when it is gone. */
bool taskcpu_read(int tgid, int tid, struct taskcpu *c);
/* Did the thread run between reading a and later reading b: put on a CPU,
 * CPU time gained, or runnable at b. */
bool taskcpu_ran(const struct taskcpu *a, const struct taskcpu *b);

#endif
