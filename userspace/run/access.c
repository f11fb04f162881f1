// SPDX-License-Identifier: MIT
/*
 * Memory-access sites in `concsched run` (issue 7): `--access`. The glue
 * between the run in flight (onerun.c) and the plain C engines: the site
 * finder, the access probes, the metrics (metrics.h, races.h,
 * map_patterns.h). Strategies that act at accesses (strategies/strat_map.c)
 * get each access as a decision point in campaign ids (access_point).
 *
 * Campaign begin: the site finder lists the candidate sites of the program
 * (and of --sites-object libraries) that pass --sites-include/-exclude;
 * K estimation runs (--estimate-runs, probes only) carry an access probe
 * on every candidate; the variables whose addresses two or more threads
 * touched are the shared variables, and the sites that touched them are
 * the only ones later runs probe (placement sharedVar). Their read and
 * write sites give the MAP domain estimate (ALGORITHMS.md section 2,
 * pruned by the program-order/create/join order of the first estimation
 * run), stored as the campaign's "map" requirements.
 *
 * Every run: accesses arrive as struct cs_event in the sync probes' ring
 * buffer (probes/access.bpf.c, run_events mode), in program order with the
 * thread's synchronization. Each event becomes a struct cov_event with ids
 * that hold across runs: sites, variables, locks and functions are the
 * store's site ids (a global variable is the site of its symbol's first
 * byte, a heap block the call site of its malloc, a global lock its data
 * location, a heap lock the site that first used it in the run, a function
 * its entry), threads are their creation paths interned per campaign. The
 * events feed a fresh cov_metrics per run; at commit every metric's tasks
 * go to the store with ids written as store references ("s12" -> "@12",
 * "v7" -> "v@7", "t3" -> "t0.2"), and the run's race and lock-order
 * warnings are recorded as warnings.
 *
 * An access a thread is kept at (a decision point the strategy holds)
 * counts as executed, and is fed to the metrics, when the thread is let go
 * (access_pass) or shows its next event (the watchdog let it go).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "run/access.h"
#include "run/access_state.h"
#include "run/run_sites.h"
#include "kernel/access_probes.h"
#include "lib/fnv1a64.h"
#include "lib/json.h"
#include "coverage/map_patterns.h"
#include "coverage/metrics.h"
#include "coverage/races.h"
#include "kernel/site_finder.h"
#include "results/store.h"
#include "kernel/symbolize.h"
#include "lib/suppress.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/xalloc.h"

/* ---- campaign tables ---------------------------------------------------------------- */

static uint32_t path_id(struct access_campaign *ac, const char *path)
{
	uint32_t i;

	for (i = 0; i < ac->npaths; i++)
		if (!strcmp(ac->paths[i], path))
			return i;
	ac->paths = xrealloc(ac->paths, (ac->npaths + 1) * sizeof(*ac->paths));
	ac->paths[ac->npaths] = xstrdup(path);
	return ac->npaths++;
}

static struct acc_var *var_get(struct access_campaign *ac, int64_t id, bool heap,
			       const struct sym_site *ss)
{
	bool created;
	uint64_t *idx = cov_event_u64map_put(&ac->var_index, (uint64_t)id, ac->nvars, &created);
	struct acc_var *v;
	char where[512];

	if (!created)
		return &ac->vars[*idx];
	ac->vars = xrealloc(ac->vars, (ac->nvars + 1) * sizeof(*ac->vars));
	v = &ac->vars[ac->nvars++];
	memset(v, 0, sizeof(*v));
	v->id = id;
	v->heap = heap;
	symbolize_site_format(ss, where, sizeof(where));
	if (heap)
		v->name = xasprintf("heap block allocated at %s", where);
	else if (ss->symbol)
		v->name = xstrdup(ss->symbol);
	else
		v->name = xstrdup(where);
	return v;
}

struct acc_var *access_var_find(const struct access_campaign *ac, uint32_t id)
{
	uint64_t *idx = cov_event_u64map_get(&ac->var_index, id);

	return idx ? &ac->vars[*idx] : NULL;
}

int64_t access_key_site(struct campaign *c, const char *object, uint64_t offset)
{
	char key[PATH_MAX + 32];

	snprintf(key, sizeof(key), "%s+0x%" PRIx64, object, offset);
	return run_sites_store_site(c->st, key);
}

/* An access instruction's site: named by its own line. */
static int64_t insn_site(struct campaign *c, const char *object, uint64_t offset)
{
	char key[PATH_MAX + 32];

	snprintf(key, sizeof(key), "%s+0x%" PRIx64, object, offset);
	return run_sites_store_insn_site(c->st, key);
}

uint32_t access_cand_site(struct access_campaign *ac, struct campaign *c, uint32_t i)
{
	const struct mem_site *s;

	if (i >= ac->set.n)
		return 0;
	if (!ac->site_id[i]) {
		s = &ac->set.sites[i];
		ac->site_id[i] = insn_site(c, s->object, s->offset);
		if (ac->site_id[i] <= 0 || ac->site_id[i] > UINT32_MAX)
			ac->site_id[i] = -1;
	}
	return ac->site_id[i] > 0 ? (uint32_t)ac->site_id[i] : 0;
}

uint32_t access_point_site(struct campaign *c, const struct cs_event *e)
{
	return c && c->acc ? access_cand_site(c->acc, c, e->seq) : 0;
}

static uint32_t cand_func(struct access_campaign *ac, struct campaign *c, uint32_t i)
{
	const struct mem_site *s;
	int64_t id;

	if (i >= ac->set.n)
		return 0;
	if (!ac->func_id[i]) {
		s = &ac->set.sites[i];
		id = s->function ? access_key_site(c, s->object, s->offset - s->func_offset) : 0;
		ac->func_id[i] = id > 0 && id <= UINT32_MAX ? id : -1;
	}
	return ac->func_id[i] > 0 ? (uint32_t)ac->func_id[i] : 0;
}

/* ---- store keys ------------------------------------------------------------------------ */

static void key_append(char **out, size_t *n, size_t *cap, const char *s)
{
	size_t l = strlen(s);

	if (*n + l + 2 > *cap) {
		*cap = (*n + l + 2) * 2;
		*out = xrealloc(*out, *cap);
	}
	memcpy(*out + *n, s, l + 1);
	*n += l;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* One id of a metric key in store form. */
static void stable_elem(const struct access_campaign *ac, const char *tok, char *buf, size_t len)
{
	unsigned long n;

	if (strchr("svlft", tok[0]) && tok[0] && all_digits(tok + 1)) {
		n = strtoul(tok + 1, NULL, 10);
		switch (tok[0]) {
		case 's':
			snprintf(buf, len, "@%lu", n);
			return;
		case 't':
			snprintf(buf, len, "t%s", n < ac->npaths ? ac->paths[n] : "?");
			return;
		default:
			snprintf(buf, len, "%c@%lu", tok[0], n);
			return;
		}
	}
	snprintf(buf, len, "%s", tok);
	/* '@' is reserved for site references. */
	for (char *p = buf; (p = strchr(p, '@'));)
		*p = ':';
}

/* A metric key ("s12 s40 v7 t1 {l3,t2}") in store form. */
char *access_stable_key(const struct access_campaign *ac, const char *key)
{
	size_t cap = strlen(key) * 2 + 64, n = 0;
	char *out = xcalloc(1, cap), *dup = xstrdup(key), *save = NULL, *tok;
	char piece[256];

	for (tok = strtok_r(dup, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
		if (n)
			key_append(&out, &n, &cap, " ");
		if (tok[0] == '{') {
			char *inner = tok + 1, *end = strchr(inner, '}'), *s2 = NULL, *e;
			bool first = true;

			if (end)
				*end = 0;
			key_append(&out, &n, &cap, "{");
			for (e = strtok_r(inner, ",", &s2); e; e = strtok_r(NULL, ",", &s2)) {
				stable_elem(ac, e, piece, sizeof(piece));
				if (!first)
					key_append(&out, &n, &cap, ",");
				key_append(&out, &n, &cap, piece);
				first = false;
			}
			key_append(&out, &n, &cap, "}");
			continue;
		}
		stable_elem(ac, tok, piece, sizeof(piece));
		key_append(&out, &n, &cap, piece);
	}
	free(dup);
	return out;
}

/* ---- the site set and the probes ----------------------------------------------------------- */

int access_collect_sites(struct campaign *c, struct access_campaign *ac)
{
	const struct run_opts *o = c->o;
	size_t i;
	int err;

	err = site_finder_find(c->ti.path, &o->sites, &ac->set);
	if (err) {
		log_err("%s: cannot decode .text for access sites: %s", c->ti.path, strerror(-err));
		return err;
	}
	for (i = 0; i < o->nsite_objects; i++) {
		char *lib = site_finder_resolve_object(c->ti.path, o->site_objects[i]);

		if (!lib) {
			log_err("--sites-object %s: no such shared object (give a path, or a name "
				"found in the library path, e.g. libc)",
				o->site_objects[i]);
			return -ENOENT;
		}
		err = site_finder_find(lib, &o->sites, &ac->set);
		free(lib);
		if (err) {
			log_err("--sites-object %s: cannot decode .text: %s", o->site_objects[i],
				strerror(-err));
			return err;
		}
	}
	if (!ac->set.n) {
		log_err("--access: %s has no memory-access sites%s", c->ti.path,
			o->sites.ninclude || o->sites.nexclude
				? " that pass --sites-include/-exclude"
				: "");
		return -ENOENT;
	}
	return 0;
}

/* "0-3,7,9-12": the indexes of the set sites in mask. */
char *access_mask_format(const bool *mask, size_t n)
{
	/* NULL: every site (an estimation or exploration run's) */
	size_t cap = 64, len = 0, i, j;
	char *s = xcalloc(1, cap), piece[48];

	for (i = 0; i < n; i = j) {
		if (mask && !mask[i]) {
			j = i + 1;
			continue;
		}
		for (j = i; j < n && (!mask || mask[j]); j++)
			;
		if (j - i == 1)
			snprintf(piece, sizeof(piece), "%s%zu", len ? "," : "", i);
		else
			snprintf(piece, sizeof(piece), "%s%zu-%zu", len ? "," : "", i, j - 1);
		key_append(&s, &len, &cap, piece);
	}
	return s;
}

/* Inverse of access_mask_format; -EINVAL on a bad list. */
int access_mask_parse(const char *s, bool *mask, size_t n)
{
	const char *p = s;

	memset(mask, 0, n * sizeof(*mask));
	while (*p) {
		char *end;
		unsigned long a = strtoul(p, &end, 10), b = a;

		if (end == p)
			return -EINVAL;
		if (*end == '-') {
			p = end + 1;
			b = strtoul(p, &end, 10);
			if (end == p)
				return -EINVAL;
		}
		if (a > b || b >= n)
			return -EINVAL;
		for (; a <= b; a++)
			mask[a] = true;
		p = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return -EINVAL;
	}
	return 0;
}

/* ---- per-run resolution --------------------------------------------------------------------- */

static struct access_run *access_run_new(struct campaign *c, bool estimate)
{
	struct access_run *ar = xcalloc(1, sizeof(*ar));

	ar->c = c;
	ar->ac = c->acc;
	ar->estimate = estimate;
	ar->m = metrics_new(0);
	cov_event_conv_init(&ar->conv);
	cov_event_u64map_init(&ar->data);
	cov_event_u64map_init(&ar->sync_site);
	cov_event_u64map_init(&ar->locks);
	cov_event_u64map_init(&ar->funcs);
	cov_event_u64map_init(&ar->addr_tid);
	return ar;
}

void access_run_free(struct onerun *r)
{
	struct access_run *ar = r->acc;
	if (!ar)
		return;
	metrics_free(ar->m);
	cov_event_conv_free(&ar->conv);
	symbolize_free(ar->sz);
	ring_buffer__free(ar->alloc_rb);
	free(ar->blocks);
	free(ar->allocs);
	cov_event_u64map_free(&ar->data);
	cov_event_u64map_free(&ar->sync_site);
	cov_event_u64map_free(&ar->locks);
	cov_event_u64map_free(&ar->funcs);
	cov_event_u64map_free(&ar->addr_tid);
	free(ar->bias);
	free(ar->bias_obj);
	free(ar->pending);
	free(ar->mask);
	free(ar);
	r->acc = NULL;
}

static void alloc_queue(struct access_run *ar, const struct cs_alloc_event *a)
{
	size_t i;

	if (ar->nallocs == ar->capallocs) {
		ar->capallocs = ar->capallocs ? ar->capallocs * 2 : 64;
		ar->allocs = xrealloc(ar->allocs, ar->capallocs * sizeof(*ar->allocs));
	}
	for (i = ar->nallocs; i > 0 && ar->allocs[i - 1].ts > a->ts_ns; i--)
		ar->allocs[i] = ar->allocs[i - 1];
	ar->allocs[i] = (struct alloc_pending){ a->ts_ns, a->addr, a->size };
	ar->nallocs++;
}

/* The allocations made before ts are told to the race detector. */
static void alloc_flush(struct access_run *ar, uint64_t ts)
{
	struct race_detector *rd = metrics_races(ar->m);
	size_t i;

	for (i = 0; i < ar->nallocs && ar->allocs[i].ts <= ts; i++)
		races_alloc(rd, ar->allocs[i].addr, ar->allocs[i].size);
	memmove(ar->allocs, ar->allocs + i, (ar->nallocs - i) * sizeof(*ar->allocs));
	ar->nallocs -= i;
}

static int on_alloc(void *ctx, void *data, size_t len)
{
	struct access_run *ar = ctx;
	const struct cs_alloc_event *a = data;
	size_t lo = 0, hi = ar->nblocks;

	if (len < sizeof(*a) || !a->addr)
		return 0;
	alloc_queue(ar, a);
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ar->blocks[mid].start < a->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < ar->nblocks && ar->blocks[lo].start == a->addr) {
		ar->blocks[lo].size = a->size ? a->size : 1;
		ar->blocks[lo].caller = a->caller;
		return 0;
	}
	if (ar->nblocks == ar->capblocks) {
		ar->capblocks = ar->capblocks ? ar->capblocks * 2 : 256;
		ar->blocks = xrealloc(ar->blocks, ar->capblocks * sizeof(*ar->blocks));
	}
	memmove(&ar->blocks[lo + 1], &ar->blocks[lo], (ar->nblocks - lo) * sizeof(*ar->blocks));
	ar->blocks[lo] = (struct heap_block){ a->addr, a->size ? a->size : 1, a->caller };
	ar->nblocks++;
	return 0;
}

static const struct heap_block *block_of(struct access_run *ar, uint64_t addr)
{
	size_t lo = 0, hi;

	/* The blocks allocated up to now first: an access right after its
	 * block's allocation must find it (the bound is taken after). */
	if (ar->alloc_rb)
		ring_buffer__consume(ar->alloc_rb);
	hi = ar->nblocks;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (ar->blocks[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (addr - ar->blocks[lo - 1].start < ar->blocks[lo - 1].size)
		return &ar->blocks[lo - 1];
	return NULL;
}

/* Load bias of the objects of the probed sites, learnt from each event's
 * probe address (works after the process is gone). */
static void learn_bias(struct access_run *ar, const struct cs_event *e)
{
	const struct mem_site *s;
	size_t i;

	if (e->seq >= ar->ac->set.n)
		return;
	s = &ar->ac->set.sites[e->seq];
	for (i = 0; i < ar->nbias; i++)
		if (ar->bias_obj[i] == s->object)
			return;
	ar->bias = xrealloc(ar->bias, (ar->nbias + 1) * sizeof(*ar->bias));
	ar->bias_obj = xrealloc(ar->bias_obj, (ar->nbias + 1) * sizeof(*ar->bias_obj));
	ar->bias_obj[ar->nbias] = s->object;
	ar->bias[ar->nbias++] = e->site - (s->vaddr - (s->offset - s->probe_offset));
}

/* Runtime address -> (object, file offset, symbol): probed objects first,
 * then the live symbolizer. */
static bool resolve_addr(struct access_run *ar, uint64_t addr, struct sym_site *ss)
{
	size_t i;

	for (i = 0; i < ar->nbias; i++)
		if (symbolize_resolve_vaddr(ar->bias_obj[i], addr - ar->bias[i], ss) == 0 &&
		    ss->object)
			return true;
	memset(ss, 0, sizeof(*ss));
	if (ar->sz && symbolize_site(ar->sz, addr, ss) == 0 && ss->object) {
		const char *obj = ss->object;
		uint64_t vaddr = ss->vaddr;

		if (symbolize_resolve_vaddr(obj, vaddr, ss) == 0 && ss->object)
			return true;
	}
	return false;
}

/* The variable an access touches (0: none: thread stacks, memory we cannot
 * name, or not a shared variable outside estimation and exploration), and
 * the access's byte offset in it. */
static uint32_t var_of(struct access_run *ar, uint64_t addr, uint32_t *off)
{
	const struct heap_block *b;
	struct sym_site ss = { 0 };
	struct acc_var *v;
	uint64_t *slot;
	int64_t id = 0;
	bool heap = false;

	*off = 0;
	slot = cov_event_u64map_get(&ar->data, addr);
	if (slot) {
		id = (int64_t)(uint32_t)*slot - 1;
		*off = (uint32_t)(*slot >> 32);
	} else if ((b = block_of(ar, addr))) {
		*off = (uint32_t)(addr - b->start);
		if (!resolve_addr(ar, b->caller, &ss))
			return 0;
		id = access_key_site(ar->c, ss.object, ss.offset);
		/* Name the call (the line of the return address - 1). */
		if (ss.vaddr) {
			const char *obj = ss.object;
			uint64_t va = ss.vaddr - 1;

			symbolize_resolve_vaddr(obj, va, &ss);
		}
		heap = true;
	} else {
		if (resolve_addr(ar, addr, &ss) && !ss.is_func)
			id = access_key_site(ar->c, ss.object,
					     ss.symbol ? ss.offset - ss.sym_offset : ss.offset);
		if (id > 0 && ss.symbol)
			*off = (uint32_t)ss.sym_offset;
		*cov_event_u64map_put(&ar->data, addr, 0, NULL) =
			(uint64_t)*off << 32 | ((uint64_t)(id > 0 && id < UINT32_MAX ? id : 0) + 1);
	}
	if (id <= 0 || id > UINT32_MAX)
		return 0;
	if (slot && !access_var_find(ar->ac, (uint32_t)id))
		resolve_addr(ar, addr, &ss);
	v = var_get(ar->ac, id, heap, &ss);
	if (!ar->estimate && !ar->explore && !v->shared)
		return 0;
	return (uint32_t)id;
}

/* ---- conversion callbacks (sync events) --------------------------------------------------- */

static uint32_t cb_thread(void *ctx, uint32_t tid)
{
	struct onerun *r = ctx;
	struct strat_thread *t = run_sites_thread_find(r, tid);

	return t ? t->cid : path_id(r->acc->ac, "?");
}

static uint32_t cb_site(void *ctx, uint64_t addr)
{
	struct onerun *r = ctx;
	struct access_run *ar = r->acc;
	uint64_t *slot = cov_event_u64map_get(&ar->sync_site, addr);
	int64_t id;

	if (slot)
		return (uint32_t)*slot;
	id = run_sites_id(ar->c->st, r, ar->cur->pid, ar->cur->gen, addr);
	if (id <= 0) {
		run_sites_refresh_vmas(r);
		id = run_sites_id(ar->c->st, r, ar->cur->pid, ar->cur->gen, addr);
	}
	if (id < 0 || id > UINT32_MAX)
		id = 0;
	*cov_event_u64map_put(&ar->sync_site, addr, 0, NULL) = (uint64_t)id;
	return (uint32_t)id;
}

static uint32_t cb_func(void *ctx, uint64_t addr)
{
	struct onerun *r = ctx;
	struct access_run *ar = r->acc;
	uint64_t *slot = cov_event_u64map_get(&ar->funcs, addr);
	struct site_ref s;
	struct sym_site ss;
	int64_t id = 0;

	if (slot)
		return (uint32_t)(*slot - 1);
	if (!syncov_resolve(&r->res, ar->cur->pid, ar->cur->gen, addr, &s) && s.object &&
	    s.object[0] == '/' && s.offset &&
	    !symbolize_resolve_offset(s.object, s.offset - 1, &ss) && ss.symbol && ss.is_func)
		id = access_key_site(ar->c, s.object, s.offset - 1 - ss.sym_offset);
	if (id < 0 || id > UINT32_MAX)
		id = 0;
	*cov_event_u64map_put(&ar->funcs, addr, 0, NULL) = (uint64_t)id + 1;
	return (uint32_t)id;
}

static uint32_t cb_sync(void *ctx, uint64_t addr)
{
	struct onerun *r = ctx;
	struct access_run *ar = r->acc;
	uint64_t *slot = cov_event_u64map_get(&ar->locks, addr);
	char key[PATH_MAX + 32];
	struct site_ref s;
	int64_t id = 0;

	if (slot)
		return (uint32_t)*slot;
	/* A global: its data location; else the site that used it first. */
	if (!syncov_resolve(&r->res, ar->cur->pid, ar->cur->gen, addr, &s) && s.object &&
	    s.object[0] == '/')
		id = run_sites_store_site(ar->c->st, syncov_site_key(&s, key, sizeof(key)));
	if (id <= 0 || id > UINT32_MAX)
		id = cb_site(ctx, ar->cur->site);
	*cov_event_u64map_put(&ar->locks, addr, 0, NULL) = (uint64_t)id;
	return (uint32_t)id;
}

/* ---- feeding ----------------------------------------------------------------------------------
 */

static void order_add(struct access_campaign *ac, const struct cov_event *ev)
{
	if (ac->norder == ac->caporder) {
		ac->caporder = ac->caporder ? ac->caporder * 2 : 1024;
		ac->order_events =
			xrealloc(ac->order_events, ac->caporder * sizeof(*ac->order_events));
	}
	ac->order_events[ac->norder++] = *ev;
}

void access_add_site(uint32_t **v, uint32_t *n, uint32_t site)
{
	for (uint32_t i = 0; i < *n; i++)
		if ((*v)[i] == site)
			return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = site;
}

/* Estimation: who touched what. */
static void estimate_access(struct access_run *ar, const struct cs_event *e,
			    const struct cov_event *ev)
{
	struct acc_var *v = access_var_find(ar->ac, ev->obj);
	bool created;
	uint64_t *slot;

	if (!v)
		return;
	slot = cov_event_u64map_put(&ar->ac->site_threads, ev->site, ev->thread, &created);
	if (!created && (*slot & 0xffffffffULL) != ev->thread)
		*slot |= 1ULL << 32;
	slot = cov_event_u64map_put(&ar->ac->site_held, ev->site, ar->ac->nsite_locks, &created);
	if (created) {
		ar->ac->site_locks =
			xrealloc(ar->ac->site_locks,
				 (ar->ac->nsite_locks + 1) * sizeof(*ar->ac->site_locks));
		ar->ac->site_locks[ar->ac->nsite_locks++] = ev->held;
	} else {
		cov_event_lockset_intersect(&ar->ac->site_locks[*slot], &ev->held);
	}
	v->est_accesses += ar->estimate;
	if (cov_event_op_reads(ev->op))
		access_add_site(&v->reads, &v->nreads, ev->site);
	if (cov_event_op_writes(ev->op))
		access_add_site(&v->writes, &v->nwrites, ev->site);
	/* An address touched by two threads makes its variable shared. */
	slot = cov_event_u64map_put(&ar->addr_tid, e->obj, e->tid, &created);
	if (!created && (*slot & 0xffffffffULL) != e->tid)
		*slot |= 1ULL << 32;
	if (*slot >> 32)
		v->shared = true;
}

/* Does the map engine steer accesses to var? (Access events only.) */
static bool steerable(const struct access_campaign *ac, uint32_t var)
{
	const struct acc_var *v = access_var_find(ac, var);

	return v && v->steer;
}

static void feed(struct access_run *ar, const struct cov_event *ev)
{
	struct strategy *st = ar->r->strat;

	metrics_feed(ar->m, ev);
	if (!ar->estimate && st && steerable(ar->ac, ev->obj))
		strategy_executed(st, &ar->r->sr, ev);
	if (ar->estimate && ar->ac->est_runs == 0)
		order_add(ar->ac, ev);
}

/* One access (two for a plain read-modify-write, which is not atomic). */
static void feed_access(struct access_run *ar, const struct cov_event *ev, bool split)
{
	struct cov_event evs[2];
	size_t i, n = cov_event_access_events(ev, split, evs);

	ar->accesses++;
	for (i = 0; i < n; i++)
		feed(ar, &evs[i]);
}

static size_t tindex(struct onerun *r, struct strat_thread *t)
{
	return (size_t)(t - r->sr.threads);
}

/* The access event as a metric event; false when it touches no variable
 * we follow. */
static bool access_event(struct onerun *r, const struct cs_event *e, struct strat_thread *t,
			 struct cov_event *ev, bool *split)
{
	struct access_run *ar = r->acc;
	struct access_campaign *ac = ar->ac;
	uint8_t aflags = (uint8_t)(e->nlocks >> 8);
	struct cov_lockset *held;

	learn_bias(ar, e);
	memset(ev, 0, sizeof(*ev));
	ev->obj = var_of(ar, e->obj, &ev->var_off);
	if (!ev->obj)
		return false;
	ev->addr = e->obj;
	ev->size = e->nlocks & 0xff;
	ev->op = e->op;
	ev->flags = e->flags & ~CS_EV_PARKED;
	ev->thread = t->cid;
	ev->site = access_cand_site(ac, ar->c, e->seq);
	ev->func = cand_func(ac, ar->c, e->seq);
	if (!ev->site)
		return false;
	held = t->cid < ar->conv.nheld ? &ar->conv.held[t->cid] : NULL;
	if (held)
		ev->held = *held;
	*split = e->op == CS_OP_RW && !(aflags & CS_ACC_LOCK);
	return true;
}

/* ---- campaign: estimation ----------------------------------------------------------------------
 */

static int load_suppressions(struct campaign *c, struct access_campaign *ac)
{
	int err;

	ac->supp = suppress_new();
	for (size_t i = 0; i < c->o->nsuppressions; i++) {
		err = suppress_load(ac->supp, c->o->suppressions[i]);
		if (err == -EINVAL)
			return err;
		if (err) {
			log_err("--suppressions %s: %s", c->o->suppressions[i], strerror(-err));
			return err;
		}
	}
	return 0;
}

int access_campaign_begin(struct campaign *c)
{
	struct access_campaign *ac = xcalloc(1, sizeof(*ac));
	int err;

	c->acc = ac;
	cov_event_u64map_init(&ac->var_index);
	cov_event_u64map_init(&ac->site_threads);
	cov_event_u64map_init(&ac->site_held);
	err = load_suppressions(c, ac);
	if (err)
		return err;
	err = access_collect_sites(c, ac);
	if (err)
		return err;
	ac->site_id = xcalloc(ac->set.n, sizeof(*ac->site_id));
	ac->func_id = xcalloc(ac->set.n, sizeof(*ac->func_id));
	ac->shared_site = xcalloc(ac->set.n, sizeof(*ac->shared_site));
	path_id(ac, "0");
	c->sess.aset = &ac->set;
	c->sess.aprog = c->ti.path;
	c->sess.steer_cap = c->o->steer_cap;
	c->sess.probe_cap = c->o->probe_cap;
	c->sess.probe_budget = c->o->probe_budget;
	return 0;
}

/* One estimation run (probes on every candidate) has ended. */
void access_estimation_add(struct campaign *c, struct onerun *r)
{
	struct access_campaign *ac = c->acc;

	if (r->graced)
		ac->est_cut_s = r->timeout_s;
	if (r->acc) {
		ac->est_attach_ns += r->sess->ap.attach_ns;
		ac->est_attached = r->sess->ap.attached;
		ac->est_accesses += r->acc->accesses;
		ac->est_dropped += access_probes_stat(&r->sess->ap, CS_ASTAT_DROPPED);
		if (!ac->est_site_hits)
			ac->est_site_hits = xcalloc(ac->set.n, sizeof(*ac->est_site_hits));
		for (size_t i = 0; i < ac->set.n; i++)
			ac->est_site_hits[i] += access_probes_site_hits(&r->sess->ap, i);
	}
	ac->est_runs++;
}

/* ---- runs
 * ------------------------------------------------------------------------------------------ */

/*
 * Exploration: the estimation runs find the shared variables only among
 * the accesses they made, and a thread that ran alone in them (a thief
 * that started once the owner had emptied its deque) shares nothing there;
 * later runs probe only the shared sites, so what they share elsewhere
 * would never be seen. So test runs 4, 8, ... 32 and then every
 * ACCESS_EXPLORE_LATER-th probe every candidate site (steered as usual:
 * their extra sites are decision points too), their accesses are counted
 * as an estimation run's, and the sites of variables they find shared
 * join the probed set. Not with -j N (the set is read by runs in flight),
 * nor once every candidate is probed.
 */
static bool explore_due(const struct campaign *c)
{
	const struct access_campaign *ac = c->acc;
	uint64_t n = c->nstarted;

	if (c->o->jobs > 1 || ac->nshared_sites >= ac->set.n || !n)
		return false;
	return n <= ACCESS_EXPLORE_FIRST ? n % ACCESS_EXPLORE_EARLY == 0
					 : n % ACCESS_EXPLORE_LATER == 0;
}

/*
 * The sites a run probes (NULL: every candidate): the rotation's set when
 * it left some out, else every candidate in an estimation or exploration
 * run, else the shared sites. The one choice: access_run_begin attaches
 * these, access_run_config_json records them as the run's "sites", which
 * a replay probes again.
 */
const bool *access_run_mask(const struct access_run *ar)
{
	if (ar->mask)
		return ar->mask;
	return ar->estimate || ar->explore ? NULL : ar->ac->shared_site;
}

/* Which accesses the campaign's next test run probes, as a key: 0 when it
 * probes the shared sites, else a hash of its rotation's set (and 1 for an
 * exploration run without one). Runs with one key probe the same
 * variables, so a strategy that counts a run's accesses (pct --access)
 * keeps one count per key. The same choice access_run_begin makes, made
 * before the strategy's run_begin (campaign.c, run_prepare). */
uint64_t access_run_probe_key(const struct campaign *c)
{
	bool explore = c->acc && explore_due(c);
	size_t out = 0;
	bool *mask;
	uint64_t key;

	if (!c->acc)
		return 0;
	mask = access_rotate_mask(c, (uint64_t)c->nstarted, explore, &out);
	if (!mask)
		return explore ? 1 : 0;
	key = fnv1a64(mask, c->acc->set.n * sizeof(*mask), FNV1A64_INIT) | 2;
	free(mask);
	return key;
}

/* Estimation (estimate) or test run: per-run state, the site mask. */
void access_run_begin(struct campaign *c, struct onerun *r, bool estimate)
{
	struct access_campaign *ac = c->acc;
	bool explore = ac && !estimate && explore_due(c);

	if (!ac || (!estimate && !explore && !ac->nshared_sites))
		return;
	r->acc = access_run_new(c, estimate);
	r->acc->r = r;
	r->acc->conv.ctx = r;
	r->acc->conv.thread_id = cb_thread;
	r->acc->conv.site_id = cb_site;
	r->acc->conv.func_id = cb_func;
	r->acc->conv.sync_id = cb_sync;
	r->acc->explore = explore;
	if (!estimate)
		r->acc->mask =
			access_rotate_mask(c, (uint64_t)c->nstarted, explore, &r->acc->rotated_out);
	r->access_mask = access_run_mask(r->acc);
	r->access_on = true;
}

/* The target exec'd: follow its maps and its allocator's ring buffer. */
void access_hook_launched(struct onerun *r)
{
	struct access_run *ar = r->acc;
	int fd;

	if (!ar)
		return;
	ar->pid = r->l.pid;
	ar->sz = symbolize_new(r->l.pid);
	fd = access_probes_alloc_fd(&r->sess->ap);
	if (fd >= 0)
		ar->alloc_rb = ring_buffer__new(fd, on_alloc, ar, NULL);
}

/* The probe cap (--probe-cap): a site closed in this run (the BPF side
 * stopped writing its events, by count) loses its uprobe for the rest of
 * the run, so that its hits stop trapping. The links change on a thread
 * of their own (access_probes_shed_start); one change at a time. */
static void probe_cap_check(struct onerun *r, struct access_run *ar)
{
	struct access_probes *ap = &r->sess->ap;
	uint64_t cap = r->sess->probe_cap, capped, ns;
	bool *drop;
	size_t i, n = 0;
	int got;

	if (!cap || r->probes_stopped)
		return;
	if (access_probes_shed_poll(ap, false, &got, &ns)) {
		if (got < 0)
			log_warn("cannot take the uprobes of access sites past the probe cap away: "
				 "%s "
				 "(they go on trapping, without events)",
				 strerror(-got));
		else
			log_debug("run: %d access sites closed by the probe cap (%" PRIu64
				  " hits a thread) or budget (%" PRIu64
				  " hits a run) unprobed %.3g s into the run, in %.3g ms; %zu "
				  "still probed",
				  got, cap, r->sess->probe_budget, (now_ns() - r->t0) / 1e9,
				  ns / 1e6, ap->attached - ap->nshed);
	}
	if (ap->shedding || !ap->ngroups)
		return;
	capped = access_probes_stat(ap, CS_ASTAT_CAPPED);
	if (capped <= ar->capped_seen)
		return;
	ar->capped_seen = capped;
	drop = xcalloc(ap->set->n, sizeof(*drop));
	for (i = 0; i < ap->set->n; i++)
		if (ap->attached_site[i] && access_probes_site_cap(ap, i) == ACCESS_CAP_CLOSED) {
			drop[i] = true;
			n++;
		}
	if (n)
		access_probes_shed_start(ap, drop);
	free(drop);
}

void access_hook_tick(struct onerun *r)
{
	struct access_run *ar = r->acc;
	uint64_t now;

	if (!ar || !ar->sz || r->l.reaped)
		return;
	probe_cap_check(r, ar);
	now = now_ns();
	if (now - ar->refreshed_ns < 50000000ULL)
		return;
	ar->refreshed_ns = now;
	symbolize_refresh(ar->sz);
}

void access_hook_thread(struct onerun *r, struct strat_thread *t)
{
	struct access_run *ar = r->acc;

	if (!ar)
		return;
	t->cid = path_id(ar->ac, t->path);
}

static struct acc_pending *pending_of(struct access_run *ar, size_t i)
{
	if (i >= ar->npending) {
		size_t n = i + 16;

		ar->pending = xrealloc(ar->pending, n * sizeof(*ar->pending));
		memset(ar->pending + ar->npending, 0, (n - ar->npending) * sizeof(*ar->pending));
		ar->npending = n;
	}
	return &ar->pending[i];
}

void access_pass(struct onerun *r, struct strat_thread *t)
{
	struct access_run *ar = r->acc;
	size_t i = tindex(r, t);

	if (!ar || i >= ar->npending || !ar->pending[i].on)
		return;
	ar->pending[i].on = false;
	feed_access(ar, &ar->pending[i].ev, ar->pending[i].split);
}

bool access_point(struct onerun *r, const struct cs_event *e, struct strat_thread *t,
		  struct cov_event *ev, bool *split, bool *contended, bool *cross)
{
	struct access_run *ar = r->acc;
	struct acc_pending *p;
	const struct acc_var *v;

	*contended = *cross = false;
	if (!ar || ar->estimate || !access_event(r, e, t, ev, split))
		return false;
	*contended = steerable(ar->ac, ev->obj);
	v = access_var_find(ar->ac, ev->obj);
	*cross = v && v->cross;
	p = pending_of(ar, tindex(r, t));
	p->on = true;
	p->split = *split;
	p->ev = *ev;
	return true;
}

/* Every event of the run (sync and access), in ring order. */
void access_hook_event(struct onerun *r, const struct cs_event *e, struct strat_thread *t)
{
	struct access_run *ar = r->acc;
	struct cov_event ev;
	bool split = false;

	if (!ar || !t)
		return;
	ar->cur = e;
	access_pass(r, t); /* it runs: a kept access has executed */
	alloc_flush(ar, e->ts_ns);
	if (!cov_event_op_is_access(e->op)) {
		/* Its thread's sequence skipped: synchronization events lost
		 * (the ring buffer was full): the race analysis cannot order
		 * by them (hb_forget), nor the lock-order graph know what is
		 * held (metrics_sync_lost). */
		if (r->tm.seq_gaps != ar->sync_lost) {
			ar->sync_lost = r->tm.seq_gaps;
			metrics_sync_lost(ar->m);
		}
		if (e->op == CS_OP_FORK || e->op == CS_OP_EXEC)
			return;
		if (cov_event_from_cs(&ar->conv, e, &ev))
			return;
		feed(ar, &ev);
		return;
	}
	if (!access_event(r, e, t, &ev, &split)) {
		if (log_verbose > 2)
			log_debug("access: thread %s site %u addr 0x%" PRIx64 ": no variable",
				  t->path, e->seq, (uint64_t)e->obj);
		return;
	}
	alloc_flush(ar, e->ts_ns); /* the allocations access_event read */
	if (log_verbose > 2)
		log_debug("access: thread %s site %u addr 0x%" PRIx64 " op %u: v%u @%u", t->path,
			  e->seq, (uint64_t)e->obj, e->op, ev.obj, ev.site);
	if (ar->estimate || ar->explore)
		estimate_access(ar, e, &ev);
	/* A parked access is a decision point: fed when it goes on. */
	if ((e->flags & CS_EV_PARKED) && r->steer && !ar->estimate &&
	    strat_run_has(&r->sr, STRAT_F_ACCESS_POINTS))
		return;
	feed_access(ar, &ev, split);
}
