// SPDX-License-Identifier: MIT
/*
 * Two threads whose locking is in a library the program links
 * (lib/libsharedsync.so, found through its RUNPATH $ORIGIN/lib): ld.so
 * maps it after the exec, so a reader of the process's maps at the exec
 * does not see it (tests/host/51-library-sites.t). Exits 0 when both
 * threads took the lock three times.
 */
#include <pthread.h>

void *shared_worker(void *arg);
int shared_total(void);

int main(void)
{
	pthread_t t[2];
	int i;

	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, shared_worker, NULL);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	return shared_total() == 6 ? 0 : 1;
}
