// SPDX-License-Identifier: MIT
/*
 * lockexec PROG [ARGS]: takes and releases a mutex, then execs PROG in the
 * same process. The probes must take the exec'ing thread's state as the
 * old image's: PROG's actions belong to the new image (its sites resolve
 * in PROG), whatever this thread did before the exec.
 */
#include <pthread.h>
#include <stdio.h>
#include <unistd.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: lockexec PROG [ARGS]\n");
		return 2;
	}
	pthread_mutex_lock(&m); /* before exec */
	pthread_mutex_unlock(&m);
	execv(argv[1], argv + 1);
	perror("lockexec: execv");
	return 127;
}
