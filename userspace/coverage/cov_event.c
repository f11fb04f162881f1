// SPDX-License-Identifier: MIT
/*
 * Operations, locksets, the u64 map, the coverage task set and the
 * cs_event converter (cov_event.h).
 */
#include "coverage/cov_event.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/fnv1a64.h"
#include "lib/xalloc.h"

/* ---- operations --------------------------------------------------------- */

bool cov_event_op_is_access(unsigned op)
{
	return op == CS_OP_READ || op == CS_OP_WRITE || op == CS_OP_RW;
}

bool cov_event_op_reads(unsigned op)
{
	return op == CS_OP_READ || op == CS_OP_RW;
}

bool cov_event_op_writes(unsigned op)
{
	return op == CS_OP_WRITE || op == CS_OP_RW;
}

/* Operations after which the thread holds the object as a lock. */
bool cov_event_op_acquires(unsigned op)
{
	switch (op) {
	case CS_OP_LOCK:
	case CS_OP_TRYLOCK_OK:
	case CS_OP_RDLOCK:
	case CS_OP_WRLOCK:
	case CS_OP_SPIN_LOCK:
		return true;
	default:
		return false;
	}
}

bool cov_event_op_releases(unsigned op)
{
	return op == CS_OP_UNLOCK || op == CS_OP_RWUNLOCK || op == CS_OP_SPIN_UNLOCK;
}

/* Happens-before edges on a synchronization object: the releasing side
 * (unlock, signal, broadcast, post) and the acquiring side (a lock, a
 * wakeup from a condition wait, a completed semaphore wait). */
bool cov_event_op_sync_releases(unsigned op)
{
	return cov_event_op_releases(op) || op == CS_OP_COND_SIGNAL || op == CS_OP_COND_BROADCAST ||
	       op == CS_OP_SEM_POST;
}

bool cov_event_op_sync_acquires(unsigned op)
{
	return cov_event_op_acquires(op) || op == CS_OP_COND_WAKE || op == CS_OP_SEM_WAIT;
}

bool cov_event_op_is_lock_request(unsigned op)
{
	return op == CS_OP_LOCK_REQ || op == CS_OP_RDLOCK_REQ || op == CS_OP_WRLOCK_REQ;
}

/* Lock actions in the LP sense: operations on a lock object. */
bool cov_event_op_is_lock_action(unsigned op)
{
	return cov_event_op_acquires(op) || cov_event_op_releases(op) ||
	       cov_event_op_is_lock_request(op) || op == CS_OP_TRYLOCK_FAIL;
}

/* ---- locksets ------------------------------------------------------------ */

void cov_event_lockset_clear(struct cov_lockset *ls)
{
	ls->n = 0;
}

bool cov_event_lockset_has(const struct cov_lockset *ls, uint32_t id)
{
	for (uint32_t i = 0; i < ls->n; i++)
		if (ls->id[i] == id)
			return true;
	return false;
}

int cov_event_lockset_add(struct cov_lockset *ls, uint32_t id)
{
	uint32_t i;

	if (cov_event_lockset_has(ls, id))
		return 0;
	if (ls->n >= COV_LOCKSET_MAX)
		return -ENOSPC;
	for (i = ls->n; i > 0 && ls->id[i - 1] > id; i--)
		ls->id[i] = ls->id[i - 1];
	ls->id[i] = id;
	ls->n++;
	return 0;
}

void cov_event_lockset_del(struct cov_lockset *ls, uint32_t id)
{
	uint32_t i, j = 0;

	for (i = 0; i < ls->n; i++)
		if (ls->id[i] != id)
			ls->id[j++] = ls->id[i];
	ls->n = j;
}

void cov_event_lockset_intersect(struct cov_lockset *dst, const struct cov_lockset *other)
{
	uint32_t i, j = 0;

	for (i = 0; i < dst->n; i++)
		if (cov_event_lockset_has(other, dst->id[i]))
			dst->id[j++] = dst->id[i];
	dst->n = j;
}

bool cov_event_lockset_meets(const struct cov_lockset *a, const struct cov_lockset *b)
{
	for (uint32_t i = 0; i < a->n; i++)
		if (cov_event_lockset_has(b, a->id[i]))
			return true;
	return false;
}

char *cov_event_lockset_fmt(const struct cov_lockset *ls, char *buf, size_t len)
{
	size_t off = 0;

	off += snprintf(buf + off, len - off, "{");
	for (uint32_t i = 0; i < ls->n && off < len; i++)
		off += snprintf(buf + off, len - off, "%sl%u", i ? "," : "", ls->id[i]);
	if (off < len)
		snprintf(buf + off, len - off, "}");
	return buf;
}

/* ---- u64 map ---------------------------------------------------------------- */

#define U64MAP_EMPTY UINT64_MAX

static size_t hash_u64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return (size_t)k;
}

void cov_event_u64map_init(struct cov_u64map *m)
{
	memset(m, 0, sizeof(*m));
}

void cov_event_u64map_free(struct cov_u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

static size_t u64map_slot(const struct cov_u64map *m, uint64_t key)
{
	size_t i = hash_u64(key) & (m->cap - 1);

	while (m->keys[i] != U64MAP_EMPTY && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

uint64_t *cov_event_u64map_get(const struct cov_u64map *m, uint64_t key)
{
	size_t i;

	if (!m->cap)
		return NULL;
	i = u64map_slot(m, key);
	return m->keys[i] == key ? &m->vals[i] : NULL;
}

static void u64map_grow(struct cov_u64map *m)
{
	struct cov_u64map old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->keys = xcalloc(m->cap, sizeof(*m->keys));
	m->vals = xcalloc(m->cap, sizeof(*m->vals));
	memset(m->keys, 0xff, m->cap * sizeof(*m->keys));
	for (size_t i = 0; i < old.cap; i++) {
		size_t j;

		if (old.keys[i] == U64MAP_EMPTY)
			continue;
		j = u64map_slot(m, old.keys[i]);
		m->keys[j] = old.keys[i];
		m->vals[j] = old.vals[i];
	}
	free(old.keys);
	free(old.vals);
}

uint64_t *cov_event_u64map_put(struct cov_u64map *m, uint64_t key, uint64_t init, bool *created)
{
	size_t i;

	if (created)
		*created = false;
	if ((m->count + 1) * 2 > m->cap)
		u64map_grow(m);
	i = u64map_slot(m, key);
	if (m->keys[i] != key) {
		m->keys[i] = key;
		m->vals[i] = init;
		m->count++;
		if (created)
			*created = true;
	}
	return &m->vals[i];
}

/* ---- task sets ------------------------------------------------------------- */

void cov_event_taskset_init(struct cov_taskset *ts)
{
	memset(ts, 0, sizeof(*ts));
}

void cov_event_taskset_free(struct cov_taskset *ts)
{
	for (size_t i = 0; i < ts->count; i++)
		free(ts->keys[i]);
	free(ts->keys);
	free(ts->weights);
	free(ts->hits);
	free(ts->slots);
	memset(ts, 0, sizeof(*ts));
}

static size_t hash_str(const char *s)
{
	return (size_t)fnv1a64(s, strlen(s), FNV1A64_INIT);
}

/* Slot holding `key`, or the empty slot where it would go. */
static size_t taskset_slot(const struct cov_taskset *ts, const char *key)
{
	size_t i = hash_str(key) & (ts->nslots - 1);

	while (ts->slots[i] && strcmp(ts->keys[ts->slots[i] - 1], key))
		i = (i + 1) & (ts->nslots - 1);
	return i;
}

static void taskset_rehash(struct cov_taskset *ts)
{
	free(ts->slots);
	ts->nslots = ts->nslots ? ts->nslots * 2 : 64;
	ts->slots = xcalloc(ts->nslots, sizeof(*ts->slots));
	for (size_t k = 0; k < ts->count; k++)
		ts->slots[taskset_slot(ts, ts->keys[k])] = k + 1;
}

bool cov_event_taskset_has(const struct cov_taskset *ts, const char *key)
{
	return ts->nslots && ts->slots[taskset_slot(ts, key)];
}

int cov_event_taskset_add(struct cov_taskset *ts, const char *key, uint32_t weight)
{
	size_t i;

	if ((ts->count + 1) * 2 > ts->nslots)
		taskset_rehash(ts);
	i = taskset_slot(ts, key);
	if (ts->slots[i]) {
		ts->hits[ts->slots[i] - 1]++;
		return 0;
	}
	if (ts->count == ts->cap) {
		ts->cap = ts->cap ? ts->cap * 2 : 32;
		ts->keys = xrealloc(ts->keys, ts->cap * sizeof(*ts->keys));
		ts->weights = xrealloc(ts->weights, ts->cap * sizeof(*ts->weights));
		ts->hits = xrealloc(ts->hits, ts->cap * sizeof(*ts->hits));
	}
	ts->keys[ts->count] = xstrdup(key);
	ts->weights[ts->count] = weight;
	ts->hits[ts->count] = 1;
	ts->weight_sum += weight;
	ts->slots[i] = ++ts->count;
	return 1;
}

/* ---- converter ------------------------------------------------------------- */

void cov_event_conv_init(struct cov_event_conv *c)
{
	memset(c, 0, sizeof(*c));
}

void cov_event_conv_free(struct cov_event_conv *c)
{
	cov_event_u64map_free(&c->tids);
	cov_event_u64map_free(&c->sites);
	cov_event_u64map_free(&c->vars);
	cov_event_u64map_free(&c->syncs);
	free(c->held);
	memset(c, 0, sizeof(*c));
}

/* Dense id in order of first appearance (ids start at 1 so 0 can mean
 * "unknown" for functions). */
static uint32_t intern(struct cov_u64map *m, uint64_t raw)
{
	uint64_t *v = cov_event_u64map_put(m, raw, m->count + 1, NULL);

	return (uint32_t)*v;
}

static struct cov_lockset *conv_held(struct cov_event_conv *c, uint32_t thread)
{
	if (thread >= c->nheld) {
		uint32_t n = thread + 16;

		c->held = xrealloc(c->held, n * sizeof(*c->held));
		memset(c->held + c->nheld, 0, (n - c->nheld) * sizeof(*c->held));
		c->nheld = n;
	}
	return &c->held[thread];
}

int cov_event_from_cs(struct cov_event_conv *c, const struct cs_event *ev, struct cov_event *out)
{
	struct cov_lockset *held;

	/* exit() and stdio calls while other threads live are decision
	 * points only: they synchronize nothing the metrics or the race
	 * detectors follow (a stream's lock is libc's). */
	if (ev->op == CS_OP_NONE || ev->op >= CS_OP__COUNT || ev->op == CS_OP_PROC_EXIT ||
	    ev->op == CS_OP_STDIO)
		return -ENOENT;
	memset(out, 0, sizeof(*out));
	out->op = ev->op;
	out->flags = ev->flags;
	out->thread = c->thread_id ? c->thread_id(c->ctx, ev->tid) : intern(&c->tids, ev->tid);
	out->site = c->site_id ? c->site_id(c->ctx, ev->site) : intern(&c->sites, ev->site);
	out->func = c->func_id ? c->func_id(c->ctx, ev->site) : 0;
	if (cov_event_op_is_access(ev->op))
		out->obj = c->var_id ? c->var_id(c->ctx, ev->obj, (uint32_t)ev->arg)
				     : intern(&c->vars, ev->obj);
	else if (ev->op == CS_OP_CREATE || ev->op == CS_OP_JOIN)
		out->obj = c->thread_id ? c->thread_id(c->ctx, (uint32_t)ev->obj)
					: intern(&c->tids, (uint32_t)ev->obj);
	else if (ev->op == CS_OP_START || ev->op == CS_OP_EXIT)
		out->obj = out->thread;
	else
		out->obj = c->sync_id ? c->sync_id(c->ctx, ev->obj) : intern(&c->syncs, ev->obj);
	if (!cov_event_op_is_access(ev->op) && ev->op != CS_OP_CREATE && ev->op != CS_OP_JOIN &&
	    ev->op != CS_OP_START && ev->op != CS_OP_EXIT)
		out->addr = ev->obj;
	if (ev->op == CS_OP_COND_WAIT || ev->op == CS_OP_COND_WAKE || ev->op == CS_OP_ONCE_ENTER)
		out->addr2 = ev->arg;

	/* lockset(p) is the set held when p starts: record, then update. */
	held = conv_held(c, out->thread);
	out->held = *held;
	if (cov_event_op_acquires(ev->op) && cov_event_lockset_add(held, out->obj))
		c->lockset_overflow++;
	else if (cov_event_op_releases(ev->op))
		cov_event_lockset_del(held, out->obj);
	else if (ev->op == CS_OP_EXIT)
		cov_event_lockset_clear(held);
	return 0;
}

size_t cov_event_access_events(const struct cov_event *ev, bool split, struct cov_event out[2])
{
	out[0] = *ev;
	if (!split)
		return 1;
	out[1] = *ev;
	out[0].op = CS_OP_READ;
	out[1].op = CS_OP_WRITE;
	return 2;
}
