// SPDX-License-Identifier: MIT
/*
 * Bundled example: an atomicity violation that native reruns almost never
 * show. Two tellers withdraw from one account. Each checks the balance in
 * one critical section and debits it in a second one, so both can pass the
 * check before either debits, and the balance goes negative. The window is
 * the few instructions between the two critical sections of one teller; the
 * second teller starts tens of microseconds later, so an unperturbed run
 * essentially never interleaves there. A pause or delay at a lock call
 * (concsched's noise or TSA) opens it.
 *
 *   ./bank            exits 0 when the account is consistent,
 *                     aborts (assertion) when the balance went negative.
 */
#include <assert.h>
#include <pthread.h>
#include <stdio.h>

static pthread_mutex_t account_lock = PTHREAD_MUTEX_INITIALIZER;
static long balance = 100;

static long read_balance(void)
{
	long b;

	pthread_mutex_lock(&account_lock);
	b = balance;
	pthread_mutex_unlock(&account_lock);
	return b;
}

static void debit(long amount)
{
	pthread_mutex_lock(&account_lock);
	balance -= amount;
	pthread_mutex_unlock(&account_lock);
}

static void *teller(void *arg)
{
	long amount = (long)arg;

	if (read_balance() >= amount) /* check ... */
		debit(amount);	      /* ... then act: not atomic */
	return NULL;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, teller, (void *)60L);
	pthread_create(&b, NULL, teller, (void *)60L);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	printf("final balance %ld\n", balance);
	assert(balance >= 0 && "overdrawn: check-then-act race between tellers");
	return 0;
}
