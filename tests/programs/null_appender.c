// SPDX-License-Identifier: MIT
/*
 * The log4j NullAppender bug of seed 001 (MAPTest, Fig. 1), ported to C:
 *
 *   boolean isAsSevereAsThreshold(Priority priority) {
 *       return th == null || priority.isGreaterOrEqual(th);   // reads th twice
 *   }
 *   void setThreshold(Priority threshold) { this.th = threshold; }
 *
 * Thread "reader" checks the threshold pointer for NULL (read 1 of th,
 * site in is_as_severe_as_threshold) and then dereferences it (read 2);
 * thread "writer" calls set_threshold(NULL) (the write of th). Only the
 * interleaving  reader:R th, writer:W th, reader:R th  (MAP pattern 4,
 * a:R x, b:W x, a:R x) makes the second read see NULL: the program then
 * dies of SIGSEGV. In every other order it prints "severe=1" and exits 0.
 * `threshold` is a volatile pointer so each source-level read stays one
 * load instruction (a site), as in the JVM's two getfield instructions.
 *
 * Run: null_appender   (no arguments; one call per thread, tiny window:
 * without a scheduler the crash practically never happens).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

struct priority {
	int level;
};

static struct priority debug_priority = { 10000 };
static struct priority warn_priority = { 30000 };

/* AppenderSkeleton.threshold: the shared variable x of the pattern. */
struct priority *volatile threshold = &debug_priority;

__attribute__((noinline)) int is_as_severe_as_threshold(const struct priority *p)
{
	if (threshold == NULL) /* read 1: th == null        */
		return 1;
	return p->level >= threshold->level; /* read 2: th dereferenced   */
}

__attribute__((noinline)) void set_threshold(struct priority *t)
{
	threshold = t; /* the write of th           */
}

static int severe;

static void *reader(void *arg)
{
	(void)arg;
	severe = is_as_severe_as_threshold(&warn_priority);
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	set_threshold(NULL);
	return NULL;
}

int main(void)
{
	pthread_t r, w;

	if (pthread_create(&r, NULL, reader, NULL) || pthread_create(&w, NULL, writer, NULL)) {
		fprintf(stderr, "null_appender: pthread_create failed\n");
		return 2;
	}
	pthread_join(r, NULL);
	pthread_join(w, NULL);
	printf("severe=%d\n", severe);
	return 0;
}
