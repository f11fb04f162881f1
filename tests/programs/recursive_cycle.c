// SPDX-License-Identifier: MIT
/*
 * recursive_cycle — a lock-order deadlock in every run, one of whose
 * requests the sync probe does not see as blocked: the probe learns a
 * lock's holder when the holder's call returns and forgets it at an
 * unlock, and a recursive mutex's inner unlock leaves the outer hold in
 * place. The registry thread takes `registry` (recursive) twice and lets
 * go of the inner hold, so the lock still belongs to it but the probe
 * names no holder; the journal thread takes `journal`, then asks for
 * `registry` (no request event: the probe sees no holder), and the
 * registry thread asks for `journal` (a request event: the journal
 * thread holds it). Both wait for good: the deadlock report must come
 * from the journal thread's call in flight (tests/host/40-run.t).
 *
 * The steps are ordered by a shared counter, so that every run deadlocks
 * the same way.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

static pthread_mutex_t registry; /* recursive: see main */
static pthread_mutex_t journal = PTHREAD_MUTEX_INITIALIZER;
static int step; /* __atomic: 1 registry held, 2 journal held */

static void wait_step(int n)
{
	while (__atomic_load_n(&step, __ATOMIC_ACQUIRE) < n)
		sched_yield();
}

static void *registry_thread(void *arg)
{
	pthread_mutex_lock(&registry);
	pthread_mutex_lock(&registry); /* a nested helper's hold */
	pthread_mutex_unlock(&registry);
	__atomic_store_n(&step, 1, __ATOMIC_RELEASE);
	wait_step(2);
	pthread_mutex_lock(&journal); /* held by the journal thread */
	pthread_mutex_unlock(&journal);
	pthread_mutex_unlock(&registry);
	return arg;
}

static void *journal_thread(void *arg)
{
	wait_step(1);
	pthread_mutex_lock(&journal);
	__atomic_store_n(&step, 2, __ATOMIC_RELEASE);
	pthread_mutex_lock(&registry); /* held by the registry thread */
	pthread_mutex_unlock(&registry);
	pthread_mutex_unlock(&journal);
	return arg;
}

int main(void)
{
	pthread_mutexattr_t attr;
	pthread_t a, b;

	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&registry, &attr);
	pthread_create(&a, NULL, registry_thread, NULL);
	pthread_create(&b, NULL, journal_thread, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	puts("done");
	return 0;
}
