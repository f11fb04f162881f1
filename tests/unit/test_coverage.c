// SPDX-License-Identifier: MIT
/* Pure parts of the sync coverage pipeline: lockset bookkeeping, the
 * thread model built from events, site resolution from the probe's mapping
 * table, abstract ids and task keys (run-comparable). */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "coverage/syncov.h"
#include "tap.h"
#include "coverage/thread_model.h"

static struct cs_event ev(uint32_t tid, uint32_t seq, unsigned op, uint64_t obj, uint64_t site,
			  uint64_t arg)
{
	struct cs_event e = {
		.pid = 100, .tid = tid, .seq = seq, .op = op, .obj = obj, .site = site, .arg = arg
	};
	return e;
}

static void test_lockset(void)
{
	uint64_t held[CS_LOCKSET_MAX];
	uint32_t n = 0, ovf = 0, i;

	for (i = 0; i < CS_LOCKSET_MAX; i++)
		thread_model_lockset_push(held, &n, &ovf, 0x1000 + i);
	tap_ok(!thread_model_lockset_push(held, &n, &ovf, 0x9999),
	       "push beyond CS_LOCKSET_MAX fails");
	tap_is_int(ovf, 1, "overflow counted");
	tap_ok(!thread_model_lockset_remove(held, &n, &ovf, 0x9999),
	       "releasing the unrecorded lock");
	tap_is_int(ovf, 0, "... pays back the overflow");
	tap_ok(thread_model_lockset_remove(held, &n, &ovf, 0x1003), "remove from the middle");
	tap_is_int(n, CS_LOCKSET_MAX - 1, "size shrinks");
	tap_is_int(held[3], 0x1004, "later holds shift down");
}

static void test_thread_model(void)
{
	struct thread_model m;
	struct cs_event e;
	struct tm_thread *t, *c;

	thread_model_init(&m, 0);
	e = ev(100, 0, CS_OP_LOCK, 0xa, 0x10, 0);
	thread_model_add_event(&m, &e);
	e = ev(100, 1, CS_OP_LOCK, 0xb, 0x20, 0);
	thread_model_add_event(&m, &e);
	e = ev(100, 2, CS_OP_CREATE, 101, 0x30, 0x400);
	thread_model_add_event(&m, &e);
	e = ev(100, 4, CS_OP_UNLOCK, 0xb, 0x40, 0); /* seq 3 lost */
	thread_model_add_event(&m, &e);
	e = ev(101, 0, CS_OP_COND_WAKE, 0xc, 0x50, 0xa);
	thread_model_add_event(&m, &e);
	t = thread_model_thread(&m, 100, 0, 100, false, NULL);
	c = thread_model_thread(&m, 100, 0, 101, false, NULL);
	tap_ok(t && c, "two threads");
	tap_is_int(t->actions[1].nlockset, 1, "second lock starts holding one lock");
	tap_is_int(t->actions[1].lockset[0], 0xa, "... lock a");
	tap_is_int(t->nheld, 1, "unlock b leaves a held");
	tap_is_int(t->seq_gaps, 1, "a missing seq is a lost event");
	{
		uint32_t next = 0, g0 = thread_model_seq_gap(&next, 0),
			 g3 = thread_model_seq_gap(&next, 3);

		tap_ok(g0 == 0 && g3 == 2 && next == 4, "seq gap: 0 then 3: 1 and 2 lost, next 4");
		tap_is_int((int)thread_model_seq_gap(&next, 2), 0, "... a late 2: no loss");
		tap_is_int((int)next, 4, "... and the next stays 4");
		tap_is_int((int)thread_model_seq_gap(&next, 4), 0, "... 4, the next one: no loss");
	}
	tap_is_int(c->creator, 0, "child created by thread 0");
	tap_is_int(c->create_pos, 2, "after its creator's 2 lock actions (AC4)");
	tap_is_int(c->create_site, 0x30, "creation site");
	tap_is_int(c->start_routine, 0x400, "start routine");
	tap_is_int(c->nheld == 1 && c->held[0] == 0xa, 1, "cond_wake acquires the mutex (arg)");
	tap_is_int(m.by_op[CS_OP_LOCK], 2, "events per kind");
	thread_model_free(&m);
}

static void test_sites(void)
{
	struct site_resolver r;
	struct site_vma v = { .tgid = 7,
			      .gen = 1,
			      .start = 0x555000,
			      .end = 0x556000,
			      .pgoff = 0x1000,
			      .ino = 1,
			      .dev = 2,
			      .file = true };
	struct site_vma anon = { .tgid = 7, .gen = 1, .start = 0x600000, .end = 0x601000 };
	struct site_ref s;
	char buf[128];

	syncov_resolver_init(&r);
	strcpy(v.name, "prog");
	syncov_resolver_add_vma(&r, &v);
	syncov_resolver_add_vma(&r, &anon);
	tap_is_int(syncov_resolve(&r, 7, 1, 0x555123, &s), 0, "address in a file mapping resolves");
	tap_is_str(syncov_site_key(&s, buf, sizeof(buf)), "prog+0x1123",
		   "object+file offset (kernel name without a path)");
	tap_ok(syncov_resolve(&r, 7, 0, 0x555123, &s) < 0,
	       "another exec generation does not match");
	tap_ok(syncov_resolve(&r, 7, 1, 0x600010, &s) < 0 && !s.object,
	       "anonymous mapping: no object");
	tap_is_str(syncov_site_key(&s, buf, sizeof(buf)), "0x600010", "unresolved: raw address");
	syncov_resolver_free(&r);
}

/* A file mapping of dir/name, as the probe records it. */
static struct site_vma file_vma(const char *dir, const char *name, uint32_t tgid)
{
	struct site_vma v = {
		.tgid = tgid, .gen = 1, .start = 0x400000, .end = 0x401000, .file = true
	};
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!stat(path, &st)) {
		v.ino = st.st_ino;
		v.dev = (major(st.st_dev) << 20) | minor(st.st_dev);
	}
	snprintf(v.name, sizeof(v.name), "%s", name);
	return v;
}

static void touch(const char *dir, const char *name)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0755);
	if (fd >= 0)
		close(fd);
}

static void unlink_in(const char *dir, const char *name)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	unlink(path);
}

/* A file no maps read named gets the same name in every run: from the
 * exec's name, or its basename's file in a known file's directory or in
 * the search path, when that file is the same dev/inode. */
static void test_unknown_files(void)
{
	char tmp[64], want[2 * PATH_MAX], *real;
	char other[PATH_MAX + 8], bin[PATH_MAX + 8];
	struct site_resolver r, r2;
	struct site_vma child, tool, stranger, gone;
	struct site_ref s;
	char buf[PATH_MAX + 32];

	snprintf(tmp, sizeof(tmp), "/tmp/cs-syncov-%d", (int)getpid());
	real = mkdir(tmp, 0700) ? NULL : realpath(tmp, NULL);
	if (!tap_ok(real != NULL, "a temporary directory (%s)", tmp))
		return;
	snprintf(other, sizeof(other), "%s/other", real);
	snprintf(bin, sizeof(bin), "%s/bin", real);
	mkdir(other, 0755);
	mkdir(bin, 0755);
	touch(real, "target");
	touch(real, "child");
	touch(bin, "tool");
	touch(other, "child"); /* same name, another file */
	touch(real, "gone");

	syncov_resolver_init(&r);
	snprintf(want, sizeof(want), "%s/target", real);
	syncov_resolver_add_path(&r, want);
	child = file_vma(real, "child", 7);
	tool = file_vma(bin, "tool", 8);
	tool.start = 0x500000, tool.end = 0x501000;
	stranger = file_vma(other, "child", 9);
	gone = file_vma(real, "gone", 10);
	snprintf(want, sizeof(want), "%s/gone", real);
	unlink(want);
	syncov_resolver_add_vma(&r, &child);
	syncov_resolver_add_vma(&r, &tool);
	syncov_resolver_add_vma(&r, &stranger);
	syncov_resolver_add_vma(&r, &gone);
	syncov_resolver_search(&r, bin);

	snprintf(want, sizeof(want), "%s/child+0x10", real);
	tap_ok(!syncov_resolve(&r, 7, 1, 0x400010, &s), "exec'd child's site resolves");
	tap_is_str(syncov_site_key(&s, buf, sizeof(buf)), want,
		   "child beside a known file: named by its path");
	snprintf(want, sizeof(want), "%s/tool+0x20", bin);
	tap_ok(!syncov_resolve(&r, 8, 1, 0x500020, &s), "tool's site resolves");
	tap_is_str(syncov_site_key(&s, buf, sizeof(buf)), want,
		   "file in the search path: named by its path");
	syncov_resolve(&r, 9, 1, 0x400030, &s);
	tap_is_str(syncov_site_key(&s, buf, sizeof(buf)), "child+0x30",
		   "same name in a known directory, another inode: not taken for it");
	syncov_resolve(&r, 10, 1, 0x400040, &s);
	tap_is_str(syncov_site_key(&s, buf, sizeof(buf)), "gone+0x40",
		   "file no longer there: kernel name");
	tap_is_int((int)r.nmisses, 2, "the two files not found are remembered, not searched again");
	syncov_resolver_search(&r, bin);
	tap_is_int((int)r.nmisses, 2, "a second search adds no miss");

	/* The exec's name: relative to the working directory, or absolute. */
	syncov_resolver_init(&r2);
	syncov_resolver_add_vma(&r2, &stranger);
	if (chdir(other) == 0) {
		syncov_resolver_learn_exec(&r2, stranger.dev, stranger.ino, "child");
		if (chdir("/"))
			tap_diag("cannot leave %s", other);
	}
	snprintf(want, sizeof(want), "%s/child+0x30", other);
	syncov_resolve(&r2, 9, 1, 0x400030, &s);
	tap_is_str(syncov_site_key(&s, buf, sizeof(buf)), want,
		   "exec'd by a relative name: path from the working directory");
	syncov_resolver_learn_exec(&r2, tool.dev, tool.ino, "/nonexistent/tool");
	syncov_resolver_add_vma(&r2, &tool);
	syncov_resolve(&r2, 8, 1, 0x500020, &s);
	tap_is_str(syncov_site_key(&s, buf, sizeof(buf)), "tool+0x20",
		   "exec'd name that is not the file: not taken");
	snprintf(want, sizeof(want), "%s/tool", bin);
	syncov_resolver_learn_exec(&r2, tool.dev, tool.ino, want);
	snprintf(want, sizeof(want), "%s/tool+0x20", bin);
	syncov_resolve(&r2, 8, 1, 0x500020, &s);
	tap_is_str(syncov_site_key(&s, buf, sizeof(buf)), want, "exec'd by an absolute name");
	syncov_resolver_free(&r2);
	syncov_resolver_free(&r);

	unlink_in(real, "target");
	unlink_in(real, "child");
	unlink_in(bin, "tool");
	unlink_in(other, "child");
	rmdir(bin);
	rmdir(other);
	rmdir(real);
	free(real);
}

static void test_ids_and_keys(void)
{
	const char *f1[] = { "/p+0x10", "/p+0x20" }, *f2[] = { "/p+0x10", "/p+0x30" };
	char a[16], b[16], c[16], id[256];
	struct syncov_set s;
	char *k;

	syncov_thread_id("/p+0x100", "/p+0x200", f1, 2, a);
	syncov_thread_id("/p+0x100", "/p+0x200", f1, 2, b);
	syncov_thread_id("/p+0x100", "/p+0x200", f2, 2, c);
	tap_is_str(a, b, "thread id: same inputs, same id");
	tap_ok(strcmp(a, c) != 0, "thread id: other first actions, other id");
	tap_is_int(strlen(a), 13, "thread id: T + 12 hex digits");
	syncov_lock_id("/p+0x4040", CS_OBJ_MUTEX, "/p+0x10", id, sizeof(id));
	tap_is_str(id, "/p+0x4040", "global lock: its object+offset");
	syncov_lock_id(NULL, CS_OBJ_RWLOCK, "/p+0x10", id, sizeof(id));
	tap_is_str(id, "rwlock@/p+0x10", "heap lock: kind@first-use site");

	k = syncov_key_sp("/p+0x10", "/p+0x20");
	tap_is_str(k, "sp /p+0x10 -> /p+0x20", "SP key");
	syncov_set_init(&s);
	syncov_set_add(&s, SYNCOV_SP, k, 2);
	syncov_set_add(&s, SYNCOV_SP, k, 3); /* same task from another thread pair */
	free(k);
	k = syncov_key_hb(CS_HB_SIGNAL_WAKE, "/p+0x1", "/p+0x2", "cond@/p+0x1", "Ta", "Tb");
	tap_is_str(k, "hb signal->wakeup /p+0x1 -> /p+0x2 obj cond@/p+0x1 threads Ta -> Tb",
		   "HBPair key");
	syncov_set_add(&s, SYNCOV_HBPAIR, k, 1);
	free(k);
	k = syncov_key_sync(CS_SYNC_BLOCKED, "/p+0x1");
	syncov_set_add(&s, SYNCOV_SYNC, k, 1);
	tap_is_str(k, "sync blocked /p+0x1", "Sync key");
	free(k);
	k = syncov_key_goodlock("/p+0x1", "/p+0x2", "/p+0x40", "/p+0x48", "Ta");
	tap_is_str(k, "goodlock /p+0x1 -> /p+0x2 locks /p+0x40 -> /p+0x48 thread Ta",
		   "GoodLock key");
	syncov_set_add(&s, SYNCOV_GOODLOCK, k, 1);
	free(k);
	tap_is_int(s.n, 4, "same key merges");
	tap_is_int(syncov_set_find(&s, "sp /p+0x10 -> /p+0x20")->hits, 5, "merged hits add up");
	syncov_set_sort(&s);
	tap_is_int(s.tasks[0].metric, SYNCOV_SP, "sorted by metric");
	tap_is_int(syncov_set_count(&s, SYNCOV_SYNC), 1, "count per metric");
	syncov_set_free(&s);
}

/* A truncated model (max_actions) keeps each thread's latest event and the
 * sites of its holds: the deadlock analysis pairs them with the current
 * lockset. Issue 32: the stored last action of a thread was a recursive
 * re-lock request long past, its lockset the current one, and the pair
 * read "holds M and waits for M". */
static void test_truncated_model(void)
{
	struct thread_model m;
	struct cs_event e;
	const struct tm_action *last;
	struct tm_thread *t;

	thread_model_init(&m, 2);
	e = ev(100, 0, CS_OP_LOCK, 0xa, 0x10, 0); /* step: lock M */
	thread_model_add_event(&m, &e);
	e = ev(100, 1, CS_OP_LOCK_REQ, 0xa, 0x20, 0); /* reset: re-lock M */
	thread_model_add_event(&m, &e);
	e = ev(100, 2, CS_OP_LOCK, 0xa, 0x20, 0); /* the model is full: not stored */
	thread_model_add_event(&m, &e);
	e = ev(100, 3, CS_OP_UNLOCK, 0xa, 0x30, 0);
	t = thread_model_add_event(&m, &e);
	e = ev(100, 4, CS_OP_LOCK, 0xb, 0x40, 0);
	t = thread_model_add_event(&m, &e);
	last = thread_model_last(t);
	tap_ok(m.truncated == 3 && t->nactions == 2, "model truncated after 2 actions");
	tap_ok(last && last->op == CS_OP_LOCK && last->obj == 0xb && last->seq == 4,
	       "... the last action is the latest event, not the last stored");
	tap_ok(!thread_model_action_waits_for_good(last),
	       "... which waits for nothing (the last stored, the re-lock request, would)");
	tap_ok(t->nheld == 2 && t->held[0] == 0xa && t->held[1] == 0xb, "holds M (outer) and b");
	tap_ok(t->held_site[0] == 0x10 && t->held_site[1] == 0x40,
	       "... taken at the outer lock's site and at b's");
	thread_model_free(&m);
}

/* Which last action means "waits for a lock for good" (deadlock analysis). */
static void test_waits_for_good(void)
{
	struct tm_action a = { .op = CS_OP_LOCK_REQ };

	tap_ok(thread_model_action_waits_for_good(&a), "a lock request waits for good");
	a.op = CS_OP_WRLOCK_REQ;
	tap_ok(thread_model_action_waits_for_good(&a), "a write-lock request too");
	a.flags = CS_EV_PARKED | CS_EV_NOWAIT;
	a.op = CS_OP_LOCK_REQ;
	tap_ok(!thread_model_action_waits_for_good(&a), "a trylock or timed request never does");
	a.flags = 0;
	a.op = CS_OP_TRYLOCK_FAIL;
	tap_ok(!thread_model_action_waits_for_good(&a), "a failed trylock does not");
	a.op = CS_OP_LOCK;
	tap_ok(!thread_model_action_waits_for_good(&a), "an acquisition does not");
}

int main(void)
{
	tap_plan(62);
	test_lockset();
	test_thread_model();
	test_truncated_model();
	test_sites();
	test_unknown_files();
	test_ids_and_keys();
	test_waits_for_good();
	return tap_done();
}
