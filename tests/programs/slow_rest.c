// SPDX-License-Identifier: MIT
/*
 * Correct; its run k (counted in FILE, which it creates) takes about
 * MS_k milliseconds (the last one given for every later run), after its
 * two threads have shared a counter under a mutex. For the grace period's
 * measure (tests/host/58-grace-unsteered.t): a campaign's estimation run
 * is its first run, so a short first run and longer later ones make test
 * runs that outlast a grace of the run timeout but not one of twice the
 * estimation run.
 *
 *   slow_rest FILE MS_0 [MS_1 ...]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int counter;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&lock);
		counter++;
		pthread_mutex_unlock(&lock);
	}
	return NULL;
}

/* The run's index: FILE's number, then FILE holds one more. */
static int next_run(const char *path)
{
	FILE *f = fopen(path, "r");
	int k = 0;

	if (f) {
		if (fscanf(f, "%d", &k) != 1)
			k = 0;
		fclose(f);
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		exit(2);
	}
	fprintf(f, "%d\n", k + 1);
	fclose(f);
	return k;
}

int main(int argc, char **argv)
{
	pthread_t t;
	struct timespec ts;
	long ms;
	int k, seen;

	if (argc < 3) {
		fprintf(stderr, "usage: slow_rest FILE MS_0 [MS_1 ...]\n");
		return 2;
	}
	k = next_run(argv[1]);
	ms = atol(argv[k + 2 < argc ? k + 2 : argc - 1]);
	pthread_create(&t, NULL, worker, NULL);
	for (int i = 0; i < 100; i++) {
		pthread_mutex_lock(&lock);
		seen = counter;
		pthread_mutex_unlock(&lock);
	}
	pthread_join(t, NULL);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = (ms % 1000) * 1000000L;
	while (nanosleep(&ts, &ts))
		;
	return seen >= 0 && counter == 100 ? 0 : 1;
}
