// SPDX-License-Identifier: MIT
/*
 * Strategy fpair: seed 002's bug-driven function-pair testing
 * (ALGORITHMS.md section 5) on the contract, around the function-pair
 * table of coverage/metrics.c (MPL grouping, S(p)).
 *
 * The profile: every probed access the runs reach (its function, variable,
 * read/write and the locks held) goes into the table; after each run the
 * pairs are grouped again over the grown profile (a pair keeps its
 * attempts). Each run targets one pair (f, g) chosen by metrics_fpair_next: the
 * high group first (a shared variable written on one side whose maximum
 * protecting locksets do not intersect), by S(p) = max(|r - c|, 1) * r;
 * pairs that always hold a common lock are dropped. The first run has no
 * target: it only profiles.
 *
 * Steering, at access points (STRAT_F_ACCESS_POINTS; fpair implies
 * --access; synchronization points park too, and go on at once, so that
 * the run's observed schedule holds their order for replay): the first thread whose access is in f
 * or g is held there (it waits inside the function) until another thread reaches an access in the
 * other function of the pair. Then the two are inside f and g at once (the
 * pair is covered in this run) and their accesses are interleaved: at each
 * of up to FP_SWITCHES steps one of the two goes on by one access while
 * the other waits. Which one is a choice between two, and the choices of
 * the pair's k-th covered attempt are the bits of k (the first choice bit
 * 0: the held thread goes first, or the newcomer; each later one: switch
 * to the other thread, or let the same one go on), so the attempts of a
 * pair enumerate the interleavings of its first choices instead of
 * drawing them: a bug that needs 3 particular choices shows within 8
 * covered attempts of its pair. An interleaving's wait ends after
 * FP_HOLD_NS, but for a partner in flight (let go, no event since) only
 * after FP_INFLIGHT_NS. A hold ends after FP_HOLD_NS
 * without a partner, when every runnable thread is parked (the partner is
 * blocked elsewhere) or when a held thread left (the watchdog), and then
 * the thread goes on; at most FP_HOLDS holds per run. Every release is
 * logged, so a run replays in its order. The fpair metric measures which
 * pairs ran concurrently; metrics_fpair_record counts the attempt and whether it
 * was covered. Each run's configuration records "fpair": {"f", "g",
 * "group"} (campaign function ids, "high" or "low"), its note whether the
 * target was met. docs/strategies.md "fpair".
 *
 * Runs at once (run -j, STRAT_F_JOBS): the table is the campaign's, so only
 * run_begin and run_end (under the campaign's lock) touch it. A run keeps
 * the accesses its points see and adds them to the profile at its end, in
 * the order seen (nothing reads the profile during a run, so one run at a
 * time profiles as before); a run's target is marked in flight from its
 * begin to its end, and metrics_fpair_next passes over the pairs in flight, so
 * runs at once target different pairs while there are enough.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coverage/metrics.h"
#include "kernel/policy.h"
#include "lib/json.h"
#include "lib/fnv1a64.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/xalloc.h"
#include "strategies/strategy.h"

#define FP_HOLD_NS (30 * 1000 * 1000ULL) /* a hold without a partner */
/* An interleaving's wait for a partner that was let go and has shown
 * nothing since (in flight): it may be about to make the very access the
 * waiting one must come after, on a vCPU the host descheduled. Below the
 * scheduler's watchdog (SCHED_CTL_WATCHDOG_MS_DFL). */
#define FP_INFLIGHT_NS (500 * 1000 * 1000ULL)
#define FP_HOLDS       16 /* holds per run */
#define FP_SWITCHES    16 /* interleaved steps once met */

/* DECLOG_RELEASE args */
enum fp_release {
	FP_REL_STEP = 0, /* one interleaved step */
	FP_REL_ALONE,	 /* a hold ended without a partner */
	FP_REL_DONE,	 /* the interleaving ended */
};

struct fpair_strat {
	struct fpair_table *t;
	size_t kept;	    /* pairs kept at the last grouping */
	uint64_t targeted;  /* runs with a target */
	uint64_t met;	    /* ... in which it was covered */
	uint64_t pairs_met; /* distinct pairs covered by their targeted runs */
};

struct fp_thread {
	uint32_t func; /* of its last access point */
	bool held;     /* we keep it at an access point */
	uint64_t held_ns;
	uint64_t gone_ns; /* let go (or went on) from its last point */
	uint64_t seen_ns; /* its last event */
};

struct fpair_run {
	/* The profile: the accesses its points saw, each once, in the order
	 * first seen; run_end adds them to the table. */
	struct cov_event *seen;
	size_t nseen, capseen;
	struct cov_u64map seen_index; /* access_key -> index in seen */
	bool target;
	uint32_t f, g;
	enum fpair_group group;
	struct fp_thread *th;
	size_t nth;
	uint64_t pattern; /* the choices: the pair's covered attempts so far */
	unsigned choices; /* made so far */
	size_t holder;	  /* held alone in f or g, waiting for a partner: index + 1 */
	unsigned holds;
	bool met;	   /* two threads were inside f and g at once */
	size_t a, b;	   /* once met: the two threads (indexes) */
	unsigned switches; /* interleaved steps so far */
	bool interleaving;
	uint64_t last_release_ns;
};

static size_t tindex(struct strat_run *r, const struct strat_thread *t)
{
	return (size_t)(t - r->threads);
}

static struct fp_thread *fp_thread(struct fpair_run *fr, size_t i)
{
	if (i >= fr->nth) {
		size_t n = i + 16;

		fr->th = xrealloc(fr->th, n * sizeof(*fr->th));
		memset(fr->th + fr->nth, 0, (n - fr->nth) * sizeof(*fr->th));
		fr->nth = n;
	}
	return &fr->th[i];
}

/* What metrics_fpair_profile_add reads of an access: its function, variable,
 * operation and locks held, hashed. */
static uint64_t access_key(const struct cov_event *ev)
{
	uint64_t h = FNV1A64_INIT;

	h = fnv1a64(&ev->func, sizeof(ev->func), h);
	h = fnv1a64(&ev->obj, sizeof(ev->obj), h);
	h = fnv1a64(&ev->op, sizeof(ev->op), h);
	h = fnv1a64(&ev->held.n, sizeof(ev->held.n), h);
	h = fnv1a64(ev->held.id, ev->held.n * sizeof(ev->held.id[0]), h);
	return h == ~0ULL ? 0 : h; /* ~0 is the map's empty key */
}

static bool same_access(const struct cov_event *a, const struct cov_event *b)
{
	return a->func == b->func && a->obj == b->obj && a->op == b->op && a->held.n == b->held.n &&
	       !memcmp(a->held.id, b->held.id, a->held.n * sizeof(a->held.id[0]));
}

/* Keep an access for the profile. Adding an access to the profile a second
 * time changes nothing (its locks are intersected again with the same
 * set), so a repeat of one already kept is left out: a run keeps one entry
 * per distinct access, however long it runs. */
static void keep_access(struct fpair_run *fr, const struct cov_event *ev)
{
	uint64_t key = access_key(ev), *idx;
	bool created;

	if (!ev->func)
		return; /* the profile skips it too */
	idx = cov_event_u64map_put(&fr->seen_index, key, fr->nseen, &created);
	if (!created && same_access(&fr->seen[*idx], ev))
		return;
	/* a new access, or another one with the same hash: kept (the index
	 * keeps pointing at the first) */
	if (fr->nseen == fr->capseen) {
		fr->capseen = fr->capseen ? 2 * fr->capseen : 64;
		fr->seen = xrealloc(fr->seen, fr->capseen * sizeof(*fr->seen));
	}
	fr->seen[fr->nseen++] = *ev;
}

static int fpair_init(struct strategy *s, const char *opts, char *err, size_t errlen)
{
	struct fpair_strat *fs;

	if (opts) {
		snprintf(err, errlen, "fpair takes no options");
		return -EINVAL;
	}
	fs = xcalloc(1, sizeof(*fs));
	fs->t = metrics_fpair_table_new();
	s->priv = fs;
	return 0;
}

static void fpair_destroy(struct strategy *s)
{
	struct fpair_strat *fs = s->priv;

	if (fs)
		metrics_fpair_table_free(fs->t);
	free(fs);
	s->priv = NULL;
}

static void fpair_campaign_end(struct strategy *s, struct strat_campaign *c)
{
	struct fpair_strat *fs = s->priv;

	if (c->quiet || !c->nruns)
		return;
	fprintf(stderr,
		"concsched: fpair: %zu function pairs kept; %" PRIu64 " runs targeted a pair, "
		"%" PRIu64 " of them ran it concurrently\n",
		fs->kept, fs->targeted, fs->met);
}

static void fpair_run_begin(struct strategy *s, struct strat_run *r)
{
	struct fpair_strat *fs = s->priv;
	struct fpair_run *fr = xcalloc(1, sizeof(*fr));

	cov_event_u64map_init(&fr->seen_index);
	fr->target = fs->kept && !metrics_fpair_next(fs->t, &fr->f, &fr->g);
	if (fr->target) {
		uint64_t tries, covered;

		fr->group = metrics_fpair_group_of(fs->t, fr->f, fr->g);
		if (!metrics_fpair_counts(fs->t, fr->f, fr->g, &tries, &covered))
			fr->pattern = covered;
		metrics_fpair_fly(fs->t, fr->f, fr->g, true);
	}
	r->priv = fr;
}

static void fpair_config(struct strategy *s, struct strat_run *r, struct json *j)
{
	struct fpair_run *fr = r->priv;

	if (!fr || !fr->target) {
		json_kv_null(j, "fpair");
		return;
	}
	json_obj_begin(j, "fpair");
	json_kv_uint(j, "f", fr->f);
	json_kv_uint(j, "g", fr->g);
	json_kv_str(j, "group", fr->group == FPAIR_HIGH ? "high" : "low");
	json_kv_uint(j, "choices", fr->pattern);
	json_obj_end(j);
}

/* A targeted run's count, and its note: f, g, met, and the report's
 * "summary" line when the pair ran concurrently for the first time. */
static void fpair_note_run(struct fpair_strat *fs, struct fpair_run *fr, struct strat_campaign *c)
{
	uint64_t attempts = 0, covered = 0;
	char note[256], line[160] = "";

	metrics_fpair_record(fs->t, fr->f, fr->g, fr->met);
	fs->targeted++;
	fs->met += fr->met;
	if (fr->met && !metrics_fpair_counts(fs->t, fr->f, fr->g, &attempts, &covered) &&
	    covered == 1) {
		fs->pairs_met++;
		snprintf(line, sizeof(line),
			 "fpair: functions f%u and f%u ran concurrently, at attempt %" PRIu64
			 "; pairs met so far: %" PRIu64 " (%zu kept)",
			 fr->f, fr->g, attempts - 1 /* r starts at 1 */, fs->pairs_met, fs->kept);
	}
	snprintf(note, sizeof(note), "{\"f\":%u,\"g\":%u,\"met\":%s%s%s%s}", fr->f, fr->g,
		 fr->met ? "true" : "false", line[0] ? ",\"summary\":\"" : "", line,
		 line[0] ? "\"" : "");
	if (c->note)
		c->note(c->ctx, note);
}

static void fpair_run_end(struct strategy *s, struct strat_run *r, struct strat_campaign *c,
			  const struct strat_outcome *o)
{
	struct fpair_strat *fs = s->priv;
	struct fpair_run *fr = r->priv;

	if (!fr)
		return;
	/* The run's profile first, as if its points had added it. */
	for (size_t i = 0; i < fr->nseen; i++)
		metrics_fpair_profile_add(fs->t, &fr->seen[i]);
	if (fr->target)
		metrics_fpair_fly(fs->t, fr->f, fr->g, false);
	if (o->ran && fr->target)
		fpair_note_run(fs, fr, c);
	fs->kept = metrics_fpair_group(fs->t);
	free(fr->seen);
	cov_event_u64map_free(&fr->seen_index);
	free(fr->th);
	free(fr);
	r->priv = NULL;
}

static void release(struct strat_run *r, size_t i, enum fp_release why)
{
	struct fpair_run *fr = r->priv;

	fr->th[i].held = false;
	fr->last_release_ns = now_ns();
	fr->th[i].gone_ns = fr->last_release_ns;
	r->release(r, &r->threads[i], why);
}

/* The interleaving ends: whoever of the two is kept goes on. */
static void end_interleaving(struct strat_run *r)
{
	struct fpair_run *fr = r->priv;

	fr->interleaving = false;
	if (fr->a < fr->nth && fr->th[fr->a].held)
		release(r, fr->a, FP_REL_DONE);
	if (fr->b < fr->nth && fr->th[fr->b].held)
		release(r, fr->b, FP_REL_DONE);
}

/* A hold without a partner ends. */
static void end_hold(struct strat_run *r)
{
	struct fpair_run *fr = r->priv;
	size_t h = fr->holder;

	fr->holder = 0;
	if (h && fr->th[h - 1].held)
		release(r, h - 1, FP_REL_ALONE);
}

/* The next choice between the two threads (bit k of the pattern). */
static bool choice(struct fpair_run *fr)
{
	unsigned k = fr->choices++;

	return k < 64 && (fr->pattern >> k & 1);
}

static bool in_pair(const struct fpair_run *fr, uint32_t func)
{
	return func == fr->f || func == fr->g;
}

/* Does func complete the pair with the function the holder is in? */
static bool partners(const struct fpair_run *fr, uint32_t held_in, uint32_t func)
{
	return (held_in == fr->f && func == fr->g) || (held_in == fr->g && func == fr->f);
}

static void fpair_decide(struct strategy *s, struct strat_run *r, const struct strat_point *p,
			 struct strat_decision *d)
{
	struct fpair_run *fr = r->priv;
	size_t i = tindex(r, p->t), other;
	struct fp_thread *t;

	d->v = STRAT_PROCEED;
	if (!p->access)
		return;
	keep_access(fr, p->access); /* the table is the campaign's: at run_end */
	if (log_verbose > 1)
		log_debug("fpair: target (f%u, f%u): thread %s @%u in f%u (v%u op %u)%s%s%s", fr->f,
			  fr->g, p->t->path, p->access->site, p->access->func, p->access->obj,
			  p->access->op, fr->interleaving ? " interleaving" : "",
			  fr->holder ? " (a thread is held)" : "", fr->met ? " met" : "");
	t = fp_thread(fr, i);
	t->func = p->access->func;
	t->held = false;
	if (!fr->target)
		return;
	if (fr->interleaving) {
		if (i != fr->a && i != fr->b)
			return;
		other = i == fr->a ? fr->b : fr->a;
		if (!in_pair(fr, t->func) || ++fr->switches > FP_SWITCHES) {
			end_interleaving(r); /* it left the function, or enough */
			return;
		}
		/* One of the two goes on by one access, by the run's seed. */
		if (fr->th[other].held && choice(fr)) {
			t->held = true;
			t->held_ns = now_ns();
			d->v = STRAT_PARK;
			release(r, other, FP_REL_STEP);
		} else {
			d->v = STRAT_RELEASE;
			d->arg = FP_REL_STEP;
		}
		return;
	}
	if (fr->met || !in_pair(fr, t->func))
		return;
	if (fr->holder && fr->holder - 1 != i &&
	    partners(fr, fr->th[fr->holder - 1].func, t->func) && fr->th[fr->holder - 1].held) {
		/* Both inside the pair at once: interleave from here. */
		fr->met = true;
		fr->interleaving = true;
		fr->a = fr->holder - 1;
		fr->b = i;
		fr->holder = 0;
		fr->switches = 0;
		if (choice(fr)) {
			t->held = true;
			t->held_ns = now_ns();
			d->v = STRAT_PARK;
			release(r, fr->a, FP_REL_STEP);
		} else {
			d->v = STRAT_RELEASE;
			d->arg = FP_REL_STEP;
		}
		return;
	}
	if (!fr->holder && fr->holds < FP_HOLDS) {
		fr->holds++;
		fr->holder = i + 1;
		t->held = true;
		t->held_ns = now_ns();
		d->v = STRAT_PARK;
	}
}

static void fpair_point(struct strategy *s, struct strat_run *r, const struct strat_point *p,
			struct strat_decision *d)
{
	struct fpair_run *fr = r->priv;

	fpair_decide(s, r, p, d);
	/* A thread that goes on makes an all-parked note from before stale. */
	if (d->v != STRAT_PARK)
		fr->last_release_ns = fp_thread(fr, tindex(r, p->t))->gone_ns = now_ns();
}

/* A thread we keep shows an event: the watchdog let it go. */
static void fpair_event(struct strategy *s, struct strat_run *r, const struct cs_event *e,
			struct strat_thread *st)
{
	struct fpair_run *fr = r->priv;
	size_t i = tindex(r, st);

	fp_thread(fr, i)->seen_ns = now_ns();
	if (!fr->th[i].held)
		return;
	fr->th[i].held = false;
	if (fr->holder == i + 1)
		fr->holder = 0;
	if (fr->interleaving && (i == fr->a || i == fr->b))
		end_interleaving(r);
}

/* Every runnable thread is parked: the partner is blocked elsewhere. */
static void fpair_all_parked(struct strategy *s, struct strat_run *r, const struct policy_note *n)
{
	struct fpair_run *fr = r->priv;

	if (n->ts_ns <= fr->last_release_ns)
		return;
	r->drain(r);
	if (n->ts_ns <= fr->last_release_ns)
		return; /* a point drained just now went on after it */
	if (fr->interleaving)
		end_interleaving(r);
	else
		end_hold(r);
}

/* Thread i of the interleaving, held, has waited long enough for its
 * partner o: FP_HOLD_NS, and o has shown an event since it went on (it
 * runs elsewhere, or computes); a partner in flight is waited for up to
 * FP_INFLIGHT_NS, so that the access it was let go to make comes first,
 * as the run's schedule will say (a descheduled vCPU under TCG made it
 * come after: the failure did not replay). */
static bool stale(const struct fpair_run *fr, size_t i, size_t o, uint64_t now)
{
	const struct fp_thread *h = &fr->th[i], *p = &fr->th[o];
	bool in_flight = p->gone_ns > p->seen_ns;

	if (!h->held || now - h->held_ns < FP_HOLD_NS)
		return false;
	return !in_flight || now - p->gone_ns >= FP_INFLIGHT_NS;
}

static void fpair_tick(struct strategy *s, struct strat_run *r)
{
	struct fpair_run *fr = r->priv;
	uint64_t now = now_ns();

	if (fr->holder && now - fr->th[fr->holder - 1].held_ns >= FP_HOLD_NS)
		end_hold(r);
	if (fr->interleaving && (stale(fr, fr->a, fr->b, now) || stale(fr, fr->b, fr->a, now)))
		end_interleaving(r);
}

static int fpair_poll_ms(struct strategy *s, struct strat_run *r, int ms)
{
	struct fpair_run *fr = r->priv;

	return (fr->holder || fr->interleaving) && ms > 5 ? 5 : ms;
}

const struct strategy_ops strat_fpair_ops = {
	.name = "fpair",
	.summary = "seed 002's bug-driven function pairs: hold a thread inside one function of "
		   "the target pair until another is inside the other, then interleave their "
		   "accesses; implies --access",
	.flags = STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ACCESS_POINTS | STRAT_F_ACCESS |
		 STRAT_F_PICKS | STRAT_F_JOBS,
	.replay = STRAT_REPLAY_PACED,
	.init = fpair_init,
	.destroy = fpair_destroy,
	.campaign_end = fpair_campaign_end,
	.run_begin = fpair_run_begin,
	.config_json = fpair_config,
	.run_end = fpair_run_end,
	.event = fpair_event,
	.point = fpair_point,
	.all_parked = fpair_all_parked,
	.tick = fpair_tick,
	.poll_ms = fpair_poll_ms,
};
