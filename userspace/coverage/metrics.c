// SPDX-License-Identifier: MIT
/*
 * Coverage-task producers for the metrics of ALGORITHMS.md sections 3-5
 * (LP, ConcurPairs, Avio*, HBPair*, GoodLock*, Eraser*, GoldiLock-SC, Sync,
 * function pairs) plus the containers and the cs_event converter they share
 * with races.c and map_patterns.c. Key formats are listed in docs/metrics.md.
 */
#include "coverage/metrics.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "coverage/map_patterns.h"
#include "coverage/races.h"
#include "lib/array_size.h"
#include "lib/xalloc.h"

/* ---- names ------------------------------------------------------------------ */

static const char *const metric_names[COV__COUNT] = {
	[COV_LP] = "lp",
	[COV_CONCURPAIRS] = "concurpairs",
	[COV_AVIO] = "avio*",
	[COV_HBPAIR] = "hbpair*",
	[COV_GOODLOCK] = "goodlock*",
	[COV_ERASER] = "eraser*",
	[COV_GOLDILOCK_SC] = "goldilock-sc",
	[COV_SYNC] = "sync",
	[COV_FPAIR] = "fpair",
	[COV_MAP] = "map",
};

const char *metrics_metric_name(enum cov_metric m)
{
	return (unsigned)m < COV__COUNT ? metric_names[m] : "?";
}

int metrics_metric_parse(const char *name)
{
	for (int i = 0; i < COV__COUNT; i++)
		if (!strcmp(name, metric_names[i]))
			return i;
	return -EINVAL;
}

const char *metrics_eraser_state_name(enum cov_eraser_state s)
{
	static const char *const names[] = { "virgin", "exclusive", "exclusive'",
					     "shared", "modified",  "race" };

	return (unsigned)s < ARRAY_SIZE(names) ? names[s] : "?";
}

/* ---- per-run state of the metrics ----------------------------------------- */

/* Avio*: per (variable, thread) the thread's previous access and the last
 * access by another thread since then (seed 004: "only the last
 * interleaving access" is considered). */
struct avio_slot {
	uint32_t var, thread;
	uint32_t prev_site;
	uint16_t prev_op;
	bool has_prev, has_remote;
	uint32_t remote_site, remote_thread;
	uint16_t remote_op;
	size_t next; /* next slot of the same variable + 1, 0 = end */
};

/* Eraser*: per variable. */
struct eraser_var {
	enum cov_eraser_state state;
	uint32_t owner;
	struct cov_lockset cand; /* C(v), meaningful in shared/modified */
};

/* Per-thread state: GoodLock* needs the acquisition site of every held
 * lock, function pairs the function the thread is in. */
struct held_lock {
	uint32_t lock, site;
	uint32_t inst; /* the lock itself: its address's index in lock_inst */
};

struct thread_state {
	struct held_lock held[COV_LOCKSET_MAX];
	uint32_t nheld;
	uint32_t cur_func; /* function of the latest event, 0 = none/exited */
	bool live;
	uint32_t req_lock, req_site; /* pending lock request */
	bool has_req;
};

/* Last event of one sync object, for HBPair* and Sync. */
struct sync_last {
	uint32_t site, thread;
	bool valid;
};

struct cov_metrics {
	struct cov_taskset tasks[COV__COUNT];
	struct cov_taskset deadlocks;
	struct race_detector *races;
	struct map_online *map;

	/* per run */
	struct cov_event prev;
	bool has_prev;
	struct avio_slot *avio;
	size_t navio, avio_cap;
	struct cov_u64map avio_index;	/* (var, thread) -> avio index */
	struct cov_u64map avio_head;	/* var -> first slot index + 1 */
	struct cov_u64map eraser_index; /* var -> eraser index */
	struct eraser_var *eraser;
	size_t neraser;
	struct thread_state *threads;
	uint32_t nthreads;
	struct cov_u64map release_last; /* sync obj -> packed site|thread of last release */
	struct cov_u64map acquire_last; /* lock -> packed site|thread of last acquire */
	struct cov_u64map writer_last;	/* var -> packed site|thread of last write */
	struct cov_u64map create_site;	/* child thread -> packed create site|parent */
	struct cov_u64map exit_site;	/* thread -> packed exit site|thread */
	/* GoodLock graph edges seen, between lock instances (lock_inst):
	 * (i1<<32|i2) -> packed site|thread (the first thread) */
	struct cov_u64map lock_edges;
	/* A lock's address -> its instance index + 1. Lock ids name a heap
	 * lock by the site that used it first (run/access.c cb_sync), so
	 * two locks may share one; the lock-order graph and the held sets
	 * follow the locks themselves. */
	struct cov_u64map lock_inst;
	uint32_t ninst;
};

static uint64_t pack(uint32_t site, uint32_t thread)
{
	return (uint64_t)site << 32 | thread;
}

static uint32_t packed_site(uint64_t p)
{
	return (uint32_t)(p >> 32);
}

static uint32_t packed_thread(uint64_t p)
{
	return (uint32_t)p;
}

static void metrics_reset_run(struct cov_metrics *m)
{
	m->has_prev = false;
	free(m->avio);
	m->avio = NULL;
	m->navio = m->avio_cap = 0;
	cov_event_u64map_free(&m->avio_index);
	cov_event_u64map_free(&m->avio_head);
	cov_event_u64map_free(&m->eraser_index);
	free(m->eraser);
	m->eraser = NULL;
	m->neraser = 0;
	free(m->threads);
	m->threads = NULL;
	m->nthreads = 0;
	cov_event_u64map_free(&m->release_last);
	cov_event_u64map_free(&m->acquire_last);
	cov_event_u64map_free(&m->writer_last);
	cov_event_u64map_free(&m->create_site);
	cov_event_u64map_free(&m->exit_site);
	cov_event_u64map_free(&m->lock_edges);
	cov_event_u64map_free(&m->lock_inst);
	m->ninst = 0;
}

struct cov_metrics *metrics_new(unsigned map_window)
{
	struct cov_metrics *m = xcalloc(1, sizeof(*m));

	for (int i = 0; i < COV__COUNT; i++)
		cov_event_taskset_init(&m->tasks[i]);
	cov_event_taskset_init(&m->deadlocks);
	m->races = races_new();
	m->map = map_patterns_online_new(map_window);
	return m;
}

void metrics_free(struct cov_metrics *m)
{
	if (!m)
		return;
	metrics_reset_run(m);
	for (int i = 0; i < COV__COUNT; i++)
		cov_event_taskset_free(&m->tasks[i]);
	cov_event_taskset_free(&m->deadlocks);
	races_free(m->races);
	map_patterns_online_free(m->map);
	free(m);
}

void metrics_sync_lost(struct cov_metrics *m)
{
	for (uint32_t i = 0; i < m->nthreads; i++) {
		m->threads[i].nheld = 0;
		m->threads[i].has_req = false;
	}
	races_sync_lost(m->races);
}

void metrics_run_begin(struct cov_metrics *m)
{
	metrics_reset_run(m);
	races_run_begin(m->races);
	map_patterns_online_run_begin(m->map);
}

const struct cov_taskset *metrics_tasks(const struct cov_metrics *m, enum cov_metric which)
{
	return (unsigned)which < COV__COUNT ? &m->tasks[which] : NULL;
}

uint64_t metrics_wgoldilock(const struct cov_metrics *m)
{
	return m->tasks[COV_GOLDILOCK_SC].weight_sum;
}

struct race_detector *metrics_races(struct cov_metrics *m)
{
	return m->races;
}

struct map_online *metrics_map(struct cov_metrics *m)
{
	return m->map;
}

const struct cov_taskset *metrics_deadlocks(const struct cov_metrics *m)
{
	return &m->deadlocks;
}

static void add_task(struct cov_metrics *m, enum cov_metric which, uint32_t weight, const char *fmt,
		     ...) __attribute__((format(printf, 4, 5)));

static void add_task(struct cov_metrics *m, enum cov_metric which, uint32_t weight, const char *fmt,
		     ...)
{
	char key[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(key, sizeof(key), fmt, ap);
	va_end(ap);
	cov_event_taskset_add(&m->tasks[which], key, weight);
}

static struct thread_state *thread_state(struct cov_metrics *m, uint32_t t)
{
	if (t >= m->nthreads) {
		uint32_t n = t + 16;

		m->threads = xrealloc(m->threads, n * sizeof(*m->threads));
		memset(m->threads + m->nthreads, 0, (n - m->nthreads) * sizeof(*m->threads));
		m->nthreads = n;
	}
	return &m->threads[t];
}

/* ---- LP and ConcurPairs (section 3) ------------------------------------------ */

/* Dependent: same variable with at least one write, or same lock. */
static bool events_dependent(const struct cov_event *a, const struct cov_event *b)
{
	if (cov_event_op_is_access(a->op) && cov_event_op_is_access(b->op))
		return a->obj == b->obj &&
		       (cov_event_op_writes(a->op) || cov_event_op_writes(b->op));
	if (cov_event_op_is_lock_action(a->op) && cov_event_op_is_lock_action(b->op))
		return a->obj == b->obj;
	return false;
}

/* Monitored actions for LP/ConcurPairs: accesses and lock actions. */
static bool event_monitored(const struct cov_event *ev)
{
	return cov_event_op_is_access(ev->op) || cov_event_op_is_lock_action(ev->op);
}

static void feed_pairs(struct cov_metrics *m, const struct cov_event *ev)
{
	const struct cov_event *p = &m->prev;

	if (!event_monitored(ev))
		return;
	if (m->has_prev) {
		bool sw = p->thread != ev->thread;

		add_task(m, COV_CONCURPAIRS, 1, "s%u s%u %s", p->site, ev->site,
			 sw ? "switch" : "same");
		if (sw && events_dependent(p, ev))
			add_task(m, COV_LP, 1, "s%u s%u", p->site, ev->site);
	}
	m->prev = *ev;
	m->has_prev = true;
}

/* ---- Avio* (section 4) ---------------------------------------------------------- */

static struct avio_slot *avio_slot(struct cov_metrics *m, uint32_t var, uint32_t thread)
{
	bool created;
	uint64_t *idx = cov_event_u64map_put(&m->avio_index, (uint64_t)var << 32 | thread, m->navio,
					     &created);

	if (created) {
		uint64_t *head = cov_event_u64map_put(&m->avio_head, var, 0, NULL);

		if (m->navio == m->avio_cap) {
			m->avio_cap = m->avio_cap ? m->avio_cap * 2 : 64;
			m->avio = xrealloc(m->avio, m->avio_cap * sizeof(*m->avio));
		}
		memset(&m->avio[m->navio], 0, sizeof(m->avio[0]));
		m->avio[m->navio].var = var;
		m->avio[m->navio].thread = thread;
		m->avio[m->navio].next = *head;
		*head = m->navio + 1;
		m->navio++;
	}
	return &m->avio[*idx];
}

/* The four unserializable interleavings of AVIO (Lu et al. ASPLOS'06),
 * written a1/a3/a2 (a3 = the remote access between a1 and a2): r/w/r,
 * w/w/r, w/r/w, r/w/w. RW counts as a write. */
bool metrics_avio_unserializable(bool w1, bool w3, bool w2)
{
	return (!w1 && w3 && !w2) || (w1 && w3 && !w2) || (w1 && !w3 && w2) || (!w1 && w3 && w2);
}

static void feed_avio(struct cov_metrics *m, const struct cov_event *ev)
{
	struct avio_slot *me = avio_slot(m, ev->obj, ev->thread);

	if (me->has_prev && me->has_remote &&
	    metrics_avio_unserializable(cov_event_op_writes(me->prev_op),
					cov_event_op_writes(me->remote_op),
					cov_event_op_writes(ev->op)))
		add_task(m, COV_AVIO, 1, "s%u s%u s%u v%u t%u t%u", me->prev_site, ev->site,
			 me->remote_site, ev->obj, ev->thread, me->remote_thread);
	me->prev_site = ev->site;
	me->prev_op = ev->op;
	me->has_prev = true;
	me->has_remote = false;
	/* This access interleaves every other thread's open block on var. */
	for (size_t i = *cov_event_u64map_get(&m->avio_head, ev->obj); i; i = m->avio[i - 1].next) {
		struct avio_slot *o = &m->avio[i - 1];

		if (o->thread == ev->thread || !o->has_prev)
			continue;
		o->has_remote = true;
		o->remote_site = ev->site;
		o->remote_thread = ev->thread;
		o->remote_op = ev->op;
	}
}

/* ---- Eraser* (section 4) ----------------------------------------------------------- */

static void feed_eraser(struct cov_metrics *m, const struct cov_event *ev)
{
	bool created;
	uint64_t *idx = cov_event_u64map_put(&m->eraser_index, ev->obj, m->neraser, &created);
	struct eraser_var *v;
	char ls[96] = "-";

	if (created) {
		m->eraser = xrealloc(m->eraser, (m->neraser + 1) * sizeof(*m->eraser));
		memset(&m->eraser[m->neraser], 0, sizeof(*m->eraser));
		m->neraser++;
	}
	v = &m->eraser[*idx];
	/* The task records the state the automaton is in when pl is reached
	 * (seed 004), and C(v) once lockset refinement has started. */
	if (v->state >= ERASER_SHARED)
		cov_event_lockset_fmt(&v->cand, ls, sizeof(ls));
	add_task(m, COV_ERASER, 1, "s%u v%u %s %s t%u", ev->site, ev->obj,
		 metrics_eraser_state_name(v->state), ls, ev->thread);

	switch (v->state) {
	case ERASER_VIRGIN:
		v->state = ERASER_EXCLUSIVE;
		v->owner = ev->thread;
		break;
	case ERASER_EXCLUSIVE:
		/* Ownership may pass once (initialise, then hand over). */
		if (ev->thread != v->owner) {
			v->state = ERASER_EXCLUSIVE2;
			v->owner = ev->thread;
		}
		break;
	case ERASER_EXCLUSIVE2:
		if (ev->thread == v->owner)
			break;
		v->cand = ev->held;
		v->state = cov_event_op_writes(ev->op) ? ERASER_MODIFIED : ERASER_SHARED;
		if (v->state == ERASER_MODIFIED && !v->cand.n)
			v->state = ERASER_RACE;
		break;
	case ERASER_SHARED:
	case ERASER_MODIFIED:
		cov_event_lockset_intersect(&v->cand, &ev->held);
		if (cov_event_op_writes(ev->op))
			v->state = ERASER_MODIFIED;
		if (v->state == ERASER_MODIFIED && !v->cand.n)
			v->state = ERASER_RACE;
		break;
	case ERASER_RACE:
		break;
	}
}

/* ---- HBPair*, GoodLock*, Sync (section 4) ---------------------------------------------- */

static void hb_task(struct cov_metrics *m, uint64_t from, const struct cov_event *ev, char kind)
{
	if (packed_thread(from) == ev->thread)
		return;
	add_task(m, COV_HBPAIR, 1, "s%u s%u %c%u t%u t%u", packed_site(from), ev->site, kind,
		 ev->obj, packed_thread(from), ev->thread);
}

/* Synchronisation edges (seed 004 HBPair): unlock->lock, signal->wake,
 * post->wait on one object; create->start, exit->join on a thread; and
 * reads-from between accesses (write by t1, then read by t2 of the same
 * variable): the access-event analogue of Java's volatile pairs. */
static void feed_hbpair(struct cov_metrics *m, const struct cov_event *ev)
{
	uint64_t *p;

	if (cov_event_op_sync_releases(ev->op)) {
		*cov_event_u64map_put(&m->release_last, ev->obj, 0, NULL) =
			pack(ev->site, ev->thread);
		return;
	}
	if (cov_event_op_sync_acquires(ev->op)) {
		p = cov_event_u64map_get(&m->release_last, ev->obj);
		if (p)
			hb_task(m, *p, ev, 'l');
		return;
	}
	switch (ev->op) {
	case CS_OP_CREATE:
		*cov_event_u64map_put(&m->create_site, ev->obj, 0, NULL) =
			pack(ev->site, ev->thread);
		return;
	case CS_OP_START:
		p = cov_event_u64map_get(&m->create_site, ev->thread);
		if (p)
			hb_task(m, *p, ev, 't');
		return;
	case CS_OP_EXIT:
		*cov_event_u64map_put(&m->exit_site, ev->thread, 0, NULL) =
			pack(ev->site, ev->thread);
		return;
	case CS_OP_JOIN:
		p = cov_event_u64map_get(&m->exit_site, ev->obj);
		if (p)
			hb_task(m, *p, ev, 't');
		return;
	default:
		break;
	}
	if (!cov_event_op_is_access(ev->op))
		return;
	if (cov_event_op_reads(ev->op)) {
		p = cov_event_u64map_get(&m->writer_last, ev->obj);
		if (p)
			hb_task(m, *p, ev, 'v');
	}
	if (cov_event_op_writes(ev->op))
		*cov_event_u64map_put(&m->writer_last, ev->obj, 0, NULL) =
			pack(ev->site, ev->thread);
}

/* The lock of ev as an instance: by its address (an event without one,
 * by its id). */
static uint32_t lock_instance(struct cov_metrics *m, const struct cov_event *ev)
{
	uint64_t key = ev->addr ? ev->addr : (1ULL << 63) | ev->obj;
	uint64_t *slot = cov_event_u64map_get(&m->lock_inst, key);

	if (slot)
		return (uint32_t)*slot - 1;
	*cov_event_u64map_put(&m->lock_inst, key, 0, NULL) = (uint64_t)m->ninst + 1;
	return m->ninst++;
}

static void goodlock_request(struct cov_metrics *m, struct thread_state *ts,
			     const struct cov_event *ev)
{
	uint32_t inst = lock_instance(m, ev);

	for (uint32_t i = 0; i < ts->nheld; i++) {
		const struct held_lock *h = &ts->held[i];
		uint64_t edge = (uint64_t)h->inst << 32 | inst;
		uint64_t rev = (uint64_t)inst << 32 | h->inst;
		uint64_t *other;
		char key[160];

		if (h->inst == inst)
			continue;
		if (h->lock != ev->obj)
			add_task(m, COV_GOODLOCK, 1, "s%u s%u l%u l%u t%u", h->site, ev->site,
				 h->lock, ev->obj, ev->thread);
		/* Store the first thread that created the edge. */
		cov_event_u64map_put(&m->lock_edges, edge, pack(h->site, ev->thread), NULL);
		other = cov_event_u64map_get(&m->lock_edges, rev);
		if (other && packed_thread(*other) != ev->thread) {
			uint32_t lo = h->lock < ev->obj ? h->lock : ev->obj;
			uint32_t hi = h->lock < ev->obj ? ev->obj : h->lock;

			snprintf(key, sizeof(key), "deadlock l%u l%u", lo, hi);
			cov_event_taskset_add(&m->deadlocks, key, 1);
		}
	}
}

static void feed_locks(struct cov_metrics *m, const struct cov_event *ev)
{
	struct thread_state *ts = thread_state(m, ev->thread);
	uint64_t *holder;

	if (cov_event_op_is_lock_request(ev->op)) {
		goodlock_request(m, ts, ev);
		ts->has_req = true;
		ts->req_lock = ev->obj;
		ts->req_site = ev->site;
		return;
	}
	if (cov_event_op_acquires(ev->op)) {
		/* Probes that report only acquisitions: the acquisition is the
		 * request too. */
		if (!ts->has_req || ts->req_lock != ev->obj)
			goodlock_request(m, ts, ev);
		ts->has_req = false;
		/* Sync (ConTest "synchro"): visited, blocked, and blocking for
		 * the site where the holder took the lock. */
		holder = cov_event_u64map_get(&m->acquire_last, ev->obj);
		if (ev->flags & CS_EV_BLOCKED) {
			add_task(m, COV_SYNC, 1, "s%u blocked", ev->site);
			if (holder)
				add_task(m, COV_SYNC, 1, "s%u blocking", packed_site(*holder));
		} else {
			add_task(m, COV_SYNC, 1, "s%u visited", ev->site);
		}
		*cov_event_u64map_put(&m->acquire_last, ev->obj, 0, NULL) =
			pack(ev->site, ev->thread);
		if (ts->nheld < COV_LOCKSET_MAX)
			ts->held[ts->nheld++] =
				(struct held_lock){ ev->obj, ev->site, lock_instance(m, ev) };
		return;
	}
	if (cov_event_op_releases(ev->op)) {
		uint32_t j = 0, inst = lock_instance(m, ev);

		for (uint32_t i = 0; i < ts->nheld; i++)
			if (ts->held[i].inst != inst)
				ts->held[j++] = ts->held[i];
		ts->nheld = j;
		add_task(m, COV_SYNC, 1, "s%u visited", ev->site);
		return;
	}
	switch (ev->op) {
	case CS_OP_COND_WAIT:
	case CS_OP_COND_WAKE:
	case CS_OP_COND_SIGNAL:
	case CS_OP_COND_BROADCAST:
	case CS_OP_SEM_WAIT:
	case CS_OP_SEM_POST:
	case CS_OP_BARRIER:
	case CS_OP_JOIN:
		add_task(m, COV_SYNC, 1, "s%u %s", ev->site,
			 (ev->flags & CS_EV_BLOCKED) ? "blocked" : "visited");
		break;
	default:
		break;
	}
}

/* ---- function pairs: which functions run concurrently (section 5) ------------------ */

static void feed_fpairs(struct cov_metrics *m, const struct cov_event *ev)
{
	struct thread_state *ts = thread_state(m, ev->thread);

	if (ev->op == CS_OP_EXIT) {
		ts->live = false;
		ts->cur_func = 0;
		return;
	}
	ts->live = true;
	if (!ev->func)
		return;
	ts->cur_func = ev->func;
	for (uint32_t u = 0; u < m->nthreads; u++) {
		const struct thread_state *o = &m->threads[u];
		uint32_t f, g;

		if (u == ev->thread || !o->live || !o->cur_func)
			continue;
		f = o->cur_func < ev->func ? o->cur_func : ev->func;
		g = o->cur_func < ev->func ? ev->func : o->cur_func;
		add_task(m, COV_FPAIR, 1, "f%u f%u", f, g);
	}
}

/* ---- GoldiLock-SC (section 4) -------------------------------------------------------- */

static void feed_goldilock(struct cov_metrics *m, const struct cov_event *ev)
{
	struct race_verdict v;

	if (races_feed(m->races, ev, &v) != 1)
		return;
	/* (pl, var, state, goldiLockSet), the set only in state LS. */
	add_task(m, COV_GOLDILOCK_SC, races_goldi_weight(v.state), "s%u v%u %s%s%s", ev->site,
		 ev->obj, races_goldi_state_name(v.state), v.state == GOLDI_LS ? " " : "",
		 v.state == GOLDI_LS ? v.gls : "");
}

void metrics_feed(struct cov_metrics *m, const struct cov_event *ev)
{
	feed_pairs(m, ev);
	feed_hbpair(m, ev);
	feed_locks(m, ev);
	feed_fpairs(m, ev);
	feed_goldilock(m, ev);
	if (!cov_event_op_is_access(ev->op))
		return;
	feed_avio(m, ev);
	feed_eraser(m, ev);
	map_patterns_online_feed(m->map, ev, &m->tasks[COV_MAP]);
}

/* ---- JSON ------------------------------------------------------------------------------ */

static void json_taskset(struct json *j, const char *key, const struct cov_taskset *ts,
			 bool with_keys)
{
	json_obj_begin(j, key);
	json_kv_uint(j, "tasks", ts->count);
	if (with_keys) {
		json_arr_begin(j, "keys");
		for (size_t i = 0; i < ts->count; i++)
			json_kv_str(j, NULL, ts->keys[i]);
		json_arr_end(j);
	}
	json_obj_end(j);
}

static const char *access_op_name(unsigned op)
{
	return op == CS_OP_READ ? "R" : op == CS_OP_WRITE ? "W" : "RW";
}

static void json_race_access(struct json *j, const char *key, const struct race_access *a)
{
	json_obj_begin(j, key);
	json_kv_uint(j, "thread", a->thread);
	json_kv_uint(j, "site", a->site);
	json_kv_str(j, "op", access_op_name(a->op));
	json_arr_begin(j, "locks");
	for (uint32_t i = 0; i < a->held.n; i++)
		json_kv_uint(j, NULL, a->held.id[i]);
	json_arr_end(j);
	json_obj_end(j);
}

void metrics_json(struct cov_metrics *m, struct json *j, const char *key, bool with_keys)
{
	char text[256];

	json_obj_begin(j, key);
	for (int i = 0; i < COV__COUNT; i++)
		json_taskset(j, metric_names[i], &m->tasks[i], with_keys);
	json_kv_uint(j, "wgoldilock_sc", metrics_wgoldilock(m));
	json_arr_begin(j, "race_warnings");
	for (size_t i = 0; i < races_warning_count(m->races); i++) {
		const struct race_warning *w = races_warning_get(m->races, i);

		json_obj_begin(j, NULL);
		json_kv_uint(j, "var", w->var);
		json_race_access(j, "first", &w->first);
		json_race_access(j, "second", &w->second);
		json_kv_str(j, "text", races_warning_fmt(w, text, sizeof(text)));
		json_obj_end(j);
	}
	json_arr_end(j);
	json_arr_begin(j, "deadlocks");
	for (size_t i = 0; i < m->deadlocks.count; i++)
		json_kv_str(j, NULL, m->deadlocks.keys[i]);
	json_arr_end(j);
	json_obj_end(j);
}

/* ---- function-pair table: MPL grouping and S(p), seed 002 ----------------------------- */

/* Per (function, variable): the Maximum Protect Locks, i.e. the locks
 * held at every access (all accesses, reads only, writes only). */
struct fvar_profile {
	uint32_t func, var;
	bool has_read, has_write;
	struct cov_lockset mpl_all, mpl_r, mpl_w;
};

struct func_profile {
	uint32_t func;
	struct cov_lockset always; /* locks held at every access in func */
	bool has_access;
};

struct fpair {
	uint32_t f, g;
	enum fpair_group group;
	uint64_t r, c;
	uint32_t flying; /* runs in flight that target it (metrics_fpair_fly) */
};

struct fpair_table {
	struct fvar_profile *fv;
	size_t nfv;
	struct cov_u64map fv_index; /* func<<32|var -> index */
	struct func_profile *funcs;
	size_t nfuncs;
	struct cov_u64map func_index;
	struct fpair *pairs;
	size_t npairs;
	struct cov_u64map pair_index; /* f<<32|g (f <= g) -> index */
};

struct fpair_table *metrics_fpair_table_new(void)
{
	return xcalloc(1, sizeof(struct fpair_table));
}

void metrics_fpair_table_free(struct fpair_table *t)
{
	if (!t)
		return;
	free(t->fv);
	free(t->funcs);
	free(t->pairs);
	cov_event_u64map_free(&t->fv_index);
	cov_event_u64map_free(&t->func_index);
	cov_event_u64map_free(&t->pair_index);
	free(t);
}

void metrics_fpair_profile_add(struct fpair_table *t, const struct cov_event *ev)
{
	bool created;
	uint64_t *idx;
	struct func_profile *fp;
	struct fvar_profile *v;

	if (!ev->func)
		return;
	idx = cov_event_u64map_put(&t->func_index, ev->func, t->nfuncs, &created);
	if (created) {
		t->funcs = xrealloc(t->funcs, (t->nfuncs + 1) * sizeof(*t->funcs));
		t->funcs[t->nfuncs] = (struct func_profile){ .func = ev->func };
		t->nfuncs++;
	}
	fp = &t->funcs[*idx];
	if (!cov_event_op_is_access(ev->op))
		return;
	if (!fp->has_access)
		fp->always = ev->held;
	cov_event_lockset_intersect(&fp->always, &ev->held);
	fp->has_access = true;
	idx = cov_event_u64map_put(&t->fv_index, (uint64_t)ev->func << 32 | ev->obj, t->nfv,
				   &created);
	if (created) {
		t->fv = xrealloc(t->fv, (t->nfv + 1) * sizeof(*t->fv));
		memset(&t->fv[t->nfv], 0, sizeof(*t->fv));
		t->fv[t->nfv].func = ev->func;
		t->fv[t->nfv].var = ev->obj;
		t->fv[t->nfv].mpl_all = ev->held;
		t->nfv++;
	}
	v = &t->fv[*idx];
	cov_event_lockset_intersect(&v->mpl_all, &ev->held);
	if (cov_event_op_reads(ev->op)) {
		if (!v->has_read)
			v->mpl_r = ev->held;
		cov_event_lockset_intersect(&v->mpl_r, &ev->held);
		v->has_read = true;
	}
	if (cov_event_op_writes(ev->op)) {
		if (!v->has_write)
			v->mpl_w = ev->held;
		cov_event_lockset_intersect(&v->mpl_w, &ev->held);
		v->has_write = true;
	}
}

static const struct fvar_profile *fvar_get(const struct fpair_table *t, uint32_t f, uint32_t var)
{
	uint64_t *idx = cov_event_u64map_get(&t->fv_index, (uint64_t)f << 32 | var);

	return idx ? &t->fv[*idx] : NULL;
}

/* Seed 002 Algorithm 1 on one common variable: high priority when there is
 * a write and the maximum protecting locksets do not intersect (MPL_WR when
 * one side only reads: its reads against the other side's writes; MPL_WW
 * otherwise: all accesses on both sides). */
static bool fvar_conflicts(const struct fvar_profile *a, const struct fvar_profile *b)
{
	if (!a->has_write && !b->has_write)
		return false;
	if (!a->has_write)
		return !cov_event_lockset_meets(&a->mpl_r, &b->mpl_w);
	if (!b->has_write)
		return !cov_event_lockset_meets(&a->mpl_w, &b->mpl_r);
	return !cov_event_lockset_meets(&a->mpl_all, &b->mpl_all);
}

static enum fpair_group classify_pair(const struct fpair_table *t, const struct func_profile *f,
				      const struct func_profile *g)
{
	/* The analogue of "both methods synchronized": always a common lock. */
	if (f->has_access && g->has_access && cov_event_lockset_meets(&f->always, &g->always))
		return FPAIR_DROPPED;
	for (size_t i = 0; i < t->nfv; i++) {
		const struct fvar_profile *a = &t->fv[i], *b;

		if (a->func != f->func)
			continue;
		b = fvar_get(t, g->func, a->var);
		if (b && fvar_conflicts(a, b))
			return FPAIR_HIGH;
	}
	return FPAIR_LOW;
}

size_t metrics_fpair_group(struct fpair_table *t)
{
	struct fpair *old = t->pairs;
	struct cov_u64map old_index = t->pair_index;
	size_t kept = 0;

	memset(&t->pair_index, 0, sizeof(t->pair_index));
	cov_event_u64map_init(&t->pair_index);
	t->pairs = xcalloc(t->nfuncs * (t->nfuncs + 1) / 2 + 1, sizeof(*t->pairs));
	t->npairs = 0;
	for (size_t i = 0; i < t->nfuncs; i++) {
		for (size_t j = i; j < t->nfuncs; j++) {
			const struct func_profile *a = &t->funcs[i], *b = &t->funcs[j];
			struct fpair *p = &t->pairs[t->npairs];

			p->f = a->func < b->func ? a->func : b->func;
			p->g = a->func < b->func ? b->func : a->func;
			p->group = classify_pair(t, a, b);
			p->r = 1; /* seed 002: r starts at 1 */
			p->c = 0;
			{ /* regrouped with a larger profile: its attempts stay */
				uint64_t *o = cov_event_u64map_get(&old_index,
								   (uint64_t)p->f << 32 | p->g);

				if (o) {
					p->r = old[*o].r;
					p->c = old[*o].c;
					p->flying = old[*o].flying;
				}
			}
			*cov_event_u64map_put(&t->pair_index, (uint64_t)p->f << 32 | p->g, 0,
					      NULL) = t->npairs;
			t->npairs++;
			kept += p->group != FPAIR_DROPPED;
		}
	}
	free(old);
	cov_event_u64map_free(&old_index);
	return kept;
}

static struct fpair *fpair_find(const struct fpair_table *t, uint32_t f, uint32_t g)
{
	uint32_t lo = f < g ? f : g, hi = f < g ? g : f;
	uint64_t *idx = cov_event_u64map_get(&t->pair_index, (uint64_t)lo << 32 | hi);

	return idx ? &t->pairs[*idx] : NULL;
}

enum fpair_group metrics_fpair_group_of(const struct fpair_table *t, uint32_t f, uint32_t g)
{
	const struct fpair *p = fpair_find(t, f, g);

	return p ? p->group : FPAIR_DROPPED;
}

uint64_t metrics_fpair_score(uint64_t r, uint64_t c)
{
	uint64_t d = r > c ? r - c : c - r;

	return (d > 1 ? d : 1) * r;
}

/* Lowest S(p) among kept pairs of `group` (or of any group if < 0), only
 * untried ones (r == 1) if `untried`, only those no run in flight targets
 * if `idle`. */
static const struct fpair *fpair_best(const struct fpair_table *t, int group, bool untried,
				      bool idle)
{
	const struct fpair *best = NULL;

	for (size_t i = 0; i < t->npairs; i++) {
		const struct fpair *p = &t->pairs[i];

		if (p->group == FPAIR_DROPPED || (group >= 0 && (int)p->group != group))
			continue;
		if ((untried && p->r != 1) || (idle && p->flying))
			continue;
		if (!best ||
		    metrics_fpair_score(p->r, p->c) < metrics_fpair_score(best->r, best->c) ||
		    (metrics_fpair_score(p->r, p->c) == metrics_fpair_score(best->r, best->c) &&
		     (p->f < best->f || (p->f == best->f && p->g < best->g))))
			best = p;
	}
	return best;
}

int metrics_fpair_next(const struct fpair_table *t, uint32_t *f, uint32_t *g)
{
	const struct fpair *p = NULL;

	/* Pairs no run in flight targets first; when every kept pair has a
	 * run in flight, the pick as if none had. */
	for (int idle = 1; idle >= 0 && !p; idle--) {
		p = fpair_best(t, FPAIR_HIGH, true, idle);
		if (!p)
			p = fpair_best(t, FPAIR_LOW, true, idle);
		if (!p)
			p = fpair_best(t, -1, false, idle);
	}
	if (!p)
		return -ENOENT;
	*f = p->f;
	*g = p->g;
	return 0;
}

int metrics_fpair_record(struct fpair_table *t, uint32_t f, uint32_t g, bool covered)
{
	struct fpair *p = fpair_find(t, f, g);

	if (!p)
		return -ENOENT;
	p->r++;
	p->c += covered;
	return 0;
}

int metrics_fpair_fly(struct fpair_table *t, uint32_t f, uint32_t g, bool flying)
{
	struct fpair *p = fpair_find(t, f, g);

	if (!p)
		return -ENOENT;
	if (flying)
		p->flying++;
	else if (p->flying)
		p->flying--;
	return 0;
}

int metrics_fpair_counts(const struct fpair_table *t, uint32_t f, uint32_t g, uint64_t *r,
			 uint64_t *c)
{
	const struct fpair *p = fpair_find(t, f, g);

	if (!p)
		return -ENOENT;
	*r = p->r;
	*c = p->c;
	return 0;
}
