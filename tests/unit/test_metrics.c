// SPDX-License-Identifier: MIT
/*
 * Coverage-task producers (ALGORITHMS.md sections 3-5) on hand-written
 * event streams: LP needs dependence, ConcurPairs, Avio* (the four
 * unserializable cases, serializable ones and the last-interleaver rule),
 * Eraser* state machine, GoldiLock-SC states and WGoldiLockSC, HBPair*,
 * GoodLock* with a lock-order inversion, Sync, function pairs with the
 * MPL grouping and S(p) of seed 002, and the cs_event converter.
 */
#include <errno.h>
#include <stdarg.h>

#include "lib/json.h"
#include "coverage/metrics.h"
#include "coverage/races.h"
#include "tap_taskset.h"
#include "lib/array_size.h"

static struct cov_event_conv conv;
static struct cov_metrics *M;

/* Identity mappers: the numbers written in a test are the ids in keys. */
static uint32_t id_thread(void *ctx, uint32_t tid)
{
	return tid;
}

static uint32_t id_site(void *ctx, uint64_t a)
{
	return (uint32_t)a;
}

static uint32_t id_var(void *ctx, uint64_t a, uint32_t size)
{
	return (uint32_t)a;
}

/* Locks 1001, 1002, ... share id 1, as two heap locks first used at one
 * site do (run/access.c cb_sync). */
static uint32_t id_sync(void *ctx, uint64_t a)
{
	return (uint32_t)(a >= 1000 ? a / 1000 : a);
}

static uint32_t func_of_site(void *ctx, uint64_t a)
{
	return (uint32_t)(a / 100); /* site 105 is in function 1 */
}

static void fresh(void)
{
	metrics_free(M);
	cov_event_conv_free(&conv);
	cov_event_conv_init(&conv);
	conv.thread_id = id_thread;
	conv.site_id = id_site;
	conv.var_id = id_var;
	conv.sync_id = id_sync;
	conv.func_id = func_of_site;
	M = metrics_new(0);
	metrics_run_begin(M);
}

static void evf(uint32_t tid, unsigned op, uint32_t site, uint32_t obj, unsigned flags)
{
	struct cs_event e = { .tid = tid, .op = op, .site = site, .obj = obj, .flags = flags };
	struct cov_event c;

	if (cov_event_from_cs(&conv, &e, &c))
		tap_diag("converter rejected op %u", op);
	else
		metrics_feed(M, &c);
}

static void ev(uint32_t tid, unsigned op, uint32_t site, uint32_t obj)
{
	evf(tid, op, site, obj, 0);
}

static const struct cov_taskset *tasks(enum cov_metric m)
{
	return metrics_tasks(M, m);
}

static int set_is(enum cov_metric m, const char *const *want, size_t n, const char *what)
{
	return tap_taskset_is(tasks(m), want, n, what);
}

enum { R = CS_OP_READ, W = CS_OP_WRITE };

static void test_lp_concurpairs(void)
{
	static const char *const lp[] = { "s1 s2", "s6 s7" };
	static const char *const cp[] = { "s1 s2 switch", "s2 s3 same", "s3 s4 switch",
					  "s4 s5 same",	  "s5 s6 same", "s6 s7 switch" };

	fresh();
	ev(1, W, 1, 1); /* T1 W x                              */
	ev(2, R, 2, 1); /* T2 R x: dependent, switch -> LP     */
	ev(2, R, 3, 2); /* same thread                         */
	ev(1, R, 4, 2); /* switch, but R/R: not dependent      */
	ev(1, CS_OP_LOCK, 5, 9);
	ev(1, CS_OP_UNLOCK, 6, 9);
	ev(2, CS_OP_LOCK, 7, 9); /* switch, same lock -> LP             */
	set_is(COV_LP, lp, ARRAY_SIZE(lp), "LP: only switches between dependent actions");
	set_is(COV_CONCURPAIRS, cp, ARRAY_SIZE(cp),
	       "ConcurPairs: every consecutive pair with switch flag");
}

static void test_avio(void)
{
	static const char *const want[] = {
		"s1 s2 s3 v1 t1 t2", /* r/w/r */
		"s1 s2 s3 v2 t1 t2", /* w/w/r */
		"s1 s2 s3 v3 t1 t2", /* w/r/w */
		"s1 s2 s3 v4 t1 t2", /* r/w/w */
	};
	static const unsigned cases[4][3] = { { R, W, R }, { W, W, R }, { W, R, W }, { R, W, W } };
	unsigned table = 0;

	for (unsigned w1 = 0; w1 < 2; w1++)
		for (unsigned w3 = 0; w3 < 2; w3++)
			for (unsigned w2 = 0; w2 < 2; w2++)
				table |= metrics_avio_unserializable(w1, w3, w2)
					 << (w1 * 4 + w3 * 2 + w2);
	/* bits (w1 w3 w2): 010 r/w/r, 110 w/w/r, 101 w/r/w, 011 r/w/w */
	tap_is_int(table, (1 << 2) | (1 << 6) | (1 << 5) | (1 << 3),
		   "AVIO truth table: exactly 4 of 8 cases");

	fresh();
	for (unsigned v = 0; v < 4; v++) {
		ev(1, cases[v][0], 1, v + 1); /* a1 */
		ev(2, cases[v][1], 3, v + 1); /* a3, remote */
		ev(1, cases[v][2], 2, v + 1); /* a2 */
	}
	set_is(COV_AVIO, want, 4,
	       "Avio*: the four unserializable cases, (pl1, pl2, pl3, var, t1, t2)");

	fresh();
	ev(1, R, 1, 5);
	ev(2, R, 3, 5);
	ev(1, W, 2, 5); /* r/r/w: serializable */
	ev(1, W, 4, 6);
	ev(2, W, 5, 6);
	ev(1, W, 6, 6); /* w/w/w: serializable */
	ev(1, R, 7, 7);
	ev(2, W, 8, 7);
	ev(2, R, 9, 7);	 /* the LAST interleaving access is a read */
	ev(1, R, 10, 7); /* r/r/r with respect to it: no task    */
	tap_is_int(tasks(COV_AVIO)->count, 0, "Avio*: serializable interleavings give no task");
}

static void test_eraser(void)
{
	static const char *const want[] = {
		"s1 v1 virgin - t1",	 "s2 v1 exclusive - t1",  "s3 v1 exclusive - t2",
		"s4 v1 exclusive' - t2", "s5 v1 exclusive' - t3", "s6 v1 shared {l7} t1",
		"s7 v1 shared {l7} t3",	 "s8 v1 race {} t1",
	};

	fresh();
	ev(1, W, 1, 1); /* virgin -> exclusive(t1)                 */
	ev(1, W, 2, 1); /* exclusive(t1)                           */
	ev(2, W, 3, 1); /* exclusive -> exclusive'(t2): hand-over  */
	ev(2, R, 4, 1); /* exclusive'(t2)                          */
	ev(3, CS_OP_LOCK, 50, 7);
	ev(3, R, 5, 1); /* exclusive' -> shared, C = {l7}          */
	ev(3, CS_OP_UNLOCK, 51, 7);
	ev(1, CS_OP_LOCK, 52, 7);
	ev(1, R, 6, 1); /* shared, C = {l7}                        */
	ev(1, CS_OP_UNLOCK, 53, 7);
	ev(3, W, 7, 1); /* write, no lock: C = {} -> race          */
	ev(1, R, 8, 1); /* race                                    */
	set_is(COV_ERASER, want, ARRAY_SIZE(want),
	       "Eraser*: virgin, exclusive, exclusive', shared, race");

	fresh();
	ev(1, W, 1, 2);
	ev(2, W, 2, 2); /* exclusive' (t2)                         */
	ev(3, CS_OP_LOCK, 50, 7);
	ev(3, W, 3, 2); /* exclusive' -> modified, C = {l7}        */
	ev(3, CS_OP_UNLOCK, 51, 7);
	ev(1, CS_OP_LOCK, 52, 7);
	ev(1, W, 4, 2); /* modified, C stays {l7}: no race         */
	ev(1, CS_OP_UNLOCK, 53, 7);
	tap_ok(cov_event_taskset_has(tasks(COV_ERASER), "s4 v2 modified {l7} t1") &&
		       !cov_event_taskset_has(tasks(COV_ERASER), "s4 v2 race {} t1"),
	       "Eraser*: consistently locked writes stay modified");
}

static void test_goldilock(void)
{
	static const char *const want[] = { "s1 v1 SCT", "s2 v1 SCT", "s4 v2 SCT",
					    "s7 v2 SCL", "s9 v3 SCT", "s11 v3 LS {t1,t3}",
					    "s12 v1 E" };

	fresh();
	ev(1, W, 1, 1); /* first access: SCT                  */
	ev(1, R, 2, 1); /* same thread: SCT                   */
	ev(1, CS_OP_LOCK, 3, 8);
	ev(1, W, 4, 2); /* SCT                                */
	ev(1, CS_OP_UNLOCK, 5, 8);
	ev(2, CS_OP_LOCK, 6, 8);
	ev(2, W, 7, 2); /* previous held l8, so do we: SCL    */
	ev(2, CS_OP_UNLOCK, 8, 8);
	ev(1, W, 9, 3);		    /* SCT                                */
	ev(1, CS_OP_CREATE, 10, 3); /* t1 creates t3                      */
	ev(3, R, 11, 3);	    /* no common lock; GLS {t1,t3}: LS    */
	ev(4, W, 12, 1);	    /* t4: unsynchronised: E              */
	set_is(COV_GOLDILOCK_SC, want, ARRAY_SIZE(want), "GoldiLock-SC: SCT, SCL, LS, E");
	/* 1+1+1+5+1+5+10 */
	tap_is_int(metrics_wgoldilock(M), 24, "WGoldiLockSC = 24 (weights 1/5/5/10)");
	tap_is_int(races_warning_count(metrics_races(M)), 2,
		   "the E task raced with two earlier accesses: 2 warnings");
}

/* The lock-order graph follows the locks, not their ids; a loss of
 * synchronization events empties the held sets. */
static void test_goodlock_instances(void)
{
	fresh();
	ev(1, CS_OP_LOCK, 1, 1001); /* t1: A (id 1), then M            */
	ev(1, CS_OP_LOCK, 2, 7);
	ev(1, CS_OP_UNLOCK, 3, 7);
	ev(1, CS_OP_UNLOCK, 4, 1001);
	ev(2, CS_OP_LOCK, 5, 7); /* t2: M, then B (id 1 too)          */
	ev(2, CS_OP_LOCK, 6, 1002);
	ev(2, CS_OP_UNLOCK, 7, 1002);
	tap_is_int(metrics_deadlocks(M)->count, 0,
		   "GoodLock: A->M and M->B, A and B one id: no cycle, no warning");
	ev(2, CS_OP_LOCK, 8, 1001); /* M, then A: A->M's reverse        */
	ev(2, CS_OP_UNLOCK, 9, 1001);
	ev(2, CS_OP_UNLOCK, 10, 7);
	tap_ok(cov_event_taskset_has(metrics_deadlocks(M), "deadlock l1 l7") &&
		       metrics_deadlocks(M)->count == 1,
	       "... M->A by t2 closes A->M: one warning, named by the ids");

	fresh();
	ev(1, CS_OP_LOCK, 1, 1001); /* t1 holds A and B (one id)        */
	ev(1, CS_OP_LOCK, 2, 1002);
	ev(1, CS_OP_UNLOCK, 3, 1001); /* B still held                   */
	ev(1, CS_OP_LOCK, 4, 9);      /* B->C                           */
	ev(1, CS_OP_UNLOCK, 5, 9);
	ev(1, CS_OP_UNLOCK, 6, 1002);
	ev(2, CS_OP_LOCK, 7, 9); /* C->B                              */
	ev(2, CS_OP_LOCK, 8, 1002);
	tap_ok(cov_event_taskset_has(metrics_deadlocks(M), "deadlock l1 l9"),
	       "a release lets go of its own lock only: B, still held, orders B->C");

	fresh();
	ev(1, CS_OP_LOCK, 1, 5); /* its release is lost              */
	metrics_sync_lost(M);
	ev(1, CS_OP_LOCK, 2, 6);
	ev(1, CS_OP_UNLOCK, 3, 6);
	ev(2, CS_OP_LOCK, 4, 6);
	ev(2, CS_OP_LOCK, 5, 5);
	tap_is_int(metrics_deadlocks(M)->count, 0,
		   "after lost events no lock counts as held: no 5->6 edge, no warning");
}

static void test_hbpair_goodlock_sync(void)
{
	static const char *const hb[] = { "s5 s6 l8 t1 t2", "s10 s20 t3 t1 t3", "s1 s30 v1 t1 t2",
					  "s21 s22 t3 t3 t1" };
	static const char *const gl[] = { "s40 s41 l1 l2 t1", "s43 s44 l2 l1 t2" };

	fresh();
	ev(1, W, 1, 1);
	ev(1, CS_OP_LOCK, 4, 8);
	ev(1, CS_OP_UNLOCK, 5, 8);
	ev(2, CS_OP_LOCK, 6, 8); /* unlock -> lock                    */
	ev(2, CS_OP_UNLOCK, 7, 8);
	ev(1, CS_OP_CREATE, 10, 3);
	ev(3, CS_OP_START, 20, 3); /* create -> start                   */
	ev(2, R, 30, 1);	   /* reads-from t1's write at s1       */
	ev(3, CS_OP_EXIT, 21, 3);
	ev(1, CS_OP_JOIN, 22, 3); /* exit -> join                      */
	ev(1, R, 31, 1);	  /* own write: no pair                */
	set_is(COV_HBPAIR, hb, ARRAY_SIZE(hb),
	       "HBPair*: unlock/lock, create/start, reads-from, exit/join");

	ev(1, CS_OP_LOCK, 40, 1);
	ev(1, CS_OP_LOCK_REQ, 41, 2);
	ev(1, CS_OP_LOCK, 41, 2); /* request already counted           */
	ev(1, CS_OP_UNLOCK, 42, 2);
	ev(1, CS_OP_UNLOCK, 42, 1);
	ev(2, CS_OP_LOCK, 43, 2);
	ev(2, CS_OP_LOCK, 44, 1); /* acquisition-only probe: a request */
	set_is(COV_GOODLOCK, gl, ARRAY_SIZE(gl),
	       "GoodLock*: nested acquisitions (pl1, pl2, l1, l2, t)");
	tap_ok(cov_event_taskset_has(metrics_deadlocks(M), "deadlock l1 l2") &&
		       metrics_deadlocks(M)->count == 1,
	       "GoodLock: l1->l2 by t1 and l2->l1 by t2 is one deadlock warning");

	ev(2, CS_OP_UNLOCK, 45, 1);
	ev(2, CS_OP_UNLOCK, 46, 2);
	ev(1, CS_OP_LOCK, 47, 5);
	evf(2, CS_OP_LOCK, 48, 5, CS_EV_BLOCKED);
	tap_ok(cov_event_taskset_has(tasks(COV_SYNC), "s47 visited") &&
		       cov_event_taskset_has(tasks(COV_SYNC), "s48 blocked") &&
		       cov_event_taskset_has(tasks(COV_SYNC), "s47 blocking") &&
		       !cov_event_taskset_has(tasks(COV_SYNC), "s48 visited"),
	       "Sync: visited, blocked, and blocking for the holder's site");
}

static void test_fpairs(void)
{
	struct fpair_table *t = metrics_fpair_table_new();
	struct cov_event e = { 0 };
	uint32_t f, g;
	uint64_t r, c;
	bool seq_ok = true;
	/* Expected picks, worked out by hand (see the comment below). */
	static const uint32_t picks[][2] = { { 1, 1 }, { 1, 2 }, { 1, 3 }, { 1, 4 }, { 2, 3 },
					     { 2, 4 }, { 3, 4 }, { 4, 4 }, { 1, 1 }, { 1, 3 } };
	static const bool covered[] = { true, false, true, true, true, true, true, false, false };

	/* f1: W v1 {}; f2: R v1 {l1}; f3: W v2 {l2}; f4: R v2 {l2}, R v3 {} */
	e.op = W, e.func = 1, e.obj = 1;
	metrics_fpair_profile_add(t, &e);
	e.op = R, e.func = 2, e.obj = 1, e.held.n = 1, e.held.id[0] = 1;
	metrics_fpair_profile_add(t, &e);
	e.op = W, e.func = 3, e.obj = 2, e.held.id[0] = 2;
	metrics_fpair_profile_add(t, &e);
	e.op = R, e.func = 4, e.obj = 2;
	metrics_fpair_profile_add(t, &e);
	e.op = R, e.func = 4, e.obj = 3, e.held.n = 0;
	metrics_fpair_profile_add(t, &e);

	tap_is_int(metrics_fpair_group(t), 8,
		   "C(4,2)+4 = 10 pairs, 2 dropped (always a common lock)");
	tap_ok(metrics_fpair_group_of(t, 1, 1) == FPAIR_HIGH &&
		       metrics_fpair_group_of(t, 2, 1) == FPAIR_HIGH,
	       "high: (f1,f1) MPL_WW {}∩{}, (f1,f2) MPL_WR {l1} vs {}");
	tap_ok(metrics_fpair_group_of(t, 2, 2) == FPAIR_DROPPED &&
		       metrics_fpair_group_of(t, 3, 3) == FPAIR_DROPPED,
	       "dropped: (f2,f2) always l1, (f3,f3) always l2");
	tap_ok(metrics_fpair_group_of(t, 3, 4) == FPAIR_LOW &&
		       metrics_fpair_group_of(t, 1, 3) == FPAIR_LOW &&
		       metrics_fpair_group_of(t, 4, 4) == FPAIR_LOW,
	       "low: (f3,f4) W and R both under l2; no common variable; reads only");
	tap_ok(metrics_fpair_score(1, 0) == 1 && metrics_fpair_score(2, 0) == 4 &&
		       metrics_fpair_score(2, 1) == 2 && metrics_fpair_score(3, 1) == 6 &&
		       metrics_fpair_score(3, 3) == 3,
	       "S(p) = max(|r-c|,1)*r: 1, 4, 2, 6, 3");
	/* High group first (both S=1, order by f,g), then the untried low
	 * pairs, then all by lowest S: after the first 8 attempts (1,1) has
	 * r=2,c=1 (S=2), ties at S=2 go to the smaller pair: (1,1); it fails
	 * again (r=3,c=1: S=6), so (1,3) (S=2) is next. */
	for (size_t i = 0; i < ARRAY_SIZE(picks); i++) {
		if (metrics_fpair_next(t, &f, &g) || f != picks[i][0] || g != picks[i][1]) {
			tap_diag("pick %zu: got (f%u,f%u), want (f%u,f%u)", i, f, g, picks[i][0],
				 picks[i][1]);
			seq_ok = false;
			break;
		}
		if (i < ARRAY_SIZE(covered))
			metrics_fpair_record(t, f, g, covered[i]);
	}
	tap_ok(seq_ok, "metrics_fpair_next: high group, then untried low, then lowest S(p)");
	tap_ok(!metrics_fpair_counts(t, 1, 1, &r, &c) && r == 3 && c == 1, "(f1,f1): r=3, c=1");
	/* A grown profile (f5 writes v1 with no lock): grouping again keeps
	 * the attempts of the pairs that were there and adds the new ones. */
	e.op = W, e.func = 5, e.obj = 1, e.held.n = 0;
	metrics_fpair_profile_add(t, &e);
	tap_is_int(metrics_fpair_group(t), 13, "regrouped: 15 pairs, the same 2 dropped");
	tap_ok(!metrics_fpair_counts(t, 1, 1, &r, &c) && r == 3 && c == 1 &&
		       !metrics_fpair_counts(t, 1, 5, &r, &c) && r == 1 && c == 0 &&
		       metrics_fpair_group_of(t, 1, 5) == FPAIR_HIGH,
	       "... (f1,f1) keeps r=3, c=1; the new (f1,f5) is high and untried");
	metrics_fpair_table_free(t);

	/* Coverage: functions running at the same time in two threads. */
	fresh();
	ev(1, W, 105, 1); /* f1 */
	ev(2, R, 207, 1); /* f2 while t1 is in f1 */
	ev(2, CS_OP_EXIT, 208, 2);
	ev(3, R, 305, 1); /* f3 while t1 in f1; t2 exited */
	tap_ok(cov_event_taskset_has(tasks(COV_FPAIR), "f1 f2") &&
		       cov_event_taskset_has(tasks(COV_FPAIR), "f1 f3") &&
		       tasks(COV_FPAIR)->count == 2,
	       "function pairs: (f1,f2), (f1,f3); none with an exited thread");
}

static void test_converter(void)
{
	struct cov_event_conv c;
	struct cs_event e = { .tid = 4242, .op = CS_OP_LOCK, .site = 0x401000, .obj = 0x7fff1000 };
	struct cov_event out;
	char buf[64];

	cov_event_conv_init(&c);
	cov_event_from_cs(&c, &e, &out);
	tap_ok(out.thread == 1 && out.site == 1 && out.obj == 1 && out.held.n == 0,
	       "converter: dense ids from 1; lockset(p) excludes the lock being taken");
	e.op = CS_OP_WRITE, e.site = 0x401008, e.obj = 0x601040, e.arg = 4;
	cov_event_from_cs(&c, &e, &out);
	tap_is_str(cov_event_lockset_fmt(&out.held, buf, sizeof(buf)), "{l1}",
		   "access under the lock: held {l1}");
	tap_ok(out.site == 2 && out.obj == 1, "variables and sync objects are separate id spaces");
	e.op = CS_OP_UNLOCK, e.obj = 0x7fff1000;
	cov_event_from_cs(&c, &e, &out);
	e.op = CS_OP_READ, e.obj = 0x601040, e.tid = 4243;
	cov_event_from_cs(&c, &e, &out);
	tap_ok(out.thread == 2 && out.held.n == 0, "after unlock, another thread holds nothing");
	e.op = CS_OP_NONE;
	tap_is_int(cov_event_from_cs(&c, &e, &out), -ENOENT, "CS_OP_NONE is rejected");
	e.op = CS_OP_PROC_EXIT, e.obj = 4242;
	tap_is_int(cov_event_from_cs(&c, &e, &out), -ENOENT,
		   "CS_OP_PROC_EXIT (a decision point only) is no coverage event");
	e.op = CS_OP_STDIO, e.obj = 0x6000, e.arg = CS_FN_FPRINTF;
	tap_is_int(cov_event_from_cs(&c, &e, &out), -ENOENT,
		   "CS_OP_STDIO (a decision point only) is no coverage event");
	cov_event_conv_free(&c);
	tap_is_int(metrics_metric_parse("goldilock-sc"), COV_GOLDILOCK_SC, "metric names parse");
}

static void test_json(void)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json j;

	fresh();
	ev(1, W, 1, 1);
	ev(2, W, 2, 1); /* unsynchronised: one race warning */
	json_init(&j, f, false);
	metrics_json(M, &j, NULL, true);
	json_end(&j);
	fclose(f);
	tap_ok(strstr(buf, "\"map\":{\"tasks\":1,\"keys\":[\"p3 v1 s1 s2\"]}") != NULL &&
		       strstr(buf, "\"goldilock-sc\":{\"tasks\":2") != NULL &&
		       strstr(buf, "\"wgoldilock_sc\":11") != NULL,
	       "JSON: per-metric tasks and keys, WGoldiLockSC");
	tap_ok(strstr(buf, "\"race_warnings\":[{\"var\":1,\"first\":{\"thread\":1,\"site\":1,"
			   "\"op\":\"W\",\"locks\":[]}") != NULL,
	       "JSON: race warning with variable, threads, sites, locks");
	if (!strstr(buf, "race_warnings"))
		tap_diag("%s", buf);
	free(buf);
}

int main(void)
{
	tap_plan(2 + 3 + 2 + 3 + 4 + 10 + 8 + 2 + 4);
	test_lp_concurpairs();
	test_avio();
	test_eraser();
	test_goldilock();
	test_hbpair_goodlock_sync();
	test_goodlock_instances();
	test_fpairs();
	test_converter();
	test_json();
	metrics_free(M);
	cov_event_conv_free(&conv);
	return tap_done();
}
