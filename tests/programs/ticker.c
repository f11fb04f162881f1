// SPDX-License-Identifier: MIT
/*
 * A long-running target for attach tests (observe -p, --all): takes and
 * releases one mutex every 100 ms, N times (argv[1], default 10), so the
 * SP pair <tick, tick> shows up whenever two ticks are observed.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	int i, n = argc > 1 ? atoi(argv[1]) : 10;

	for (i = 0; i < n; i++) {
		pthread_mutex_lock(&m); /* tick */
		pthread_mutex_unlock(&m);
		usleep(100000);
	}
	return 0;
}
