// SPDX-License-Identifier: MIT
/*
 * The policy interface (policy.h): one front end, two backends. The real
 * backend forwards to sched_ctl; the fake one simulates the scheduler's
 * thread states so strategies can be unit-tested (tests/unit/test_policy.c).
 */
#include "kernel/policy.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "kernel/scx_concsched.h"
#include "lib/array_size.h"
#include "lib/xalloc.h"

struct policy_backend {
	int (*set_site)(struct policy *p, uint64_t site, const struct cs_site_policy *sp);
	int (*clear_site)(struct policy *p, uint64_t site);
	int (*thread_next)(struct policy *p, uint32_t tid, enum cs_action act, uint64_t delay_ns);
	int (*release)(struct policy *p, uint32_t tid);
	int (*serialize)(struct policy *p, enum cs_serial_mode mode, uint64_t seed);
	int (*set_prio)(struct policy *p, uint32_t tid, uint32_t prio);
	int (*parked)(struct policy *p, uint32_t *tids, int max);
	int (*poll)(struct policy *p, int timeout_ms);
	void (*destroy)(struct policy *p);
};

/* ---- fake backend state ----------------------------------------------- */

#define FAKE_MAX_THREADS 256
#define FAKE_MAX_SITES	 256
#define FAKE_MAX_NOTES	 64

struct fake_thread {
	uint32_t tid;
	int state; /* enum cs_tstate: RUN, PARKED, DELAYED */
	bool blocked;
	bool exited;
	uint32_t prio;
	enum cs_action next_action;
	uint64_t next_delay_ns;
	uint64_t park_ts, deadline;
};

struct fake_site {
	uint64_t site;
	struct cs_site_policy sp;
};

struct fake {
	struct fake_thread threads[FAKE_MAX_THREADS];
	int nr_threads;
	struct fake_site sites[FAKE_MAX_SITES];
	int nr_sites;
	struct policy_note notes[FAKE_MAX_NOTES];
	int nr_notes;
	uint64_t now_ns;
	uint64_t watchdog_ns;
	uint64_t watchdog_releases;
	enum cs_serial_mode serial;
	uint64_t seed;
	char *log;
	size_t log_len, log_cap;
};

struct policy {
	const struct policy_backend *be;
	struct sched_ctl *ctl; /* real backend */
	struct fake *fake;     /* fake backend */
	policy_all_parked_fn all_parked;
	void *all_parked_ctx;
	policy_resumed_fn resumed;
	void *resumed_ctx;
	int delivered;
};

/* ---- front end -------------------------------------------------------- */

static int policy_site(struct policy *p, uint64_t site, uint32_t tid, enum cs_action act,
		       uint64_t delay_us, uint64_t skip, uint64_t count)
{
	struct cs_site_policy sp = {
		.action = act,
		.tid = tid,
		.delay_ns = delay_us * 1000ULL,
		.skip = skip,
		.count = count,
	};

	return p->be->set_site(p, site, &sp);
}

int policy_park_site(struct policy *p, uint64_t site, uint32_t tid, uint64_t skip, uint64_t count)
{
	return policy_site(p, site, tid, CS_ACT_PARK, 0, skip, count);
}

int policy_delay_site(struct policy *p, uint64_t site, uint32_t tid, uint64_t delay_us,
		      uint64_t skip, uint64_t count)
{
	return policy_site(p, site, tid, CS_ACT_DELAY, delay_us, skip, count);
}

int policy_yield_site(struct policy *p, uint64_t site, uint32_t tid, uint64_t skip, uint64_t count)
{
	return policy_site(p, site, tid, CS_ACT_YIELD, 0, skip, count);
}

int policy_release_at_site(struct policy *p, uint64_t site, uint32_t tid, uint32_t release_tid,
			   uint64_t skip, uint64_t count)
{
	struct cs_site_policy sp = {
		.action = CS_ACT_RELEASE,
		.tid = tid,
		.skip = skip,
		.count = count,
		.release_tid = release_tid,
	};

	return p->be->set_site(p, site, &sp);
}

int policy_clear_site(struct policy *p, uint64_t site)
{
	return p->be->clear_site(p, site);
}

int policy_park_next(struct policy *p, uint32_t tid)
{
	return p->be->thread_next(p, tid, CS_ACT_PARK, 0);
}

int policy_delay_next(struct policy *p, uint32_t tid, uint64_t delay_us)
{
	return p->be->thread_next(p, tid, CS_ACT_DELAY, delay_us * 1000ULL);
}

int policy_yield_next(struct policy *p, uint32_t tid)
{
	return p->be->thread_next(p, tid, CS_ACT_YIELD, 0);
}

int policy_release(struct policy *p, uint32_t tid)
{
	return p->be->release(p, tid);
}

int policy_serialize(struct policy *p, enum cs_serial_mode mode, uint64_t seed)
{
	if (mode > CS_SERIAL_PRIO)
		return -EINVAL;
	return p->be->serialize(p, mode, seed);
}

int policy_set_prio(struct policy *p, uint32_t tid, uint32_t prio)
{
	return p->be->set_prio(p, tid, prio);
}

int policy_parked(struct policy *p, uint32_t *tids, int max)
{
	return p->be->parked(p, tids, max);
}

void policy_on_all_parked(struct policy *p, policy_all_parked_fn fn, void *ctx)
{
	p->all_parked = fn;
	p->all_parked_ctx = ctx;
}

void policy_on_resumed(struct policy *p, policy_resumed_fn fn, void *ctx)
{
	p->resumed = fn;
	p->resumed_ctx = ctx;
}

int policy_poll(struct policy *p, int timeout_ms)
{
	return p->be->poll(p, timeout_ms);
}

void policy_free(struct policy *p)
{
	if (!p)
		return;
	if (p->be->destroy)
		p->be->destroy(p);
	free(p);
}

/* ---- real backend: sched_ctl ------------------------------------------ */

static int real_set_site(struct policy *p, uint64_t site, const struct cs_site_policy *sp)
{
	return scx_concsched_set_site(p->ctl, site, sp);
}

static int real_clear_site(struct policy *p, uint64_t site)
{
	return scx_concsched_clear_site(p->ctl, site);
}

static int real_thread_next(struct policy *p, uint32_t tid, enum cs_action act, uint64_t delay_ns)
{
	return scx_concsched_thread_next(p->ctl, tid, act, delay_ns);
}

static int real_release(struct policy *p, uint32_t tid)
{
	return scx_concsched_release(p->ctl, tid);
}

static int real_serialize(struct policy *p, enum cs_serial_mode mode, uint64_t seed)
{
	return scx_concsched_set_serial(p->ctl, mode, seed);
}

static int real_set_prio(struct policy *p, uint32_t tid, uint32_t prio)
{
	return scx_concsched_set_prio(p->ctl, tid, prio);
}

static int real_parked(struct policy *p, uint32_t *tids, int max)
{
	return scx_concsched_parked(p->ctl, tids, max);
}

static void real_note(const struct cs_sched_note *n, void *ctx)
{
	struct policy *p = ctx;
	struct policy_note pn;
	uint32_t k;

	if (n->kind == CS_NOTE_RESUMED && p->resumed) {
		p->resumed(p, n->tid, n->ts_ns, n->reason, p->resumed_ctx);
		return;
	}
	if (n->kind != CS_NOTE_ALL_PARKED || !p->all_parked)
		return;
	memset(&pn, 0, sizeof(pn));
	pn.ts_ns = n->ts_ns;
	pn.nr_parked = n->nr_parked;
	pn.nr_threads = n->nr_threads;
	for (k = 0; k < n->nr_parked && k < CS_NOTE_MAX_TIDS; k++)
		pn.tids[k] = n->tids[k];
	p->delivered++;
	p->all_parked(p, &pn, p->all_parked_ctx);
}

static int real_poll(struct policy *p, int timeout_ms)
{
	int err;

	p->delivered = 0;
	err = scx_concsched_poll(p->ctl, timeout_ms, real_note, p);
	return err < 0 ? err : p->delivered;
}

static const struct policy_backend real_backend = {
	.set_site = real_set_site,
	.clear_site = real_clear_site,
	.thread_next = real_thread_next,
	.release = real_release,
	.serialize = real_serialize,
	.set_prio = real_set_prio,
	.parked = real_parked,
	.poll = real_poll,
};

struct policy *policy_new_sched(struct sched_ctl *ctl)
{
	struct policy *p = xcalloc(1, sizeof(*p));

	p->be = &real_backend;
	p->ctl = ctl;
	return p;
}

/* ---- fake backend ----------------------------------------------------- */

static void fake_log(struct fake *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void fake_log(struct fake *f, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(f->log + f->log_len, f->log_cap - f->log_len, fmt, ap);
		va_end(ap);
		if (n >= 0 && f->log_len + (size_t)n + 1 < f->log_cap)
			break;
		f->log_cap = f->log_cap * 2 + (size_t)n + 64;
		f->log = xrealloc(f->log, f->log_cap);
	}
	f->log_len += (size_t)n;
	f->log[f->log_len++] = '\n';
	f->log[f->log_len] = '\0';
}

static struct fake_thread *fake_find(struct fake *f, uint32_t tid)
{
	int i;

	for (i = 0; i < f->nr_threads; i++)
		if (f->threads[i].tid == tid && !f->threads[i].exited)
			return &f->threads[i];
	return NULL;
}

static struct fake_site *fake_site_find(struct fake *f, uint64_t site)
{
	int i;

	for (i = 0; i < f->nr_sites; i++)
		if (f->sites[i].site == site)
			return &f->sites[i];
	return NULL;
}

static bool fake_stopped(const struct fake_thread *t)
{
	return t->state == CS_TS_PARKED || t->state == CS_TS_DELAYED;
}

/* The scheduler's cs_check_all_parked(): every runnable thread parked. */
static void fake_check_all_parked(struct fake *f)
{
	struct policy_note n;
	uint32_t threads = 0;
	int i;

	memset(&n, 0, sizeof(n));
	for (i = 0; i < f->nr_threads; i++) {
		struct fake_thread *t = &f->threads[i];

		if (t->exited)
			continue;
		threads++;
		if (fake_stopped(t)) {
			if (n.nr_parked < CS_NOTE_MAX_TIDS)
				n.tids[n.nr_parked] = t->tid;
			n.nr_parked++;
		} else if (!t->blocked) {
			return; /* someone can still run */
		}
	}
	if (!n.nr_parked || f->nr_notes >= FAKE_MAX_NOTES)
		return;
	n.ts_ns = f->now_ns;
	n.nr_threads = threads;
	f->notes[f->nr_notes++] = n;
}

static int fake_set_site(struct policy *p, uint64_t site, const struct cs_site_policy *sp)
{
	struct fake *f = p->fake;
	struct fake_site *s = fake_site_find(f, site);
	static const char *const names[] = { "none", "park", "delay", "yield", "release" };

	if (sp->action == CS_ACT_RELEASE)
		fake_log(f, "release_site 0x%llx tid=%u release=%u skip=%llu count=%llu",
			 (unsigned long long)site, sp->tid, sp->release_tid,
			 (unsigned long long)sp->skip, (unsigned long long)sp->count);
	else
		fake_log(f, "%s_site 0x%llx tid=%u delay_us=%llu skip=%llu count=%llu",
			 sp->action < ARRAY_SIZE(names) ? names[sp->action] : "?",
			 (unsigned long long)site, sp->tid,
			 (unsigned long long)(sp->delay_ns / 1000), (unsigned long long)sp->skip,
			 (unsigned long long)sp->count);
	if (!s) {
		if (f->nr_sites >= FAKE_MAX_SITES)
			return -E2BIG;
		s = &f->sites[f->nr_sites++];
	}
	s->site = site;
	s->sp = *sp;
	s->sp.hits = 0;
	return 0;
}

static int fake_clear_site(struct policy *p, uint64_t site)
{
	struct fake *f = p->fake;
	struct fake_site *s = fake_site_find(f, site);

	fake_log(f, "clear_site 0x%llx", (unsigned long long)site);
	if (s)
		*s = f->sites[--f->nr_sites];
	return 0;
}

static int fake_thread_next(struct policy *p, uint32_t tid, enum cs_action act, uint64_t delay_ns)
{
	struct fake *f = p->fake;
	struct fake_thread *t = fake_find(f, tid);
	static const char *const names[] = { "none", "park", "delay", "yield" };

	fake_log(f, "%s_next %u delay_us=%llu", act < ARRAY_SIZE(names) ? names[act] : "?", tid,
		 (unsigned long long)(delay_ns / 1000));
	if (!t)
		return -ENOENT;
	t->next_action = act;
	t->next_delay_ns = delay_ns;
	return 0;
}

static bool fake_release_thread(struct fake *f, struct fake_thread *t)
{
	if (!fake_stopped(t))
		return false;
	t->state = CS_TS_RUN;
	return true;
}

static int fake_release(struct policy *p, uint32_t tid)
{
	struct fake *f = p->fake;
	struct fake_thread *t;
	int i, n = 0;

	fake_log(f, "release %u", tid);
	if (tid) {
		t = fake_find(f, tid);
		return t && fake_release_thread(f, t) ? 1 : 0;
	}
	for (i = 0; i < f->nr_threads; i++)
		if (!f->threads[i].exited && fake_release_thread(f, &f->threads[i]))
			n++;
	return n;
}

static int fake_serialize(struct policy *p, enum cs_serial_mode mode, uint64_t seed)
{
	struct fake *f = p->fake;

	fake_log(f, "serialize %d seed=%llu", mode, (unsigned long long)seed);
	f->serial = mode;
	f->seed = seed;
	return 0;
}

static int fake_set_prio(struct policy *p, uint32_t tid, uint32_t prio)
{
	struct fake *f = p->fake;
	struct fake_thread *t = fake_find(f, tid);

	fake_log(f, "prio %u %u", tid, prio);
	if (!t)
		return -ENOENT;
	t->prio = prio;
	return 0;
}

static int fake_parked(struct policy *p, uint32_t *tids, int max)
{
	struct fake *f = p->fake;
	int i, n = 0;

	for (i = 0; i < f->nr_threads; i++) {
		if (f->threads[i].exited || !fake_stopped(&f->threads[i]))
			continue;
		if (n < max)
			tids[n] = f->threads[i].tid;
		n++;
	}
	return n;
}

static int fake_poll(struct policy *p, int timeout_ms)
{
	struct fake *f = p->fake;
	struct policy_note n;
	int delivered = 0;

	while (f->nr_notes > 0) {
		n = f->notes[0];
		memmove(f->notes, f->notes + 1, (size_t)(f->nr_notes - 1) * sizeof(n));
		f->nr_notes--;
		delivered++;
		if (p->all_parked)
			p->all_parked(p, &n, p->all_parked_ctx);
	}
	return delivered;
}

static void fake_destroy(struct policy *p)
{
	free(p->fake->log);
	free(p->fake);
}

static const struct policy_backend fake_backend = {
	.set_site = fake_set_site,
	.clear_site = fake_clear_site,
	.thread_next = fake_thread_next,
	.release = fake_release,
	.serialize = fake_serialize,
	.set_prio = fake_set_prio,
	.parked = fake_parked,
	.poll = fake_poll,
	.destroy = fake_destroy,
};

struct policy *policy_new_fake(void)
{
	struct policy *p = xcalloc(1, sizeof(*p));

	p->be = &fake_backend;
	p->fake = xcalloc(1, sizeof(*p->fake));
	p->fake->watchdog_ns = (uint64_t)SCHED_CTL_WATCHDOG_MS_DFL * 1000000ULL;
	p->fake->log_cap = 256;
	p->fake->log = xcalloc(1, p->fake->log_cap);
	return p;
}

int policy_fake_thread(struct policy *p, uint32_t tid)
{
	struct fake *f = p->fake;
	struct fake_thread *t;

	if (!f || !tid)
		return -EINVAL;
	if (fake_find(f, tid))
		return -EEXIST;
	if (f->nr_threads >= FAKE_MAX_THREADS)
		return -E2BIG;
	t = &f->threads[f->nr_threads++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->state = CS_TS_RUN;
	return 0;
}

/* Same decision as cs_point_action() in bpf/sched_point.bpf.h. */
static enum cs_action fake_point_action(struct fake *f, struct fake_thread *t, uint64_t site,
					uint16_t op, uint64_t *delay_ns, uint32_t *release_tid)
{
	struct fake_site *s;
	enum cs_action act = t->next_action;
	uint64_t hit;

	if (act != CS_ACT_NONE) {
		t->next_action = CS_ACT_NONE;
		*delay_ns = t->next_delay_ns;
		return act == CS_ACT_RELEASE ? CS_ACT_NONE : act;
	}
	s = fake_site_find(f, site);
	if (!s)
		s = fake_site_find(f, CS_SITE_OP_KEY(op));
	if (!s || s->sp.action == CS_ACT_NONE)
		return CS_ACT_NONE;
	if (s->sp.tid && s->sp.tid != t->tid)
		return CS_ACT_NONE;
	hit = ++s->sp.hits;
	if (hit <= s->sp.skip)
		return CS_ACT_NONE;
	if (s->sp.count && hit > s->sp.skip + s->sp.count)
		return CS_ACT_NONE;
	*delay_ns = s->sp.delay_ns;
	*release_tid = s->sp.release_tid;
	return (enum cs_action)s->sp.action;
}

int policy_fake_point(struct policy *p, uint32_t tid, uint64_t site, uint16_t op)
{
	struct fake *f = p->fake;
	struct fake_thread *t;
	uint64_t delay_ns = 0;
	uint32_t release_tid = 0;
	enum cs_action act;
	int i;

	if (!f)
		return -EINVAL;
	t = fake_find(f, tid);
	if (!t)
		return -ENOENT;
	if (t->blocked || fake_stopped(t))
		return -EBUSY; /* a stopped thread reaches no point */
	act = fake_point_action(f, t, site, op, &delay_ns, &release_tid);
	if (act == CS_ACT_RELEASE) {
		for (i = 0; i < f->nr_threads; i++) {
			struct fake_thread *o = &f->threads[i];

			if (!o->exited && (!release_tid || o->tid == release_tid))
				fake_release_thread(f, o);
		}
	} else if (act == CS_ACT_PARK) {
		t->state = CS_TS_PARKED;
		t->park_ts = f->now_ns;
	} else if (act == CS_ACT_DELAY) {
		t->state = CS_TS_DELAYED;
		t->park_ts = f->now_ns;
		t->deadline = f->now_ns + delay_ns;
	}
	if (act == CS_ACT_PARK || act == CS_ACT_DELAY)
		fake_check_all_parked(f);
	return act;
}

int policy_fake_block(struct policy *p, uint32_t tid, bool blocked)
{
	struct fake_thread *t = p->fake ? fake_find(p->fake, tid) : NULL;

	if (!t)
		return -ENOENT;
	t->blocked = blocked;
	if (blocked)
		fake_check_all_parked(p->fake);
	return 0;
}

int policy_fake_exit(struct policy *p, uint32_t tid)
{
	struct fake_thread *t = p->fake ? fake_find(p->fake, tid) : NULL;

	if (!t)
		return -ENOENT;
	t->exited = true;
	fake_check_all_parked(p->fake);
	return 0;
}

int policy_fake_advance(struct policy *p, uint64_t us)
{
	struct fake *f = p->fake;
	int i, n = 0;

	if (!f)
		return -EINVAL;
	f->now_ns += us * 1000ULL;
	for (i = 0; i < f->nr_threads; i++) {
		struct fake_thread *t = &f->threads[i];

		if (t->exited || !fake_stopped(t))
			continue;
		/* The scheduler bounds a delay by the watchdog too. */
		if (t->state == CS_TS_DELAYED && f->now_ns >= t->deadline &&
		    t->deadline < t->park_ts + f->watchdog_ns) {
			t->state = CS_TS_RUN;
			n++;
		} else if (f->now_ns >= t->park_ts + f->watchdog_ns) {
			t->state = CS_TS_RUN;
			f->watchdog_releases++;
			n++;
		}
	}
	return n;
}

void policy_fake_watchdog(struct policy *p, uint64_t us)
{
	if (p->fake)
		p->fake->watchdog_ns = us * 1000ULL;
}

int policy_fake_state(struct policy *p, uint32_t tid)
{
	struct fake_thread *t = p->fake ? fake_find(p->fake, tid) : NULL;

	return t ? t->state : -ENOENT;
}

bool policy_fake_blocked(struct policy *p, uint32_t tid)
{
	struct fake_thread *t = p->fake ? fake_find(p->fake, tid) : NULL;

	return t && t->blocked;
}

enum cs_serial_mode policy_fake_serial(struct policy *p)
{
	return p->fake ? p->fake->serial : CS_SERIAL_OFF;
}

uint32_t policy_fake_prio(struct policy *p, uint32_t tid)
{
	struct fake_thread *t = p->fake ? fake_find(p->fake, tid) : NULL;

	return t ? t->prio : 0;
}

uint64_t policy_fake_watchdog_releases(struct policy *p)
{
	return p->fake ? p->fake->watchdog_releases : 0;
}

const char *policy_fake_log(struct policy *p)
{
	return p->fake ? p->fake->log : "";
}

void policy_fake_clear_log(struct policy *p)
{
	if (!p->fake)
		return;
	p->fake->log_len = 0;
	p->fake->log[0] = '\0';
}
