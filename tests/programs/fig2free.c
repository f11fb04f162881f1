// SPDX-License-Identifier: MIT
/*
 * Figure 2 of seed 000 without the forced order: two threads, each takes
 * lock m twice, free to interleave. Its 10 SP requirements are all
 * feasible; an unsteered run mostly shows the same 3 or 4 of them, because
 * thread 1 finishes before thread 2 starts. TSA should cover all 10.
 */
#include <pthread.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

static void *thread1(void *arg)
{
	pthread_mutex_lock(&m);	  /* 2a */
	pthread_mutex_unlock(&m); /* 3a */
	pthread_mutex_lock(&m);	  /* 4a */
	pthread_mutex_unlock(&m); /* 5a */
	return arg;
}

static void *thread2(void *arg)
{
	pthread_mutex_lock(&m);	  /* 2b */
	pthread_mutex_unlock(&m); /* 3b */
	pthread_mutex_lock(&m);	  /* 4b */
	pthread_mutex_unlock(&m); /* 5b */
	return arg;
}

int main(void)
{
	pthread_t a, b;

	pthread_create(&a, NULL, thread1, NULL);
	pthread_create(&b, NULL, thread2, NULL);
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	return 0;
}
