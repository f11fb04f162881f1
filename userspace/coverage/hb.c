// SPDX-License-Identifier: MIT
/*
 * Happens-before race detection with vector clocks (hb.h has the model).
 */
#include "coverage/hb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"

/* Shadow and sync keys: raw addresses (below 2^57 on x86-64), or ids. */
#define KEY_ID	   (1ULL << 63) /* a variable or sync object known by id only */
#define KEY_READ   (1ULL << 62) /* an rwlock's readers' side */
#define KEY_ATOMIC (1ULL << 61) /* an atomic location's clock */

struct vc {
	uint32_t *c;
	uint32_t n;
};

/* One recorded access of a granule. */
struct hb_rec {
	uint32_t thread, clock;
	uint8_t mask; /* bytes of the granule */
	struct race_access acc;
};

struct hb_cell {
	uint32_t gen;	/* the heap generation its records belong to */
	uint32_t epoch; /* hb.forgotten when they were recorded */
	bool atomic;
	uint8_t n;
	struct hb_rec rec[HB_CELL_RECS];
};

/* A barrier's two alternating generations (races.h). */
struct hb_barrier {
	struct vc gen[2];
	uint32_t open;
};

struct hb_thread {
	struct vc vc;
	bool started;
	/* barrier left but not yet acquired: index + 1, and its slot */
	uint32_t barrier, slot;
	/* rwlocks held for reading (keys) */
	uint64_t *readers;
	uint32_t nreaders;
	/* inside pthread_once(key) and not on its fast path: it may be the
	 * caller running the routine; 0 none */
	uint64_t once;
};

struct hb_block {
	uint64_t start, end;
	uint32_t gen;
};

struct hb {
	struct hb_thread *threads;
	uint32_t nthreads;
	struct cov_u64map sync_index; /* key -> index in syncs */
	struct vc *syncs;
	size_t nsyncs;
	struct cov_u64map barrier_index; /* key -> index in barriers */
	struct hb_barrier *barriers;
	size_t nbarriers;
	struct cov_u64map cell_index; /* granule key -> index in cells */
	struct hb_cell *cells;
	size_t ncells, capcells;
	struct hb_block *blocks; /* sorted, disjoint */
	size_t nblocks, capblocks;
	uint32_t next_gen;
	uint32_t forgotten; /* hb_forget calls this run */
	/* across runs */
	struct race_warning *warnings;
	size_t nwarnings, capwarnings;
	struct cov_u64map warned; /* unordered site pair */
};

/* ---- vector clocks ---------------------------------------------------------------------- */

static uint32_t vc_get(const struct vc *v, uint32_t i)
{
	return i < v->n ? v->c[i] : 0;
}

static void vc_grow(struct vc *v, uint32_t n)
{
	if (n <= v->n)
		return;
	v->c = xrealloc(v->c, n * sizeof(*v->c));
	memset(v->c + v->n, 0, (n - v->n) * sizeof(*v->c));
	v->n = n;
}

static void vc_set(struct vc *v, uint32_t i, uint32_t val)
{
	vc_grow(v, i + 1);
	v->c[i] = val;
}

static void vc_join(struct vc *dst, const struct vc *src)
{
	vc_grow(dst, src->n);
	for (uint32_t i = 0; i < src->n; i++)
		if (src->c[i] > dst->c[i])
			dst->c[i] = src->c[i];
}

/* ---- threads and sync objects ------------------------------------------------------------ */

static struct hb_thread *thread_get(struct hb *h, uint32_t t)
{
	struct hb_thread *th;

	if (t >= h->nthreads) {
		uint32_t n = t + 16;

		h->threads = xrealloc(h->threads, n * sizeof(*h->threads));
		memset(h->threads + h->nthreads, 0, (n - h->nthreads) * sizeof(*h->threads));
		h->nthreads = n;
	}
	th = &h->threads[t];
	if (!th->started) {
		/* A thread seen without its creation (main): its own epoch 1. */
		th->started = true;
		vc_set(&th->vc, t, 1);
	}
	return th;
}

static struct vc *sync_get(struct hb *h, uint64_t key)
{
	bool created;
	uint64_t *idx = cov_event_u64map_put(&h->sync_index, key, h->nsyncs, &created);

	if (created) {
		h->syncs = xrealloc(h->syncs, (h->nsyncs + 1) * sizeof(*h->syncs));
		memset(&h->syncs[h->nsyncs], 0, sizeof(*h->syncs));
		h->nsyncs++;
	}
	return &h->syncs[*idx];
}

static void acquire(struct hb *h, uint32_t t, uint64_t key)
{
	struct vc *l = sync_get(h, key);

	vc_join(&thread_get(h, t)->vc, l);
}

/* Release into key, then start a new epoch of t. */
static void release(struct hb *h, uint32_t t, uint64_t key)
{
	struct vc *l = sync_get(h, key);
	struct hb_thread *th = thread_get(h, t);

	vc_join(l, &th->vc);
	vc_set(&th->vc, t, vc_get(&th->vc, t) + 1);
}

static uint64_t sync_key(uint64_t addr, uint32_t id)
{
	return addr ? addr : KEY_ID | id;
}

/* ---- rwlocks: which side a thread holds -------------------------------------------------- */

static void reader_add(struct hb_thread *th, uint64_t key)
{
	th->readers = xrealloc(th->readers, (th->nreaders + 1) * sizeof(*th->readers));
	th->readers[th->nreaders++] = key;
}

static bool reader_del(struct hb_thread *th, uint64_t key)
{
	for (uint32_t i = 0; i < th->nreaders; i++)
		if (th->readers[i] == key) {
			th->readers[i] = th->readers[--th->nreaders];
			return true;
		}
	return false;
}

/* ---- barriers ------------------------------------------------------------------------------ */

static struct hb_barrier *barrier_get(struct hb *h, uint64_t key, uint32_t *index)
{
	bool created;
	uint64_t *idx = cov_event_u64map_put(&h->barrier_index, key, h->nbarriers, &created);

	if (created) {
		h->barriers = xrealloc(h->barriers, (h->nbarriers + 1) * sizeof(*h->barriers));
		memset(&h->barriers[h->nbarriers], 0, sizeof(*h->barriers));
		h->nbarriers++;
	}
	*index = (uint32_t)*idx;
	return &h->barriers[*idx];
}

static void barrier_enter(struct hb *h, uint32_t t, uint64_t key)
{
	uint32_t index;
	struct hb_barrier *b = barrier_get(h, key, &index);
	struct hb_thread *th = thread_get(h, t);

	vc_join(&b->gen[b->open], &th->vc);
	vc_set(&th->vc, t, vc_get(&th->vc, t) + 1);
	th->barrier = index + 1;
	th->slot = b->open;
}

/* t has left the barrier it entered (its next event): every party has
 * entered that generation, which closes. */
static void barrier_left(struct hb *h, struct hb_thread *th)
{
	struct hb_barrier *b = &h->barriers[th->barrier - 1];

	vc_join(&th->vc, &b->gen[th->slot]);
	if (b->open == th->slot)
		b->open ^= 1;
	th->barrier = 0;
}

/* ---- heap blocks ------------------------------------------------------------------------- */

/* Index of the first block ending after addr. */
static size_t block_lower(const struct hb *h, uint64_t addr)
{
	size_t lo = 0, hi = h->nblocks;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (h->blocks[mid].end <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

void hb_alloc(struct hb *h, uint64_t addr, uint64_t size)
{
	size_t i = block_lower(h, addr), j = i;
	uint64_t end = addr + (size ? size : 1);

	/* Blocks it overlaps were freed: it replaces them. */
	while (j < h->nblocks && h->blocks[j].start < end)
		j++;
	if (j == i) {
		if (h->nblocks == h->capblocks) {
			h->capblocks = h->capblocks ? h->capblocks * 2 : 64;
			h->blocks = xrealloc(h->blocks, h->capblocks * sizeof(*h->blocks));
		}
		memmove(&h->blocks[i + 1], &h->blocks[i], (h->nblocks - i) * sizeof(*h->blocks));
		h->nblocks++;
	} else if (j > i + 1) {
		memmove(&h->blocks[i + 1], &h->blocks[j], (h->nblocks - j) * sizeof(*h->blocks));
		h->nblocks -= j - i - 1;
	}
	h->blocks[i] = (struct hb_block){ addr, end, ++h->next_gen };
}

void hb_forget(struct hb *h)
{
	h->forgotten++;
}

/* The heap generation of an address (0: in no block seen allocated). */
static uint32_t addr_gen(const struct hb *h, uint64_t addr)
{
	size_t i = block_lower(h, addr);

	return i < h->nblocks && h->blocks[i].start <= addr ? h->blocks[i].gen : 0;
}

/* ---- shadow memory ------------------------------------------------------------------------- */

static struct hb_cell *cell_get(struct hb *h, uint64_t key, uint32_t gen)
{
	bool created;
	uint64_t *idx = cov_event_u64map_put(&h->cell_index, key, h->ncells, &created);
	struct hb_cell *c;

	if (created) {
		if (h->ncells == h->capcells) {
			h->capcells = h->capcells ? h->capcells * 2 : 256;
			h->cells = xrealloc(h->cells, h->capcells * sizeof(*h->cells));
		}
		h->ncells++;
		memset(&h->cells[*idx], 0, sizeof(*h->cells));
		h->cells[*idx].gen = gen;
		h->cells[*idx].epoch = h->forgotten;
	}
	c = &h->cells[*idx];
	if (c->gen != gen) {
		/* The block was allocated again since: a new variable. */
		c->gen = gen;
		c->n = 0;
		c->atomic = false;
	}
	if (c->epoch != h->forgotten) {
		/* Recorded before lost synchronization: forgotten (whether
		 * the location is atomic is not an order: it stays). */
		c->epoch = h->forgotten;
		c->n = 0;
	}
	return c;
}

static void warn(struct hb *h, uint32_t var, const struct race_access *first,
		 const struct race_access *second, unsigned *fresh)
{
	uint32_t a = first->site < second->site ? first->site : second->site;
	uint32_t b = first->site < second->site ? second->site : first->site;
	bool created;

	cov_event_u64map_put(&h->warned, (uint64_t)a << 32 | b, 1, &created);
	if (!created)
		return;
	if (h->nwarnings == h->capwarnings) {
		h->capwarnings = h->capwarnings ? h->capwarnings * 2 : 16;
		h->warnings = xrealloc(h->warnings, h->capwarnings * sizeof(*h->warnings));
	}
	h->warnings[h->nwarnings++] = (struct race_warning){ var, *first, *second };
	(*fresh)++;
}

/* Is rec ordered before what thread t does now? */
static bool ordered_before(const struct hb_rec *rec, const struct hb_thread *th)
{
	return rec->clock <= vc_get(&th->vc, rec->thread);
}

/* Check a plain access against a granule's records, then record it. */
static void cell_access(struct hb *h, struct hb_cell *c, uint32_t t, uint8_t mask,
			const struct cov_event *ev, const struct race_access *acc, unsigned *fresh)
{
	struct hb_thread *th = thread_get(h, t);
	bool writes = cov_event_op_writes(ev->op);
	struct hb_rec cur = { t, vc_get(&th->vc, t), mask, *acc };
	uint8_t i, k = 0;

	for (i = 0; i < c->n; i++) {
		const struct hb_rec *r = &c->rec[i];

		if (r->thread != t && (r->mask & mask) &&
		    (writes || cov_event_op_writes(r->acc.op)) && !ordered_before(r, th))
			warn(h, ev->obj, &r->acc, acc, fresh);
	}
	/* Keep what this access does not supersede: a record is superseded
	 * when its bytes are within this access's and it is ordered before
	 * it, and this access writes or it only read. */
	for (i = 0; i < c->n; i++) {
		const struct hb_rec *r = &c->rec[i];
		bool covered = (r->mask & ~mask) == 0;
		bool weaker = writes || !cov_event_op_writes(r->acc.op);

		if (covered && weaker && (r->thread == t || ordered_before(r, th)))
			continue;
		c->rec[k++] = *r;
	}
	if (k == HB_CELL_RECS) {
		/* Full: the oldest goes. */
		memmove(&c->rec[0], &c->rec[1], (HB_CELL_RECS - 1) * sizeof(c->rec[0]));
		k--;
	}
	c->rec[k++] = cur;
	c->n = k;
}

/* An access to an atomic location: acquire on loads, release on stores. */
static void atomic_access(struct hb *h, uint32_t t, uint64_t granule, unsigned op)
{
	if (cov_event_op_reads(op))
		acquire(h, t, KEY_ATOMIC | granule);
	if (cov_event_op_writes(op))
		release(h, t, KEY_ATOMIC | granule);
}

static unsigned feed_access(struct hb *h, const struct cov_event *ev)
{
	struct race_access acc = { ev->thread,	       ev->site,    ev->op,
				   (uint16_t)ev->size, ev->var_off, ev->held };
	uint64_t first, last, addr = ev->addr, size = ev->size ? ev->size : 1;
	uint32_t gen = addr ? addr_gen(h, addr) : 0;
	unsigned fresh = 0;

	if (addr) {
		first = addr >> 3;
		last = (addr + size - 1) >> 3;
	} else {
		first = last = KEY_ID | ev->obj;
	}
	for (uint64_t g = first; g <= last; g++) {
		uint64_t lo = addr ? (g << 3 > addr ? g << 3 : addr) : 0;
		uint64_t hi = addr ? ((g << 3) + 8 < addr + size ? (g << 3) + 8 : addr + size) : 8;
		uint8_t mask = addr ? (uint8_t)(((1u << (hi - lo)) - 1) << (lo & 7)) : 0xff;
		struct hb_cell *c = cell_get(h, g, gen);
		/* A lock-prefixed RMW (split plain ones arrive as R, W). It is
		 * not judged against the location's earlier accesses: a relaxed
		 * atomic load compiles to the same mov as a plain one, so an
		 * earlier "plain" load of it may be atomic too (tcp_table's
		 * find_free), and whether that load came before the first RMW
		 * of the run is timing. */
		bool locked = ev->op == CS_OP_RW;

		if (locked && !c->atomic) {
			c->atomic = true;
			c->n = 0;
		}
		if (c->atomic)
			atomic_access(h, ev->thread, g, ev->op);
		else
			cell_access(h, c, ev->thread, mask, ev, &acc, &fresh);
	}
	return fresh;
}

/* ---- pthread_once -------------------------------------------------------------------------- */

/* Thread t returns from pthread_once(key): the routine has run, and its
 * accesses (by whichever caller ran it) are all in the stream already:
 * they came before once_control said done, which came before this
 * return. That caller's own return event may still be on its way, so
 * every caller still inside the call (not on the fast path) releases into
 * the once object now, t too; then t acquires it. A caller that waited
 * releases too: its accesses before the call are ordered before every
 * later return (over-ordering, never a false warning). */
static void once_return(struct hb *h, uint32_t t, uint64_t key)
{
	for (uint32_t i = 0; i < h->nthreads; i++)
		if (h->threads[i].once == key)
			release(h, i, key);
	acquire(h, t, key);
	thread_get(h, t)->once = 0;
}

/* ---- events -------------------------------------------------------------------------------- */

static void feed_sync(struct hb *h, const struct cov_event *ev)
{
	uint64_t key = sync_key(ev->addr, ev->obj);
	struct hb_thread *th = thread_get(h, ev->thread);
	struct hb_thread *child;

	switch (ev->op) {
	case CS_OP_LOCK:
	case CS_OP_TRYLOCK_OK:
	case CS_OP_SPIN_LOCK:
		acquire(h, ev->thread, key);
		break;
	case CS_OP_RDLOCK:
		acquire(h, ev->thread, key);
		reader_add(th, key);
		break;
	case CS_OP_WRLOCK:
		acquire(h, ev->thread, key);
		acquire(h, ev->thread, KEY_READ | key);
		break;
	case CS_OP_RWUNLOCK:
		release(h, ev->thread, reader_del(th, key) ? KEY_READ | key : key);
		break;
	case CS_OP_UNLOCK:
	case CS_OP_SPIN_UNLOCK:
	case CS_OP_COND_SIGNAL:
	case CS_OP_COND_BROADCAST:
	case CS_OP_SEM_POST:
		release(h, ev->thread, key);
		break;
	case CS_OP_COND_WAIT: /* the wait releases the mutex */
		if (ev->addr2)
			release(h, ev->thread, ev->addr2);
		break;
	case CS_OP_COND_WAKE:
		acquire(h, ev->thread, key);
		if (ev->addr2)
			acquire(h, ev->thread, ev->addr2);
		break;
	case CS_OP_SEM_WAIT:
		acquire(h, ev->thread, key);
		break;
	case CS_OP_BARRIER:
		barrier_enter(h, ev->thread, key);
		break;
	case CS_OP_ONCE_ENTER:
		th->once = ev->addr2 ? 0 : key;
		break;
	case CS_OP_ONCE:
		once_return(h, ev->thread, key);
		break;
	case CS_OP_CREATE:
		child = thread_get(h, ev->obj);
		th = thread_get(h, ev->thread); /* the array may have moved */
		vc_join(&child->vc, &th->vc);
		vc_set(&th->vc, ev->thread, vc_get(&th->vc, ev->thread) + 1);
		break;
	case CS_OP_JOIN:
		child = thread_get(h, ev->obj);
		th = thread_get(h, ev->thread);
		vc_join(&th->vc, &child->vc);
		break;
	default:
		break;
	}
}

unsigned hb_feed(struct hb *h, const struct cov_event *ev)
{
	struct hb_thread *th = thread_get(h, ev->thread);

	if (th->barrier)
		barrier_left(h, th);
	if (cov_event_op_is_access(ev->op))
		return feed_access(h, ev);
	feed_sync(h, ev);
	return 0;
}

/* ---- lifetime ------------------------------------------------------------------------------- */

struct hb *hb_new(void)
{
	return xcalloc(1, sizeof(struct hb));
}

static void free_run(struct hb *h)
{
	for (uint32_t i = 0; i < h->nthreads; i++) {
		free(h->threads[i].vc.c);
		free(h->threads[i].readers);
	}
	free(h->threads);
	h->threads = NULL;
	h->nthreads = 0;
	for (size_t i = 0; i < h->nsyncs; i++)
		free(h->syncs[i].c);
	free(h->syncs);
	h->syncs = NULL;
	h->nsyncs = 0;
	cov_event_u64map_free(&h->sync_index);
	for (size_t i = 0; i < h->nbarriers; i++) {
		free(h->barriers[i].gen[0].c);
		free(h->barriers[i].gen[1].c);
	}
	free(h->barriers);
	h->barriers = NULL;
	h->nbarriers = 0;
	cov_event_u64map_free(&h->barrier_index);
	free(h->cells);
	h->cells = NULL;
	h->ncells = h->capcells = 0;
	cov_event_u64map_free(&h->cell_index);
	free(h->blocks);
	h->blocks = NULL;
	h->nblocks = h->capblocks = 0;
	h->forgotten = 0;
}

void hb_run_begin(struct hb *h)
{
	free_run(h);
}

void hb_free(struct hb *h)
{
	if (!h)
		return;
	free_run(h);
	free(h->warnings);
	cov_event_u64map_free(&h->warned);
	free(h);
}

size_t hb_warning_count(const struct hb *h)
{
	return h->nwarnings;
}

const struct race_warning *hb_warning_get(const struct hb *h, size_t i)
{
	return i < h->nwarnings ? &h->warnings[i] : NULL;
}
