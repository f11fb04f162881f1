// SPDX-License-Identifier: MIT
/* lib/: strict number parsing (parse.c), the cache dir rule (self.c), JSON
 * escaping (json.c), moving a directory tree, also across filesystems
 * (tree.c), the futex lock of run -j N (futex_lock.c: mutual exclusion; a
 * waiter sleeps), FNV-1a (fnv1a64.c), whole lines from threads that
 * log at once (log.c). */
#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "lib/json.h"
#include "tap.h"
#include "lib/file.h"
#include "lib/fnv1a64.h"
#include "lib/futex_lock.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/self.h"
#include "lib/tree.h"
#include "lib/xalloc.h"

static char *json_of(void (*fill)(struct json *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json j;

	json_init(&j, f, false);
	fill(&j);
	fclose(f);
	return buf;
}

static void fill_nested(struct json *j)
{
	json_obj_begin(j, NULL);
	json_kv_str(j, "s", "a\"b\\c\nd\x01");
	json_arr_begin(j, "a");
	json_kv_int(j, NULL, -3);
	json_kv_uint(j, NULL, 18446744073709551615ULL);
	json_obj_begin(j, NULL);
	json_obj_end(j);
	json_arr_end(j);
	json_kv_bool(j, "t", true);
	json_kv_null(j, "n");
	json_kv_dbl(j, "d", 0.5);
	json_kv_str(j, "z", NULL);
	json_obj_end(j);
}

/* A small campaign-like tree: a file with its mode, a subdir, a symlink. */
static int make_tree(const char *dir)
{
	char *p;
	FILE *f;
	int err = mkdir(dir, 0750);

	p = xasprintf("%s/campaign.db", dir);
	f = fopen(p, "w");
	if (f) {
		fputs("data", f);
		fclose(f);
		chmod(p, 0640);
	}
	free(p);
	p = xasprintf("%s/sub", dir);
	err |= mkdir(p, 0755);
	free(p);
	p = xasprintf("%s/sub/link", dir);
	err |= symlink("../campaign.db", p);
	free(p);
	return err || !f;
}

static bool tree_ok(const char *dir)
{
	char *p = xasprintf("%s/campaign.db", dir), *q = xasprintf("%s/sub/link", dir), *s;
	char target[64] = "";
	struct stat st = { 0 }, dt = { 0 };
	bool ok;

	s = file_read(p, NULL);
	ok = s && !strcmp(s, "data") && !stat(p, &st) && (st.st_mode & 0777) == 0640 &&
	     readlink(q, target, sizeof(target) - 1) > 0 && !strcmp(target, "../campaign.db") &&
	     !stat(dir, &dt) && (dt.st_mode & 0777) == 0750;
	free(s);
	free(p);
	free(q);
	return ok;
}

/* tree_move within /tmp (rename) and from /dev/shm to /tmp (EXDEV:
 * copy, then remove). */
static void test_move_tree(void)
{
	char tmp[] = "/tmp/cs-util-XXXXXX", shm[] = "/dev/shm/cs-util-XXXXXX";
	struct statfs a, b;
	char *from, *to;
	int err;

	if (!mkdtemp(tmp)) {
		tap_skip("no /tmp", "move tree");
		tap_skip("no /tmp", "move tree");
		tap_skip("no /tmp", "move tree");
		tap_skip("no /tmp", "move tree");
		return;
	}
	from = xasprintf("%s/a", tmp);
	to = xasprintf("%s/b", tmp);
	tap_ok(!make_tree(from) && !tree_move(from, to) && tree_ok(to) && access(from, F_OK) != 0,
	       "tree_move on one filesystem: renamed, modes and symlink kept");
	free(from);
	free(to);
	if (!mkdtemp(shm) || statfs(shm, &a) || statfs(tmp, &b) || a.f_type == b.f_type) {
		tap_skip("/dev/shm and /tmp are one filesystem type here", "EXDEV copy");
		tap_skip("/dev/shm and /tmp are one filesystem type here", "EXDEV source removed");
	} else {
		from = xasprintf("%s/a", shm);
		to = xasprintf("%s/c", tmp);
		tap_ok(!make_tree(from) && !tree_move(from, to) && tree_ok(to),
		       "tree_move across filesystems: copied with modes and symlink");
		tap_ok(access(from, F_OK) != 0, "tree_move across filesystems: source removed");
		free(from);
		free(to);
	}
	from = xasprintf("%s/b", tmp);
	to = xasprintf("%s/d", tmp);
	err = make_tree(to) ? -1 : tree_move(from, to);
	tap_ok(err == -EEXIST || err == -ENOTEMPTY,
	       "tree_move onto a non-empty directory fails (%d)", err);
	free(from);
	free(to);
	tap_is_int(tree_remove(tmp), 0, "tree_remove removes the tree");
	rmdir(shm);
}

/* futex_lock: four threads add to one plain counter under it; a counter
 * without a lock would lose updates. */
static struct futex_lock counter_lock;
static long counter;

static void *add_many(void *arg)
{
	long i;

	for (i = 0; i < 200000; i++) {
		futex_lock_acquire(&counter_lock);
		counter = counter + 1;
		futex_lock_release(&counter_lock);
	}
	return arg;
}

static void *hold_then_release(void *arg)
{
	struct timespec ts = { 0, 200 * 1000 * 1000 };

	nanosleep(&ts, NULL);
	futex_lock_release(&counter_lock);
	return arg;
}

#define LOG_THREADS 4
#define LOG_LINES   2000

static void *log_lines(void *arg)
{
	int t = (int)(intptr_t)arg, i;

	for (i = 0; i < LOG_LINES; i++)
		log_debug("run: %d of thread %d", i, t);
	return NULL;
}

/* run -j N's workers log at once (stderr is unbuffered: one write per
 * stdio call); each message must stay one whole line. */
static void test_log_lines(void)
{
	FILE *f = tmpfile(); /* removed when closed */
	int saved = dup(2), t, whole = 0, lines = 0;
	pthread_t th[LOG_THREADS];
	char line[200];

	log_verbose = 1;
	dup2(fileno(f), 2);
	for (t = 0; t < LOG_THREADS; t++)
		pthread_create(&th[t], NULL, log_lines, (void *)(intptr_t)t);
	for (t = 0; t < LOG_THREADS; t++)
		pthread_join(th[t], NULL);
	dup2(saved, 2);
	close(saved);
	log_verbose = 0;
	rewind(f);
	while (fgets(line, sizeof(line), f)) {
		int i, k, n = 0;

		lines++;
		whole += sscanf(line, "concsched: debug: run: %d of thread %d\n%n", &i, &k, &n) ==
				 2 &&
			 n == (int)strlen(line);
	}
	fclose(f);
	tap_is_int(lines, LOG_THREADS * LOG_LINES,
		   "%d threads logging at once: one line per message", LOG_THREADS);
	tap_is_int(whole, LOG_THREADS * LOG_LINES, "... each line whole");
}

static void test_lock(void)
{
	pthread_t th[4];
	struct timespec c0, c1;
	int i;

	for (i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, add_many, NULL);
	for (i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	tap_is_int(counter, 4 * 200000, "futex_lock: 4 threads x 200000 increments, none lost");
	tap_is_int(counter_lock.held, 0, "futex_lock: free at the end");
	/* A waiter for a lock held 200 ms sleeps: it uses far less CPU
	 * than the time it waits. */
	futex_lock_acquire(&counter_lock);
	pthread_create(&th[0], NULL, hold_then_release, NULL);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
	futex_lock_acquire(&counter_lock);
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
	futex_lock_release(&counter_lock);
	pthread_join(th[0], NULL);
	tap_ok((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec) < 20e6,
	       "futex_lock: a waiter sleeps (CPU while waiting 200 ms: %.1f ms)",
	       ((c1.tv_sec - c0.tv_sec) * 1e9 + (c1.tv_nsec - c0.tv_nsec)) / 1e6);
}

int main(void)
{
	uint64_t u;
	int64_t i;
	double d;
	char *s;

	tap_plan(24);
	tap_ok(parse_u64("42", &u) == 0 && u == 42, "parse_u64 accepts 42");
	tap_ok(parse_u64("0x10", &u) == 0 && u == 16, "parse_u64 accepts hex");
	tap_ok(parse_u64("-1", &u) < 0, "parse_u64 rejects negative");
	tap_ok(parse_u64("12abc", &u) < 0, "parse_u64 rejects trailing junk");
	tap_ok(parse_u64("", &u) < 0, "parse_u64 rejects empty");
	tap_ok(parse_u64("99999999999999999999999", &u) < 0, "parse_u64 rejects overflow");
	tap_ok(parse_i64("-7", &i) == 0 && i == -7, "parse_i64 accepts -7");
	tap_ok(parse_double("0.25", &d) == 0 && d == 0.25, "parse_double accepts 0.25");
	tap_ok(parse_double("1e", &d) < 0, "parse_double rejects 1e");

	setenv("CONCSCHED_CACHE", "/tmp/x", 1);
	tap_is_str(self_cache_dir(), "/tmp/x", "CONCSCHED_CACHE wins");
	unsetenv("CONCSCHED_CACHE");
	setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
	tap_is_str(self_cache_dir(), "/tmp/xdg/concsched", "XDG_CACHE_HOME next");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	tap_is_str(self_cache_dir(), "/home/u/.cache/concsched", "then ~/.cache");

	s = json_of(fill_nested);
	tap_is_str(s,
		   "{\"s\":\"a\\\"b\\\\c\\nd\\u0001\",\"a\":[-3,18446744073709551615,{}],"
		   "\"t\":true,\"n\":null,\"d\":0.5,\"z\":null}",
		   "json nests, escapes and separates");
	free(s);
	tap_is_int(fnv1a64("a", 1, FNV1A64_INIT), 0xaf63dc4c8601ec8cULL, "fnv1a64 of 'a'");
	test_move_tree();
	test_lock();
	test_log_lines();
	return tap_done();
}
