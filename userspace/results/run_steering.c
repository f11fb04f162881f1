// SPDX-License-Identifier: MIT
/* A run's steering lost, in its stored configuration (results/run_steering.h). */
#include "results/run_steering.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "lib/xalloc.h"

char *run_steering_append(char *cfg, const struct run_steering *s)
{
	const char *end = cfg ? strrchr(cfg, '}') : NULL;
	char *out;

	if (!end || (!s->watchdog_releases && !s->rescued_threads && !s->serial_preempts))
		return cfg;
	out = xasprintf("%.*s%s\"steering\":{\"watchdog_releases\":%" PRIu64
			",\"rescued_threads\":%" PRIu64 ",\"serial_preempts\":%" PRIu64 "}}",
			(int)(end - cfg), cfg, end - cfg > 1 ? "," : "", s->watchdog_releases,
			s->rescued_threads, s->serial_preempts);
	free(cfg);
	return out;
}

static uint64_t count(const char *obj, const char *key)
{
	int64_t v;

	return obj && !json_get_int(obj, key, &v) && v > 0 ? (uint64_t)v : 0;
}

void run_steering_read(const char *cfg, struct run_steering *s)
{
	const char *obj = cfg ? json_get_object(cfg, "steering") : NULL;

	s->watchdog_releases = count(obj, "watchdog_releases");
	s->rescued_threads = count(obj, "rescued_threads");
	s->serial_preempts = count(obj, "serial_preempts");
}

char *run_steering_strip(char *cfg)
{
	char *tail = cfg ? strstr(cfg, "\"steering\":{") : NULL;

	if (tail) {
		if (tail > cfg + 1 && tail[-1] == ',')
			tail--;
		strcpy(tail, "}");
	}
	return cfg;
}

bool run_steering_kept(const struct run_steering *s)
{
	return !s->rescued_threads && !s->serial_preempts;
}

void run_steering_describe(const struct run_steering *s, char *buf, size_t len)
{
	snprintf(buf, len,
		 "not kept throughout (%" PRIu64
		 " parked thread(s) went on by the scheduler's watchdog, %" PRIu64
		 " starved thread(s) left it, %" PRIu64 " serial turn(s) taken back)",
		 s->watchdog_releases, s->rescued_threads, s->serial_preempts);
}
