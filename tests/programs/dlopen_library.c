// SPDX-License-Identifier: MIT
/*
 * Two threads whose locking is in a library the program loads with
 * dlopen (lib/libsharedsync.so beside it), which no list of the
 * program's libraries names (tests/host/51-library-sites.t). It lives
 * half a second after its threads end, as a service would: time for the
 * controller to read its maps. Exits 0 when both threads took the lock
 * three times, 2 when the library cannot be loaded.
 */
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(void)
{
	char exe[PATH_MAX], lib[PATH_MAX + 32], *slash;
	void *(*worker)(void *);
	int (*total)(void);
	pthread_t t[2];
	void *h;
	ssize_t n;
	int i;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return 2;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (!slash)
		return 2;
	*slash = 0;
	snprintf(lib, sizeof(lib), "%s/lib/libsharedsync.so", exe);
	h = dlopen(lib, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen_library: %s\n", dlerror());
		return 2;
	}
	worker = (void *(*)(void *))dlsym(h, "shared_worker");
	total = (int (*)(void))dlsym(h, "shared_total");
	if (!worker || !total)
		return 2;
	for (i = 0; i < 2; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	usleep(500000);
	return total() == 6 ? 0 : 1;
}
