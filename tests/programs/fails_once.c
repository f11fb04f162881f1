// SPDX-License-Identifier: MIT
/*
 * fails_once MARKER — a failure no schedule makes again. Two workers take
 * turns on a mutex (synchronization points for a steering strategy to
 * decide at and a schedule to record); then, if the file MARKER does not
 * exist yet, main creates it and exits 1; if it does, main exits 0. So the
 * first run of a campaign fails, every later run (a replay of that
 * failing run too) passes: the failure depended on state outside the
 * program, which no replay of its interleaving reproduces
 * (tests/vm/56-replay-check.t: the campaign's replay check says so).
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long total;

static void *worker(void *arg)
{
	for (int i = 0; i < 4; i++) {
		pthread_mutex_lock(&m);
		total += (long)arg;
		pthread_mutex_unlock(&m);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: fails_once MARKER\n");
		return 2;
	}
	pthread_create(&a, NULL, worker, (void *)1L);
	pthread_create(&b, NULL, worker, (void *)2L);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0644);
	if (fd >= 0) {
		close(fd);
		fprintf(stderr, "fails_once: first run (total %ld): failing\n", total);
		return 1;
	}
	return 0;
}
