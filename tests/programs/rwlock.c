// SPDX-License-Identifier: MIT
/*
 * Reader then writer on one rwlock, in a forced order: the reader's
 * rdlock, then the writer's wrlock. One SP pair <rdlock, wrlock>, one
 * unlock->lock HBPair from the reader's unlock to the writer's wrlock.
 */
#include <pthread.h>
#include <unistd.h>

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int done;

static void *reader(void *arg)
{
	pthread_rwlock_rdlock(&rw); /* rd */
	pthread_rwlock_unlock(&rw); /* rd-unlock */
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	return arg;
}

static void *writer(void *arg)
{
	while (!__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		usleep(1000);
	pthread_rwlock_wrlock(&rw); /* wr */
	pthread_rwlock_unlock(&rw); /* wr-unlock */
	return arg;
}

int main(void)
{
	pthread_t r, w;

	pthread_create(&r, NULL, reader, NULL);
	pthread_create(&w, NULL, writer, NULL);
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	return 0;
}
