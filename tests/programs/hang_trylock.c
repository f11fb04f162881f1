// SPDX-License-Identifier: MIT
/*
 * A real hang, and no deadlock: a lock wrapper whose unlock checks, with
 * pthread_mutex_trylock on the mutex it holds, that it is held (EBUSY: a
 * common debug-build owner check), and a worker that never ends (it waits
 * for a flag nobody sets, checking its lock as it goes). A trylock never
 * waits, so the verdict must be a hang without a lock cycle, never
 * "deadlock" (issue 13).
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile int never;

static void owned_unlock(pthread_mutex_t *m)
{
	int rc = pthread_mutex_trylock(m);

	assert(rc == EBUSY); /* we hold it */
	pthread_mutex_unlock(m);
}

static void *worker(void *arg)
{
	while (!never) {
		pthread_mutex_lock(&lock);
		owned_unlock(&lock);
		usleep(1000);
	}
	return NULL;
}

int main(void)
{
	pthread_t th;

	pthread_create(&th, NULL, worker, NULL);
	pthread_join(th, NULL);
	return 0;
}
