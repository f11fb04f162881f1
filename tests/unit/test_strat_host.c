// SPDX-License-Identifier: MIT
/*
 * strat_host.c: a halt, and a halt at the end of the process. A thread
 * halted at a point goes on at the first note that every runnable thread
 * is parked; one halted at exit() (a noise configuration with ,xh) stays
 * while the note names another parked thread (it waits for its decision,
 * in the delay queue, or at a halt: it runs again), and goes once the
 * note names only halted exits (every other thread blocked or gone).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "concsched_abi.h"
#include "kernel/policy.h"
#include "run/strat_host.h"
#include "strategies/strategy.h"
#include "strategies/strategy_registry.h"
#include "tap.h"

struct owner {
	uint32_t went[16], resumed[16];
	size_t nwent, nresumed;
};

static void owner_go(void *ctx, struct strat_thread *t)
{
	struct owner *o = ctx;

	o->went[o->nwent++ % 16] = t->tid;
}

static void owner_resume(void *ctx, uint32_t tid)
{
	struct owner *o = ctx;

	o->resumed[o->nresumed++ % 16] = tid;
}

static bool resumed(const struct owner *o, uint32_t tid)
{
	for (size_t i = 0; i < o->nresumed && i < 16; i++)
		if (o->resumed[i] == tid)
			return true;
	return false;
}

struct bench {
	struct strategy *s;
	struct strat_run sr;
	struct strat_host h;
	struct owner o;
};

static void bench_begin(struct bench *b, const char *spec)
{
	char err[200];

	memset(b, 0, sizeof(*b));
	if (strategy_new(spec, &b->s, err, sizeof(err)))
		tap_diag("strategy_new(%s): %s", spec, err);
	b->sr.seed = 7;
	b->sr.flags = b->s->flags;
	b->s->ops->run_begin(b->s, &b->sr);
	b->h.strat = b->s;
	b->h.sr = &b->sr;
	b->h.ctx = &b->o;
	b->h.go = owner_go;
	b->h.resume = owner_resume;
	b->h.max_delays = STRAT_HOST_MAX_DELAYS;
	strat_host_thread_add(&b->h, 100, "0");
	strat_host_thread_add(&b->h, 101, "0.1");
	strat_host_thread_add(&b->h, 102, "0.2");
}

static void bench_end(struct bench *b)
{
	strat_host_stop(&b->h);
	if (b->s->ops->run_end)
		b->s->ops->run_end(b->s, &b->sr, NULL, NULL);
	free(b->sr.threads);
	strategy_free(b->s);
}

static void point(struct bench *b, uint32_t tid, uint16_t op)
{
	struct cs_event e = { 0 };
	struct strat_point p = { 0 };

	e.op = op;
	e.tid = tid;
	e.pid = 100;
	e.site = 0x50;
	p.t = strat_host_thread_find(&b->h, tid);
	p.k = p.t->points++;
	p.e = &e;
	strat_host_decide(&b->h, &p);
}

static void note(struct bench *b, uint32_t n, const uint32_t *tids)
{
	struct policy_note pn = { .ts_ns = 1, .nr_parked = n, .nr_threads = 3 };

	memcpy(pn.tids, tids, n * sizeof(*tids));
	strat_host_all_parked(&b->h, &pn);
}

int main(void)
{
	struct bench b;

	tap_plan(9);

	/* haltOneThread at a lock request: the first note lets it go. */
	bench_begin(&b, "random-all@1000/haltOneThread");
	point(&b, 101, CS_OP_LOCK_REQ);
	tap_ok(b.h.nhalted == 1 && !b.o.nwent, "a halt at a lock request keeps the thread");
	note(&b, 2, (uint32_t[]){ 101, 102 });
	tap_ok(resumed(&b.o, 101) && !b.h.nhalted,
	       "the first all-parked note lets it go, another thread parked or not");
	bench_end(&b);

	/* ,xh: exit() halts, and waits while another thread will run again. */
	bench_begin(&b, "random-all@0/yield:1,xh");
	point(&b, 100, CS_OP_PROC_EXIT);
	tap_ok(b.h.nhalted == 1 && b.h.halted_exit[0] && !b.o.nwent,
	       "xh: exit() is halted, as the end of the process");
	note(&b, 2, (uint32_t[]){ 100, 101 });
	tap_ok(!resumed(&b.o, 100) && b.h.nhalted == 1,
	       "a note naming a worker parked at its point: the exit waits on");
	point(&b, 101, CS_OP_LOCK_REQ);
	tap_ok(b.o.nwent == 1 && b.o.went[0] == 101, "the worker's point is decided: it goes on");
	note(&b, 1, (uint32_t[]){ 100 });
	tap_ok(resumed(&b.o, 100) && !b.h.nhalted,
	       "a note naming only the exit (the others blocked or gone): the exit goes");
	bench_end(&b);

	/* A worker halted at a point and the exit in one note: the worker is
	 * let go and will run, so the exit stays. */
	bench_begin(&b, "random-all@1000/haltOneThread,xh");
	point(&b, 100, CS_OP_PROC_EXIT);
	point(&b, 102, CS_OP_LOCK_REQ);
	tap_is_int(b.h.nhalted, 2, "the exit and a worker halted");
	note(&b, 2, (uint32_t[]){ 100, 102 });
	tap_ok(resumed(&b.o, 102) && !resumed(&b.o, 100) && b.h.nhalted == 1 &&
		       b.h.halted[0] == 100,
	       "one note: the worker halted at its point goes, the exit stays");
	bench_end(&b);

	/* More parked threads than a note lists: counted, not named. */
	bench_begin(&b, "random-all@0/yield:1,xh");
	point(&b, 100, CS_OP_PROC_EXIT);
	{
		struct policy_note pn = { .ts_ns = 1, .nr_parked = CS_NOTE_MAX_TIDS + 1 };

		for (uint32_t i = 0; i < CS_NOTE_MAX_TIDS; i++)
			pn.tids[i] = 100 + i;
		strat_host_all_parked(&b.h, &pn);
	}
	tap_ok(!resumed(&b.o, 100), "a note of 65 parked threads: the exit waits on");
	bench_end(&b);
	return tap_done();
}
