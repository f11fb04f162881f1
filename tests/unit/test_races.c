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
 * of sites, synchronization events lost (races_sync_lost). Last, the lazy
 * GoldiLocks update against an eager reference written here: the same
 * seeded random event streams (locks, condition variables, semaphores,
 * create and join, barriers, atomics; 12 threads, 48 variables) give the
 * same verdict and GLS text at every access, with rule logs small enough
 * to be trimmed all the time and the default one trimmed by a long stream.
 */
#include "coverage/races.h"
#include "lib/array_size.h"
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

/* ---- the lazy GoldiLocks update against the eager rules ----------------------------- */

/* The eager update (races.c before 2026-11-28: every sync event applies its
 * rule "if x in GLS then add y" to every live record at once), written
 * again here as the reference for the lazy one. A GLS is a bitmap over
 * threads, sync objects, atomic variables and barrier elements, in the
 * order of races.c's element encoding, so that its text comes out sorted
 * the same way. */
enum { DT = 12, DS = 12, DV = 48, DB = 3, DHOT = 6, DCOLD = 8 };
enum { E_THREAD = 0, E_SYNC = 32, E_VAR = 64, E_BARRIER = 128, E_BITS = 192 };

struct eset {
	uint64_t w[E_BITS / 64];
};

struct erec {
	uint32_t thread;
	unsigned op;
	struct cov_lockset held;
	struct eset gls;
};

struct evar {
	bool has_write;
	struct erec write;
	struct erec reads[DT + 1];
	uint32_t nreads;
};

static struct eager {
	struct evar vars[DV + 1];
	struct {
		uint32_t elem, obj; /* elem: E_BARRIER + k, or 0 */
	} bacq[DT + 1];
	uint32_t bopen[DB + 1]; /* 0: no generation open */
	uint32_t bnext;
	uint64_t rules; /* rules applied since the start of the stream */
} eg;

static bool eset_has(const struct eset *s, uint32_t e)
{
	return s->w[e / 64] >> (e % 64) & 1;
}

static void eager_rule(uint32_t x, uint32_t y)
{
	eg.rules++;
	for (uint32_t i = 1; i <= DV; i++) {
		struct evar *v = &eg.vars[i];

		if (v->has_write && eset_has(&v->write.gls, x))
			v->write.gls.w[y / 64] |= 1ULL << (y % 64);
		for (uint32_t j = 0; j < v->nreads; j++)
			if (eset_has(&v->reads[j].gls, x))
				v->reads[j].gls.w[y / 64] |= 1ULL << (y % 64);
	}
}

static void eager_run_begin(void)
{
	uint64_t rules = eg.rules;

	memset(&eg, 0, sizeof(eg));
	eg.rules = rules;
}

/* races.c's gls_fmt: a barrier element prints as 'v', the text is cut at
 * the buffer's end. */
static void eset_fmt(const struct eset *s, char *buf, size_t len)
{
	size_t off = snprintf(buf, len, "{");
	uint32_t i = 0;

	for (uint32_t e = 0; e < E_BITS && off < len; e++) {
		char k = e < E_SYNC ? 't' : e < E_VAR ? 'l' : 'v';
		uint32_t id = e < E_SYNC      ? e
			      : e < E_VAR     ? e - E_SYNC
			      : e < E_BARRIER ? e - E_VAR
					      : e - E_BARRIER;

		if (!eset_has(s, e))
			continue;
		off += snprintf(buf + off, len - off, "%s%c%u", i++ ? "," : "", k, id);
	}
	if (off < len)
		snprintf(buf + off, len - off, "}");
}

static enum cov_goldi_state eager_judge(const struct erec *prev, const struct cov_event *cur)
{
	if (prev->thread == cur->thread)
		return GOLDI_SCT;
	if (cov_event_lockset_meets(&prev->held, &cur->held))
		return GOLDI_SCL;
	if (eset_has(&prev->gls, E_THREAD + cur->thread))
		return GOLDI_LS;
	for (uint32_t i = 0; i < cur->held.n; i++)
		if (eset_has(&prev->gls, E_SYNC + cur->held.id[i]))
			return GOLDI_LS;
	return GOLDI_E;
}

static void eager_check(const struct erec *prev, const struct cov_event *cur,
			struct race_verdict *out)
{
	enum cov_goldi_state s;

	if (prev->op == RW && cur->op == RW)
		return;
	s = eager_judge(prev, cur);
	if (s == GOLDI_LS && out->state < GOLDI_LS)
		eset_fmt(&prev->gls, out->gls, sizeof(out->gls));
	if (s > out->state)
		out->state = s;
}

static void erec_set(struct erec *r, const struct cov_event *ev)
{
	r->thread = ev->thread;
	r->op = ev->op;
	r->held = ev->held;
	memset(&r->gls, 0, sizeof(r->gls));
	r->gls.w[0] = 1ULL << ev->thread;
}

static void eager_access(const struct cov_event *ev, struct race_verdict *out)
{
	struct evar *v = &eg.vars[ev->obj];
	uint32_t j;

	memset(out, 0, sizeof(*out));
	out->state = GOLDI_SCT;
	if (ev->op == RW)
		eager_rule(E_VAR + ev->obj, E_THREAD + ev->thread);
	if (v->has_write)
		eager_check(&v->write, ev, out);
	if (cov_event_op_writes(ev->op))
		for (j = 0; j < v->nreads; j++)
			eager_check(&v->reads[j], ev, out);
	if (out->state != GOLDI_LS)
		out->gls[0] = '\0';
	if (cov_event_op_writes(ev->op)) {
		v->nreads = 0;
		erec_set(&v->write, ev);
		v->has_write = true;
	} else {
		for (j = 0; j < v->nreads && v->reads[j].thread != ev->thread; j++)
			;
		if (j == v->nreads)
			v->nreads++;
		erec_set(&v->reads[j], ev);
	}
	if (ev->op == RW)
		eager_rule(E_THREAD + ev->thread, E_VAR + ev->obj);
}

/* One event into the reference; 1 and *out for an access. */
static int eager_feed(const struct cov_event *ev, struct race_verdict *out)
{
	uint32_t t = ev->thread;

	if (eg.bacq[t].elem) { /* t left its barrier */
		uint32_t *open = &eg.bopen[eg.bacq[t].obj];

		eager_rule(eg.bacq[t].elem, E_THREAD + t);
		if (*open == eg.bacq[t].elem)
			*open = E_BARRIER + ((eg.bacq[t].elem - E_BARRIER) ^ 1);
		eg.bacq[t].elem = 0;
	}
	if (cov_event_op_is_access(ev->op)) {
		eager_access(ev, out);
		return 1;
	}
	if (cov_event_op_sync_acquires(ev->op))
		eager_rule(E_SYNC + ev->obj, E_THREAD + t);
	else if (cov_event_op_sync_releases(ev->op))
		eager_rule(E_THREAD + t, E_SYNC + ev->obj);
	else if (ev->op == CS_OP_CREATE)
		eager_rule(E_THREAD + t, E_THREAD + ev->obj);
	else if (ev->op == CS_OP_JOIN)
		eager_rule(E_THREAD + ev->obj, E_THREAD + t);
	else if (ev->op == CS_OP_BARRIER) {
		if (!eg.bopen[ev->obj])
			eg.bopen[ev->obj] = E_BARRIER + 2 * eg.bnext++;
		eager_rule(E_THREAD + t, eg.bopen[ev->obj]);
		eg.bacq[t].elem = eg.bopen[ev->obj];
		eg.bacq[t].obj = ev->obj;
	}
	return 0;
}

static uint32_t rnd_x;
/* May random_event touch the last DCOLD variables and thread DT? */
static bool cold_vars;

static uint32_t rnd(uint32_t n)
{
	rnd_x ^= rnd_x << 13;
	rnd_x ^= rnd_x >> 17;
	rnd_x ^= rnd_x << 5;
	return rnd_x % n;
}

/* A random event of a program of DT threads: lock and unlock of DS / 2
 * mutexes (each held by one thread at most, its locksets kept), condition
 * signals and wakes, semaphore posts and waits, creates, joins, barriers,
 * events that are no sync edge, and reads, writes and atomic RMWs of DV
 * variables, most on DHOT hot ones. */
static struct cov_event random_event(struct cov_lockset *lheld, uint32_t *owner)
{
	uint32_t nt = cold_vars ? DT : DT - 1;
	struct cov_event e = { .thread = 1 + rnd(nt), .site = 1 + rnd(20) };
	uint32_t r = rnd(100), l = 1 + rnd(DS / 2);
	static const uint16_t other_sync[] = { CS_OP_COND_SIGNAL, CS_OP_COND_WAKE, CS_OP_SEM_POST,
					       CS_OP_SEM_WAIT };

	e.held = lheld[e.thread];
	if (r < 25 && owner[l] == e.thread) {
		e.op = CS_OP_UNLOCK;
		e.obj = l;
		owner[l] = 0;
		cov_event_lockset_del(&lheld[e.thread], l);
	} else if (r < 25 && !owner[l]) {
		e.op = CS_OP_LOCK;
		e.obj = l;
		owner[l] = e.thread;
		cov_event_lockset_add(&lheld[e.thread], l);
	} else if (r < 35) {
		e.op = other_sync[rnd(4)];
		e.obj = DS / 2 + 1 + rnd(DS / 2);
	} else if (r < 42) {
		e.op = rnd(2) ? CS_OP_CREATE : CS_OP_JOIN;
		e.obj = 1 + rnd(nt);
	} else if (r < 47) {
		e.op = CS_OP_BARRIER;
		e.obj = 1 + rnd(DB);
	} else if (r < 50) {
		e.op = rnd(2) ? CS_OP_LOCK_REQ : CS_OP_TRYLOCK_FAIL;
		e.obj = l;
	} else {
		uint32_t o = rnd(100);

		e.op = o < 50 ? R : o < 85 ? W : RW;
		e.obj = rnd(10) < 7 ? 1 + rnd(DHOT) : 1 + rnd(cold_vars ? DV : DV - DCOLD);
	}
	return e;
}

/* Feed `n` random events (seed `seed`) to a detector whose rule log holds
 * `limit` rules and to the reference; a new run now and then if `runs`.
 * The cold variables and thread DT are seen only in the first and last
 * 5,000 events: their records wait for the log's trimming, and the GLS of
 * one that thread DT made keeps only what the rules of the first events
 * added (no later rule names DT). 1 if every verdict and GLS
 * text matched; counts the states seen. */
static int lazy_vs_eager(uint32_t seed, size_t limit, size_t n, bool runs, size_t *seen)
{
	struct race_detector *d = races_new();
	struct cov_lockset lheld[DT + 1];
	uint32_t owner[DS + 1];
	int ok = 1;

	memset(lheld, 0, sizeof(lheld));
	memset(owner, 0, sizeof(owner));
	memset(&eg, 0, sizeof(eg));
	races_gls_log_limit(d, limit);
	rnd_x = seed * 2654435761u + 1;
	for (size_t i = 0; i < n && ok; i++) {
		struct cov_event e;
		struct race_verdict got, want;

		cold_vars = i < 5000 || i + 5000 >= n;
		e = random_event(lheld, owner);
		if (rnd(20000) == 0 && runs) {
			races_run_begin(d);
			eager_run_begin();
			memset(lheld, 0, sizeof(lheld));
			memset(owner, 0, sizeof(owner));
			continue;
		}
		if (races_feed(d, &e, &got) != eager_feed(&e, &want))
			ok = 0;
		else if (cov_event_op_is_access(e.op) &&
			 (got.state != want.state || strcmp(got.gls, want.gls))) {
			tap_diag("event %zu (t%u op %u v%u): lazy %s %s, eager %s %s", i, e.thread,
				 e.op, e.obj, races_goldi_state_name(got.state), got.gls,
				 races_goldi_state_name(want.state), want.gls);
			ok = 0;
		} else if (cov_event_op_is_access(e.op)) {
			seen[got.state]++;
		}
	}
	races_free(d);
	return ok;
}

static void lazy_tests(void)
{
	static const size_t limits[] = { 1, 3, 64, 1000, 0 };
	size_t seen[4] = { 0 };
	int ok;

	for (size_t k = 0; k < ARRAY_SIZE(limits); k++) {
		int ok = 1;

		for (uint32_t seed = 1; seed <= 4; seed++)
			ok &= lazy_vs_eager(seed + 10 * k, limits[k], 30000, true, seen);
		tap_ok(ok,
		       "lazy GoldiLocks = eager: 4 random streams of 30,000 events, a rule log "
		       "of %zu rules",
		       limits[k] ? limits[k] : (size_t)RACES_GLS_LOG_MAX);
	}
	/* One run long enough to trim the default log. */
	ok = lazy_vs_eager(99, 0, 1400000, false, seen);
	tap_ok(ok && eg.rules > RACES_GLS_LOG_MAX,
	       "... and one run of 1,400,000 events (%llu rules, the default log holds %u)",
	       (unsigned long long)eg.rules, RACES_GLS_LOG_MAX);
	tap_ok(seen[GOLDI_SCT] && seen[GOLDI_SCL] && seen[GOLDI_LS] > 1000 && seen[GOLDI_E],
	       "the streams judged accesses SCT %zu, SCL %zu, LS %zu, E %zu times", seen[0],
	       seen[1], seen[2], seen[3]);
}

int main(void)
{
	const struct race_warning *w;

	tap_plan(44);
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
	lazy_tests();
	return tap_done();
}
