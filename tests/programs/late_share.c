// SPDX-License-Identifier: MIT
/*
 * late_share MARKER — a variable that only later runs share. Two workers
 * always add to `total` under a mutex (shared from the first run on). The
 * second worker also writes `late`, with no lock, but only once the file
 * MARKER exists, and main creates it at the end of its first run. So a
 * campaign's estimation run (its first) sees `late` written by one thread
 * only: not shared, its sites not probed; from the second run on two
 * threads write it, a race that only a run probing every candidate site
 * (an exploration run) can find (tests/host/46-access-explore.t). Exits 0.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static long total;
static volatile long late;
static int again; /* MARKER existed at the start */

static void *worker(void *arg)
{
	long id = (long)arg;

	for (int i = 0; i < 3; i++) {
		pthread_mutex_lock(&m);
		total += id;
		pthread_mutex_unlock(&m);
	}
	if (id == 1 || again)
		late = late + id; /* the second worker only once MARKER exists */
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t a, b;
	int fd;

	if (argc != 2) {
		fprintf(stderr, "usage: late_share MARKER\n");
		return 2;
	}
	again = access(argv[1], F_OK) == 0;
	pthread_create(&a, NULL, worker, (void *)1L);
	pthread_create(&b, NULL, worker, (void *)2L);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	if (!again && (fd = open(argv[1], O_WRONLY | O_CREAT | O_EXCL, 0644)) >= 0)
		close(fd);
	printf("total %ld\n", total); /* not late: main would share it */
	return 0;
}
