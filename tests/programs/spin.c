// SPDX-License-Identifier: MIT
/*
 * Spin locks in a forced order: thread1 locks and unlocks, then thread2
 * does. One SP pair <spin1, spin2> and one unlock->lock HBPair. glibc's
 * pthread_spin_lock is probed on its success return (its entry cannot carry
 * a uprobe), so its site is still the call site.
 */
#include <pthread.h>
#include <unistd.h>

static pthread_spinlock_t s;
static int done1;

static void *thread1(void *arg)
{
	pthread_spin_lock(&s);	 /* spin1 */
	pthread_spin_unlock(&s); /* unlock1 */
	__atomic_store_n(&done1, 1, __ATOMIC_RELEASE);
	return arg;
}

static void *thread2(void *arg)
{
	while (!__atomic_load_n(&done1, __ATOMIC_ACQUIRE))
		usleep(1000);
	pthread_spin_lock(&s); /* spin2 */
	pthread_spin_unlock(&s);
	return arg;
}

int main(void)
{
	pthread_t a, b;

	pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
	pthread_create(&a, NULL, thread1, NULL);
	pthread_create(&b, NULL, thread2, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
