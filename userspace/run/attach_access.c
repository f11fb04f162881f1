// SPDX-License-Identifier: MIT
/*
 * `concsched attach --access` (issue 17 item 1, docs/attach.md): the
 * memory accesses of a process that concsched did not start.
 *
 * The site finder lists the memory-access sites of the program the first
 * selected process runs (its /proc/PID/exe; --sites-include/--sites-exclude
 * narrow them). There are no estimation runs in a window: every candidate
 * carries a probe, in the run mode of probes/access.bpf.c (each access is a
 * struct cs_event in the sync probes' ring buffer, in program order with
 * the thread's synchronization, and a decision point of the scheduler when
 * the strategy steers). A site's first --steer-cap hits in the window are
 * decision points, later ones 1 in 64: a hot loop of a server does not
 * park for the whole window.
 *
 * Ids are the window's own, interned in order of appearance: threads by
 * tid, access sites by instruction, call sites by return address, locks
 * by address, variables by global symbol (an array is one variable) or
 * else by address. A variable is shared once two threads touched it; the
 * noise strategy's sharedVar placements see those as shared. Every access
 * and synchronization event feeds the race detector (races.h); an access a thread is parked at is
 * fed when it goes on. Names are resolved while the process lives, when an id is made. Only the
 * race detector is fed: the online MAP matcher keeps a window per thread and variable, and a server
 * making a thread per request makes that cost grow with every request (measured: a 3 s window took
 * 8 s).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "run/attach_access.h"
#include "run/run_sites.h"
#include "results/store.h"
#include "coverage/cov_event.h"
#include "coverage/races.h"
#include "coverage/thread_model.h"
#include "kernel/access_probes.h"
#include "kernel/policy.h"
#include "kernel/sync.h"
#include "kernel/scx_concsched.h"
#include "kernel/site_finder.h"
#include "kernel/symbolize.h"
#include "lib/json.h"
#include "lib/array_size.h"
#include "lib/log.h"
#include "lib/xalloc.h"

#include "access.skel.h"

#define AA_SAMPLE    64 /* past the cap: 1 hit in this many is a decision point */
#define AA_MAX_SHOWN 20 /* warnings listed in the text report */

/* An id space: value -> dense id (1..n), id -> name. */
struct aa_names {
	struct cov_u64map ids;
	char **names;
	int64_t *seq; /* sites: candidate index, -1 a call site */
	uint32_t n;
};

struct aa_pending {
	bool on, split;
	struct cov_event ev;
	uint32_t next_seq; /* the thread's next sync event number */
};

struct aa_proc {
	pid_t pid;
	struct symbolizer *sz;
};

struct attach_access {
	struct site_set set;
	struct access_probes ap;
	bool ap_open;
	char exe[PATH_MAX];
	struct aa_proc *procs;
	size_t nprocs;
	const struct cs_event *cur;
	struct cov_event_conv conv;
	struct race_detector *rd;
	struct aa_names threads, sites, locks, vars;
	struct cov_u64map var_of;   /* address -> var id */
	struct cov_u64map var_tid;  /* var id -> first tid | 2+ threads bit */
	struct aa_pending *pending; /* by thread id */
	size_t npending;
	uint64_t accesses, shared_accesses;
	size_t nshared;
	/* synchronization events lost (a thread's numbers skip), of so many
	 * (received + lost): the race analysis forgets before each loss */
	uint64_t sync_lost, sync_events;
};

static const uint16_t access_ops[] = { CS_OP_READ, CS_OP_WRITE, CS_OP_RW };

/* ---- names ------------------------------------------------------------------------- */

static uint32_t name_id(struct aa_names *nm, uint64_t key, bool *created)
{
	uint64_t *slot = cov_event_u64map_put(&nm->ids, key, 0, created);

	if (*created) {
		nm->names = xrealloc(nm->names, (nm->n + 2) * sizeof(*nm->names));
		nm->seq = xrealloc(nm->seq, (nm->n + 2) * sizeof(*nm->seq));
		*slot = ++nm->n;
		nm->names[*slot] = NULL;
		nm->seq[*slot] = -1;
	}
	return (uint32_t)*slot;
}

static const char *name_of(const struct aa_names *nm, uint32_t id)
{
	return id && id <= nm->n && nm->names[id] ? nm->names[id] : "?";
}

static void names_free(struct aa_names *nm)
{
	for (uint32_t i = 1; i <= nm->n; i++)
		free(nm->names[i]);
	free(nm->names);
	free(nm->seq);
	cov_event_u64map_free(&nm->ids);
}

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path ? path : "?";
}

static struct symbolizer *sz_of(struct attach_access *aa, pid_t pid)
{
	size_t i;

	for (i = 0; i < aa->nprocs; i++)
		if (aa->procs[i].pid == pid)
			return aa->procs[i].sz;
	return NULL;
}

/* "function (file.c:12)", else "object+0xOFF", else "0xADDR". */
static char *code_name(struct attach_access *aa, pid_t pid, uint64_t addr)
{
	struct symbolizer *sz = sz_of(aa, pid);
	struct sym_site ss = { 0 };

	if (sz && symbolize_resolve(sz, addr, &ss) == 0 && ss.object) {
		if (ss.symbol && ss.file)
			return xasprintf("%s (%s:%d)", ss.symbol, base(ss.file), ss.line);
		if (ss.symbol)
			return xasprintf("%s+0x%" PRIx64 " (%s)", ss.symbol, ss.sym_offset,
					 base(ss.object));
		return xasprintf("%s+0x%" PRIx64, base(ss.object), ss.offset);
	}
	return xasprintf("0x%" PRIx64, addr);
}

/* ---- conversion callbacks ------------------------------------------------------------ */

static uint32_t cb_thread(void *ctx, uint32_t tid)
{
	struct attach_access *aa = ctx;
	bool created;
	uint32_t id = name_id(&aa->threads, tid, &created);

	if (created)
		aa->threads.names[id] = xasprintf("tid %u", tid);
	return id;
}

/* A call site (a return address): named by the call's line. */
static uint32_t cb_site(void *ctx, uint64_t addr)
{
	struct attach_access *aa = ctx;
	bool created;
	uint32_t id = name_id(&aa->sites, addr, &created);

	if (created)
		aa->sites.names[id] = code_name(aa, (pid_t)aa->cur->pid, addr ? addr - 1 : 0);
	return id;
}

static uint32_t cb_sync(void *ctx, uint64_t addr)
{
	struct attach_access *aa = ctx;
	struct symbolizer *sz = sz_of(aa, (pid_t)aa->cur->pid);
	struct sym_site ss = { 0 };
	bool created;
	uint32_t id = name_id(&aa->locks, addr, &created);

	if (!created)
		return id;
	if (sz && symbolize_resolve(sz, addr, &ss) == 0 && ss.symbol && !ss.is_func)
		aa->locks.names[id] = ss.sym_offset
					      ? xasprintf("%s+0x%" PRIx64, ss.symbol, ss.sym_offset)
					      : xstrdup(ss.symbol);
	else
		aa->locks.names[id] = xasprintf("lock at 0x%" PRIx64, addr);
	return id;
}

/* An access instruction: candidate i of the site set. */
static uint32_t access_site(struct attach_access *aa, uint32_t i)
{
	const struct mem_site *s;
	bool created;
	uint32_t id = name_id(&aa->sites, (1ULL << 63) | i, &created);

	if (!created || i >= aa->set.n)
		return id;
	s = &aa->set.sites[i];
	aa->sites.seq[id] = i;
	if (s->function && s->file)
		aa->sites.names[id] = xasprintf("%s (%s:%d)", s->function, base(s->file), s->line);
	else if (s->function)
		aa->sites.names[id] = xasprintf("%s+0x%" PRIx64, s->function, s->func_offset);
	else
		aa->sites.names[id] = xasprintf("%s+0x%" PRIx64, base(s->object), s->offset);
	return id;
}

/* The variable at addr: a global (data symbol: every byte of it is one
 * variable) or the address. */
static uint32_t var_at(struct attach_access *aa, uint64_t addr)
{
	struct symbolizer *sz = sz_of(aa, (pid_t)aa->cur->pid);
	struct sym_site ss = { 0 };
	uint64_t *slot = cov_event_u64map_get(&aa->var_of, addr);
	uint64_t key = addr;
	bool created, global;
	uint32_t id;

	if (slot)
		return (uint32_t)*slot;
	global = sz && symbolize_resolve(sz, addr, &ss) == 0 && ss.object && ss.symbol &&
		 !ss.is_func;
	if (global)
		key = addr - ss.sym_offset;
	id = name_id(&aa->vars, key, &created);
	if (created)
		aa->vars.names[id] =
			global	    ? xasprintf("%s (%s)", ss.symbol, base(ss.object))
			: ss.object ? xasprintf("%s+0x%" PRIx64, base(ss.object), ss.offset)
				    : xasprintf("0x%" PRIx64 " (heap or stack)", addr);
	*cov_event_u64map_put(&aa->var_of, addr, 0, NULL) = id;
	return id;
}

/* Two threads touched it (so far)? */
static bool var_shared(struct attach_access *aa, uint32_t var, uint32_t tid)
{
	bool created;
	uint64_t *slot = cov_event_u64map_put(&aa->var_tid, var, tid, &created);

	if (!created && !(*slot >> 32) && (*slot & 0xffffffffULL) != tid) {
		*slot |= 1ULL << 32;
		aa->nshared++;
	}
	return *slot >> 32;
}

/* ---- setup ----------------------------------------------------------------------- */

static int share_maps(struct bpf_object *obj, void *arg)
{
	return scx_concsched_share_maps(arg, obj);
}

static void proc_add(struct attach_access *aa, pid_t pid)
{
	aa->procs = xrealloc(aa->procs, (aa->nprocs + 1) * sizeof(*aa->procs));
	aa->procs[aa->nprocs].pid = pid;
	aa->procs[aa->nprocs++].sz = symbolize_new(pid);
}

static bool runs_exe(const struct attach_access *aa, pid_t pid)
{
	char link[64], path[PATH_MAX];
	ssize_t n;

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	n = readlink(link, path, sizeof(path) - 1);
	if (n <= 0)
		return false;
	path[n] = 0;
	return strcmp(path, aa->exe) == 0;
}

int attach_access_open(struct attach_access **out, const struct attach_access_opts *o)
{
	struct access_probes_opts ao = { .run_events = true };
	struct site_filter f = { .include = o->include,
				 .ninclude = o->ninclude,
				 .exclude = o->exclude,
				 .nexclude = o->nexclude };
	struct attach_access *aa = xcalloc(1, sizeof(*aa));
	char link[64];
	ssize_t n;
	size_t i;
	int err;

	*out = aa;
	cov_event_conv_init(&aa->conv);
	aa->conv.ctx = aa;
	aa->conv.thread_id = cb_thread;
	aa->conv.site_id = cb_site;
	aa->conv.sync_id = cb_sync;
	aa->rd = races_new();
	cov_event_u64map_init(&aa->threads.ids);
	cov_event_u64map_init(&aa->sites.ids);
	cov_event_u64map_init(&aa->locks.ids);
	cov_event_u64map_init(&aa->vars.ids);
	cov_event_u64map_init(&aa->var_of);
	cov_event_u64map_init(&aa->var_tid);
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)o->pid);
	n = readlink(link, aa->exe, sizeof(aa->exe) - 1);
	if (n <= 0) {
		err = -errno;
		log_err("--access: pid %d: cannot read its program (%s): %s", (int)o->pid, link,
			strerror(-err));
		return err;
	}
	aa->exe[n] = 0;
	err = site_finder_find(aa->exe, &f, &aa->set);
	if (err) {
		log_err("--access: %s: cannot list its memory-access sites: %s", aa->exe,
			err == -ENOEXEC ? "not an x86-64 ELF with a .text" : strerror(-err));
		return err;
	}
	if (!aa->set.n) {
		log_err("--access: %s: no memory-access site passes the filters (see `concsched "
			"sites %s`)",
			aa->exe, aa->exe);
		return -ENOENT;
	}
	ao.sync_events_fd = sync_probes_map_fd(o->sp, "cs_sync_events");
	ao.steer_cap = o->steer_cap;
	ao.steer_sample = AA_SAMPLE;
	if (o->ctl) {
		ao.before_load = share_maps;
		ao.before_load_arg = o->ctl;
	}
	err = access_probes_load(&aa->ap, &aa->set, &ao);
	if (err)
		return err;
	aa->ap_open = true;
	err = access_probes_attach(&aa->ap, o->pid, NULL);
	if (err)
		return err;
	proc_add(aa, o->pid);
	if (o->ctl) {
		err = scx_concsched_attach_kick(o->ctl, aa->ap.skel->progs.access_commit);
		if (!err)
			err = scx_concsched_guard(o->ctl);
		for (i = 0; i < ARRAY_SIZE(access_ops) && !err; i++)
			err = policy_park_site(o->pol, CS_SITE_OP_KEY(access_ops[i]), 0, 0, 0);
		if (err) {
			log_err("--access: cannot make accesses decision points: %s",
				strerror(-err));
			return err;
		}
	}
	fprintf(stderr, "concsched: access: %zu sites of %s probed (%zu attached in %.1f ms)\n",
		aa->set.n, aa->exe, aa->ap.attached, aa->ap.attach_ns / 1e6);
	return 0;
}

bool attach_access_add_pid(struct attach_access *aa, pid_t pid)
{
	__u32 tgid = (__u32)pid;
	__u8 one = 1;

	if (sz_of(aa, pid))
		return true;
	if (!runs_exe(aa, pid) ||
	    bpf_map_update_elem(bpf_map__fd(aa->ap.skel->maps.access_tgids), &tgid, &one, BPF_ANY))
		return false;
	proc_add(aa, pid);
	return true;
}

/* ---- the window -------------------------------------------------------------------- */

static struct aa_pending *pending_of(struct attach_access *aa, uint32_t thread)
{
	if (thread >= aa->npending) {
		size_t n = thread + 16;

		aa->pending = xrealloc(aa->pending, n * sizeof(*aa->pending));
		memset(aa->pending + aa->npending, 0, (n - aa->npending) * sizeof(*aa->pending));
		aa->npending = n;
	}
	return &aa->pending[thread];
}

/* A thread's synchronization events numbered up to seq: those lost
 * before (the ring was full) ordered what the race analysis cannot know,
 * so it forgets the accesses before (races_sync_lost), as a run's does
 * (run/access.c). */
static void note_sync_seq(struct attach_access *aa, uint32_t thread, uint32_t seq)
{
	uint32_t gap = thread_model_seq_gap(&pending_of(aa, thread)->next_seq, seq);

	aa->sync_events += 1 + gap;
	if (!gap)
		return;
	aa->sync_lost += gap;
	races_sync_lost(aa->rd);
}

static void race_feed(struct attach_access *aa, const struct cov_event *ev)
{
	struct race_verdict v;

	races_feed(aa->rd, ev, &v);
}

static void feed_access(struct attach_access *aa, const struct cov_event *ev, bool split)
{
	struct cov_event evs[2];
	size_t i, n = cov_event_access_events(ev, split, evs);

	aa->accesses++;
	for (i = 0; i < n; i++)
		race_feed(aa, &evs[i]);
}

static void pass_thread(struct attach_access *aa, uint32_t thread)
{
	struct aa_pending *p;

	if (thread >= aa->npending || !aa->pending[thread].on)
		return;
	p = &aa->pending[thread];
	p->on = false;
	feed_access(aa, &p->ev, p->split);
}

void attach_access_pass(struct attach_access *aa, uint32_t tid)
{
	uint64_t *slot = aa ? cov_event_u64map_get(&aa->threads.ids, tid) : NULL;

	if (slot)
		pass_thread(aa, (uint32_t)*slot);
}

const struct cov_event *attach_access_event(struct attach_access *aa, const struct cs_event *e,
					    bool hold, bool *split)
{
	struct cov_event ev = { 0 };
	struct aa_pending *p;
	uint8_t aflags;
	bool shared;

	*split = false;
	if (!sz_of(aa, (pid_t)e->pid))
		return NULL;
	aa->cur = e;
	ev.thread = cb_thread(aa, e->tid);
	pass_thread(aa, ev.thread); /* it runs: its held access has executed */
	if (!cov_event_op_is_access(e->op)) {
		if (e->op != CS_OP_EXEC)
			note_sync_seq(aa, ev.thread, e->seq);
		if (e->op != CS_OP_FORK && e->op != CS_OP_EXEC &&
		    !cov_event_from_cs(&aa->conv, e, &ev))
			race_feed(aa, &ev);
		return NULL;
	}
	aflags = (uint8_t)(e->nlocks >> 8);
	ev.op = e->op;
	ev.flags = e->flags & ~CS_EV_PARKED;
	ev.site = access_site(aa, e->seq);
	ev.obj = var_at(aa, e->obj);
	ev.addr = e->obj; /* the happens-before detector's granules */
	ev.size = e->nlocks & 0xff;
	if (ev.thread < aa->conv.nheld)
		ev.held = aa->conv.held[ev.thread];
	*split = e->op == CS_OP_RW && !(aflags & CS_ACC_LOCK);
	shared = var_shared(aa, ev.obj, e->tid);
	aa->shared_accesses += shared;
	if (!hold) {
		feed_access(aa, &ev, *split);
		return NULL;
	}
	p = pending_of(aa, ev.thread);
	p->on = true;
	p->split = *split;
	p->ev = ev;
	return shared ? &p->ev : NULL;
}

void attach_access_detach(struct attach_access *aa)
{
	uint32_t t;

	if (!aa)
		return;
	for (t = 0; t < aa->npending; t++)
		pass_thread(aa, t);
	if (aa->ap_open)
		access_probes_detach(&aa->ap);
}

/* ---- reports ----------------------------------------------------------------------- */

static void lockset_text(const struct attach_access *aa, const struct cov_lockset *ls, char *buf,
			 size_t len)
{
	size_t off = 0;

	off += (size_t)snprintf(buf + off, len - off, "{");
	for (uint32_t i = 0; i < ls->n && off < len; i++)
		off += (size_t)snprintf(buf + off, len - off, "%s%s", i ? ", " : "",
					name_of(&aa->locks, ls->id[i]));
	if (off < len)
		snprintf(buf + off, len - off, "}");
}

uint64_t attach_access_warnings(struct attach_access *aa)
{
	return aa ? races_warning_count(aa->rd) : 0;
}

static bool same_sites(const struct race_warning *a, const struct race_warning *b)
{
	return a->var == b->var && a->first.site == b->first.site &&
	       a->second.site == b->second.site && a->first.op == b->first.op &&
	       a->second.op == b->second.op;
}

static const char *rw(uint16_t op)
{
	return cov_event_op_writes(op) ? "writes" : "reads";
}

void attach_access_report_text(struct attach_access *aa, FILE *f)
{
	struct race_detector *rd = aa->rd;
	size_t n = races_warning_count(rd), i, shown = 0;
	char l1[512], l2[512];

	fprintf(f,
		"access: %zu sites probed, %" PRIu64 " accesses (%" PRIu64
		" to shared variables; %" PRIu64 " dropped), %u variables, %zu shared by "
		"threads\n",
		aa->ap.attached, aa->accesses, aa->shared_accesses,
		aa->ap_open ? access_probes_stat(&aa->ap, CS_ASTAT_DROPPED) : 0, aa->vars.n,
		aa->nshared);
	if (aa->sync_lost)
		fprintf(f,
			"access: %" PRIu64 " of %" PRIu64 " synchronization events lost (the race "
			"analysis forgot the accesses before each loss)\n",
			aa->sync_lost, aa->sync_events);
	fprintf(f, "races: %zu warnings\n", n);
	for (i = 0; i < n && shown < AA_MAX_SHOWN; i++) {
		const struct race_warning *w = races_warning_get(rd, i);
		size_t k, same = 0;

		/* One line per variable and pair of sites (threads differ:
		 * a server's threads come and go). */
		for (k = 0; k < i; k++)
			if (same_sites(races_warning_get(rd, k), w))
				break;
		if (k < i)
			continue;
		for (k = i; k < n; k++)
			same += same_sites(races_warning_get(rd, k), w);
		shown++;
		lockset_text(aa, &w->first.held, l1, sizeof(l1));
		lockset_text(aa, &w->second.held, l2, sizeof(l2));
		fprintf(f, "  race on %s: %s %s at %s holding %s; %s %s at %s holding %s",
			name_of(&aa->vars, w->var), name_of(&aa->threads, w->first.thread),
			rw(w->first.op), name_of(&aa->sites, w->first.site), l1,
			name_of(&aa->threads, w->second.thread), rw(w->second.op),
			name_of(&aa->sites, w->second.site), l2);
		if (same > 1)
			fprintf(f, " (%zu warnings, other threads)", same);
		fputc('\n', f);
	}
	if (i < n)
		fprintf(f, "  ... more (--json or -o DIR lists every warning)\n");
}

static void access_json(struct json *j, const char *key, const struct attach_access *aa,
			const struct race_access *x)
{
	char l[512];

	lockset_text(aa, &x->held, l, sizeof(l));
	json_obj_begin(j, key);
	json_kv_str(j, "thread", name_of(&aa->threads, x->thread));
	json_kv_str(j, "op",
		    cov_event_op_writes(x->op) ? (cov_event_op_reads(x->op) ? "rw" : "write")
					       : "read");
	json_kv_str(j, "site", name_of(&aa->sites, x->site));
	json_kv_str(j, "locks", l);
	json_obj_end(j);
}

void attach_access_report_json(struct attach_access *aa, struct json *j)
{
	struct race_detector *rd = aa->rd;
	size_t n = races_warning_count(rd), i;

	json_obj_begin(j, "access");
	json_kv_str(j, "program", aa->exe);
	json_kv_uint(j, "sites", aa->set.n);
	json_kv_uint(j, "attached", aa->ap.attached);
	json_kv_uint(j, "accesses", aa->accesses);
	json_kv_uint(j, "shared_accesses", aa->shared_accesses);
	json_kv_uint(j, "sync_events", aa->sync_events);
	json_kv_uint(j, "sync_events_lost", aa->sync_lost);
	json_kv_uint(j, "dropped", aa->ap_open ? access_probes_stat(&aa->ap, CS_ASTAT_DROPPED) : 0);
	json_kv_uint(j, "variables", aa->vars.n);
	json_kv_uint(j, "shared_variables", aa->nshared);
	json_arr_begin(j, "races");
	for (i = 0; i < n; i++) {
		const struct race_warning *w = races_warning_get(rd, i);

		json_obj_begin(j, NULL);
		json_kv_str(j, "variable", name_of(&aa->vars, w->var));
		access_json(j, "first", aa, &w->first);
		access_json(j, "second", aa, &w->second);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

/* The store's site of a window site: an access instruction by its own
 * line, a call site by its return address. 0: unknown. */
static int64_t store_site(struct attach_access *aa, struct store *st, uint32_t site)
{
	char key[PATH_MAX + 32];
	const struct mem_site *s;

	if (!site || site > aa->sites.n || aa->sites.seq[site] < 0 ||
	    (size_t)aa->sites.seq[site] >= aa->set.n)
		return 0;
	s = &aa->set.sites[aa->sites.seq[site]];
	snprintf(key, sizeof(key), "%s+0x%" PRIx64, s->object, s->offset);
	return run_sites_store_insn_site(st, key);
}

void attach_access_store(struct attach_access *aa, struct store *st)
{
	struct race_detector *rd = aa->rd;
	size_t i;

	for (i = 0; i < races_warning_count(rd); i++) {
		const struct race_warning *w = races_warning_get(rd, i);
		int64_t sites[2] = { store_site(aa, st, w->first.site),
				     store_site(aa, st, w->second.site) };
		char threads[256], l1[512], l2[512], locks[1100];

		snprintf(threads, sizeof(threads), "%s %s, %s %s",
			 name_of(&aa->threads, w->first.thread), rw(w->first.op),
			 name_of(&aa->threads, w->second.thread), rw(w->second.op));
		lockset_text(aa, &w->first.held, l1, sizeof(l1));
		lockset_text(aa, &w->second.held, l2, sizeof(l2));
		snprintf(locks, sizeof(locks), "%s, %s", l1, l2);
		store_record_warning(st, "race", name_of(&aa->vars, w->var), sites,
				     sites[0] && sites[1] ? 2 : 0, threads, locks);
	}
}

void attach_access_free(struct attach_access *aa)
{
	size_t i;

	if (!aa)
		return;
	if (aa->ap_open)
		access_probes_close(&aa->ap);
	site_finder_set_free(&aa->set);
	for (i = 0; i < aa->nprocs; i++)
		symbolize_free(aa->procs[i].sz);
	free(aa->procs);
	cov_event_conv_free(&aa->conv);
	races_free(aa->rd);
	names_free(&aa->threads);
	names_free(&aa->sites);
	names_free(&aa->locks);
	names_free(&aa->vars);
	cov_event_u64map_free(&aa->var_of);
	cov_event_u64map_free(&aa->var_tid);
	free(aa->pending);
	free(aa);
}
