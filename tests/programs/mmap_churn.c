// SPDX-License-Identifier: MIT
/*
 * A correct program whose threads start while another maps and unmaps
 * memory without a pause:
 *   mmap_churn [N]   main creates and joins N threads (default 300), one
 *                    at a time; each locks the program's mutex once. A
 *                    churn thread mmaps, touches and munmaps a page
 *                    throughout, so the address space's lock is often
 *                    taken or waited for.
 * Each pthread_create makes ld.so lock its TLS lock through
 * pthread_mutex_lock (_dl_allocate_tls_init): a libc-internal call the
 * probes must ignore even when the caller's mapping cannot be looked up
 * for the address space's lock (tests/host/59-internal-calls.t).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static atomic_int stop;
static long total;

static void *churn(void *arg)
{
	char *p;

	(void)arg;
	while (!atomic_load(&stop)) {
		p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			break;
		p[0] = 1;
		munmap(p, 4096);
	}
	return NULL;
}

static void *worker(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	total++;
	pthread_mutex_unlock(&m);
	return NULL;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 300, i;
	pthread_t c, t;

	if (pthread_create(&c, NULL, churn, NULL))
		return 1;
	for (i = 0; i < n; i++) {
		if (pthread_create(&t, NULL, worker, NULL))
			return 1;
		pthread_join(t, NULL);
	}
	atomic_store(&stop, 1);
	pthread_join(c, NULL);
	printf("%ld\n", total);
	return total == n ? 0 : 1;
}
