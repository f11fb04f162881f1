// SPDX-License-Identifier: MIT
#include "coverage/thread_model.h"

#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"

static const char *const op_names[CS_OP__COUNT] = {
	[CS_OP_NONE] = "none",
	[CS_OP_LOCK_REQ] = "lock_req",
	[CS_OP_LOCK] = "lock",
	[CS_OP_TRYLOCK_OK] = "trylock_ok",
	[CS_OP_TRYLOCK_FAIL] = "trylock_fail",
	[CS_OP_UNLOCK] = "unlock",
	[CS_OP_RDLOCK_REQ] = "rdlock_req",
	[CS_OP_RDLOCK] = "rdlock",
	[CS_OP_WRLOCK_REQ] = "wrlock_req",
	[CS_OP_WRLOCK] = "wrlock",
	[CS_OP_RWUNLOCK] = "rwunlock",
	[CS_OP_SPIN_LOCK] = "spin_lock",
	[CS_OP_SPIN_UNLOCK] = "spin_unlock",
	[CS_OP_COND_WAIT] = "cond_wait",
	[CS_OP_COND_WAKE] = "cond_wake",
	[CS_OP_COND_SIGNAL] = "cond_signal",
	[CS_OP_COND_BROADCAST] = "cond_broadcast",
	[CS_OP_SEM_WAIT_REQ] = "sem_wait_req",
	[CS_OP_SEM_WAIT] = "sem_wait",
	[CS_OP_SEM_POST] = "sem_post",
	[CS_OP_BARRIER] = "barrier",
	[CS_OP_CREATE] = "create",
	[CS_OP_START] = "start",
	[CS_OP_JOIN] = "join",
	[CS_OP_EXIT] = "exit",
	[CS_OP_READ] = "read",
	[CS_OP_WRITE] = "write",
	[CS_OP_RW] = "rw",
	[CS_OP_FORK] = "fork",
	[CS_OP_EXEC] = "exec",
	[CS_OP_ONCE_ENTER] = "once_enter",
	[CS_OP_ONCE] = "once",
	[CS_OP_PROC_EXIT] = "proc_exit",
	[CS_OP_STDIO] = "stdio",
};

const char *thread_model_op_name(unsigned op)
{
	return op < CS_OP__COUNT && op_names[op] ? op_names[op] : "unknown";
}

bool thread_model_op_is_acquire(unsigned op)
{
	return op == CS_OP_LOCK || op == CS_OP_TRYLOCK_OK || op == CS_OP_RDLOCK ||
	       op == CS_OP_WRLOCK || op == CS_OP_SPIN_LOCK || op == CS_OP_COND_WAKE;
}

bool thread_model_op_is_release(unsigned op)
{
	return op == CS_OP_UNLOCK || op == CS_OP_RWUNLOCK || op == CS_OP_SPIN_UNLOCK ||
	       op == CS_OP_COND_WAIT;
}

uint64_t thread_model_action_lock(unsigned op, uint64_t obj, uint64_t arg)
{
	return op == CS_OP_COND_WAKE || op == CS_OP_COND_WAIT ? arg : obj;
}

bool thread_model_lockset_push(uint64_t *held, uint32_t *n, uint32_t *overflow, uint64_t lock)
{
	if (*n >= CS_LOCKSET_MAX) {
		(*overflow)++;
		return false;
	}
	held[(*n)++] = lock;
	return true;
}

bool thread_model_lockset_remove(uint64_t *held, uint32_t *n, uint32_t *overflow, uint64_t lock)
{
	uint32_t i;

	for (i = *n; i > 0; i--) {
		if (held[i - 1] != lock)
			continue;
		memmove(&held[i - 1], &held[i], (*n - i) * sizeof(*held));
		(*n)--;
		return true;
	}
	if (*overflow)
		(*overflow)--; /* it was one of the holds we could not record */
	return false;
}

void thread_model_init(struct thread_model *m, uint64_t max_actions)
{
	memset(m, 0, sizeof(*m));
	m->max_actions = max_actions;
}

void thread_model_free(struct thread_model *m)
{
	size_t i;

	for (i = 0; i < m->nthreads; i++)
		free(m->threads[i].actions);
	free(m->threads);
	memset(m, 0, sizeof(*m));
}

struct tm_thread *thread_model_thread(struct thread_model *m, uint32_t tgid, uint32_t gen,
				      uint32_t tid, bool create, size_t *idx)
{
	struct tm_thread *t;
	size_t i;

	for (i = m->nthreads; i > 0; i--) {
		t = &m->threads[i - 1];
		if (t->tid == tid && t->tgid == tgid && t->gen == gen) {
			if (idx)
				*idx = i - 1;
			return t;
		}
	}
	if (!create)
		return NULL;
	if (m->nthreads == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 16;
		m->threads = xrealloc(m->threads, m->cap * sizeof(*m->threads));
	}
	t = &m->threads[m->nthreads];
	memset(t, 0, sizeof(*t));
	t->tgid = tgid;
	t->gen = gen;
	t->tid = tid;
	t->creator = -1;
	if (idx)
		*idx = m->nthreads;
	m->nthreads++;
	return t;
}

static void fill_action(struct tm_action *a, const struct tm_thread *t, const struct cs_event *e)
{
	a->ts = e->ts_ns;
	a->obj = e->obj;
	a->site = e->site;
	a->arg = e->arg;
	a->seq = e->seq;
	a->op = e->op;
	a->flags = e->flags;
	a->nlockset = t->nheld;
	memcpy(a->lockset, t->held, t->nheld * sizeof(*t->held));
}

static void store_action(struct thread_model *m, struct tm_thread *t, const struct cs_event *e)
{
	fill_action(&t->last, t, e);
	t->has_last = true;
	if (m->max_actions && m->stored >= m->max_actions) {
		m->truncated++;
		return;
	}
	if (t->nactions == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 32;
		t->actions = xrealloc(t->actions, t->cap * sizeof(*t->actions));
	}
	t->actions[t->nactions++] = t->last;
	m->stored++;
}

const struct tm_action *thread_model_last(const struct tm_thread *t)
{
	return t->has_last ? &t->last : NULL;
}

/* held[] and held_site[] together: the acquisition site of each hold. */
static void hold_push(struct tm_thread *t, uint64_t lock, uint64_t site)
{
	if (thread_model_lockset_push(t->held, &t->nheld, &t->held_overflow, lock))
		t->held_site[t->nheld - 1] = site;
}

static void hold_remove(struct tm_thread *t, uint64_t lock)
{
	uint32_t i;

	for (i = t->nheld; i > 0 && t->held[i - 1] != lock; i--)
		;
	if (thread_model_lockset_remove(t->held, &t->nheld, &t->held_overflow, lock) && i > 0)
		memmove(&t->held_site[i - 1], &t->held_site[i],
			(t->nheld - (i - 1)) * sizeof(*t->held_site));
}

/* The CREATE event comes from the parent; it opens the child's record
 * with the creation site, start routine and the AC4 precedence point. */
static void note_create(struct thread_model *m, size_t parent, const struct cs_event *e)
{
	struct tm_thread *c, *p;
	size_t ci;

	c = thread_model_thread(m, e->pid, e->gen, (uint32_t)e->obj, true, &ci);
	p = &m->threads[parent]; /* after the possible realloc */
	c->creator = (int32_t)parent;
	c->create_pos = p->nlock_actions;
	c->create_site = e->site;
	c->start_routine = e->arg;
}

uint32_t thread_model_seq_gap(uint32_t *next_seq, uint32_t seq)
{
	uint32_t gap = seq > *next_seq ? seq - *next_seq : 0;

	if (seq >= *next_seq)
		*next_seq = seq + 1;
	return gap;
}

struct tm_thread *thread_model_add_event(struct thread_model *m, const struct cs_event *e)
{
	struct tm_thread *t;
	size_t idx;
	uint64_t lock;

	t = thread_model_thread(m, e->pid, e->gen, e->tid, true, &idx);
	m->events++;
	if (e->op < CS_OP__COUNT)
		m->by_op[e->op]++;
	if (e->op != CS_OP_EXEC) {
		uint32_t gap = thread_model_seq_gap(&t->next_seq, e->seq);

		t->seq_gaps += gap;
		m->seq_gaps += gap;
	}
	t->nevents++;
	if (e->op == CS_OP_EXIT)
		t->exited = true;
	store_action(m, t, e);
	if (thread_model_op_is_acquire(e->op)) {
		lock = thread_model_action_lock(e->op, e->obj, e->arg);
		t->nlock_actions++;
		hold_push(t, lock, e->site);
	} else if (thread_model_op_is_release(e->op)) {
		lock = thread_model_action_lock(e->op, e->obj, e->arg);
		hold_remove(t, lock);
	} else if (e->op == CS_OP_CREATE && e->obj) {
		note_create(m, idx, e);
		t = &m->threads[idx];
	}
	return t;
}

uint64_t thread_model_drop_internal(struct thread_model *m,
				    bool (*is_internal)(const struct tm_thread *t, uint64_t site,
							void *arg),
				    void *arg)
{
	uint64_t dropped = 0;
	size_t i, j, kept;

	for (i = 0; i < m->nthreads; i++) {
		struct tm_thread *t = &m->threads[i];

		for (j = 0, kept = 0; j < t->nactions; j++) {
			struct tm_action *a = &t->actions[j];

			if (a->site && a->op != CS_OP_EXIT && is_internal(t, a->site, arg)) {
				if (a->op < CS_OP__COUNT)
					m->by_op[a->op]--;
				m->events--;
				t->nevents--;
				if (thread_model_op_is_acquire(a->op))
					t->nlock_actions--;
				dropped++;
				continue;
			}
			t->actions[kept++] = *a;
		}
		t->nactions = kept;
	}
	return dropped;
}

bool thread_model_action_waits_for_good(const struct tm_action *a)
{
	if (a->flags & CS_EV_NOWAIT)
		return false;
	return a->op == CS_OP_LOCK_REQ || a->op == CS_OP_RDLOCK_REQ || a->op == CS_OP_WRLOCK_REQ;
}
