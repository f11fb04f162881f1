// SPDX-License-Identifier: MIT
/*
 * A run that does not end by itself (run_timeout.h): steering and the
 * access probes off at the run timeout, the deadlock report, and the watch
 * that finds a lock cycle before the timeout.
 */
#include <inttypes.h>

#include "run/run_timeout.h"
#include "run/run_session.h"

#include "results/oracle.h"
#include "run/run_sites.h"
#include "kernel/scx_concsched.h"
#include "kernel/sync.h"

#include "sync.skel.h"
#include "lib/fnv1a64.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/taskcpu.h"
#include "lib/xalloc.h"

#include <bpf/bpf.h>
#include <time.h>

struct run_cpu_mark {
	uint32_t tgid, tid;
	struct taskcpu c;
	bool ok; /* read: the thread was there */
};

/*
 * The lock request thread t waits in, if any: its latest event when that
 * is a blocking request, else the call the probe saw it enter and not
 * return from (cs_sync_threads' pending). The probe records a request
 * only when it sees the lock busy (probes/sync.bpf.c enter_lock), and it
 * learns a holder only when the holder's call returns: a request that
 * came while the holder was inside its own call (bad_lockorder's two
 * tellers, each blocking on the lock the other had just taken; seen in
 * the CI of b024b41, where the estimation run's deadlock showed no
 * cycle), or after a recursive mutex's inner unlock
 * (tests/programs/recursive_cycle), blocks with no request event. ts:
 * when it came.
 */
struct dl_req {
	bool blocked;
	bool from_probe; /* not in the model: read from the probe's state */
	uint16_t op;	 /* CS_OP_*LOCK_REQ */
	uint64_t obj, site, ts;
};

static uint16_t pending_req_op(uint32_t fn)
{
	switch (fn) {
	case CS_FN_MUTEX_LOCK:
		return CS_OP_LOCK_REQ;
	case CS_FN_RW_RDLOCK:
		return CS_OP_RDLOCK_REQ;
	case CS_FN_RW_WRLOCK:
		return CS_OP_WRLOCK_REQ;
	default: /* try and timed calls give up; spin locks have no entry */
		return 0;
	}
}

/* The probe's per-thread states (cs_sync_threads), -1 without probes. */
static int threads_fd(struct onerun *r)
{
	return r->sp ? sync_probes_map_fd(r->sp, "cs_sync_threads") : -1;
}

static struct dl_req thread_request(int fd, const struct tm_thread *t)
{
	const struct tm_action *last = thread_model_last(t);
	struct dl_req q = { 0 };
	struct cs_sync_thread st;

	if (t->exited)
		return q;
	if (last && thread_model_action_waits_for_good(last)) {
		q.blocked = true;
		q.op = last->op;
		q.obj = last->obj;
		q.site = last->site;
		q.ts = last->ts;
		return q;
	}
	if (fd < 0 || bpf_map_lookup_elem(fd, &t->tid, &st) || st.tgid != t->tgid ||
	    st.gen != t->gen || (st.flags & (CS_THR_EXITED | CS_THR_STALE)) ||
	    (st.pending.flags & CS_EV_NOWAIT) || !pending_req_op(st.pending.fn) ||
	    (last && st.pending.ts < last->ts))
		return q;
	q.blocked = q.from_probe = true;
	q.op = pending_req_op(st.pending.fn);
	q.obj = st.pending.obj;
	q.site = st.pending.site;
	q.ts = st.pending.ts;
	return q;
}

/* A deadlock's requests the model lacked (from_probe) enter it, so that
 * what reads the run's model (the portfolio's signal) sees the cycle:
 * each thread waits there for good. */
static void requests_to_model(struct onerun *r, const struct dl_req *q, const struct dl_thread *dt,
			      size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		const struct tm_thread *t = &r->tm.threads[i];
		struct cs_event e = { 0 };

		if (!q[i].from_probe || dt[i].ran)
			continue;
		e.ts_ns = q[i].ts;
		e.obj = q[i].obj;
		e.site = q[i].site;
		e.pid = t->tgid;
		e.tid = t->tid;
		e.gen = t->gen;
		e.seq = t->next_seq;
		e.op = q[i].op;
		e.flags = CS_EV_BLOCKED;
		e.nlocks = t->nheld;
		thread_model_add_event(&r->tm, &e);
		log_debug("run: thread %u blocked in a lock request the probe did not record "
			  "(0x%" PRIx64 "): added to the run's model",
			  e.tid, (uint64_t)e.obj);
	}
}

/* The deadlock report at a timeout: who holds what, who waits where. */
static const char *action_site(struct onerun *r, const struct tm_thread *t, uint64_t addr,
			       char *buf, size_t len)
{
	struct site_ref s;
	struct sym_site ss;
	char key[PATH_MAX + 32];

	syncov_resolve(&r->res, t->tgid, t->gen, addr, &s);
	syncov_site_describe(syncov_site_key(&s, key, sizeof(key)), &ss, buf, len);
	return buf;
}

/* "first (0x4040a0)" for a lock in a global, else its address. */
static const char *lock_text(struct onerun *r, const struct tm_thread *t, uint64_t lock, char *buf,
			     size_t len)
{
	struct site_ref s;
	struct sym_site ss;
	char key[PATH_MAX + 32], text[1024];

	syncov_resolve(&r->res, t->tgid, t->gen, lock, &s);
	if (s.object) {
		syncov_site_describe(syncov_site_key(&s, key, sizeof(key)), &ss, text,
				     sizeof(text));
		if (ss.symbol && !ss.is_func) {
			if (ss.sym_offset)
				snprintf(buf, len, "%s+%" PRIu64 " (0x%" PRIx64 ")", ss.symbol,
					 ss.sym_offset, lock);
			else
				snprintf(buf, len, "%s (0x%" PRIx64 ")", ss.symbol, lock);
			return buf;
		}
	}
	snprintf(buf, len, "0x%" PRIx64, lock);
	return buf;
}

uint64_t run_timeout_mark_after_ns(double grace_s)
{
	uint64_t q = (uint64_t)(grace_s * 1e9 / 4);

	return q > DL_CHECK_NS ? q : DL_CHECK_NS;
}

void run_timeout_cpu_mark(struct onerun *r, uint64_t now)
{
	size_t i, n = r->tm.nthreads;

	free(r->cpu_mark);
	r->cpu_mark = xcalloc(n ? n : 1, sizeof(*r->cpu_mark));
	for (i = 0; i < n; i++) {
		const struct tm_thread *t = &r->tm.threads[i];
		struct run_cpu_mark *m = &r->cpu_mark[i];

		m->tgid = t->tgid;
		m->tid = t->tid;
		m->ok = !t->exited && taskcpu_read((int)t->tgid, (int)t->tid, &m->c);
	}
	r->ncpu_mark = n;
	r->cpu_mark_ns = now;
}

static const struct run_cpu_mark *cpu_mark_find(const struct onerun *r, uint32_t tgid, uint32_t tid)
{
	size_t i;

	for (i = 0; i < r->ncpu_mark; i++)
		if (r->cpu_mark[i].tid == tid && r->cpu_mark[i].tgid == tgid)
			return r->cpu_mark[i].ok ? &r->cpu_mark[i] : NULL;
	return NULL;
}

/*
 * The CPU evidence for the threads whose last action is a blocking lock
 * request (dt[i].blocked): a thread blocked in one sleeps in the kernel
 * and is never put on a CPU. Each is read twice DL_SAMPLE_NS apart; one
 * that ran between, that is runnable, that ran after the mark of the
 * grace period (run_timeout_cpu_mark) when its request came before that,
 * or that is gone, is not blocked (dt[i].ran). The mark is then read
 * anew.
 */
static void cpu_evidence(struct onerun *r, struct dl_thread *dt, const struct dl_req *q, size_t n)
{
	struct taskcpu *c0 = xcalloc(n, sizeof(*c0)), c1;
	bool *ok = xcalloc(n, sizeof(*ok));
	struct timespec ts = { 0, DL_SAMPLE_NS };
	size_t i;

	for (i = 0; i < n; i++)
		if (dt[i].blocked)
			ok[i] = taskcpu_read((int)r->tm.threads[i].tgid, (int)r->tm.threads[i].tid,
					     &c0[i]);
	nanosleep(&ts, NULL);
	for (i = 0; i < n; i++) {
		const struct tm_thread *t = &r->tm.threads[i];
		const struct run_cpu_mark *m = cpu_mark_find(r, t->tgid, t->tid);

		if (!dt[i].blocked)
			continue;
		if (!ok[i] || !taskcpu_read((int)t->tgid, (int)t->tid, &c1))
			dt[i].ran = true; /* gone: it blocks nothing */
		else if (taskcpu_ran(&c0[i], &c1))
			dt[i].ran = true;
		else if (m && q[i].ts < r->cpu_mark_ns && taskcpu_ran(&m->c, &c1))
			dt[i].ran = true;
		if (dt[i].ran)
			log_debug("run: thread %u ran after its lock request (%s): not blocked",
				  t->tid, dt[i].wait_site ? dt[i].wait_site : "?");
	}
	free(c0);
	free(ok);
	/* The watch asks again: the next time, against counters from now (a
	 * thread let go late that has blocked since is blocked then). */
	if (r->cpu_mark_ns)
		run_timeout_cpu_mark(r, now_ns());
}

void run_timeout_analyze_deadlock(struct onerun *r)
{
	struct dl_thread *dt;
	struct dl_held *held;
	struct dl_req *q;
	char(*names)[64], (*texts)[512];
	size_t i, j, n, nh = 0, nt = 0, blocked = 0;
	int fd = threads_fd(r);

	run_session_consume(r);
	n = r->tm.nthreads;
	if (!n)
		return;
	run_sites_refresh_vmas(r);
	dt = xcalloc(n, sizeof(*dt));
	q = xcalloc(n, sizeof(*q));
	held = xcalloc(n * CS_LOCKSET_MAX, sizeof(*held));
	names = xcalloc(n, sizeof(*names));
	texts = xcalloc(n * (2 * CS_LOCKSET_MAX + 2), sizeof(*texts));
	for (i = 0; i < n; i++) {
		const struct tm_thread *t = &r->tm.threads[i];
		struct strat_thread *rt = run_sites_thread_find(r, t->tid);

		snprintf(names[i], sizeof(names[i]), "%s (tid %u)", rt ? rt->path : "?", t->tid);
		dt[i].name = names[i];
		dt[i].held = &held[nh];
		for (j = 0; j < t->nheld && j < CS_LOCKSET_MAX; j++) {
			held[nh].lock = t->held[j];
			held[nh].lock_name =
				lock_text(r, t, t->held[j], texts[nt++], sizeof(texts[0]));
			held[nh].site = t->held_site[j] ? action_site(r, t, t->held_site[j],
								      texts[nt++], sizeof(texts[0]))
							: NULL;
			nh++;
			dt[i].nheld++;
		}
		/* its latest event (also when the model is truncated), or the
		 * call the probe saw it enter */
		q[i] = thread_request(fd, t);
		if (q[i].blocked) {
			dt[i].blocked = true;
			dt[i].waits_for = q[i].obj;
			dt[i].waits_name = lock_text(r, t, q[i].obj, texts[nt++], sizeof(texts[0]));
			dt[i].wait_site =
				action_site(r, t, q[i].site, texts[nt++], sizeof(texts[0]));
			blocked++;
		}
	}
	/* A cycle of requests is a deadlock only if none of its threads ran. */
	if (blocked && oracle_deadlock_analyze(dt, n, NULL, NULL, 0) > 0)
		cpu_evidence(r, dt, q, n);
	if (blocked && oracle_deadlock_analyze(dt, n, NULL, r->deadlock, sizeof(r->deadlock)) > 0) {
		r->has_deadlock = true;
		requests_to_model(r, q, dt, n);
	}
	free(q);
	free(dt);
	free(held);
	free(names);
	free(texts);
}

/* The run timeout under steering: is the program stuck without us? Every
 * parked, delayed and halted thread goes on, and steering stops for the
 * rest of the run: no park, no delay, no serialization. */
void run_timeout_steering_off(struct onerun *r)
{
	struct cs_sched_stats ss = { 0 };

	scx_concsched_stats(r->ctl, &ss);
	/* The scheduler's counters run for the whole session: this run's. */
	r->parks_at_timeout = ss.parks - r->parks_at_start;
	r->watchdog_at_timeout = ss.watchdog - r->watchdog_at_start;
	r->delays_at_timeout = ss.delays + r->host.injected;
	policy_serialize(r->pol, CS_SERIAL_OFF, 0);
	scx_concsched_quiesce(r->ctl);
	strat_host_stop(&r->host);
	r->steer = false;
	r->graced = true;
	r->steer_stopped = true;
	log_debug("run: steering off %.3g s into the run (run timeout %.3g s; %" PRIu64
		  " parks, %" PRIu64 " watchdog releases); %.3g s of grace at least",
		  (now_ns() - r->t0) / 1e9, r->timeout_s, r->parks_at_timeout,
		  r->watchdog_at_timeout, r->grace_s);
}

/* The run timeout with the access probes on: they are detached (the next
 * run attaches them again), so what is left of the run runs unprobed. */
void run_timeout_probes_off(struct onerun *r)
{
	uint64_t t0 = now_ns();
	int err;

	r->accesses_at_timeout = access_probes_stat(&r->sess->ap, CS_ASTAT_EVENTS);
	err = access_probes_stop(&r->sess->ap);

	r->probes_stopped = true;
	r->graced = true;
	if (err)
		log_warn("cannot stop the access probes at the run timeout: %s", strerror(-err));
	log_debug("run: access probes off %.3g s into the run (run timeout %.3g s; %" PRIu64
		  " accesses; detached in %.3g ms); %.3g s of grace at least",
		  (now_ns() - r->t0) / 1e9, r->timeout_s, r->accesses_at_timeout,
		  (now_ns() - t0) / 1e6, r->grace_s);
}

static uint64_t lock_cycle_sig(struct onerun *r)
{
	const struct thread_model *m = &r->tm;
	size_t n = m->nthreads, i, j, k, len, nh = 0;
	struct dl_thread *dt;
	struct dl_held *held;
	size_t *cyc;
	uint64_t sig = FNV1A64_INIT;
	int fd = threads_fd(r);

	if (!n || m->truncated || m->seq_gaps)
		return 0;
	dt = xcalloc(n, sizeof(*dt));
	held = xcalloc(n * CS_LOCKSET_MAX, sizeof(*held));
	cyc = xcalloc(n, sizeof(*cyc));
	for (i = 0; i < n; i++) {
		const struct tm_thread *t = &m->threads[i];
		struct dl_req q = thread_request(fd, t);

		dt[i].held = &held[nh];
		for (j = 0; j < t->nheld && j < CS_LOCKSET_MAX; j++) {
			held[nh++].lock = t->held[j];
			dt[i].nheld++;
		}
		dt[i].blocked = q.blocked;
		dt[i].waits_for = q.obj;
	}
	len = oracle_deadlock_analyze(dt, n, cyc, NULL, 0);
	for (k = 0; k < len; k++) {
		const struct tm_thread *t = &m->threads[cyc[k]];
		uint64_t w[2] = { t->tid, t->nevents };

		sig = fnv1a64(w, sizeof(w), sig);
	}
	free(dt);
	free(held);
	free(cyc);
	return len ? sig | 1 : 0;
}

enum dl_watch run_timeout_lock_cycle_watch(struct onerun *r, uint64_t now)
{
	uint64_t sig;

	if (now < r->dl_next_ns)
		return DL_NONE;
	r->dl_next_ns = now + DL_CHECK_NS;
	run_session_consume(r);
	sig = lock_cycle_sig(r);
	if (!sig || sig != r->dl_sig) {
		r->dl_sig = sig;
		r->dl_first_ns = r->dl_since_ns = now;
		return DL_NONE;
	}
	if (r->steer) {
		if (now - r->dl_since_ns < DL_SETTLE_NS)
			return DL_NONE;
		log_debug("run: a lock cycle for %.3g s under steering: every thread goes on",
			  (now - r->dl_since_ns) / 1e9);
		run_timeout_steering_off(r);
		r->dl_since_ns = now;
		return DL_STEERING_OFF;
	}
	if (now - r->dl_since_ns < DL_CONFIRM_NS)
		return DL_NONE;
	run_timeout_analyze_deadlock(r);
	if (!r->has_deadlock)
		return DL_NONE;
	r->dl_confirm_s = (now - r->dl_since_ns) / 1e9;
	r->dl_found_s = (r->dl_first_ns - r->t0) / 1e9;
	if (r->dl_found_s <= 0)
		r->dl_found_s = 1e-9;
	return DL_CONFIRMED;
}
