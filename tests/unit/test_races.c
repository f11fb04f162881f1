// SPDX-License-Identifier: MIT
/*
 * Race warnings (races.h): an unprotected counter incremented by two
 * threads gives lockset-violation warnings naming the variable, both
 * sites, both threads and the locks held; the same counter under one mutex,
 * an atomic (lock-prefixed) counter, fork/join-ordered accesses and
 * different-lock accesses are checked too.
 */
#include "coverage/races.h"
#include "tap.h"
#include "lib/util.h"

enum { R = CS_OP_READ, W = CS_OP_WRITE, RW = CS_OP_RW };
enum { MAIN = 1, T2 = 2, T3 = 3, CNT = 1, M = 5, M2 = 6 };

static struct race_detector *rd;
static struct cov_lockset held[8];

static void ev(uint32_t t, unsigned op, uint32_t site, uint32_t obj)
{
	struct cov_event e = { .thread = t, .op = op, .site = site, .obj = obj, .held = held[t] };
	struct race_verdict v;

	race_detector_feed(rd, &e, &v);
	if (cov_op_acquires(op))
		cov_lockset_add(&held[t], obj);
	else if (cov_op_releases(op))
		cov_lockset_del(&held[t], obj);
}

/* main: cnt = 0; create t2, t3; join both; read cnt. */
static void prologue(void)
{
	memset(held, 0, sizeof(held));
	race_detector_run_begin(rd);
	ev(MAIN, W, 1, CNT);
	ev(MAIN, CS_OP_CREATE, 2, T2);
	ev(MAIN, CS_OP_CREATE, 3, T3);
}

static void epilogue(void)
{
	ev(MAIN, CS_OP_JOIN, 4, T2);
	ev(MAIN, CS_OP_JOIN, 5, T3);
	ev(MAIN, R, 6, CNT);
}

static int has_warning(const char *want)
{
	char buf[160];

	for (size_t i = 0; i < race_warning_count(rd); i++)
		if (!strcmp(race_warning_fmt(race_warning_get(rd, i), buf, sizeof(buf)), want))
			return 1;
	return 0;
}

static void dump(void)
{
	char buf[160];

	for (size_t i = 0; i < race_warning_count(rd); i++)
		tap_diag("  %s", race_warning_fmt(race_warning_get(rd, i), buf, sizeof(buf)));
}

int main(void)
{
	const struct race_warning *w;

	tap_plan(15);
	rd = race_detector_new();

	/* Unprotected counter++ in two threads, interleaved R R W W. */
	prologue();
	ev(T2, R, 10, CNT);
	ev(T3, R, 10, CNT);
	ev(T2, W, 11, CNT);
	ev(T3, W, 11, CNT);
	epilogue();
	tap_is_int(race_warning_count(rd), 2, "unprotected counter: two warnings");
	tap_ok(has_warning("race v1: t3 R s10 {} vs t2 W s11 {}") &&
		       has_warning("race v1: t2 W s11 {} vs t3 W s11 {}"),
	       "warnings name the variable, both sites, both threads, the locks held");
	if (race_warning_count(rd) != 2)
		dump();
	w = race_warning_get(rd, 0);
	tap_ok(w && w->var == CNT && w->first.thread != w->second.thread,
	       "warning struct: variable and two distinct threads");

	/* Run it again: warnings are kept across runs and not duplicated. */
	prologue();
	ev(T2, R, 10, CNT);
	ev(T3, R, 10, CNT);
	ev(T2, W, 11, CNT);
	ev(T3, W, 11, CNT);
	epilogue();
	tap_is_int(race_warning_count(rd), 2,
		   "same races in a second run: still 2 distinct warnings");
	race_detector_free(rd);

	/* The same counter under one mutex: no warning. */
	rd = race_detector_new();
	prologue();
	ev(T2, CS_OP_LOCK, 20, M);
	ev(T2, R, 10, CNT);
	ev(T2, W, 11, CNT);
	ev(T2, CS_OP_UNLOCK, 21, M);
	ev(T3, CS_OP_LOCK, 20, M);
	ev(T3, R, 10, CNT);
	ev(T3, W, 11, CNT);
	ev(T3, CS_OP_UNLOCK, 21, M);
	epilogue();
	tap_is_int(race_warning_count(rd), 0,
		   "locked counter (init before create, read after join): no warning");

	/* Atomic increments (lock add): no warning. */
	prologue();
	ev(T2, RW, 12, CNT);
	ev(T3, RW, 12, CNT);
	ev(T2, RW, 12, CNT);
	epilogue();
	tap_is_int(race_warning_count(rd), 0, "atomic RMW counter: no warning");

	/* Each thread under its own lock: a lockset violation. */
	prologue();
	ev(T2, CS_OP_LOCK, 22, M);
	ev(T2, W, 11, CNT);
	ev(T3, CS_OP_LOCK, 23, M2);
	ev(T3, W, 13, CNT);
	ev(T3, CS_OP_UNLOCK, 24, M2);
	ev(T2, CS_OP_UNLOCK, 25, M);
	epilogue();
	tap_is_int(race_warning_count(rd), 1, "different locks: one warning");
	tap_ok(has_warning("race v1: t2 W s11 {l5} vs t3 W s13 {l6}"), "it shows both locksets");
	if (race_warning_count(rd) != 1)
		dump();

	/* Condition-variable hand-off orders the accesses: no warning. */
	race_detector_free(rd);
	rd = race_detector_new();
	prologue();
	ev(T2, W, 30, CNT);
	ev(T2, CS_OP_COND_SIGNAL, 31, 9);
	ev(T3, CS_OP_COND_WAKE, 32, 9);
	ev(T3, R, 33, CNT);
	epilogue();
	tap_is_int(race_warning_count(rd), 0,
		   "signal -> wake orders a write before a read: no warning");
	race_detector_free(rd);

	/* A barrier (one event, at its entry) orders what each party did
	 * before it before what the others do after it, whichever party's
	 * entry comes first: T3 enters first, T2 writes and enters, T3 reads. */
	enum { B = 7, Y = 2 };
	rd = race_detector_new();
	prologue();
	ev(T3, CS_OP_BARRIER, 50, B);
	ev(T2, W, 51, CNT);
	ev(T2, CS_OP_BARRIER, 50, B);
	ev(T3, R, 52, CNT);
	ev(T2, R, 52, CNT);
	epilogue();
	tap_is_int(race_warning_count(rd), 0,
		   "a barrier orders a write before it and a read after it: no warning");
	if (race_warning_count(rd))
		dump();
	/* Rounds: T2 leaves the barrier, writes Y and enters its next
	 * generation before T3 did anything after the first: T3's read of Y
	 * is not ordered after that write. */
	prologue();
	ev(T2, CS_OP_BARRIER, 50, B);
	ev(T3, CS_OP_BARRIER, 50, B);
	ev(T2, W, 53, Y);
	ev(T2, CS_OP_BARRIER, 50, B);
	ev(T3, R, 54, Y);
	ev(T3, CS_OP_BARRIER, 50, B);
	ev(T2, R, 55, Y);
	epilogue();
	tap_is_int(race_warning_count(rd), 1,
		   "a write in one round and a read in the same round of the other party: a race");
	tap_ok(has_warning("race v2: t2 W s53 {} vs t3 R s54 {}"),
	       "... on Y, the write against the read; the read in the next round is ordered");
	if (race_warning_count(rd) != 1)
		dump();
	race_detector_free(rd);

	/* cov_access_events: a plain read-modify-write (add [x], 1: not
	 * atomic) is its read, then its write; a locked one stays one RW. */
	{
		struct cov_event a = { .thread = T2, .op = RW, .site = 40, .obj = CNT }, out[2];
		size_t n = cov_access_events(&a, true, out);

		tap_ok(n == 2 && out[0].op == R && out[1].op == W && out[0].site == 40 &&
			       out[1].obj == CNT && out[1].thread == T2,
		       "a plain RMW: a read, then a write, same thread, site and variable");
		n = cov_access_events(&a, false, out);
		tap_ok(n == 1 && out[0].op == RW, "a lock-prefixed RMW: one RW");
		/* Two threads' plain increments interleaved R R W W race; the
		 * same as locked RMWs do not. */
		rd = race_detector_new();
		prologue();
		for (uint32_t t = T2; t <= T3; t++) {
			a.thread = t;
			n = cov_access_events(&a, true, out);
			ev(t, out[0].op, 40, CNT);
		}
		for (uint32_t t = T2; t <= T3; t++)
			ev(t, W, 40, CNT);
		epilogue();
		tap_ok(race_warning_count(rd) > 0, "split plain increments race");
		race_detector_free(rd);
	}
	return tap_done();
}
