// SPDX-License-Identifier: MIT
/*
 * Race warnings (races.h, hb.h): an unprotected counter incremented by two
 * threads gives warnings naming the variable, both sites, both threads and
 * the locks held; the same counter under one mutex, an atomic
 * (lock-prefixed) counter, fork/join-ordered accesses and different-lock
 * accesses are checked too. Then the happens-before detector on
 * hand-built sequences with addresses: a buffer handed through a locked
 * queue, a condition wait (which releases its mutex), semaphores, rwlock
 * sides, a heap block allocated again, bytes and elements of one granule,
 * release/acquire atomics and their plain partners, one warning per pair
 * of sites, synchronization events lost (races_sync_lost).
 */
#include "coverage/races.h"
#include "tap.h"

enum { R = CS_OP_READ, W = CS_OP_WRITE, RW = CS_OP_RW };
enum { MAIN = 1, T2 = 2, T3 = 3, CNT = 1, M = 5, M2 = 6 };

static struct race_detector *rd;
static struct cov_lockset held[8];

static void ev(uint32_t t, unsigned op, uint32_t site, uint32_t obj)
{
	struct cov_event e = { .thread = t, .op = op, .site = site, .obj = obj, .held = held[t] };
	struct race_verdict v;

	races_feed(rd, &e, &v);
	if (cov_event_op_acquires(op))
		cov_event_lockset_add(&held[t], obj);
	else if (cov_event_op_releases(op))
		cov_event_lockset_del(&held[t], obj);
}

/* main: cnt = 0; create t2, t3; join both; read cnt. */
static void prologue(void)
{
	memset(held, 0, sizeof(held));
	races_run_begin(rd);
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

	for (size_t i = 0; i < races_warning_count(rd); i++)
		if (!strcmp(races_warning_fmt(races_warning_get(rd, i), buf, sizeof(buf)), want))
			return 1;
	return 0;
}

static void dump(void)
{
	char buf[160];

	for (size_t i = 0; i < races_warning_count(rd); i++)
		tap_diag("  %s", races_warning_fmt(races_warning_get(rd, i), buf, sizeof(buf)));
}

/* ---- happens-before on events with addresses ---------------------------------------- */

static void sync_at(uint32_t t, unsigned op, uint64_t addr, uint64_t addr2)
{
	struct cov_event e = { .thread = t,
			       .op = op,
			       .site = 90,
			       .obj = (uint32_t)addr,
			       .held = held[t],
			       .addr = addr,
			       .addr2 = addr2 };
	struct race_verdict v;

	races_feed(rd, &e, &v);
}

static void acc_at(uint32_t t, unsigned op, uint32_t site, uint64_t addr, uint32_t size)
{
	struct cov_event e = { .thread = t,
			       .op = op,
			       .site = site,
			       .obj = 77,
			       .held = held[t],
			       .addr = addr,
			       .size = size };
	struct race_verdict v;

	races_feed(rd, &e, &v);
}

/* A fresh detector with main having created T2 and T3. */
static void hb_begin(void)
{
	races_free(rd);
	rd = races_new();
	memset(held, 0, sizeof(held));
	ev(MAIN, CS_OP_CREATE, 2, T2);
	ev(MAIN, CS_OP_CREATE, 3, T3);
}

enum {
	BUF = 0x10000,
	Q = 0x2000,
	CV = 0x2040,
	SEM = 0x2080,
	RWL = 0x20c0,
	FLAG = 0x3000,
	ONCE = 0x2100
};

/* T2 writes BUF under Q; T3's lock of Q is lost (reported to the
 * detector when report), its unlock seen; T3 reads BUF. */
static void lost_lock_stream(bool report)
{
	hb_begin();
	sync_at(T2, CS_OP_LOCK, Q, 0);
	acc_at(T2, W, 190, BUF, 8);
	sync_at(T2, CS_OP_UNLOCK, Q, 0);
	if (report)
		races_sync_lost(rd);
	sync_at(T3, CS_OP_UNLOCK, Q, 0);
	acc_at(T3, R, 191, BUF, 8);
}

static void hb_tests(void)
{
	/* A buffer handed from T2 to T3 through a locked queue: ordered. */
	hb_begin();
	acc_at(T2, W, 100, BUF, 8);
	sync_at(T2, CS_OP_LOCK, Q, 0);
	acc_at(T2, W, 101, Q + 8, 8); /* enqueue */
	sync_at(T2, CS_OP_UNLOCK, Q, 0);
	sync_at(T3, CS_OP_LOCK, Q, 0);
	acc_at(T3, R, 102, Q + 8, 8); /* dequeue */
	sync_at(T3, CS_OP_UNLOCK, Q, 0);
	acc_at(T3, R, 103, BUF, 8);
	acc_at(T3, W, 104, BUF, 8);
	tap_is_int(races_warning_count(rd), 0,
		   "a buffer handed through a locked queue: no warning (no common lock at the "
		   "accesses)");
	/* T2 touches it again without taking it back: a race. */
	acc_at(T2, R, 105, BUF, 8);
	tap_is_int(races_warning_count(rd), 1,
		   "... the producer reading it after the hand-off races");

	/* A condition wait releases its mutex at its entry. */
	hb_begin();
	sync_at(T2, CS_OP_LOCK, Q, 0);
	acc_at(T2, W, 110, BUF, 4);
	sync_at(T2, CS_OP_COND_WAIT, CV, Q);
	sync_at(T3, CS_OP_LOCK, Q, 0);
	acc_at(T3, R, 111, BUF, 4);
	sync_at(T3, CS_OP_COND_SIGNAL, CV, 0);
	sync_at(T3, CS_OP_UNLOCK, Q, 0);
	sync_at(T2, CS_OP_COND_WAKE, CV, Q);
	acc_at(T2, W, 112, BUF, 4);
	tap_is_int(races_warning_count(rd), 0,
		   "cond wait releases the mutex, the wake acquires it: no warning");

	/* sem post -> wait orders; without the wait it does not. */
	hb_begin();
	acc_at(T2, W, 120, BUF, 8);
	sync_at(T2, CS_OP_SEM_POST, SEM, 0);
	sync_at(T3, CS_OP_SEM_WAIT, SEM, 0);
	acc_at(T3, W, 121, BUF, 8);
	acc_at(T2, W, 122, BUF + 8, 8);
	acc_at(T3, R, 123, BUF + 8, 8);
	tap_is_int(races_warning_count(rd), 1,
		   "sem post -> wait orders the first write; a write after the post races");

	/* pthread_once: T2 runs the routine; T3 waits in the call and its
	 * return event comes before T2's (the stream order of two returns is
	 * timing); MAIN takes the fast path after. All read what the routine
	 * wrote: ordered. T2's write after its return is not ordered with
	 * T3's read. */
	hb_begin();
	sync_at(T2, CS_OP_ONCE_ENTER, ONCE, 0);
	sync_at(T3, CS_OP_ONCE_ENTER, ONCE, 0);
	acc_at(T2, W, 140, BUF, 8); /* the routine */
	sync_at(T3, CS_OP_ONCE, ONCE, 0);
	acc_at(T3, R, 141, BUF, 8);
	sync_at(MAIN, CS_OP_ONCE_ENTER, ONCE, 1); /* said done: the fast path */
	sync_at(MAIN, CS_OP_ONCE, ONCE, 0);
	acc_at(MAIN, R, 142, BUF, 8);
	sync_at(T2, CS_OP_ONCE, ONCE, 0);
	acc_at(T2, R, 143, BUF, 8);
	tap_is_int(races_warning_count(rd), 0,
		   "pthread_once: the routine is ordered before every caller's return, even "
		   "one whose return event comes first");
	acc_at(T2, W, 144, BUF + 8, 8);
	acc_at(T3, R, 145, BUF + 8, 8);
	tap_is_int(races_warning_count(rd), 1, "... a write after the return races");
	/* A fast-path caller's earlier write is not published by the once. */
	hb_begin();
	acc_at(T3, W, 146, BUF, 8);
	sync_at(T3, CS_OP_ONCE_ENTER, ONCE, 1);
	sync_at(T3, CS_OP_ONCE, ONCE, 0);
	sync_at(T2, CS_OP_ONCE_ENTER, ONCE, 1);
	sync_at(T2, CS_OP_ONCE, ONCE, 0);
	acc_at(T2, R, 147, BUF, 8);
	tap_is_int(races_warning_count(rd), 1,
		   "pthread_once: two fast-path callers are not ordered with each other");

	/* rwlock: readers are not ordered with each other, a writer is
	 * ordered after the readers before it. */
	hb_begin();
	sync_at(T2, CS_OP_RDLOCK, RWL, 0);
	acc_at(T2, R, 130, BUF, 8);
	acc_at(T2, W, 131, BUF + 8, 8); /* a write under a read lock */
	sync_at(T2, CS_OP_RWUNLOCK, RWL, 0);
	sync_at(T3, CS_OP_RDLOCK, RWL, 0);
	acc_at(T3, R, 132, BUF + 8, 8);
	sync_at(T3, CS_OP_RWUNLOCK, RWL, 0);
	tap_is_int(races_warning_count(rd), 1, "two read-lock holders are not ordered: a race");
	sync_at(T3, CS_OP_WRLOCK, RWL, 0);
	acc_at(T3, W, 133, BUF, 8);
	sync_at(T3, CS_OP_RWUNLOCK, RWL, 0);
	tap_is_int(races_warning_count(rd), 1, "a write lock is ordered after the readers");

	/* A heap block freed and allocated again is a new variable. */
	hb_begin();
	races_alloc(rd, BUF, 64);
	acc_at(T2, W, 140, BUF + 16, 8);
	races_alloc(rd, BUF, 32);
	acc_at(T3, W, 141, BUF + 16, 8);
	tap_is_int(races_warning_count(rd), 0, "a block allocated again: no warning");
	acc_at(T2, R, 142, BUF + 16, 8);
	tap_is_int(races_warning_count(rd), 1, "... its new life races as any variable");

	/* Synchronization events lost: T3's lock of Q never reached the
	 * stream (its unlock did: its sequence skipped). Reported, what came
	 * before is forgotten; accesses after the loss are judged as usual.
	 * Not reported, T3's read of what T2 wrote under Q races. */
	lost_lock_stream(true);
	tap_is_int(races_warning_count(rd), 0,
		   "an acquire lost and reported: the accesses before it are forgotten");
	acc_at(T2, W, 192, BUF + 8, 8);
	acc_at(T3, R, 193, BUF + 8, 8);
	tap_is_int(races_warning_count(rd), 1, "... the accesses after it still race");
	lost_lock_stream(false);
	tap_is_int(races_warning_count(rd), 1,
		   "the acquire lost and not reported: a warning the program does not have");

	/* Bytes: elements of one 8-byte granule and an overlap. */
	hb_begin();
	acc_at(T2, W, 150, BUF, 4);
	acc_at(T3, W, 151, BUF + 4, 4);
	acc_at(T2, W, 152, BUF + 9, 1);
	acc_at(T3, W, 153, BUF + 8, 1);
	tap_is_int(races_warning_count(rd), 0,
		   "different elements, even in one granule: no warning");
	acc_at(T3, R, 154, BUF + 2, 4);
	tap_is_int(races_warning_count(rd), 1, "overlapping bytes: a race");
	acc_at(T3, R, 155, BUF + 6, 4); /* crosses into the next granule: 152 */
	tap_is_int(races_warning_count(rd), 2, "an access across two granules checks both");

	/* Atomics: a lock-prefixed RMW publishes, a plain load is its
	 * acquire partner. */
	hb_begin();
	acc_at(T2, W, 160, BUF, 8);
	acc_at(T2, RW, 161, FLAG, 4); /* lock xchg */
	acc_at(T3, R, 162, FLAG, 4);  /* plain load of an atomic location */
	acc_at(T3, R, 163, BUF, 8);
	acc_at(T3, W, 164, FLAG, 4); /* plain store: a release, never a race */
	tap_is_int(races_warning_count(rd), 0,
		   "lock xchg then a plain load of the flag orders the payload: no warning");
	acc_at(T2, R, 165, BUF + 8, 8);
	acc_at(T3, W, 166, BUF + 8, 8);
	tap_is_int(races_warning_count(rd), 1, "a payload written after the flag races");

	/* One warning per pair of sites, whichever comes first, however
	 * often, on whichever element. */
	hb_begin();
	for (int i = 0; i < 4; i++) {
		acc_at(T2, W, 170, BUF + 8 * i, 8);
		acc_at(T3, R, 171, BUF + 8 * i, 8);
		acc_at(T3, R, 171, BUF + 64 + 8 * i, 8);
		acc_at(T2, W, 170, BUF + 64 + 8 * i, 8);
	}
	tap_is_int(races_warning_count(rd), 1, "a racing pair of sites: one warning");

	/* Join orders the child before the joiner; without it, a race. */
	hb_begin();
	acc_at(MAIN, W, 180, BUF, 8);
	ev(MAIN, CS_OP_CREATE, 4, 4);
	acc_at(4, R, 181, BUF, 8);
	acc_at(4, W, 182, BUF + 8, 8);
	acc_at(T2, W, 183, BUF + 16, 8);
	ev(MAIN, CS_OP_JOIN, 5, 4);
	acc_at(MAIN, R, 184, BUF + 8, 8);
	tap_is_int(races_warning_count(rd), 0, "create and join order parent and child");
	acc_at(MAIN, R, 185, BUF + 16, 8);
	tap_is_int(races_warning_count(rd), 1, "a thread not joined races");
	races_free(rd);
	rd = NULL;
}

int main(void)
{
	const struct race_warning *w;

	tap_plan(37);
	rd = races_new();

	/* Unprotected counter++ in two threads, interleaved R R W W. */
	prologue();
	ev(T2, R, 10, CNT);
	ev(T3, R, 10, CNT);
	ev(T2, W, 11, CNT);
	ev(T3, W, 11, CNT);
	epilogue();
	tap_is_int(races_warning_count(rd), 2, "unprotected counter: two warnings");
	tap_ok(has_warning("race v1: t3 R s10 {} vs t2 W s11 {}") &&
		       has_warning("race v1: t2 W s11 {} vs t3 W s11 {}"),
	       "warnings name the variable, both sites, both threads, the locks held");
	if (races_warning_count(rd) != 2)
		dump();
	w = races_warning_get(rd, 0);
	tap_ok(w && w->var == CNT && w->first.thread != w->second.thread,
	       "warning struct: variable and two distinct threads");

	/* Run it again: warnings are kept across runs and not duplicated. */
	prologue();
	ev(T2, R, 10, CNT);
	ev(T3, R, 10, CNT);
	ev(T2, W, 11, CNT);
	ev(T3, W, 11, CNT);
	epilogue();
	tap_is_int(races_warning_count(rd), 2,
		   "same races in a second run: still 2 distinct warnings");
	races_free(rd);

	/* The same counter under one mutex: no warning. */
	rd = races_new();
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
	tap_is_int(races_warning_count(rd), 0,
		   "locked counter (init before create, read after join): no warning");

	/* Atomic increments (lock add): no warning. */
	prologue();
	ev(T2, RW, 12, CNT);
	ev(T3, RW, 12, CNT);
	ev(T2, RW, 12, CNT);
	epilogue();
	tap_is_int(races_warning_count(rd), 0, "atomic RMW counter: no warning");

	/* Each thread under its own lock: a lockset violation. */
	prologue();
	ev(T2, CS_OP_LOCK, 22, M);
	ev(T2, W, 11, CNT);
	ev(T3, CS_OP_LOCK, 23, M2);
	ev(T3, W, 13, CNT);
	ev(T3, CS_OP_UNLOCK, 24, M2);
	ev(T2, CS_OP_UNLOCK, 25, M);
	epilogue();
	tap_is_int(races_warning_count(rd), 1, "different locks: one warning");
	tap_ok(has_warning("race v1: t2 W s11 {l5} vs t3 W s13 {l6}"), "it shows both locksets");
	if (races_warning_count(rd) != 1)
		dump();

	/* Condition-variable hand-off orders the accesses: no warning. */
	races_free(rd);
	rd = races_new();
	prologue();
	ev(T2, W, 30, CNT);
	ev(T2, CS_OP_COND_SIGNAL, 31, 9);
	ev(T3, CS_OP_COND_WAKE, 32, 9);
	ev(T3, R, 33, CNT);
	epilogue();
	tap_is_int(races_warning_count(rd), 0,
		   "signal -> wake orders a write before a read: no warning");
	races_free(rd);

	/* A barrier (one event, at its entry) orders what each party did
	 * before it before what the others do after it, whichever party's
	 * entry comes first: T3 enters first, T2 writes and enters, T3 reads. */
	enum { B = 7, Y = 2 };
	rd = races_new();
	prologue();
	ev(T3, CS_OP_BARRIER, 50, B);
	ev(T2, W, 51, CNT);
	ev(T2, CS_OP_BARRIER, 50, B);
	ev(T3, R, 52, CNT);
	ev(T2, R, 52, CNT);
	epilogue();
	tap_is_int(races_warning_count(rd), 0,
		   "a barrier orders a write before it and a read after it: no warning");
	if (races_warning_count(rd))
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
	tap_is_int(races_warning_count(rd), 1,
		   "a write in one round and a read in the same round of the other party: a race");
	tap_ok(has_warning("race v2: t2 W s53 {} vs t3 R s54 {}"),
	       "... on Y, the write against the read; the read in the next round is ordered");
	if (races_warning_count(rd) != 1)
		dump();
	races_free(rd);

	/* cov_event_access_events: a plain read-modify-write (add [x], 1: not
	 * atomic) is its read, then its write; a locked one stays one RW. */
	{
		struct cov_event a = { .thread = T2, .op = RW, .site = 40, .obj = CNT }, out[2];
		size_t n = cov_event_access_events(&a, true, out);

		tap_ok(n == 2 && out[0].op == R && out[1].op == W && out[0].site == 40 &&
			       out[1].obj == CNT && out[1].thread == T2,
		       "a plain RMW: a read, then a write, same thread, site and variable");
		n = cov_event_access_events(&a, false, out);
		tap_ok(n == 1 && out[0].op == RW, "a lock-prefixed RMW: one RW");
		/* Two threads' plain increments interleaved R R W W race; the
		 * same as locked RMWs do not. */
		rd = races_new();
		prologue();
		for (uint32_t t = T2; t <= T3; t++) {
			a.thread = t;
			n = cov_event_access_events(&a, true, out);
			ev(t, out[0].op, 40, CNT);
		}
		for (uint32_t t = T2; t <= T3; t++)
			ev(t, W, 40, CNT);
		epilogue();
		tap_ok(races_warning_count(rd) > 0, "split plain increments race");
	}
	hb_tests();
	return tap_done();
}
