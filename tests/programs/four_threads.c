// SPDX-License-Identifier: MIT
/*
 * four_threads — four threads each print "thread I tid T" once, under a
 * mutex so lines do not interleave, and exit through pthread_exit (which
 * makes glibc dlopen libgcc_s: the VM runner must carry it); main joins
 * them and prints "joined 4". Exit 0 when all four ran and joined. The VM
 * runner test (tests/vm/00-vm-runner.t) runs it dynamically linked in the
 * guest; scheduler tests reuse it as the smallest multithreaded target.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>

#define NTHREADS 4

static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;
static int ran;

static void *worker(void *arg)
{
	long i = (long)arg;

	pthread_mutex_lock(&print_lock);
	printf("thread %ld tid %ld\n", i, (long)syscall(SYS_gettid));
	fflush(stdout);
	ran++;
	pthread_mutex_unlock(&print_lock);
	pthread_exit(NULL);
}

int main(void)
{
	pthread_t t[NTHREADS];
	int started = 0;
	long i;

	for (i = 0; i < NTHREADS; i++) {
		if (pthread_create(&t[i], NULL, worker, (void *)i)) {
			perror("pthread_create");
			break;
		}
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	printf("joined %d\n", ran);
	return ran == NTHREADS ? 0 : 1;
}
