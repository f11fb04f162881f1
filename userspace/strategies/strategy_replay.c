// SPDX-License-Identifier: MIT
/*
 * Replay of a recorded run (strategy_replay.h). Decisions are keyed by abstract
 * thread and per-thread point index, never by time, so each applies at the
 * same program point when timing differs.
 */
#include <stdlib.h>
#include <string.h>

#include "kernel/policy.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/xalloc.h"
#include "strategies/strategy_replay.h"
#include "strategies/serial.h"

enum replay_mode { RP_DECISIONS, RP_SERIAL, RP_ORDER, RP_PACED, RP_ENFORCE };

struct replay_strat {
	enum replay_mode mode;
	enum cs_serial_mode serial;
	struct declog *log;
	/* the log split: decisions (what the cursor modes walk) and passes
	 * (the observed schedule, RP_ENFORCE) */
	struct declog_entry *dec, *pass;
	size_t ndec, npass;
	size_t *by_thread; /* serial: pass indexes by thread, then schedule order */
};

struct replay_run {
	struct serial_list l;
	size_t cursor;	     /* next logged release (enforced: first pass not taken) */
	bool *taken;	     /* enforced: passes followed (or gone past) */
	size_t skipped;	     /* enforced: passes skipped (not waiting when due) */
	size_t off_schedule; /* enforced: releases with no pass left to follow */
	size_t freed;	     /* enforced: free waiters let go before a pass ahead */
	uint32_t inflight;   /* paced: tid released last, until it moves on */
	uint64_t last_pick_ns;
	/* enforced, per thread index: the site of the point it waits at, and
	 * how many points it made that the recording did not (a spin loop
	 * that went round more often): its point k is the recording's k - shift */
	struct rp_thread {
		int64_t site;
		int64_t shift; /* < 0: the recording made points this replay did not */
		size_t next;   /* serial: its first pass not gone past, in by_thread + 1 (0: not
				* looked up yet) */
	} * th;
	size_t nth;
	size_t followed;	 /* enforced: passes followed so far */
	size_t free_ti, free_at; /* the last free waiter let go, and followed then */
	int64_t free_site;
	size_t pass_at;	   /* serial: the first recorded pass not gone past */
	uint64_t point_ns; /* enforced: when a thread last came to a point */
};

/* Enforced: with threads waiting, no point and no release for this long
 * (and no note: another thread runs on without a point, e.g. main
 * spinning on sched_yield until a worker it created has started), the
 * order goes on as at a note. The recording's scheduler let such a thread
 * go by its 1 s watchdog, or its strategy did not hold it there; without
 * this, the replay waited for the replay scheduler's 5 s watchdog, and a
 * recorded run timeout shorter than that ended the steering first
 * (race_exit_unjoined under random, 2026-11-30: the flusher held at its
 * start, the replay passed 0 of 12 times). */
#define ENFORCE_STALL_NS 1000000000ULL

/* Paced: the next logged point goes only once the thread released before
 * it has shown another event (its access executed), 50 ms have passed, or
 * every runnable thread is parked. (2 ms was too short under load: a
 * TCG vCPU the host descheduled for longer let the next point go before
 * the released access ran: a cause inferred for fpair failures that
 * replayed fewer than 4 of 5 times in CI.) */
#define PACED_CONFIRM_NS 50000000ULL

static void replay_destroy(struct strategy *s)
{
	struct replay_strat *rs = s->priv;

	if (rs) {
		free(rs->dec);
		free(rs->pass);
		free(rs->by_thread);
	}
	free(rs);
	s->priv = NULL;
}

static void replay_run_begin(struct strategy *s, struct strat_run *r)
{
	struct replay_strat *rs = s->priv;
	struct replay_run *rr = xcalloc(1, sizeof(*rr));

	serial_list_init(&rr->l, rs->serial, r->seed);
	if (rs->mode == RP_ENFORCE || rs->mode == RP_SERIAL)
		rr->taken = xcalloc(rs->npass + 1, sizeof(*rr->taken));
	rr->free_ti = SIZE_MAX;
	r->priv = rr;
}

static void replay_run_end(struct strategy *s, struct strat_run *r, struct strat_campaign *c,
			   const struct strat_outcome *o)
{
	struct replay_run *rr = r->priv;

	if (!rr)
		return;
	if (rr->skipped || rr->off_schedule || rr->freed)
		log_debug("replay: %zu recorded passes gone past, %zu releases past the "
			  "recorded schedule, %zu threads let go where the recording did not "
			  "hold them",
			  rr->skipped, rr->off_schedule, rr->freed);
	serial_list_free(&rr->l);
	free(rr->taken);
	free(rr->th);
	free(rr);
	r->priv = NULL;
}

static void paced_release(struct replay_run *rr, struct strat_run *r, size_t i)
{
	rr->inflight = r->threads[rr->l.v[i].ti].tid;
	rr->last_pick_ns = now_ns();
	serial_list_release(&rr->l, r, i);
}

static void paced_advance(struct replay_strat *rs, struct replay_run *rr, struct strat_run *r)
{
	while (rr->cursor < rs->ndec) {
		const struct declog_entry *want = &rs->dec[rr->cursor];
		size_t i;

		if (rr->inflight && now_ns() - rr->last_pick_ns < PACED_CONFIRM_NS)
			return;
		rr->inflight = 0;
		i = serial_list_find(&rr->l, r, want->thread, want->event);
		if (i == SIZE_MAX)
			return;
		rr->cursor++;
		paced_release(rr, r, i);
	}
}

static struct rp_thread *rp_thread(struct replay_run *rr, size_t ti)
{
	if (ti >= rr->nth) {
		size_t n = ti + 8;

		rr->th = xrealloc(rr->th, n * sizeof(*rr->th));
		memset(rr->th + rr->nth, 0, (n - rr->nth) * sizeof(*rr->th));
		rr->nth = n;
	}
	return &rr->th[ti];
}

/* The first of by_thread's passes of thread id (npass: none). */
static size_t first_pass_of(const struct replay_strat *rs, uint64_t id)
{
	size_t lo = 0, hi = rs->npass, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (rs->pass[rs->by_thread[mid]].thread < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Serial: thread ti's recorded passes before its point upto are gone
 * past (it went on from them); the first pass not gone past moves on.
 * Each pass is looked at once per run (a thread's own cursor). */
static void serial_passes_behind(const struct replay_strat *rs, struct replay_run *rr,
				 const struct strat_run *r, size_t ti, uint64_t upto)
{
	struct rp_thread *th = rp_thread(rr, ti);
	uint64_t id = r->threads[ti].id;
	size_t j;

	if (!th->next)
		th->next = first_pass_of(rs, id) + 1;
	for (; th->next <= rs->npass; th->next++) {
		j = rs->by_thread[th->next - 1];
		if (rs->pass[j].thread != id || rs->pass[j].event >= upto)
			break;
		rr->taken[j] = true;
	}
	while (rr->pass_at < rs->npass && rr->taken[rr->pass_at])
		rr->pass_at++;
}

/* Serial: waiting entry i goes on (its pass is followed). */
static void serial_go(const struct replay_strat *rs, struct replay_run *rr, struct strat_run *r,
		      size_t i)
{
	serial_passes_behind(rs, rr, r, rr->l.v[i].ti, rr->l.v[i].k + 1);
	serial_list_release(&rr->l, r, i);
}

/*
 * Serial: the recorded schedule's next pass is a point where the
 * recording's strategy did not let its thread go (no decision logged
 * there): the scheduler did, its watchdog, because no all-parked note
 * came while another thread ran on without a point (race_exit_unjoined:
 * main spins on sched_yield until the flusher it created runs, and the
 * flusher is held at its start). The replay would wait the same way, for
 * its own watchdog (5 s), and be told the controller answered late. The
 * thread waits at that point (and site): it goes now, as recorded.
 */
static bool serial_unheld_go(const struct replay_strat *rs, struct replay_run *rr,
			     struct strat_run *r)
{
	const struct declog_entry *pass, *e;
	int64_t site;
	size_t i;

	if (rr->pass_at >= rs->npass)
		return false;
	pass = &rs->pass[rr->pass_at];
	i = serial_list_find(&rr->l, r, pass->thread, pass->event);
	if (i == SIZE_MAX || declog_lookup(rs->log, pass->thread, 0, pass->event, &e) > 0)
		return false;
	site = r->threads[rr->l.v[i].ti].site;
	if (site && pass->arg > 0 && site != pass->arg)
		return false;
	log_debug("replay: thread %s goes from point %llu, as recorded: the recording's "
		  "scheduler let it go there, not its strategy",
		  r->threads[rr->l.v[i].ti].path, (unsigned long long)pass->event);
	serial_go(rs, rr, r, i);
	return true;
}

static void replay_point(struct strategy *s, struct strat_run *r, const struct strat_point *p,
			 struct strat_decision *d)
{
	struct replay_strat *rs = s->priv;
	struct replay_run *rr = r->priv;
	const struct declog_entry *e;
	size_t ti = (size_t)(p->t - r->threads);
	bool logged = declog_lookup(rs->log, p->t->id, 0, p->k, &e) > 0;

	d->v = STRAT_PROCEED;
	switch (rs->mode) {
	case RP_SERIAL:
		/* Its earlier points are behind it. */
		serial_passes_behind(rs, rr, r, ti, p->k);
		serial_list_add(&rr->l, ti, p->k);
		d->v = STRAT_PARK;
		serial_unheld_go(rs, rr, r);
		return;
	case RP_ENFORCE:
		rr->point_ns = now_ns();
		rp_thread(rr, ti)->site = p->t->site;
		log_debug("replay: thread %s waits at point %llu (site %lld, at 0x%llx)",
			  p->t->path, (unsigned long long)p->k, (long long)p->t->site,
			  (unsigned long long)p->e->site);
		serial_list_add(&rr->l, ti, p->k);
		d->v = STRAT_PARK;
		return;
	case RP_ORDER:
		/* A point the engine paused at has its release logged: wait
		 * for the all-parked note; any other point proceeded. */
		if (logged) {
			serial_list_add(&rr->l, ti, p->k);
			d->v = STRAT_PARK;
		}
		return;
	case RP_PACED:
		if (logged) {
			serial_list_add(&rr->l, ti, p->k);
			d->v = STRAT_PARK;
			paced_advance(rs, rr, r);
		}
		return;
	case RP_DECISIONS:
		if (!logged)
			return;
		d->arg = e->arg;
		switch (e->action) {
		case DECLOG_DELAY_US:
			d->v = STRAT_DELAY;
			d->us = e->arg > 0 ? (uint64_t)e->arg : 0;
			break;
		case DECLOG_YIELD:
			d->v = STRAT_YIELD;
			break;
		case DECLOG_PARK:
			d->v = STRAT_HALT;
			break;
		case DECLOG_RELEASE:
			d->v = STRAT_RELEASE;
			break;
		default:
			break;
		}
		return;
	}
}

/* Release the logged entry at the cursor if it waits, else by the rule of
 * the recorded --serial mode. */
static void replay_pick(struct replay_strat *rs, struct replay_run *rr, struct strat_run *r,
			const struct policy_note *n)
{
	size_t pick = SIZE_MAX;

	if (n->ts_ns <= rr->l.last_pick_ns)
		return; /* a note from before our last release */
	r->drain(r);
	if (!rr->l.n)
		return;
	if (rs->mode == RP_SERIAL && serial_unheld_go(rs, rr, r))
		return;
	if (rr->cursor < rs->ndec) {
		const struct declog_entry *want = &rs->dec[rr->cursor];

		pick = serial_list_find(&rr->l, r, want->thread, want->event);
		if (pick != SIZE_MAX)
			rr->cursor++;
	}
	if (pick == SIZE_MAX)
		pick = serial_list_choose(&rr->l, r);
	if (rs->mode == RP_SERIAL)
		serial_go(rs, rr, r, pick);
	else
		serial_list_release(&rr->l, r, pick);
}

/* Paced: stuck when the next logged point is not coming: skip ahead to
 * the first logged point a thread waits at. */
static void paced_all_parked(struct replay_strat *rs, struct replay_run *rr, struct strat_run *r,
			     const struct policy_note *n)
{
	size_t e, i;

	if (n->ts_ns <= rr->last_pick_ns)
		return;
	r->drain(r);
	rr->inflight = 0;
	paced_advance(rs, rr, r);
	if (!rr->l.n || n->ts_ns <= rr->last_pick_ns)
		return;
	for (e = rr->cursor; e < rs->ndec; e++) {
		i = serial_list_find(&rr->l, r, rs->dec[e].thread, rs->dec[e].event);
		if (i != SIZE_MAX) {
			rr->cursor = e + 1;
			paced_release(rr, r, i);
			paced_advance(rs, rr, r);
			return;
		}
	}
	paced_release(rr, r, 0);
}

/* The waiting entry of thread id (at whichever point), or SIZE_MAX. */
static size_t waiting_thread(const struct serial_list *l, const struct strat_run *r, uint64_t id)
{
	size_t i;

	for (i = 0; i < l->n; i++)
		if (r->threads[l->v[i].ti].id == id)
			return i;
	return SIZE_MAX;
}

/* Waiting entry i's point in the recording's count (its extra points
 * taken off). */
static uint64_t rec_k(struct replay_run *rr, size_t i)
{
	int64_t k = (int64_t)rr->l.v[i].k - rp_thread(rr, rr->l.v[i].ti)->shift;

	return k > 0 ? (uint64_t)k : 0;
}

/* Does waiting entry i stand where pass e was recorded: the same point
 * (in the recording's count) at the same site? A site not known on either
 * side (0, or the recording's -(op + 1) of a point without one) matches. */
static bool at_pass(struct replay_run *rr, size_t i, const struct declog_entry *e)
{
	int64_t site = rp_thread(rr, rr->l.v[i].ti)->site;

	return rec_k(rr, i) == e->event && (!site || e->arg <= 0 || site == e->arg);
}

/* A waiting thread the recording did not hold where it waits now (no pass
 * of its own at that point, and site, is still to follow: it ran on
 * freely there in the recorded run, or it is at a point the recording did
 * not make), or SIZE_MAX. Not the one let go last from the same site
 * with no pass followed since: a spin loop that cannot end before another
 * thread's pass would go round for ever. */
static size_t free_waiter(const struct replay_strat *rs, struct replay_run *rr,
			  const struct strat_run *r)
{
	size_t i, e;

	for (i = 0; i < rr->l.n; i++) {
		uint64_t id = r->threads[rr->l.v[i].ti].id;
		bool held = false;

		for (e = rr->cursor; e < rs->npass && !held; e++)
			held = !rr->taken[e] && rs->pass[e].thread == id &&
			       at_pass(rr, i, &rs->pass[e]);
		if (held || (rr->l.v[i].ti == rr->free_ti && rr->followed == rr->free_at &&
			     rp_thread(rr, rr->l.v[i].ti)->site == rr->free_site))
			continue;
		return i;
	}
	return SIZE_MAX;
}

/* Waiting entry i is at the index of its pass e but at another site:
 * if one of its next recorded passes (a few points on) is at the site it
 * waits at, the recording made the points between and this replay did
 * not (its spin loop went round fewer times): those passes are gone past,
 * and its count catches up. */
#define SKIP_WINDOW 16
static bool skip_to_site(const struct replay_strat *rs, struct replay_run *rr,
			 const struct strat_run *r, size_t i, size_t e)
{
	struct rp_thread *th = rp_thread(rr, rr->l.v[i].ti);
	uint64_t id = r->threads[rr->l.v[i].ti].id, k = rec_k(rr, i);
	size_t f, g;

	if (!th->site)
		return false;
	for (f = e + 1; f < rs->npass; f++) {
		const struct declog_entry *p = &rs->pass[f];

		if (rr->taken[f] || p->thread != id)
			continue;
		if (p->event > k + SKIP_WINDOW)
			return false;
		if (p->arg != th->site)
			continue;
		for (g = e; g < f; g++)
			if (!rr->taken[g] && rs->pass[g].thread == id) {
				rr->taken[g] = true;
				rr->skipped++;
			}
		th->shift -= (int64_t)(p->event - k);
		return true;
	}
	return false;
}

/* Let free waiter f go. A point of its own recorded at that index, at
 * another site, means this point is one the recording did not make: its
 * later points count one more. */
static void free_go(const struct replay_strat *rs, struct replay_run *rr, struct strat_run *r,
		    size_t f)
{
	size_t ti = rr->l.v[f].ti, e;
	struct rp_thread *th = rp_thread(rr, ti);
	uint64_t id = r->threads[ti].id, k = rec_k(rr, f);

	for (e = rr->cursor; e < rs->npass; e++)
		if (!rr->taken[e] && rs->pass[e].thread == id && rs->pass[e].event >= k) {
			if (rs->pass[e].event == k)
				th->shift++;
			break;
		}
	rr->freed++;
	rr->free_ti = ti;
	rr->free_at = rr->followed;
	rr->free_site = th->site;
	log_debug("replay: thread %s goes from point %llu, where the recording did not hold it%s",
		  r->threads[ti].path, (unsigned long long)rr->l.v[f].k,
		  th->shift ? " (a point the recording did not make)" : "");
	serial_list_release(&rr->l, r, f);
}

/* Pass e is the end of the process (its site is the op's, no call site)
 * and the recording halted it there (a noise configuration's ,xh): the
 * thread reached the exit at this pass but went only once no other thread
 * could run. It waits while a later pass of another thread is still to
 * follow, so that the exit does not end the process before them. */
static bool exit_held_back(const struct replay_strat *rs, const struct replay_run *rr, size_t e)
{
	const struct declog_entry *pass = &rs->pass[e], *d;
	size_t f;

	if (pass->arg != -(int64_t)CS_OP_PROC_EXIT - 1 ||
	    declog_lookup(rs->log, pass->thread, 0, pass->event, &d) <= 0 ||
	    d->action != DECLOG_PARK)
		return false;
	for (f = e + 1; f < rs->npass; f++)
		if (!rr->taken[f] && rs->pass[f].thread != pass->thread)
			return true;
	return false;
}

/*
 * Enforced order: the first pass not yet followed whose thread waits goes.
 * A pass whose thread does not wait (blocked, running, not created yet) is
 * not dropped: it goes as soon as its thread waits there, before any later
 * one. A thread waiting at an earlier point than its next recorded pass
 * (a point the recording did not log) catches up; one already past a
 * recorded pass leaves that pass behind. A thread waiting at the point
 * index of its next pass but at another site is not there yet (a spin
 * loop went round once more than recorded). Before a pass goes ahead of
 * an earlier one whose thread does not wait, a waiting thread the
 * recording did not hold there goes first: it may be the one that makes
 * the earlier pass's thread (a thread spinning before it creates it, with
 * a probed access in the loop that the recorded run did not stop at, or
 * stopped at fewer times). An exit the recording halted waits for the
 * later passes of the other threads (exit_held_back). With no pass for
 * any waiting thread, the oldest waiting thread goes.
 */
static void enforce_pick(struct replay_strat *rs, struct replay_run *rr, struct strat_run *r,
			 const struct policy_note *n)
{
	size_t e, i, f;
	bool ahead = false; /* an earlier pass's thread does not wait */
	uint64_t k;

	if (n->ts_ns <= rr->l.last_pick_ns)
		return;
	r->drain(r);
	if (!rr->l.n)
		return;
	for (e = rr->cursor; e < rs->npass; e++) {
		if (rr->taken[e])
			continue;
		i = waiting_thread(&rr->l, r, rs->pass[e].thread);
		if (i == SIZE_MAX) {
			ahead = true;
			continue;
		}
		k = rec_k(rr, i);
		if (k == rs->pass[e].event && exit_held_back(rs, rr, e))
			continue;
		if (k > rs->pass[e].event) { /* gone past it */
			rr->taken[e] = true;
			rr->skipped++;
			continue;
		}
		if (k == rs->pass[e].event && !at_pass(rr, i, &rs->pass[e])) {
			if (skip_to_site(rs, rr, r, i, e)) {
				e--; /* look at this pass again */
				continue;
			}
			ahead = true; /* not at its recorded point yet */
			continue;
		}
		if (ahead && k == rs->pass[e].event && (f = free_waiter(rs, rr, r)) != SIZE_MAX) {
			free_go(rs, rr, r, f);
			return;
		}
		if (k == rs->pass[e].event) {
			rr->taken[e] = true;
			rr->followed++;
		}
		log_debug("replay: pass %zu of %zu: thread %s goes from point %llu%s", e + 1,
			  rs->npass, r->threads[rr->l.v[i].ti].path,
			  (unsigned long long)rr->l.v[i].k,
			  k < rs->pass[e].event ? " (catching up)" : "");
		while (rr->cursor < rs->npass && rr->taken[rr->cursor])
			rr->cursor++;
		serial_list_release(&rr->l, r, i);
		return;
	}
	if ((f = free_waiter(rs, rr, r)) != SIZE_MAX) {
		free_go(rs, rr, r, f);
		return;
	}
	rr->off_schedule++;
	serial_list_release(&rr->l, r, serial_list_choose(&rr->l, r));
}

static void replay_all_parked(struct strategy *s, struct strat_run *r, const struct policy_note *n)
{
	struct replay_strat *rs = s->priv;
	struct replay_run *rr = r->priv;

	if (rs->mode == RP_ENFORCE)
		enforce_pick(rs, rr, r, n);
	else if (rs->mode == RP_PACED)
		paced_all_parked(rs, rr, r, n);
	else if (rs->mode != RP_DECISIONS)
		replay_pick(rs, rr, r, n);
}

static void replay_event(struct strategy *s, struct strat_run *r, const struct cs_event *e,
			 struct strat_thread *t)
{
	struct replay_run *rr = r->priv;

	if (rr->inflight && e->tid == rr->inflight) {
		/* The thread released last has moved on. */
		rr->inflight = 0;
		if (rr->l.n)
			paced_advance(s->priv, rr, r);
	}
}

static void replay_tick(struct strategy *s, struct strat_run *r)
{
	struct replay_strat *rs = s->priv;
	struct replay_run *rr = r->priv;

	if (rs->mode == RP_PACED && rr->l.n)
		paced_advance(rs, rr, r);
	if (rs->mode == RP_ENFORCE && rr->l.n) {
		uint64_t now = now_ns(), last = rr->point_ns;

		if (rr->l.last_pick_ns > last)
			last = rr->l.last_pick_ns;
		if (now - last < ENFORCE_STALL_NS)
			return;
		log_debug("replay: %zu waiting and no note for %.1f s: the order goes on", rr->l.n,
			  (double)(now - last) / 1e9);
		enforce_pick(rs, rr, r, &(struct policy_note){ .ts_ns = now });
	}
}

static int replay_poll_ms(struct strategy *s, struct strat_run *r, int ms)
{
	struct replay_run *rr = r->priv;

	return rr->l.n ? 1 : ms;
}

static const struct strategy_ops replay_ops = {
	.name = "replay",
	.summary = "re-make a recorded run from its decision log",
	.destroy = replay_destroy,
	.run_begin = replay_run_begin,
	.run_end = replay_run_end,
	.event = replay_event,
	.point = replay_point,
	.all_parked = replay_all_parked,
	.tick = replay_tick,
	.poll_ms = replay_poll_ms,
};

size_t strategy_replay_enforced(const struct strategy *s)
{
	const struct replay_strat *rs = s->priv;

	return s->ops == &replay_ops && rs && rs->mode == RP_ENFORCE ? rs->npass : 0;
}

/* by_thread's order: by thread, then by place in the schedule. */
static int pass_thread_cmp(const void *a, const void *b, void *arg)
{
	const struct replay_strat *rs = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	uint64_t tx = rs->pass[x].thread, ty = rs->pass[y].thread;

	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x < y ? -1 : x > y;
}

struct strategy *strategy_replay_new(const struct strategy_ops *recorded,
				     enum cs_serial_mode serial, struct declog *log,
				     bool decisions_only)
{
	struct strategy *s = xcalloc(1, sizeof(*s));
	struct replay_strat *rs = xcalloc(1, sizeof(*rs));
	unsigned keep =
		STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ACCESS_POINTS | STRAT_F_ACCESS;

	rs->serial = serial;
	rs->log = log;
	rs->dec = xcalloc(log->n + 1, sizeof(*rs->dec));
	rs->pass = xcalloc(log->n + 1, sizeof(*rs->pass));
	for (size_t k = 0; k < log->n; k++) {
		if (log->entries[k].action == DECLOG_PASS)
			rs->pass[rs->npass++] = log->entries[k];
		else
			rs->dec[rs->ndec++] = log->entries[k];
	}
	if (serial != CS_SERIAL_OFF) {
		rs->by_thread = xcalloc(rs->npass + 1, sizeof(*rs->by_thread));
		for (size_t k = 0; k < rs->npass; k++)
			rs->by_thread[k] = k;
		qsort_r(rs->by_thread, rs->npass, sizeof(*rs->by_thread), pass_thread_cmp, rs);
	}
	s->ops = &replay_ops;
	s->spec = xstrdup(recorded->name);
	s->priv = rs;
	s->flags = recorded->flags & keep;
	if (serial != CS_SERIAL_OFF && (decisions_only || !rs->npass)) {
		/* Every point of a serial run waited for its turn: its logged
		 * releases, in order (--decisions, or a log from before runs
		 * recorded their passes). */
		rs->mode = RP_SERIAL;
		s->flags |= STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_SERIAL;
	} else {
		/* A serial run with its observed schedule is followed like a
		 * parallel one, below: its releases are matched by each
		 * thread's point index, which a spin that went round another
		 * number of times shifts (race_torn_pair's main spins on a
		 * probed flag until the writer runs: pct:2 --access's run 28
		 * failed, and replayed by its releases 0 of 10 times, by its
		 * passes 10 of 10; 2026-11-30). Every point of it waited. */
		if (serial != CS_SERIAL_OFF)
			s->flags |= STRAT_F_SYNC_POINTS;
		rs->mode = recorded->replay == STRAT_REPLAY_ORDER   ? RP_ORDER
			   : recorded->replay == STRAT_REPLAY_PACED ? RP_PACED
								    : RP_DECISIONS;
	}
	if (rs->mode != RP_SERIAL && rs->npass && !decisions_only) {
		/* A parallel run with its observed schedule: follow it, one
		 * thread at a time. */
		rs->mode = RP_ENFORCE;
		rs->serial = CS_SERIAL_FIFO;
		serial = CS_SERIAL_FIFO;
		s->flags |= STRAT_F_STEERS | STRAT_F_SERIAL;
		/* The points the run stopped at: its recorded kinds. */
		if (!strategy_has(s, STRAT_F_SYNC_POINTS) &&
		    !strategy_has(s, STRAT_F_ACCESS_POINTS))
			s->flags |= STRAT_F_SYNC_POINTS;
	}
	s->replay = recorded->replay;
	s->sched_serial = serial;
	return s;
}
