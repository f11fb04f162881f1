// SPDX-License-Identifier: MIT
/* Whether a thread ran (taskcpu.h). */
#include "lib/taskcpu.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/file.h"

bool taskcpu_parse(const char *stat, const char *schedstat, struct taskcpu *c)
{
	unsigned long long ut, st, ns, slices;
	const char *p = stat ? strrchr(stat, ')') : NULL; /* comm may hold ')' */
	char state;

	memset(c, 0, sizeof(*c));
	/* After the comm: state (3), then fields 4-13, utime (14), stime (15). */
	if (!p || sscanf(p + 1, " %c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &state,
			 &ut, &st) != 3)
		return false;
	c->state = state;
	c->ticks = ut + st;
	if (schedstat && sscanf(schedstat, "%llu %*u %llu", &ns, &slices) == 2) {
		c->run_ns = ns;
		c->slices = slices;
	}
	return true;
}

bool taskcpu_read(int tgid, int tid, struct taskcpu *c)
{
	char path[64], *stat, *sched;
	bool ok;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", tgid, tid);
	stat = file_read(path, NULL);
	if (!stat) {
		memset(c, 0, sizeof(*c));
		return false;
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", tgid, tid);
	sched = file_read(path, NULL);
	ok = taskcpu_parse(stat, sched, c) && c->state != 'Z' && c->state != 'X';
	free(stat);
	free(sched);
	return ok;
}

bool taskcpu_ran(const struct taskcpu *a, const struct taskcpu *b)
{
	return b->state == 'R' || b->ticks != a->ticks || b->run_ns != a->run_ns ||
	       b->slices != a->slices;
}
