// SPDX-License-Identifier: MIT
/*
 * race_flag_token — one token, taken through a plain flag with
 * check-then-act. main hands the token over by leaving token_free set;
 * each of two workers checks the flag and, seeing it set, clears it and
 * counts itself as an owner, keeping the token until main takes it back
 * after the join. The check and the clear are separate plain (volatile)
 * accesses, not one atomic exchange, so two workers that both check
 * before either clears both take the token: the owner count exceeds 1, the
 * second owner says so and main exits 1. The window is the one instruction
 * between a worker's load and store of token_free, and the second worker
 * starts tens of microseconds after the first, so a plain run practically
 * always exits 0. A pause of a worker between its check and its clear
 * opens the window.
 *
 * main creates the second thread only once the first is running (the
 * first_running flag), so that a first thread the kernel happens to start
 * late does not run side by side with the second: plain runs stay apart.
 */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>

volatile int token_free = 1; /* 1: the token is up for grabs */
static int owners;	     /* __atomic: workers holding the token */

__attribute__((noinline)) int take_token(void)
{
	if (!token_free) /* check ... */
		return 0;
	token_free = 0; /* ... then act: not atomic with the check */
	return 1;
}

/* Set by the first thread when it starts; main creates the second after. */
static int first_running; /* __atomic */

static void *worker(void *arg)
{
	long id = (long)arg;
	int n;

	__atomic_store_n(&first_running, 1, __ATOMIC_RELEASE);
	if (take_token()) {
		n = __atomic_add_fetch(&owners, 1, __ATOMIC_RELAXED);
		if (n > 1)
			fprintf(stderr, "race_flag_token: worker %ld is owner number %d\n", id, n);
	}
	return NULL;
}

int main(void)
{
	pthread_t t[2];

	for (long i = 0; i < 2; i++) {
		pthread_create(&t[i], NULL, worker, (void *)i);
		if (i == 0)
			while (!__atomic_load_n(&first_running, __ATOMIC_ACQUIRE))
				sched_yield(); /* the second starts once the first runs */
	}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	if (owners > 1) {
		fprintf(stderr, "race_flag_token: %d owners of one token\n", owners);
		return 1;
	}
	return 0;
}
