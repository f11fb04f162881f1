// SPDX-License-Identifier: MIT
/*
 * A long-running target for attach tests (observe -p, --all): takes and
 * releases one mutex every 100 ms, N times (argv[1], default 10), so the
 * SP pair <tick, tick> shows up whenever two ticks are observed.
 *
 *   ticker [N [COUNT [STOP]]]
 *
 * COUNT: after each tick, the number of ticks so far is written there (a
 * test waits for ticks, not for a time). STOP: the ticker returns 0 once
 * that file exists (N 0: tick until then).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void write_count(const char *path, int ticks)
{
	char tmp[4096];
	FILE *f;

	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f, "%d\n", ticks);
	if (fclose(f) == 0)
		rename(tmp, path);
}

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 10;
	const char *count = argc > 2 ? argv[2] : NULL, *stop = argc > 3 ? argv[3] : NULL;

	for (i = 0; n == 0 || i < n; i++) {
		if (stop && !access(stop, F_OK))
			break;
		pthread_mutex_lock(&m); /* tick */
		pthread_mutex_unlock(&m);
		if (count)
			write_count(count, i + 1);
		usleep(100000);
	}
	return 0;
}
