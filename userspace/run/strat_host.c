// SPDX-License-Identifier: MIT
/* The strategy host (strat_host.h). */
#include "run/strat_host.h"

#include <stdio.h>
#include <string.h>

#include "kernel/policy.h"
#include "lib/array_size.h"
#include "lib/fnv1a64.h"
#include "lib/xalloc.h"

struct strat_thread *strat_host_thread_add(struct strat_host *h, uint32_t tid, const char *path)
{
	struct strat_run *sr = h->sr;
	struct strat_thread *t;

	if (h->max_threads && sr->nthreads >= h->max_threads)
		return NULL;
	if (sr->nthreads % 64 == 0)
		sr->threads = xrealloc(sr->threads, (sr->nthreads + 64) * sizeof(*sr->threads));
	t = &sr->threads[sr->nthreads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	snprintf(t->path, sizeof(t->path), "%s", path);
	t->id = fnv1a64(t->path, strlen(t->path), FNV1A64_INIT);
	if (h->born)
		h->born(h->ctx, t);
	strategy_thread_start(h->strat, sr, t);
	return t;
}

struct strat_thread *strat_host_thread_find(struct strat_host *h, uint32_t tid)
{
	size_t i;

	for (i = h->sr->nthreads; i-- > 0;)
		if (h->sr->threads[i].tid == tid)
			return &h->sr->threads[i];
	return NULL;
}

void strat_host_thread_drop(struct strat_host *h, uint32_t tid)
{
	struct strat_run *sr = h->sr;
	size_t i;

	for (i = 0; i < sr->nthreads; i++)
		if (sr->threads[i].tid == tid) {
			sr->threads[i] = sr->threads[--sr->nthreads];
			return;
		}
}

static void host_log(struct strat_host *h, const struct strat_thread *t, uint64_t k,
		     enum declog_action action, int64_t arg)
{
	if (h->log)
		declog_add(h->log, t->id, 0, k, action, arg);
}

static void host_resume(void *ctx, uint32_t tid)
{
	struct strat_host *h = ctx;

	h->resume(h->ctx, tid);
}

static void host_delay(struct strat_host *h, uint32_t tid, uint64_t us)
{
	if (!delayq_add(h->delays, &h->ndelays, h->max_delays, tid, us))
		h->resume(h->ctx, tid); /* a full queue: it goes on now */
}

/* The verdict d for thread t at its point k. */
static void host_apply(struct strat_host *h, struct strat_thread *t, uint64_t k,
		       const struct strat_decision *d, bool exit)
{
	switch (d->v) {
	case STRAT_PARK: /* kept: the strategy releases it */
		return;
	case STRAT_RELEASE:
		host_log(h, t, k, DECLOG_RELEASE, d->arg);
		break;
	case STRAT_DELAY:
		host_log(h, t, k, DECLOG_DELAY_US, d->arg);
		h->injected++;
		h->ndelayed++;
		if (h->delayed)
			h->delayed(h->ctx, t);
		host_delay(h, t->tid, d->us);
		return;
	case STRAT_YIELD:
		/* Released now: a yield, because the released thread goes
		 * to the back of its CPU's queue. */
		host_log(h, t, k, DECLOG_YIELD, d->arg);
		h->injected++;
		h->nyields++;
		break;
	case STRAT_HALT:
		h->nhalts++;
		if (h->halt_us) { /* bounded: a delay */
			host_delay(h, t->tid, h->halt_us);
			return;
		}
		/* until every other runnable thread is parked */
		host_log(h, t, k, DECLOG_PARK, 0);
		h->injected++;
		if (h->nhalted < ARRAY_SIZE(h->halted)) {
			h->halted_exit[h->nhalted] = exit;
			h->halted[h->nhalted++] = t->tid;
			return;
		}
		break;
	case STRAT_PROCEED:
		break;
	}
	h->go(h->ctx, t);
}

void strat_host_decide(struct strat_host *h, const struct strat_point *p)
{
	struct strat_decision d = { .v = STRAT_PROCEED };

	strategy_point(h->strat, h->sr, p, &d);
	host_apply(h, p->t, p->k, &d, p->e->op == CS_OP_PROC_EXIT);
}

void strat_host_release(struct strat_host *h, struct strat_thread *t, int64_t arg)
{
	host_log(h, t, t->points ? t->points - 1 : 0, DECLOG_RELEASE, arg);
	h->go(h->ctx, t);
}

void strat_host_delays_due(struct strat_host *h, bool all)
{
	delayq_due(h->delays, &h->ndelays, all, host_resume, h);
}

int strat_host_next_delay_ms(const struct strat_host *h)
{
	return delayq_next_ms(h->delays, h->ndelays);
}

static bool halted_exit(const struct strat_host *h, uint32_t tid)
{
	size_t i;

	for (i = 0; i < h->nhalted; i++)
		if (h->halted[i] == tid && h->halted_exit[i])
			return true;
	return false;
}

/* Does the note name a parked thread that is not a halted exit? Such a
 * thread runs again: waiting for its decision, delayed, or halted at a
 * point (let go with this note). A note naming more threads than it
 * lists counts them. */
static bool note_others_parked(const struct strat_host *h, const struct policy_note *n)
{
	size_t i, exits = 0;

	if (n->nr_parked > CS_NOTE_MAX_TIDS) {
		for (i = 0; i < h->nhalted; i++)
			exits += h->halted_exit[i];
		return n->nr_parked > exits;
	}
	for (i = 0; i < n->nr_parked; i++)
		if (!halted_exit(h, n->tids[i]))
			return true;
	return false;
}

void strat_host_all_parked(struct strat_host *h, const struct policy_note *n)
{
	bool others = note_others_parked(h, n);
	size_t i, kept = 0;

	/* Every runnable thread is stopped: the halted ones have waited until
	 * they were alone; let them go first. An exit waits on while another
	 * parked thread will run again. */
	for (i = 0; i < h->nhalted; i++) {
		if (h->halted_exit[i] && others) {
			h->halted[kept] = h->halted[i];
			h->halted_exit[kept++] = true;
			continue;
		}
		h->resume(h->ctx, h->halted[i]);
	}
	h->nhalted = kept;
	strategy_all_parked(h->strat, h->sr, n);
}

void strat_host_stop(struct strat_host *h)
{
	strat_host_delays_due(h, true);
	h->nhalted = 0;
}
