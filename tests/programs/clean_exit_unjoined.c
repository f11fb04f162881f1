// SPDX-License-Identifier: MIT
/*
 * clean_exit_unjoined — main returns while its workers still run, and
 * nothing depends on how far they got: the correct counterpart of
 * race_exit_unjoined (the end of the process as a decision point).
 *
 * Two tallying workers each take tally_lock ROUNDS times and move one unit
 * from `left` to `right` under it, checking under the lock that the two
 * still add up to TOTAL; a waiter blocks on more_work, which nobody ever
 * signals (a daemon thread waiting for work that does not come). main
 * starts the three and returns without joining: exit() ends the process
 * wherever the workers are. Every check is made under the lock that every
 * update holds, the workers use no stdio, and main's exit touches nothing
 * of theirs, so no interleaving and no point of the exit can fail it:
 * exits 0, or aborts if a tally ever saw the sum broken.
 *
 * A strategy that holds the exit back sees every kind of other thread: the
 * tallies runnable (then gone), the waiter blocked for good.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ROUNDS 20
#define TOTAL  1000

static pthread_mutex_t tally_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t more_work = PTHREAD_COND_INITIALIZER;
static int left = TOTAL, right; /* under tally_lock */
static int work_posted;		/* under tally_lock; never set */

static void *tally(void *arg)
{
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&tally_lock);
		if (left + right != TOTAL)
			abort();
		left--;
		right++;
		pthread_mutex_unlock(&tally_lock);
	}
	return arg;
}

static void *waiter(void *arg)
{
	pthread_mutex_lock(&tally_lock);
	while (!work_posted)
		pthread_cond_wait(&more_work, &tally_lock);
	pthread_mutex_unlock(&tally_lock);
	return arg;
}

int main(void)
{
	pthread_t t1, t2, w;

	if (pthread_create(&w, NULL, waiter, NULL) || pthread_create(&t1, NULL, tally, NULL) ||
	    pthread_create(&t2, NULL, tally, NULL))
		return 2;
	printf("clean_exit_unjoined: started 3 workers, not waiting for them\n");
	return 0; /* correct: nothing after this needs the workers */
}
