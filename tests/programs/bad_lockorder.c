// SPDX-License-Identifier: MIT
/*
 * bad_lockorder — a lock-order inversion. Two tellers each make one
 * transfer between accounts A and B; a transfer locks its source account,
 * then its destination. Teller one goes A -> B (locks A then B), teller
 * two goes B -> A (locks B then A). If each takes its first lock before
 * the other takes its second, both wait forever: a deadlock (the program
 * hangs). Each teller holds its first lock for only a few instructions
 * and teller two starts tens of microseconds after teller one, so a plain
 * run practically always finishes (exit 0); a pause at the second
 * pthread_mutex_lock of either teller opens the window.
 *
 * main creates the second thread only once the first is running (the
 * first_running flag), so that a first thread the kernel happens to start
 * late does not run side by side with the second: plain runs stay apart.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

struct account {
	pthread_mutex_t lock;
	long balance;
};

static struct account a = { PTHREAD_MUTEX_INITIALIZER, 100 };
static struct account b = { PTHREAD_MUTEX_INITIALIZER, 100 };

static void transfer(struct account *from, struct account *to, long amount)
{
	pthread_mutex_lock(&from->lock);
	pthread_mutex_lock(&to->lock); /* the inverted second lock */
	from->balance -= amount;
	to->balance += amount;
	pthread_mutex_unlock(&to->lock);
	pthread_mutex_unlock(&from->lock);
}

/* Set by the first thread when it starts; main creates the second after. */
static int first_running; /* __atomic */

static void *teller_one(void *arg)
{
	__atomic_store_n(&first_running, 1, __ATOMIC_RELEASE);
	transfer(&a, &b, 10);
	return arg;
}

static void *teller_two(void *arg)
{
	transfer(&b, &a, 20);
	return arg;
}

int main(void)
{
	pthread_t one, two;

	pthread_create(&one, NULL, teller_one, NULL);
	while (!__atomic_load_n(&first_running, __ATOMIC_ACQUIRE))
		sched_yield(); /* the second thread starts once the first runs */
	pthread_create(&two, NULL, teller_two, NULL);
	pthread_join(one, NULL);
	pthread_join(two, NULL);
	printf("a %ld b %ld\n", a.balance, b.balance);
	return 0;
}
