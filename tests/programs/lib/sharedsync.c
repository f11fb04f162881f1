// SPDX-License-Identifier: MIT
/*
 * The synchronization of tests/programs/in_library.c and
 * dlopen_library.c, in a shared library of its own
 * (build/tests/programs/lib/libsharedsync.so): each thread takes the
 * library's lock three times. Its sites must be named by the library's
 * path, function and line, not by its file name alone
 * (tests/host/51-library-sites.t).
 */
#include <pthread.h>

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static int shared_count;

void *shared_worker(void *arg)
{
	int i;

	for (i = 0; i < 3; i++) {
		pthread_mutex_lock(&shared_lock);
		shared_count++;
		pthread_mutex_unlock(&shared_lock);
	}
	return arg;
}

int shared_total(void)
{
	return shared_count;
}
