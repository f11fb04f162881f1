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
#include "run/run_sites.h"
#include "kernel/access_probes.h"
#include "lib/json.h"
#include "coverage/map_patterns.h"
#include "coverage/metrics.h"
#include "coverage/races.h"
#include "kernel/site_finder.h"
#include "results/store.h"
#include "kernel/symbolize.h"
#include "lib/suppress.h"
#include "lib/util.h"

/* Requirements beyond this many are counted, not stored. */
#define ACCESS_MAX_REQUIREMENTS 20000

/* A variable's identity: a store site id (see the header comment). */
struct acc_var {
	int64_t id;
	bool heap;
	bool shared;
	char *name;    /* "counter", "heap block allocated at main+0x1d (x.c:10)" */
	uint64_t size; /* bytes: the symbol's, or the block's when first seen; 0 unknown */
	bool steer;    /* map: a write may meet another access concurrently */
	/* estimation: read and write sites */
	uint32_t *reads, *writes;
	uint32_t nreads, nwrites;
};

struct access_campaign {
	struct site_set set; /* candidates (cookie i = set.sites[i]) */
	bool *shared_site;   /* the sites later runs probe */
	size_t nshared_sites;
	int64_t *site_id; /* per candidate: store site id, 0 not yet */
	int64_t *func_id; /* per candidate: store site of its function, -1 none */
	struct acc_var *vars;
	size_t nvars;
	struct cov_u64map var_index; /* var id -> index in vars */
	size_t nshared_vars;
	size_t nsteer;		      /* shared variables map steers (acc_var.steer) */
	struct cov_u64map race_pairs; /* site pair -> index + 1 in race_names */
	char **race_names;	      /* a pair's variable as its first warning named it */
	size_t nrace_names;
	struct suppressions *supp;	/* the defaults and --suppressions */
	uint64_t suppressed;		/* race warnings they kept out of the store */
	struct cov_u64map site_threads; /* estimation: site -> first thread | 2+ bit */
	char **paths;			/* campaign thread id -> creation path */
	uint32_t npaths;
	/* estimation */
	unsigned est_runs;
	uint64_t est_attach_ns;
	size_t est_attached;
	uint64_t est_accesses, est_dropped;
	struct cov_event *order_events; /* first estimation run, for the site order */
	size_t norder, caporder;
	uint64_t domain;     /* formula (no pruning) */
	uint64_t domain_hb;  /* after happens-before pruning */
	size_t requirements; /* stored */
	/* runs */
	uint64_t attach_ns_total;
	size_t attached_last;
	uint64_t accesses, dropped, warnings;
	uint64_t unsteered;		 /* hits past a site's steering cap (--steer-cap) */
	uint64_t capped;		 /* sites past the probe cap (--probe-cap), */
	uint64_t capped_runs;		 /* in so many runs */
	unsigned explored, explored_new; /* exploration runs, those that found more */
	/* replay: the filters read back from the run's JSON */
	char **inc, **exc, **objs;
	size_t ninc, nexc, nobjs;
};

struct heap_block {
	uint64_t start, size, caller;
};

/* An allocation not yet told to the race detector: it is, once the
 * event stream reaches its time (hb.h: the block is a new variable from
 * then on; told at once, an older access of the block's previous life
 * still in the stream would look like one of the new block). */
struct alloc_pending {
	uint64_t ts, addr, size;
};

/* An access a thread is kept at: fed once the thread goes on. */
struct acc_pending {
	bool on;
	bool split; /* a plain read-modify-write: R then W */
	struct cov_event ev;
};

struct access_run {
	struct campaign *c;
	struct onerun *r;
	struct access_campaign *ac;
	bool estimate;
	bool explore;	      /* a test run probing every candidate (explore_due) */
	uint64_t capped_seen; /* CS_ASTAT_CAPPED when last looked at (the probe cap) */
	struct cov_metrics *m;
	struct cov_event_conv conv;
	const struct cs_event *cur;
	pid_t pid;
	struct symbolizer *sz;
	uint64_t refreshed_ns;
	struct ring_buffer *alloc_rb;
	struct heap_block *blocks; /* sorted by start */
	size_t nblocks, capblocks;
	struct alloc_pending *allocs; /* by time */
	size_t nallocs, capallocs;
	struct cov_u64map data;	     /* file-backed data address -> var id + 1 (1: none) */
	struct cov_u64map sync_site; /* runtime call site -> store site id */
	struct cov_u64map locks;     /* runtime lock address -> id */
	struct cov_u64map funcs;     /* runtime call site -> function id + 1 */
	struct cov_u64map addr_tid;  /* estimation: address -> first tid | shared bit */
	uint64_t *bias;		     /* per object of the site set: load bias + 1, 0 unknown */
	const char **bias_obj;
	size_t nbias;
	struct acc_pending *pending; /* by thread index */
	size_t npending;
	uint64_t accesses;
};

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
	uint64_t *idx = cov_u64map_put(&ac->var_index, (uint64_t)id, ac->nvars, &created);
	struct acc_var *v;
	char where[512];

	if (!created)
		return &ac->vars[*idx];
	ac->vars = xrealloc(ac->vars, (ac->nvars + 1) * sizeof(*ac->vars));
	v = &ac->vars[ac->nvars++];
	memset(v, 0, sizeof(*v));
	v->id = id;
	v->heap = heap;
	sym_site_format(ss, where, sizeof(where));
	if (heap)
		v->name = xasprintf("heap block allocated at %s", where);
	else if (ss->symbol)
		v->name = xstrdup(ss->symbol);
	else
		v->name = xstrdup(where);
	return v;
}

static struct acc_var *var_find(const struct access_campaign *ac, uint32_t id)
{
	uint64_t *idx = cov_u64map_get(&ac->var_index, id);

	return idx ? &ac->vars[*idx] : NULL;
}

static int64_t key_site(struct campaign *c, const char *object, uint64_t offset)
{
	char key[PATH_MAX + 32];

	snprintf(key, sizeof(key), "%s+0x%" PRIx64, object, offset);
	return run_store_site(c->st, key);
}

/* An access instruction's site: named by its own line. */
static int64_t insn_site(struct campaign *c, const char *object, uint64_t offset)
{
	char key[PATH_MAX + 32];

	snprintf(key, sizeof(key), "%s+0x%" PRIx64, object, offset);
	return run_store_insn_site(c->st, key);
}

static uint32_t cand_site(struct access_campaign *ac, struct campaign *c, uint32_t i)
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
	return c && c->acc ? cand_site(c->acc, c, e->seq) : 0;
}

static uint32_t cand_func(struct access_campaign *ac, struct campaign *c, uint32_t i)
{
	const struct mem_site *s;
	int64_t id;

	if (i >= ac->set.n)
		return 0;
	if (!ac->func_id[i]) {
		s = &ac->set.sites[i];
		id = s->function ? key_site(c, s->object, s->offset - s->func_offset) : 0;
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
static char *stable_key(const struct access_campaign *ac, const char *key)
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

/* "name (file:line)" of a store site for warnings. */
static void site_text(struct store *st, int64_t id, char *buf, size_t len)
{
	struct store_site s;

	if (store_get_site(st, id, &s)) {
		snprintf(buf, len, "@%" PRId64, id);
		return;
	}
	if (s.function && s.file)
		snprintf(buf, len, "%s (%s:%d)", s.function,
			 strrchr(s.file, '/') ? strrchr(s.file, '/') + 1 : s.file, s.line);
	else if (s.function)
		snprintf(buf, len, "%s", s.function);
	else
		snprintf(buf, len, "%s+0x%" PRIx64,
			 strrchr(s.object, '/') ? strrchr(s.object, '/') + 1 : s.object, s.offset);
}

static void var_name(struct access_campaign *ac, struct store *st, uint32_t id, char *buf,
		     size_t len)
{
	const struct acc_var *v = var_find(ac, id);

	if (v && v->name)
		snprintf(buf, len, "%s", v->name);
	else
		site_text(st, id, buf, len);
}

/* The variable of a race and the element the racing access touched, by
 * its byte offset (the element size of an array of structs is not known
 * without its type): "counter", "acc_array+0x18", "heap block allocated
 * at f+0x1d (x.c:10) +0x18". */
static void race_var_text(struct access_campaign *ac, struct store *st, uint32_t id,
			  const struct race_access *a, char *buf, size_t len)
{
	const struct acc_var *v = var_find(ac, id);
	size_t n;

	var_name(ac, st, id, buf, len);
	n = strlen(buf);
	if (v && a->var_off && n + 24 < len)
		snprintf(buf + n, len - n, "%s+0x%x", v->heap ? " " : "", a->var_off);
}

/* One warning per pair of sites in a campaign: later runs name the
 * variable as the first warning did, so the report counts them as one. */
static const char *race_pair_text(struct access_campaign *ac, uint32_t s1, uint32_t s2,
				  const char *text)
{
	bool created;
	uint64_t *slot = cov_u64map_put(&ac->race_pairs, (uint64_t)s1 << 32 | s2, 0, &created);

	if (created) {
		ac->race_names =
			xrealloc(ac->race_names, (ac->nrace_names + 1) * sizeof(*ac->race_names));
		ac->race_names[ac->nrace_names++] = xstrdup(text);
		*slot = ac->nrace_names;
	}
	return ac->race_names[*slot - 1];
}

/* Does a suppression (the defaults, --suppressions) match either site? */
static bool race_suppressed(struct access_campaign *ac, struct store *st, int64_t s1, int64_t s2)
{
	struct store_site a = { 0 }, b = { 0 };
	struct suppress_frame fa = { 0 };
	const char *by = NULL;

	/* store_get_site's strings last until its next call: a's are copied. */
	if (!ac->supp || store_get_site(st, s1, &a))
		return false;
	fa.function = a.function ? xstrdup(a.function) : NULL;
	fa.file = a.file ? xstrdup(a.file) : NULL;
	fa.object = a.object ? xstrdup(a.object) : NULL;
	if (!store_get_site(st, s2, &b))
		by = suppress_race(ac->supp, &fa,
				   &(struct suppress_frame){ b.function, b.file, b.object });
	free((char *)fa.function);
	free((char *)fa.file);
	free((char *)fa.object);
	if (!by)
		return false;
	cs_debug("race between @%" PRId64 " and @%" PRId64 " suppressed by %s", s1, s2, by);
	ac->suppressed++;
	return true;
}

static void lockset_text(struct store *st, const struct cov_lockset *ls, char *buf, size_t len)
{
	size_t off = 0;
	char name[512];

	off += snprintf(buf + off, len - off, "{");
	for (uint32_t i = 0; i < ls->n && off < len; i++) {
		site_text(st, ls->id[i], name, sizeof(name));
		off += snprintf(buf + off, len - off, "%s%s", i ? ", " : "", name);
	}
	if (off < len)
		snprintf(buf + off, len - off, "}");
}

/* ---- the site set and the probes ----------------------------------------------------------- */

static int collect_sites(struct campaign *c, struct access_campaign *ac)
{
	const struct run_opts *o = c->o;
	size_t i;
	int err;

	err = site_find(c->ti.path, &o->sites, &ac->set);
	if (err) {
		cs_err("%s: cannot decode .text for access sites: %s", c->ti.path, strerror(-err));
		return err;
	}
	for (i = 0; i < o->nsite_objects; i++) {
		char *lib = site_resolve_object(c->ti.path, o->site_objects[i]);

		if (!lib) {
			cs_err("--sites-object %s: no such shared object (give a path, or a name "
			       "found in the library path, e.g. libc)",
			       o->site_objects[i]);
			return -ENOENT;
		}
		err = site_find(lib, &o->sites, &ac->set);
		free(lib);
		if (err) {
			cs_err("--sites-object %s: cannot decode .text: %s", o->site_objects[i],
			       strerror(-err));
			return err;
		}
	}
	if (!ac->set.n) {
		cs_err("--access: %s has no memory-access sites%s", c->ti.path,
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
	ar->m = cov_metrics_new(0);
	cov_event_conv_init(&ar->conv);
	cov_u64map_init(&ar->data);
	cov_u64map_init(&ar->sync_site);
	cov_u64map_init(&ar->locks);
	cov_u64map_init(&ar->funcs);
	cov_u64map_init(&ar->addr_tid);
	return ar;
}

void access_run_free(struct onerun *r)
{
	struct access_run *ar = r->acc;
	if (!ar)
		return;
	cov_metrics_free(ar->m);
	cov_event_conv_free(&ar->conv);
	symbolizer_free(ar->sz);
	ring_buffer__free(ar->alloc_rb);
	free(ar->blocks);
	free(ar->allocs);
	cov_u64map_free(&ar->data);
	cov_u64map_free(&ar->sync_site);
	cov_u64map_free(&ar->locks);
	cov_u64map_free(&ar->funcs);
	cov_u64map_free(&ar->addr_tid);
	free(ar->bias);
	free(ar->bias_obj);
	free(ar->pending);
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
	struct race_detector *rd = cov_metrics_races(ar->m);
	size_t i;

	for (i = 0; i < ar->nallocs && ar->allocs[i].ts <= ts; i++)
		race_detector_alloc(rd, ar->allocs[i].addr, ar->allocs[i].size);
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
		if (sym_resolve_vaddr(ar->bias_obj[i], addr - ar->bias[i], ss) == 0 && ss->object)
			return true;
	memset(ss, 0, sizeof(*ss));
	if (ar->sz && symbolizer_site(ar->sz, addr, ss) == 0 && ss->object) {
		const char *obj = ss->object;
		uint64_t vaddr = ss->vaddr;

		if (sym_resolve_vaddr(obj, vaddr, ss) == 0 && ss->object)
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
	slot = cov_u64map_get(&ar->data, addr);
	if (slot) {
		id = (int64_t)(uint32_t)*slot - 1;
		*off = (uint32_t)(*slot >> 32);
	} else if ((b = block_of(ar, addr))) {
		*off = (uint32_t)(addr - b->start);
		if (!resolve_addr(ar, b->caller, &ss))
			return 0;
		id = key_site(ar->c, ss.object, ss.offset);
		/* Name the call (the line of the return address - 1). */
		if (ss.vaddr) {
			const char *obj = ss.object;
			uint64_t va = ss.vaddr - 1;

			sym_resolve_vaddr(obj, va, &ss);
		}
		heap = true;
	} else {
		if (resolve_addr(ar, addr, &ss) && !ss.is_func)
			id = key_site(ar->c, ss.object,
				      ss.symbol ? ss.offset - ss.sym_offset : ss.offset);
		if (id > 0 && ss.symbol)
			*off = (uint32_t)ss.sym_offset;
		*cov_u64map_put(&ar->data, addr, 0, NULL) =
			(uint64_t)*off << 32 | ((uint64_t)(id > 0 && id < UINT32_MAX ? id : 0) + 1);
	}
	if (id <= 0 || id > UINT32_MAX)
		return 0;
	if (slot && !var_find(ar->ac, (uint32_t)id))
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
	struct strat_thread *t = run_thread_find(r, tid);

	return t ? t->cid : path_id(r->acc->ac, "?");
}

static uint32_t cb_site(void *ctx, uint64_t addr)
{
	struct onerun *r = ctx;
	struct access_run *ar = r->acc;
	uint64_t *slot = cov_u64map_get(&ar->sync_site, addr);
	int64_t id;

	if (slot)
		return (uint32_t)*slot;
	id = run_site_id(ar->c->st, r, ar->cur->pid, ar->cur->gen, addr);
	if (id <= 0) {
		run_refresh_vmas(r);
		id = run_site_id(ar->c->st, r, ar->cur->pid, ar->cur->gen, addr);
	}
	if (id < 0 || id > UINT32_MAX)
		id = 0;
	*cov_u64map_put(&ar->sync_site, addr, 0, NULL) = (uint64_t)id;
	return (uint32_t)id;
}

static uint32_t cb_func(void *ctx, uint64_t addr)
{
	struct onerun *r = ctx;
	struct access_run *ar = r->acc;
	uint64_t *slot = cov_u64map_get(&ar->funcs, addr);
	struct site_ref s;
	struct sym_site ss;
	int64_t id = 0;

	if (slot)
		return (uint32_t)(*slot - 1);
	if (!site_resolve(&r->res, ar->cur->pid, ar->cur->gen, addr, &s) && s.object &&
	    s.object[0] == '/' && s.offset && !sym_resolve_offset(s.object, s.offset - 1, &ss) &&
	    ss.symbol && ss.is_func)
		id = key_site(ar->c, s.object, s.offset - 1 - ss.sym_offset);
	if (id < 0 || id > UINT32_MAX)
		id = 0;
	*cov_u64map_put(&ar->funcs, addr, 0, NULL) = (uint64_t)id + 1;
	return (uint32_t)id;
}

static uint32_t cb_sync(void *ctx, uint64_t addr)
{
	struct onerun *r = ctx;
	struct access_run *ar = r->acc;
	uint64_t *slot = cov_u64map_get(&ar->locks, addr);
	char key[PATH_MAX + 32];
	struct site_ref s;
	int64_t id = 0;

	if (slot)
		return (uint32_t)*slot;
	/* A global: its data location; else the site that used it first. */
	if (!site_resolve(&r->res, ar->cur->pid, ar->cur->gen, addr, &s) && s.object &&
	    s.object[0] == '/')
		id = run_store_site(ar->c->st, site_key(&s, key, sizeof(key)));
	if (id <= 0 || id > UINT32_MAX)
		id = cb_site(ctx, ar->cur->site);
	*cov_u64map_put(&ar->locks, addr, 0, NULL) = (uint64_t)id;
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

static void add_site(uint32_t **v, uint32_t *n, uint32_t site)
{
	for (uint32_t i = 0; i < *n; i++)
		if ((*v)[i] == site)
			return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = site;
}

/* Did two threads execute this access site (estimation)? */
static bool site_multi(const struct access_campaign *ac, uint32_t site)
{
	const uint64_t *slot = cov_u64map_get(&ac->site_threads, site);

	return slot && (*slot >> 32);
}

/* Estimation: who touched what. */
static void estimate_access(struct access_run *ar, const struct cs_event *e,
			    const struct cov_event *ev)
{
	struct acc_var *v = var_find(ar->ac, ev->obj);
	bool created;
	uint64_t *slot;

	if (!v)
		return;
	slot = cov_u64map_put(&ar->ac->site_threads, ev->site, ev->thread, &created);
	if (!created && (*slot & 0xffffffffULL) != ev->thread)
		*slot |= 1ULL << 32;
	if (cov_op_reads(ev->op))
		add_site(&v->reads, &v->nreads, ev->site);
	if (cov_op_writes(ev->op))
		add_site(&v->writes, &v->nwrites, ev->site);
	/* An address touched by two threads makes its variable shared. */
	slot = cov_u64map_put(&ar->addr_tid, e->obj, e->tid, &created);
	if (!created && (*slot & 0xffffffffULL) != e->tid)
		*slot |= 1ULL << 32;
	if (*slot >> 32)
		v->shared = true;
}

/* Does the map engine steer accesses to var? (Access events only.) */
static bool steerable(const struct access_campaign *ac, uint32_t var)
{
	const struct acc_var *v = var_find(ac, var);

	return v && v->steer;
}

static void feed(struct access_run *ar, const struct cov_event *ev)
{
	struct strategy *st = ar->r->strat;

	cov_metrics_feed(ar->m, ev);
	if (!ar->estimate && st && steerable(ar->ac, ev->obj))
		strategy_executed(st, &ar->r->sr, ev);
	if (ar->estimate && ar->ac->est_runs == 0)
		order_add(ar->ac, ev);
}

/* One access (two for a plain read-modify-write, which is not atomic). */
static void feed_access(struct access_run *ar, const struct cov_event *ev, bool split)
{
	struct cov_event evs[2];
	size_t i, n = cov_access_events(ev, split, evs);

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
	ev->site = cand_site(ac, ar->c, e->seq);
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

static bool precedes(void *order, uint32_t s, uint32_t t)
{
	return map_site_order_precedes(order, s, t);
}

static void estimate_domain(struct campaign *c, struct access_campaign *ac)
{
	struct map_var_sites *vs = xcalloc(ac->nvars ? ac->nvars : 1, sizeof(*vs));
	struct map_site_order *order = NULL;
	struct cov_taskset keys;
	size_t n = 0, i;

	for (i = 0; i < ac->nvars; i++) {
		const struct acc_var *v = &ac->vars[i];

		if (!v->shared)
			continue;
		vs[n++] = (struct map_var_sites){ .var = (uint32_t)v->id,
						  .reads = v->reads,
						  .nreads = v->nreads,
						  .writes = v->writes,
						  .nwrites = v->nwrites };
	}
	ac->domain = map_domain_formula(vs, n);
	if (ac->norder)
		order = map_site_order_build(ac->order_events, ac->norder);
	/* Every pattern has a write step and one of another thread: a
	 * variable whose writes are all ordered (program order, create,
	 * join) with all its other accesses can complete none. */
	for (i = 0; i < ac->nvars; i++) {
		struct acc_var *v = &ac->vars[i];

		for (uint32_t w = 0; v->shared && !v->steer && w < v->nwrites; w++) {
			for (uint32_t q = 0; !v->steer && q < v->nreads + v->nwrites; q++) {
				uint32_t o = q < v->nreads ? v->reads[q] : v->writes[q - v->nreads];

				if (o == v->writes[w]) /* two threads at one site */
					v->steer = site_multi(ac, o);
				else
					v->steer =
						!order ||
						(!map_site_order_precedes(order, v->writes[w], o) &&
						 !map_site_order_precedes(order, o, v->writes[w]));
			}
		}
		ac->nsteer += v->steer;
		if (v->shared)
			cs_debug("map: variable %s (v%" PRId64 "): %u read sites, %u write sites%s",
				 v->name, v->id, v->nreads, v->nwrites,
				 v->steer ? ", steered" : "");
	}
	cov_taskset_init(&keys);
	if (ac->domain <= ACCESS_MAX_REQUIREMENTS * 4ULL) {
		ac->domain_hb = map_domain_estimate(vs, n, order ? precedes : NULL, order, &keys);
		if (keys.count <= ACCESS_MAX_REQUIREMENTS)
			for (i = 0; i < keys.count; i++) {
				char *k = stable_key(ac, keys.keys[i]);

				if (store_add_requirement(c->st, "map", k, "map-estimate") == 0)
					ac->requirements++;
				free(k);
			}
	} else {
		ac->domain_hb = ac->domain;
	}
	cov_taskset_free(&keys);
	map_site_order_free(order);
	free(vs);
}

/* Sites whose operand names a global statically (rip-relative: the
 * address is in the instruction) join the variable's sites even when the
 * estimation runs did not execute them: a branch they skipped. */
static void static_sites(struct campaign *c, struct access_campaign *ac)
{
	size_t i;

	for (i = 0; i < ac->set.n; i++) {
		const struct mem_site *s = &ac->set.sites[i];
		uint64_t ea = s->vaddr - (s->offset - s->probe_offset) + (uint64_t)s->decode.disp;
		struct sym_site ss;
		struct acc_var *v;
		int64_t id;
		uint32_t site;

		if (!(s->decode.flags & CS_ACC_RIP) || sym_resolve_vaddr(s->object, ea, &ss) ||
		    !ss.object || !ss.symbol || ss.is_func)
			continue;
		id = key_site(c, ss.object, ss.offset - ss.sym_offset);
		v = id > 0 && id <= UINT32_MAX ? var_find(ac, (uint32_t)id) : NULL;
		if (!v || !v->shared)
			continue;
		site = cand_site(ac, c, (uint32_t)i);
		if (!site)
			continue;
		if (s->decode.flags & CS_ACC_READ)
			add_site(&v->reads, &v->nreads, site);
		if (s->decode.flags & CS_ACC_WRITE)
			add_site(&v->writes, &v->nwrites, site);
	}
}

static int load_suppressions(struct campaign *c, struct access_campaign *ac)
{
	int err;

	ac->supp = suppress_new();
	for (size_t i = 0; i < c->o->nsuppressions; i++) {
		err = suppress_load(ac->supp, c->o->suppressions[i]);
		if (err == -EINVAL)
			return err;
		if (err) {
			cs_err("--suppressions %s: %s", c->o->suppressions[i], strerror(-err));
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
	cov_u64map_init(&ac->var_index);
	cov_u64map_init(&ac->site_threads);
	err = load_suppressions(c, ac);
	if (err)
		return err;
	err = collect_sites(c, ac);
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
	return 0;
}

/* One estimation run (probes on every candidate) has ended. */
void access_estimation_add(struct campaign *c, struct onerun *r)
{
	struct access_campaign *ac = c->acc;

	if (r->acc) {
		ac->est_attach_ns += r->sess->ap.attach_ns;
		ac->est_attached = r->sess->ap.attached;
		ac->est_accesses += r->acc->accesses;
		ac->est_dropped += access_probes_stat(&r->sess->ap, CS_ASTAT_DROPPED);
	}
	ac->est_runs++;
}

/* The sites that touch a shared variable join the probed set (and never
 * leave it); how many joined. */
static size_t mark_shared_sites(struct access_campaign *ac)
{
	size_t i, j, added = 0;

	ac->nshared_vars = 0;
	for (j = 0; j < ac->nvars; j++)
		ac->nshared_vars += ac->vars[j].shared;
	for (i = 0; i < ac->set.n; i++) {
		uint32_t id = ac->site_id[i] > 0 ? (uint32_t)ac->site_id[i] : 0;

		if (ac->shared_site[i])
			continue;
		for (j = 0; id && j < ac->nvars && !ac->shared_site[i]; j++) {
			const struct acc_var *v = &ac->vars[j];

			if (!v->shared)
				continue;
			for (uint32_t q = 0; q < v->nreads && !ac->shared_site[i]; q++)
				ac->shared_site[i] = v->reads[q] == id;
			for (uint32_t q = 0; q < v->nwrites && !ac->shared_site[i]; q++)
				ac->shared_site[i] = v->writes[q] == id;
		}
		added += ac->shared_site[i];
	}
	ac->nshared_sites += added;
	return added;
}

/* Every estimation run has ended: the shared variables, the sites later
 * runs probe, the MAP domain. */
void access_campaign_estimated(struct campaign *c)
{
	struct access_campaign *ac = c->acc;

	static_sites(c, ac);
	mark_shared_sites(ac);
	estimate_domain(c, ac);
	if (!c->o->json || c->tty) {
		fprintf(stderr,
			"concsched: access: %zu candidate sites, %zu attached in %.1f ms; %" PRIu64
			" accesses in %u estimation run%s (%" PRIu64
			" dropped); %zu shared variable%s, "
			"%zu site%s on them (probed from now on)\n",
			ac->set.n, ac->est_attached, ac->est_attach_ns / 1e6 / ac->est_runs,
			ac->est_accesses, ac->est_runs, ac->est_runs == 1 ? "" : "s",
			ac->est_dropped, ac->nshared_vars, ac->nshared_vars == 1 ? "" : "s",
			ac->nshared_sites, ac->nshared_sites == 1 ? "" : "s");
		fprintf(stderr,
			"concsched: map: domain estimate %" PRIu64 " (%" PRIu64
			" after happens-before pruning), %zu stored as requirements\n",
			ac->domain, ac->domain_hb, ac->requirements);
	}
	if (!ac->nshared_sites)
		cs_warn("--access: no shared variable found: the runs probe no access%s until an "
			"exploration run (every candidate probed, runs 4, 8, ... 32, then every "
			"%u) finds one",
			strategy_has(c->o->strat, STRAT_F_ACCESS_POINTS) ? " and steer none" : "",
			ACCESS_EXPLORE_LATER);
	c->sc.contended_vars = ac->nsteer;
	c->sc.est_accesses = ac->est_runs ? ac->est_accesses / ac->est_runs : 0;
}

/* " (N race warnings suppressed)", or "" */
static const char *suppressed_text(const struct access_campaign *ac)
{
	static char buf[64];

	if (!ac->suppressed)
		return "";
	snprintf(buf, sizeof(buf), " (%" PRIu64 " race warning%s suppressed)", ac->suppressed,
		 ac->suppressed == 1 ? "" : "s");
	return buf;
}

void access_campaign_end(struct campaign *c)
{
	struct access_campaign *ac = c->acc;
	size_t i;

	if (!ac)
		return;
	if (ac->nshared_sites && (!c->o->json || c->tty) && c->nruns)
		fprintf(stderr,
			"concsched: access: %zu sites attached per run (%.2f ms on average), "
			"%" PRIu64 " accesses (%" PRIu64 " dropped), %" PRIu64
			" race/lock-order warnings%s\n",
			ac->attached_last, ac->attach_ns_total / 1e6 / (double)c->nruns,
			ac->accesses, ac->dropped, ac->warnings, suppressed_text(ac));
	if (ac->explored && (!c->o->json || c->tty))
		fprintf(stderr,
			"concsched: access: %u exploration run%s (every candidate probed), %u "
			"found more shared variables; %zu shared variables, %zu sites probed at "
			"the end\n",
			ac->explored, ac->explored == 1 ? "" : "s", ac->explored_new,
			ac->nshared_vars, ac->nshared_sites);
	if (ac->unsteered && (!c->o->json || c->tty))
		fprintf(stderr,
			"concsched: access: %" PRIu64
			" hits went on unsteered past the steering cap "
			"(%" PRIu64 " per site and run, then 1 in %u; --steer-cap; the report's "
			"unsteered warnings name the sites)\n",
			ac->unsteered, c->o->steer_cap, STEER_SAMPLE);
	if (ac->capped && (!c->o->json || c->tty))
		fprintf(stderr,
			"concsched: access: sites went past the probe cap %" PRIu64
			" time%s in %" PRIu64 " run%s (%" PRIu64
			" hits probed per thread, site and run, later ones not seen; a site's "
			"uprobe goes once it is closed; --probe-cap; the report's unprobed "
			"warnings name the sites)\n",
			ac->capped, ac->capped == 1 ? "" : "s", ac->capped_runs,
			ac->capped_runs == 1 ? "" : "s", c->o->probe_cap);
	for (i = 0; i < ac->nvars; i++) {
		free(ac->vars[i].reads);
		free(ac->vars[i].writes);
		free(ac->vars[i].name);
	}
	free(ac->vars);
	cov_u64map_free(&ac->var_index);
	cov_u64map_free(&ac->site_threads);
	cov_u64map_free(&ac->race_pairs);
	suppress_free(ac->supp);
	for (i = 0; i < ac->nrace_names; i++)
		free(ac->race_names[i]);
	free(ac->race_names);
	for (i = 0; i < ac->npaths; i++)
		free(ac->paths[i]);
	free(ac->paths);
	free(ac->order_events);
	free(ac->site_id);
	free(ac->func_id);
	free(ac->shared_site);
	site_set_free(&ac->set);
	for (i = 0; i < ac->ninc; i++)
		free(ac->inc[i]);
	for (i = 0; i < ac->nexc; i++)
		free(ac->exc[i]);
	for (i = 0; i < ac->nobjs; i++)
		free(ac->objs[i]);
	free(ac->inc);
	free(ac->exc);
	free(ac->objs);
	free(ac);
	c->acc = NULL;
	c->sess.aset = NULL;
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

/* An exploration run has ended (in its transaction): what it found shared
 * is probed from now on. */
static void explored(struct campaign *c, struct access_campaign *ac)
{
	size_t vars = ac->nshared_vars, added;

	static_sites(c, ac);
	added = mark_shared_sites(ac);
	ac->explored++;
	if (!added)
		return;
	ac->explored_new++;
	if (!c->o->json || c->tty)
		fprintf(stderr,
			"concsched: access: exploration run %" PRId64
			" (every candidate probed) found %zu more shared variable%s, %zu more "
			"site%s on them (probed from now on)\n",
			c->nruns, ac->nshared_vars - vars, ac->nshared_vars - vars == 1 ? "" : "s",
			added, added == 1 ? "" : "s");
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
	r->access_mask = estimate || explore ? NULL : ac->shared_site;
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
	ar->sz = symbolizer_new(r->l.pid);
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
			cs_warn("cannot take the uprobes of access sites past the probe cap away: "
				"%s "
				"(they go on trapping, without events)",
				strerror(-got));
		else
			cs_debug("run: %d access sites closed by the probe cap (%" PRIu64
				 " hits a thread) unprobed %.3g s into the run, in %.3g ms; %zu "
				 "still probed",
				 got, cap, (now_ns() - r->t0) / 1e9, ns / 1e6,
				 ap->attached - ap->nshed);
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
	symbolizer_refresh(ar->sz);
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
		  struct cov_event *ev, bool *split, bool *contended)
{
	struct access_run *ar = r->acc;
	struct acc_pending *p;

	*contended = false;
	if (!ar || ar->estimate || !access_event(r, e, t, ev, split))
		return false;
	*contended = steerable(ar->ac, ev->obj);
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
	if (!cov_op_is_access(e->op)) {
		if (e->op == CS_OP_FORK || e->op == CS_OP_EXEC)
			return;
		if (cov_event_from_cs(&ar->conv, e, &ev))
			return;
		feed(ar, &ev);
		return;
	}
	if (!access_event(r, e, t, &ev, &split)) {
		if (cs_verbose > 2)
			cs_debug("access: thread %s site %u addr 0x%" PRIx64 ": no variable",
				 t->path, e->seq, (uint64_t)e->obj);
		return;
	}
	alloc_flush(ar, e->ts_ns); /* the allocations access_event read */
	if (cs_verbose > 2)
		cs_debug("access: thread %s site %u addr 0x%" PRIx64 " op %u: v%u @%u", t->path,
			 e->seq, (uint64_t)e->obj, e->op, ev.obj, ev.site);
	if (ar->estimate || ar->explore)
		estimate_access(ar, e, &ev);
	/* A parked access is a decision point: fed when it goes on. */
	if ((e->flags & CS_EV_PARKED) && r->steer && !ar->estimate &&
	    strat_run_has(&r->sr, STRAT_F_ACCESS_POINTS))
		return;
	feed_access(ar, &ev, split);
}

/* The sites whose hits went past the steering cap in this run: an
 * "unsteered" warning each, so the report says what was not steered. */
static void unsteered_sites(struct campaign *c, struct onerun *r, struct access_campaign *ac)
{
	uint64_t cap = c->o->steer_cap, n = access_probes_stat(&r->sess->ap, CS_ASTAT_UNSTEERED);
	char what[160];
	size_t i;

	if (!n || !cap || !r->steer)
		return;
	ac->unsteered += n;
	snprintf(what, sizeof(what),
		 "hits past the steering cap (%" PRIu64 " steered per run, then 1 in %u)", cap,
		 STEER_SAMPLE);
	for (i = 0; i < ac->set.n; i++) {
		int64_t site;

		if (!ac->shared_site[i] || access_probes_site_hits(&r->sess->ap, i) <= cap)
			continue;
		site = cand_site(ac, c, (uint32_t)i);
		store_record_warning(c->st, "unsteered", what, site ? &site : NULL, site ? 1 : 0,
				     NULL, NULL);
	}
}

/* The sites where a thread went past the probe cap in this run: an
 * "unprobed" warning each, so the report says what was not seen. */
static void unprobed_sites(struct campaign *c, struct onerun *r, struct access_campaign *ac)
{
	uint64_t cap = r->sess->probe_cap, n = 0;
	char what[200];
	size_t i;

	if (!cap || !access_probes_stat(&r->sess->ap, CS_ASTAT_UNPROBED))
		return;
	snprintf(what, sizeof(what),
		 "hits past the probe cap (%" PRIu64
		 " probed per thread and run; then its uprobe is taken away): not seen, not "
		 "steered",
		 cap);
	for (i = 0; i < ac->set.n; i++) {
		int64_t site;

		if (access_probes_site_cap(&r->sess->ap, i) == ACCESS_CAP_NONE)
			continue;
		n++;
		site = cand_site(ac, c, (uint32_t)i);
		store_record_warning(c->st, "unprobed", what, site ? &site : NULL, site ? 1 : 0,
				     NULL, NULL);
	}
	cs_debug("run: %" PRIu64 " access sites past the probe cap, %" PRIu64 " closed; %" PRIu64
		 " hits past it trapped before their uprobes went",
		 n, access_probes_stat(&r->sess->ap, CS_ASTAT_CAPPED),
		 access_probes_stat(&r->sess->ap, CS_ASTAT_UNPROBED));
	ac->capped += n;
	ac->capped_runs += n > 0;
}

/* Store the run's tasks and warnings (inside the run's transaction). */
void access_run_commit(struct campaign *c, struct onerun *r)
{
	struct access_run *ar = r->acc;
	struct access_campaign *ac;
	struct race_detector *rd;
	const struct cov_taskset *dl;
	size_t i, m;

	if (!ar)
		return;
	ac = ar->ac;
	ac->accesses += ar->accesses;
	ac->dropped += access_probes_stat(&r->sess->ap, CS_ASTAT_DROPPED);
	unsteered_sites(c, r, ac);
	unprobed_sites(c, r, ac);
	ac->attach_ns_total += r->sess->ap.attach_ns;
	ac->attached_last = r->sess->ap.attached;
	for (m = 0; m < COV__COUNT; m++) {
		const struct cov_taskset *ts;

		/* The sync probes' own "sync" metric is stored already. */
		if (m == COV_SYNC)
			continue;
		ts = cov_metrics_tasks(ar->m, (enum cov_metric)m);
		for (i = 0; i < ts->count; i++) {
			char *k = stable_key(ac, ts->keys[i]);

			store_cover_task(c->st, cov_metric_name((enum cov_metric)m), k,
					 ts->hits[i]);
			free(k);
		}
	}
	rd = cov_metrics_races(ar->m);
	for (i = 0; i < race_warning_count(rd); i++) {
		const struct race_warning *w = race_warning_get(rd, i);
		/* The pair in site order: one warning whichever came first. */
		bool swap = w->second.site < w->first.site;
		const struct race_access *a = swap ? &w->second : &w->first;
		const struct race_access *b = swap ? &w->first : &w->second;
		int64_t sites[2] = { a->site, b->site };
		char var[600], threads[256], l1[512], l2[512], locks[1100];

		if (race_suppressed(ac, c->st, a->site, b->site))
			continue;
		race_var_text(ac, c->st, w->var, &w->second, var, sizeof(var));
		snprintf(threads, sizeof(threads), "%s %s, %s %s",
			 a->thread < ac->npaths ? ac->paths[a->thread] : "?",
			 cov_op_writes(a->op) ? "writes" : "reads",
			 b->thread < ac->npaths ? ac->paths[b->thread] : "?",
			 cov_op_writes(b->op) ? "writes" : "reads");
		lockset_text(c->st, &a->held, l1, sizeof(l1));
		lockset_text(c->st, &b->held, l2, sizeof(l2));
		snprintf(locks, sizeof(locks), "%s, %s", l1, l2);
		store_record_warning(c->st, "race", race_pair_text(ac, a->site, b->site, var),
				     sites, 2, threads, locks);
		ac->warnings++;
	}
	dl = cov_metrics_deadlocks(ar->m);
	for (i = 0; i < dl->count; i++) {
		unsigned a, b;
		char n1[512], n2[512], locks[1100];

		if (sscanf(dl->keys[i], "deadlock l%u l%u", &a, &b) != 2)
			continue;
		site_text(c->st, a, n1, sizeof(n1));
		site_text(c->st, b, n2, sizeof(n2));
		snprintf(locks, sizeof(locks), "%s, %s (taken in both orders)", n1, n2);
		store_record_warning(c->st, "lock-order", n1, NULL, 0, NULL, locks);
		ac->warnings++;
	}
	if (ar->explore)
		explored(c, ac);
}

void access_run_fitness(const struct onerun *r, double *wgoldilock_sc, uint64_t *warnings)
{
	const struct access_run *ar = r->acc;

	*wgoldilock_sc = 0;
	*warnings = 0;
	if (!ar || ar->estimate)
		return;
	*wgoldilock_sc = (double)cov_metrics_wgoldilock(ar->m);
	*warnings =
		race_warning_count(cov_metrics_races(ar->m)) + cov_metrics_deadlocks(ar->m)->count;
}

/* The run's access configuration, for its strategy JSON (replay). */
void access_run_config_json(const struct campaign *c, const struct onerun *r, struct json *j)
{
	const struct run_opts *o = c->o;
	const struct access_campaign *ac = c->acc;
	char *mask;
	size_t i;

	if (!ac)
		return;
	json_obj_begin(j, "access");
	json_arr_begin(j, "include");
	for (i = 0; i < o->sites.ninclude; i++)
		json_kv_str(j, NULL, o->sites.include[i]);
	json_arr_end(j);
	json_arr_begin(j, "exclude");
	for (i = 0; i < o->sites.nexclude; i++)
		json_kv_str(j, NULL, o->sites.exclude[i]);
	json_arr_end(j);
	json_arr_begin(j, "objects");
	for (i = 0; i < o->nsite_objects; i++)
		json_kv_str(j, NULL, o->site_objects[i]);
	json_arr_end(j);
	json_kv_uint(j, "candidates", ac->set.n);
	json_kv_uint(j, "steer_cap", o->steer_cap);
	json_kv_uint(j, "probe_cap", o->probe_cap);
	if (r->acc && r->acc->explore)
		json_kv_bool(j, "explore", true);
	mask = access_mask_format(r->acc && r->acc->explore ? NULL : ac->shared_site, ac->set.n);
	json_kv_str(j, "sites", mask);
	free(mask);
	json_obj_end(j);
}

/* The array "key" inside the JSON object text obj (flat arrays only). */
static int json_sub_array(const char *obj, const char *key, char ***out, size_t *n)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(obj, pat);
	if (!p) {
		*out = NULL;
		*n = 0;
		return 0;
	}
	return json_parse_string_array(p + strlen(pat), out, n);
}

int access_replay_setup(struct campaign *c, const char *cfg)
{
	const char *obj = cfg ? strstr(cfg, "\"access\":") : NULL;
	struct access_campaign *ac;
	struct run_opts *o = c->o;
	char *sites = NULL;
	int64_t cand = -1, cap = 0;
	int err;

	if (!obj)
		return 0;
	obj = strchr(obj, '{');
	if (!obj)
		return -EINVAL;
	ac = xcalloc(1, sizeof(*ac));
	c->acc = ac;
	cov_u64map_init(&ac->var_index);
	if (json_sub_array(obj, "include", &ac->inc, &ac->ninc) ||
	    json_sub_array(obj, "exclude", &ac->exc, &ac->nexc) ||
	    json_sub_array(obj, "objects", &ac->objs, &ac->nobjs) ||
	    json_get_int(obj, "candidates", &cand) || !(sites = json_get_string(obj, "sites"))) {
		cs_err("the run's access configuration is unreadable");
		return -EINVAL;
	}
	o->sites.include = (const char **)ac->inc;
	o->sites.ninclude = ac->ninc;
	o->sites.exclude = (const char **)ac->exc;
	o->sites.nexclude = ac->nexc;
	o->site_objects = (const char **)ac->objs;
	o->nsite_objects = ac->nobjs;
	o->access = true;
	/* The run's steering cap (runs from before it had none). */
	o->steer_cap = json_get_int(obj, "steer_cap", &cap) || cap < 0 ? 0 : (uint64_t)cap;
	/* And its probe cap (runs from before it had none). */
	o->probe_cap = json_get_int(obj, "probe_cap", &cap) || cap < 0 ? 0 : (uint64_t)cap;
	err = collect_sites(c, ac);
	if (!err && (int64_t)ac->set.n != cand) {
		cs_err("the program now has %zu candidate access sites, the run had %" PRId64
		       ": cannot probe the same sites (the program changed, or this concsched "
		       "finds sites otherwise than the one that made the run)",
		       ac->set.n, cand);
		err = -ESTALE;
	}
	if (!err) {
		ac->site_id = xcalloc(ac->set.n, sizeof(*ac->site_id));
		ac->shared_site = xcalloc(ac->set.n, sizeof(*ac->shared_site));
		err = access_mask_parse(sites, ac->shared_site, ac->set.n);
		if (err)
			cs_err("the run's access site list is unreadable");
	}
	free(sites);
	if (err)
		return err;
	for (size_t i = 0; i < ac->set.n; i++)
		ac->nshared_sites += ac->shared_site[i];
	c->sess.aset = &ac->set;
	c->sess.aprog = c->ti.path;
	c->sess.steer_cap = o->steer_cap;
	c->sess.probe_cap = o->probe_cap;
	return 0;
}

const bool *access_replay_mask(const struct campaign *c)
{
	return c->acc ? c->acc->shared_site : NULL;
}
