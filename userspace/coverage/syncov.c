// SPDX-License-Identifier: MIT
#include "coverage/syncov.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kernel/maps.h"
#include "kernel/sync.h"
#include "kernel/symbolize.h"
#include "lib/file.h"
#include "lib/fnv1a64.h"
#include "lib/xalloc.h"

static const char *const metric_names[SYNCOV__COUNT] = {
	[SYNCOV_SP] = "sp",
	[SYNCOV_GOODLOCK] = "goodlock",
	[SYNCOV_HBPAIR] = "hbpair",
	[SYNCOV_SYNC] = "sync",
};

const char *syncov_metric_name(unsigned metric)
{
	return metric < SYNCOV__COUNT ? metric_names[metric] : "?";
}

/* ---- sites ---------------------------------------------------------------- */

void syncov_resolver_init(struct site_resolver *r)
{
	memset(r, 0, sizeof(*r));
}

void syncov_resolver_free(struct site_resolver *r)
{
	size_t i;

	for (i = 0; i < r->ninodes; i++)
		free(r->inodes[i].path);
	free(r->inodes);
	free(r->misses);
	free(r->vmas);
	memset(r, 0, sizeof(*r));
}

static uint32_t kernel_dev(dev_t d)
{
	return (major(d) << 20) | minor(d);
}

static const char *inode_path(const struct site_resolver *r, uint32_t dev, uint64_t ino)
{
	size_t i;

	for (i = 0; i < r->ninodes; i++)
		if (r->inodes[i].ino == ino && r->inodes[i].dev == dev)
			return r->inodes[i].path;
	return NULL;
}

/* dev/ino's path is path (kept as given), unless one is known already. */
static void add_inode(struct site_resolver *r, uint32_t dev, uint64_t ino, const char *path)
{
	if (inode_path(r, dev, ino))
		return;
	if (r->ninodes == r->capinodes) {
		r->capinodes = r->capinodes ? 2 * r->capinodes : 16;
		r->inodes = xrealloc(r->inodes, r->capinodes * sizeof(*r->inodes));
	}
	r->inodes[r->ninodes].ino = ino;
	r->inodes[r->ninodes].dev = dev;
	r->inodes[r->ninodes].path = xstrdup(path);
	r->ninodes++;
}

void syncov_resolver_add_path(struct site_resolver *r, const char *path)
{
	char real[4096];
	struct stat st;

	if (!path || !path[0] || stat(path, &st) || !S_ISREG(st.st_mode))
		return;
	if (inode_path(r, kernel_dev(st.st_dev), st.st_ino))
		return;
	add_inode(r, kernel_dev(st.st_dev), st.st_ino, realpath(path, real) ? real : path);
}

void syncov_resolver_copy_paths(struct site_resolver *r, const struct site_resolver *from)
{
	size_t i;

	for (i = 0; i < from->ninodes; i++)
		add_inode(r, from->inodes[i].dev, from->inodes[i].ino, from->inodes[i].path);
}

void syncov_resolver_add_paths(struct site_resolver *r, const char *list)
{
	for (; *list; list += strlen(list) + 1)
		syncov_resolver_add_path(r, list);
}

int syncov_resolver_scan_pid(struct site_resolver *r, pid_t pid)
{
	char path[64], *buf, *line, *save = NULL, *p;
	size_t len;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	buf = file_read(path, &len);
	if (!buf)
		return -errno;
	/* "start-end perms offset dev inode   /path" */
	for (line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		p = strchr(line, '/');
		if (p)
			syncov_resolver_add_path(r, p);
	}
	free(buf);
	return 0;
}

void syncov_resolver_tell(const struct site_resolver *r, struct sync_probes *sp, size_t *told)
{
	for (; *told < r->ninodes; (*told)++)
		sync_probes_know_file(sp, r->inodes[*told].dev, r->inodes[*told].ino);
}

void syncov_resolver_add_vma(struct site_resolver *r, const struct site_vma *v)
{
	if (r->nvmas == r->capvmas) {
		r->capvmas = r->capvmas ? 2 * r->capvmas : 64;
		r->vmas = xrealloc(r->vmas, r->capvmas * sizeof(*r->vmas));
	}
	r->vmas[r->nvmas++] = *v;
}

/* path is dev/ino now: learn it (as its real path). */
static bool add_if_same(struct site_resolver *r, uint32_t dev, uint64_t ino, const char *path)
{
	char real[PATH_MAX];
	struct stat st;

	if (stat(path, &st) || !S_ISREG(st.st_mode) || kernel_dev(st.st_dev) != dev ||
	    st.st_ino != ino)
		return false;
	add_inode(r, dev, ino, realpath(path, real) ? real : path);
	return true;
}

void syncov_resolver_learn_exec(struct site_resolver *r, uint32_t dev, uint64_t ino,
				const char *name)
{
	char cwd[PATH_MAX], path[2 * PATH_MAX];

	if (inode_path(r, dev, ino) || !name[0])
		return;
	if (name[0] == '/' || !getcwd(cwd, sizeof(cwd)))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "%s/%s", cwd, name);
	add_if_same(r, dev, ino, path);
}

static bool missed(const struct site_resolver *r, uint32_t dev, uint64_t ino)
{
	size_t i;

	for (i = 0; i < r->nmisses; i++)
		if (r->misses[i].ino == ino && r->misses[i].dev == dev)
			return true;
	return false;
}

/* dir/name is dev/ino: learn it. */
static bool search_dir(struct site_resolver *r, const char *dir, size_t dirlen,
		       const struct site_vma *v)
{
	char path[2 * PATH_MAX];

	if (!dirlen || dirlen >= PATH_MAX)
		return false;
	snprintf(path, sizeof(path), "%.*s/%s", (int)dirlen, dir, v->name);
	return add_if_same(r, v->dev, v->ino, path);
}

static bool search_one(struct site_resolver *r, const struct site_vma *v, const char *search_path)
{
	const char *p, *slash, *colon;
	size_t i, n = r->ninodes;

	/* The directories of the files known when the search began (a file
	 * learned by it adds none: the result must not depend on order). */
	for (i = 0; i < n; i++) {
		p = r->inodes[i].path;
		slash = strrchr(p, '/');
		if (slash && search_dir(r, p, (size_t)(slash - p), v))
			return true;
	}
	for (p = search_path; p && *p; p = colon ? colon + 1 : p + strlen(p)) {
		colon = strchr(p, ':');
		if (search_dir(r, p, colon ? (size_t)(colon - p) : strlen(p), v))
			return true;
	}
	return false;
}

void syncov_resolver_search(struct site_resolver *r, const char *search_path)
{
	const struct site_vma *v;
	size_t i;

	for (i = 0; i < r->nvmas; i++) {
		v = &r->vmas[i];
		if (!v->file || !v->name[0] || strchr(v->name, '/') ||
		    inode_path(r, v->dev, v->ino) || missed(r, v->dev, v->ino) ||
		    search_one(r, v, search_path))
			continue;
		if (r->nmisses == r->capmisses) {
			r->capmisses = r->capmisses ? 2 * r->capmisses : 8;
			r->misses = xrealloc(r->misses, r->capmisses * sizeof(*r->misses));
		}
		r->misses[r->nmisses].ino = v->ino;
		r->misses[r->nmisses].dev = v->dev;
		r->misses[r->nmisses].path = NULL;
		r->nmisses++;
	}
}

static void load_execs(struct site_resolver *r, int fd)
{
	struct cs_inode_key k;
	struct cs_exec x;
	struct maps_dump d;
	size_t di;

	if (fd < 0)
		return;
	maps_dump(fd, sizeof(k), sizeof(x), &d);
	for (di = 0; di < d.n; di++) {
		memcpy(&k, d.keys + di * sizeof(k), sizeof(k));
		memcpy(&x, d.vals + di * sizeof(x), sizeof(x));
		x.path[sizeof(x.path) - 1] = 0;
		syncov_resolver_learn_exec(r, k.dev, k.ino, x.path);
	}
	maps_dump_free(&d);
}

int syncov_resolver_load_vmas(struct site_resolver *r, int fd, int execs_fd)
{
	struct cs_vma_key k;
	struct maps_dump d;
	size_t di;
	struct site_vma sv;
	struct cs_vma v;

	maps_dump(fd, sizeof(k), sizeof(v), &d);
	for (di = 0; di < d.n; di++) {
		memcpy(&k, d.keys + di * sizeof(k), sizeof(k));
		memcpy(&v, d.vals + di * sizeof(v), sizeof(v));
		memset(&sv, 0, sizeof(sv));
		sv.tgid = k.p.tgid;
		sv.gen = k.p.gen;
		sv.start = k.start;
		sv.end = v.end;
		sv.pgoff = v.pgoff;
		sv.ino = v.ino;
		sv.dev = v.dev;
		sv.file = v.file;
		memcpy(sv.name, v.name, sizeof(sv.name));
		sv.name[sizeof(sv.name) - 1] = 0;
		syncov_resolver_add_vma(r, &sv);
	}
	maps_dump_free(&d);
	load_execs(r, execs_fd);
	syncov_resolver_search(r, getenv("PATH"));
	return 0;
}

int syncov_resolve(const struct site_resolver *r, uint32_t tgid, uint32_t gen, uint64_t addr,
		   struct site_ref *out)
{
	const struct site_vma *v;
	const char *path;
	size_t i;

	out->object = NULL;
	out->offset = addr;
	for (i = 0; i < r->nvmas; i++) {
		v = &r->vmas[i];
		if (v->tgid != tgid || v->gen != gen || addr < v->start || addr >= v->end)
			continue;
		if (!v->file)
			return -ENOENT;
		path = inode_path(r, v->dev, v->ino);
		out->object = path ? path : v->name;
		out->offset = addr - v->start + v->pgoff;
		return 0;
	}
	return -ENOENT;
}

char *syncov_site_key(const struct site_ref *s, char *buf, size_t len)
{
	if (s->object)
		snprintf(buf, len, "%s+0x%" PRIx64, s->object, s->offset);
	else
		snprintf(buf, len, "0x%" PRIx64, s->offset);
	return buf;
}

/* ---- abstract identities --------------------------------------------------- */

static const char *const kind_names[CS_OBJ__COUNT] = {
	[CS_OBJ_NONE] = "object",     [CS_OBJ_MUTEX] = "mutex",	  [CS_OBJ_RWLOCK] = "rwlock",
	[CS_OBJ_SPIN] = "spin",	      [CS_OBJ_COND] = "cond",	  [CS_OBJ_SEM] = "sem",
	[CS_OBJ_BARRIER] = "barrier", [CS_OBJ_THREAD] = "thread",
};

const char *syncov_obj_kind_name(unsigned kind)
{
	return kind < CS_OBJ__COUNT ? kind_names[kind] : "object";
}

void syncov_thread_id(const char *create_key, const char *start_key, const char *const *first_keys,
		      size_t nfirst, char out[16])
{
	uint64_t h = FNV1A64_INIT;
	size_t i;

	h = fnv1a64(create_key, strlen(create_key) + 1, h);
	h = fnv1a64(start_key, strlen(start_key) + 1, h);
	for (i = 0; i < nfirst; i++)
		h = fnv1a64(first_keys[i], strlen(first_keys[i]) + 1, h);
	snprintf(out, 16, "T%012" PRIx64, (uint64_t)(h & 0xffffffffffffULL));
}

void syncov_lock_id(const char *data_key, unsigned kind, const char *first_site_key, char *out,
		    size_t len)
{
	if (data_key)
		snprintf(out, len, "%s", data_key);
	else
		snprintf(out, len, "%s@%s", syncov_obj_kind_name(kind), first_site_key);
}

/* ---- task sets ----------------------------------------------------------------- */

void syncov_set_init(struct syncov_set *s)
{
	memset(s, 0, sizeof(*s));
}

void syncov_set_free(struct syncov_set *s)
{
	size_t i;
	unsigned j;

	for (i = 0; i < s->n; i++) {
		free(s->tasks[i].key);
		free(s->tasks[i].detail);
		for (j = 0; j < s->tasks[i].nsites; j++)
			free(s->tasks[i].sites[j]);
	}
	free(s->tasks);
	memset(s, 0, sizeof(*s));
}

struct syncov_task *syncov_set_find(const struct syncov_set *s, const char *key)
{
	size_t i;

	for (i = 0; i < s->n; i++)
		if (!strcmp(s->tasks[i].key, key))
			return &s->tasks[i];
	return NULL;
}

struct syncov_task *syncov_set_add(struct syncov_set *s, unsigned metric, const char *key,
				   uint64_t hits)
{
	struct syncov_task *t = syncov_set_find(s, key);

	if (t) {
		t->hits += hits;
		return t;
	}
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->tasks = xrealloc(s->tasks, s->cap * sizeof(*s->tasks));
	}
	t = &s->tasks[s->n++];
	memset(t, 0, sizeof(*t));
	t->metric = metric;
	t->key = xstrdup(key);
	t->hits = hits;
	return t;
}

size_t syncov_set_count(const struct syncov_set *s, unsigned metric)
{
	size_t i, n = 0;

	for (i = 0; i < s->n; i++)
		n += s->tasks[i].metric == metric;
	return n;
}

static int task_cmp(const void *a, const void *b)
{
	const struct syncov_task *x = a, *y = b;

	if (x->metric != y->metric)
		return x->metric < y->metric ? -1 : 1;
	return strcmp(x->key, y->key);
}

void syncov_set_sort(struct syncov_set *s)
{
	if (s->n)
		qsort(s->tasks, s->n, sizeof(*s->tasks), task_cmp);
}

static const char *const hb_names[CS_HB__COUNT] = {
	[CS_HB_UNLOCK_LOCK] = "unlock->lock", [CS_HB_SIGNAL_WAKE] = "signal->wakeup",
	[CS_HB_POST_WAIT] = "post->wait",     [CS_HB_CREATE_START] = "create->start",
	[CS_HB_EXIT_JOIN] = "exit->join",
};

const char *syncov_hb_kind_name(unsigned kind)
{
	return kind && kind < CS_HB__COUNT ? hb_names[kind] : "?";
}

static const char *const mode_names[CS_SYNC__COUNT] = {
	[CS_SYNC_VISITED] = "visited",
	[CS_SYNC_BLOCKED] = "blocked",
	[CS_SYNC_BLOCKING] = "blocking",
};

const char *syncov_sync_mode_name(unsigned mode)
{
	return mode && mode < CS_SYNC__COUNT ? mode_names[mode] : "?";
}

char *syncov_key_sp(const char *site_last, const char *site)
{
	return xasprintf("sp %s -> %s", site_last, site);
}

char *syncov_key_goodlock(const char *held_site, const char *req_site, const char *held_lock,
			  const char *req_lock, const char *thread)
{
	return xasprintf("goodlock %s -> %s locks %s -> %s thread %s", held_site, req_site,
			 held_lock, req_lock, thread);
}

char *syncov_key_hb(unsigned kind, const char *site1, const char *site2, const char *obj,
		    const char *t1, const char *t2)
{
	return xasprintf("hb %s %s -> %s obj %s threads %s -> %s", syncov_hb_kind_name(kind), site1,
			 site2, obj, t1, t2);
}

char *syncov_key_sync(unsigned mode, const char *site)
{
	return xasprintf("sync %s %s", syncov_sync_mode_name(mode), site);
}

/* ---- harvest --------------------------------------------------------------------- */

struct harvest {
	const struct site_resolver *r;
	const char *static_object;
	bool take;	 /* empty the maps as they are read (syncov_harvest) */
	int keylog_n_fd; /* cs_sync_keylog_n, or < 0 */
	long long keylog_taken[CS_KEYLOG__COUNT]; /* harvest_read_logged */
	struct syncov_run *run;
	struct lock_entry *locks;
	size_t nlocks;
};

struct lock_entry {
	struct cs_lock_key k;
	char id[4200];
};

bool syncov_static_internal(const char *static_object, const struct site_ref *s)
{
	struct sym_site ss;

	if (!static_object || !s->object || strcmp(s->object, static_object) || !s->offset)
		return false;
	/* A function entry (start routine) is itself; any other site is a
	 * return address, whose call is one byte back. */
	if (symbolize_resolve_offset(s->object, s->offset, &ss) == 0 && ss.symbol &&
	    ss.sym_offset == 0)
		return ss.symbol[0] == '_';
	if (symbolize_resolve_offset(s->object, s->offset - 1, &ss))
		return false;
	/* No sized symbol around it: crtstuff (frame_dummy tail-calls into
	 * libc), never program code in a binary that has a symbol table. */
	return !ss.symbol || ss.symbol[0] == '_' || !strcmp(ss.symbol, "frame_dummy") ||
	       !strcmp(ss.symbol, "register_tm_clones") ||
	       !strcmp(ss.symbol, "deregister_tm_clones");
}

static bool addr_internal(const struct harvest *h, uint32_t tgid, uint32_t gen, uint64_t addr)
{
	struct site_ref s;

	if (!h->static_object || !addr)
		return false;
	syncov_resolve(h->r, tgid, gen, addr, &s);
	return syncov_static_internal(h->static_object, &s);
}

static char *addr_key(const struct harvest *h, uint32_t tgid, uint32_t gen, uint64_t addr,
		      char *buf, size_t len)
{
	struct site_ref s;

	if (!addr)
		return strcpy(buf, "none");
	syncov_resolve(h->r, tgid, gen, addr, &s);
	return syncov_site_key(&s, buf, len);
}

static int lock_entry_cmp(const void *a, const void *b)
{
	const struct cs_lock_key *x = a, *y = b;

	if (x->p.tgid != y->p.tgid)
		return x->p.tgid < y->p.tgid ? -1 : 1;
	if (x->p.gen != y->p.gen)
		return x->p.gen < y->p.gen ? -1 : 1;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

/* A per-run map's entries; taken (the map emptied in the same walk) when
 * the caller resets the maps for the next run anyway. */
static void harvest_read(struct harvest *h, int fd, size_t ksz, size_t vsz, struct maps_dump *d)
{
	if (h->take)
		maps_take(fd, ksz, vsz, d);
	else
		maps_dump(fd, ksz, vsz, d);
}

/* A counting map, taken by the keys its log names when the log holds
 * every key the run added (a walk of all its buckets otherwise). What was
 * taken by key is noted for the reset (sync_probes_reset). */
static void harvest_read_logged(struct harvest *h, int fd, int log_fd, __u32 slot, size_t ksz,
				size_t vsz, struct maps_dump *d)
{
	__u64 n = 0;

	h->keylog_taken[slot] = -1;
	if (!h->take || h->keylog_n_fd < 0 || log_fd < 0 ||
	    bpf_map_lookup_elem(h->keylog_n_fd, &slot, &n) || n > CS_KEYLOG_MAX) {
		harvest_read(h, fd, ksz, vsz, d);
	} else if (maps_take_logged(fd, log_fd, (size_t)n, ksz, vsz, d)) {
		struct maps_dump rest;

		maps_take(fd, ksz, vsz, &rest);
		d->keys = xrealloc(d->keys, (d->n + rest.n + 1) * ksz);
		d->vals = xrealloc(d->vals, (d->n + rest.n + 1) * vsz);
		memcpy(d->keys + d->n * ksz, rest.keys, rest.n * ksz);
		memcpy(d->vals + d->n * vsz, rest.vals, rest.n * vsz);
		d->n += rest.n;
		maps_dump_free(&rest);
	} else {
		h->keylog_taken[slot] = (long long)n;
	}
}

static int harvest_locks(struct harvest *h, int fd)
{
	struct cs_lock_key k;
	struct maps_dump d;
	size_t di;
	struct cs_lock_state ls;
	char first[4096];
	struct site_ref s;
	size_t cap = 0;

	harvest_read(h, fd, sizeof(k), sizeof(ls), &d);
	for (di = 0; di < d.n; di++) {
		memcpy(&k, d.keys + di * sizeof(k), sizeof(k));
		memcpy(&ls, d.vals + di * sizeof(ls), sizeof(ls));
		if (h->nlocks == cap) {
			cap = cap ? 2 * cap : 64;
			h->locks = xrealloc(h->locks, cap * sizeof(*h->locks));
		}
		h->locks[h->nlocks].k = k;
		addr_key(h, k.p.tgid, k.p.gen, ls.first_site, first, sizeof(first));
		syncov_resolve(h->r, k.p.tgid, k.p.gen, k.addr, &s);
		if (s.object) {
			char data[4096];

			syncov_site_key(&s, data, sizeof(data));
			syncov_lock_id(data, ls.kind, first, h->locks[h->nlocks].id,
				       sizeof(h->locks[h->nlocks].id));
		} else {
			syncov_lock_id(NULL, ls.kind, first, h->locks[h->nlocks].id,
				       sizeof(h->locks[h->nlocks].id));
		}
		h->nlocks++;
	}
	maps_dump_free(&d);
	if (h->nlocks)
		qsort(h->locks, h->nlocks, sizeof(*h->locks), lock_entry_cmp);
	return 0;
}

static const char *lock_id(const struct harvest *h, struct cs_proc_key p, uint64_t addr)
{
	struct cs_lock_key k = { .p = p, .addr = addr };
	struct lock_entry *e;

	e = h->nlocks ? bsearch(&k, h->locks, h->nlocks, sizeof(*h->locks), lock_entry_cmp) : NULL;
	return e ? e->id : "unknown-lock";
}

static int harvest_threads(struct harvest *h, int fd)
{
	char create[4096], start[4096], firsts[CS_THREAD_SIG_N][4096];
	const char *fk[CS_THREAD_SIG_N];
	struct cs_sync_thread t;
	struct syncov_thread *st;
	__u32 k;
	struct maps_dump d;
	size_t di;
	size_t cap = 0;
	unsigned i, n;

	harvest_read(h, fd, sizeof(k), sizeof(t), &d);
	for (di = 0; di < d.n; di++) {
		memcpy(&k, d.keys + di * sizeof(k), sizeof(k));
		memcpy(&t, d.vals + di * sizeof(t), sizeof(t));
		if (h->run->nthreads == cap) {
			cap = cap ? 2 * cap : 32;
			h->run->threads = xrealloc(h->run->threads, cap * sizeof(*h->run->threads));
		}
		st = &h->run->threads[h->run->nthreads++];
		memset(st, 0, sizeof(*st));
		st->tgid = t.tgid;
		st->gen = t.gen;
		st->tid = k;
		st->parent_tid = t.parent_tid;
		st->main = t.flags & CS_THR_MAIN;
		st->created = t.flags & CS_THR_CREATED;
		st->exited = t.flags & CS_THR_EXITED;
		st->create_site = t.create_site;
		st->start_routine = t.start_routine;
		if (st->main) {
			strcpy(st->id, "main");
			continue;
		}
		addr_key(h, t.tgid, t.gen, t.create_site, create, sizeof(create));
		addr_key(h, t.tgid, t.gen, t.start_routine, start, sizeof(start));
		for (i = 0, n = 0; i < t.nfirst && i < CS_THREAD_SIG_N; i++) {
			if (addr_internal(h, t.tgid, t.gen, t.first_sites[i]))
				continue;
			addr_key(h, t.tgid, t.gen, t.first_sites[i], firsts[n], sizeof(firsts[n]));
			fk[n] = firsts[n];
			n++;
		}
		syncov_thread_id(create, start, fk, n, st->id);
	}
	maps_dump_free(&d);
	return 0;
}

const struct syncov_thread *syncov_run_thread(const struct syncov_run *run, uint32_t tid)
{
	size_t i;

	for (i = 0; i < run->nthreads; i++)
		if (run->threads[i].tid == tid)
			return &run->threads[i];
	return NULL;
}

static const char *thread_id(const struct harvest *h, uint32_t tid)
{
	const struct syncov_thread *t = syncov_run_thread(h->run, tid);

	return t ? t->id : "unknown-thread";
}

static void task_sites(struct syncov_task *t, const char *a, const char *b)
{
	if (t->nsites)
		return;
	t->sites[t->nsites++] = xstrdup(a);
	if (b)
		t->sites[t->nsites++] = xstrdup(b);
}

static void harvest_sp(struct harvest *h, int fd, int log_fd)
{
	struct cs_sp_key k;
	struct maps_dump d;
	size_t di;
	char a[4096], b[4096], *key;
	struct syncov_task *t;
	__u64 hits;

	harvest_read_logged(h, fd, log_fd, CS_KEYLOG_SP, sizeof(k), sizeof(hits), &d);
	for (di = 0; di < d.n; di++) {
		memcpy(&k, d.keys + di * sizeof(k), sizeof(k));
		memcpy(&hits, d.vals + di * sizeof(hits), sizeof(hits));
		if (addr_internal(h, k.p.tgid, k.p.gen, k.site_last) ||
		    addr_internal(h, k.p.tgid, k.p.gen, k.site)) {
			h->run->internal_dropped++;
			continue;
		}
		addr_key(h, k.p.tgid, k.p.gen, k.site_last, a, sizeof(a));
		addr_key(h, k.p.tgid, k.p.gen, k.site, b, sizeof(b));
		key = syncov_key_sp(a, b);
		t = syncov_set_add(&h->run->tasks, SYNCOV_SP, key, hits);
		task_sites(t, a, b);
		free(key);
	}
	maps_dump_free(&d);
}

static void harvest_goodlock(struct harvest *h, int fd, int log_fd)
{
	struct cs_goodlock_key k;
	struct maps_dump d;
	size_t di;
	char a[4096], b[4096], *key;
	struct syncov_task *t;
	__u64 hits;

	harvest_read_logged(h, fd, log_fd, CS_KEYLOG_GOODLOCK, sizeof(k), sizeof(hits), &d);
	for (di = 0; di < d.n; di++) {
		memcpy(&k, d.keys + di * sizeof(k), sizeof(k));
		memcpy(&hits, d.vals + di * sizeof(hits), sizeof(hits));
		if (addr_internal(h, k.p.tgid, k.p.gen, k.held_site) ||
		    addr_internal(h, k.p.tgid, k.p.gen, k.req_site)) {
			h->run->internal_dropped++;
			continue;
		}
		addr_key(h, k.p.tgid, k.p.gen, k.held_site, a, sizeof(a));
		addr_key(h, k.p.tgid, k.p.gen, k.req_site, b, sizeof(b));
		key = syncov_key_goodlock(a, b, lock_id(h, k.p, k.held_lock),
					  lock_id(h, k.p, k.req_lock), thread_id(h, k.tid));
		t = syncov_set_add(&h->run->tasks, SYNCOV_GOODLOCK, key, hits);
		task_sites(t, a, b);
		if (!t->detail)
			t->detail = xasprintf("%s -> %s", lock_id(h, k.p, k.held_lock),
					      lock_id(h, k.p, k.req_lock));
		free(key);
	}
	maps_dump_free(&d);
}

static void harvest_hb(struct harvest *h, int fd, int log_fd)
{
	struct cs_hb_key k;
	struct maps_dump d;
	size_t di;
	char a[4096], b[4096], *key;
	struct syncov_task *t;
	const char *obj;
	__u64 hits;

	harvest_read_logged(h, fd, log_fd, CS_KEYLOG_HB, sizeof(k), sizeof(hits), &d);
	for (di = 0; di < d.n; di++) {
		memcpy(&k, d.keys + di * sizeof(k), sizeof(k));
		memcpy(&hits, d.vals + di * sizeof(hits), sizeof(hits));
		if (addr_internal(h, k.p.tgid, k.p.gen, k.site1) ||
		    addr_internal(h, k.p.tgid, k.p.gen, k.site2)) {
			h->run->internal_dropped++;
			continue;
		}
		addr_key(h, k.p.tgid, k.p.gen, k.site1, a, sizeof(a));
		addr_key(h, k.p.tgid, k.p.gen, k.site2, b, sizeof(b));
		/* create->start and exit->join synchronize through the thread */
		obj = k.kind == CS_HB_CREATE_START || k.kind == CS_HB_EXIT_JOIN
			      ? thread_id(h, (__u32)k.obj)
			      : lock_id(h, k.p, k.obj);
		key = syncov_key_hb(k.kind, a, b, obj, thread_id(h, k.tid1), thread_id(h, k.tid2));
		t = syncov_set_add(&h->run->tasks, SYNCOV_HBPAIR, key, hits);
		task_sites(t, a, b);
		if (!t->detail)
			t->detail = xstrdup(syncov_hb_kind_name(k.kind));
		free(key);
	}
	maps_dump_free(&d);
}

static void harvest_sync(struct harvest *h, int fd, int log_fd)
{
	struct cs_sync_key k;
	struct maps_dump d;
	size_t di;
	char a[4096], *key;
	struct syncov_task *t;
	__u64 hits;

	harvest_read_logged(h, fd, log_fd, CS_KEYLOG_SYNC, sizeof(k), sizeof(hits), &d);
	for (di = 0; di < d.n; di++) {
		memcpy(&k, d.keys + di * sizeof(k), sizeof(k));
		memcpy(&hits, d.vals + di * sizeof(hits), sizeof(hits));
		if (addr_internal(h, k.p.tgid, k.p.gen, k.site)) {
			h->run->internal_dropped++;
			continue;
		}
		addr_key(h, k.p.tgid, k.p.gen, k.site, a, sizeof(a));
		key = syncov_key_sync(k.mode, a);
		t = syncov_set_add(&h->run->tasks, SYNCOV_SYNC, key, hits);
		task_sites(t, a, NULL);
		if (!t->detail)
			t->detail = xstrdup(syncov_sync_mode_name(k.mode));
		free(key);
	}
	maps_dump_free(&d);
}

int syncov_harvest(struct sync_probes *sp, const struct site_resolver *r, const char *static_object,
		   bool take, struct syncov_run *out)
{
	struct harvest h = { .r = r, .static_object = static_object, .take = take, .run = out };

	h.keylog_n_fd = sync_probes_map_fd(sp, "cs_sync_keylog_n");

	memset(out, 0, sizeof(*out));
	syncov_set_init(&out->tasks);
	harvest_threads(&h, sync_probes_map_fd(sp, "cs_sync_threads"));
	harvest_locks(&h, sync_probes_map_fd(sp, "cs_sync_locks"));
	harvest_sp(&h, sync_probes_map_fd(sp, "cs_sync_sp"),
		   sync_probes_map_fd(sp, "cs_sync_sp_log"));
	harvest_goodlock(&h, sync_probes_map_fd(sp, "cs_sync_goodlock"),
			 sync_probes_map_fd(sp, "cs_sync_goodlock_log"));
	harvest_hb(&h, sync_probes_map_fd(sp, "cs_sync_hb"),
		   sync_probes_map_fd(sp, "cs_sync_hb_log"));
	harvest_sync(&h, sync_probes_map_fd(sp, "cs_sync_sync"),
		     sync_probes_map_fd(sp, "cs_sync_sync_log"));
	sp->harvest_emptied = take;
	memcpy(sp->keylog_taken, h.keylog_taken, sizeof(sp->keylog_taken));
	free(h.locks);
	syncov_set_sort(&out->tasks);
	return 0;
}

void syncov_run_free(struct syncov_run *run)
{
	syncov_set_free(&run->tasks);
	free(run->threads);
	memset(run, 0, sizeof(*run));
}

/* ---- describing sites ----------------------------------------------------------- */

/* Split "OBJECT+0xOFF" and symbolize it. */
static void site_describe(const char *key, bool call_site, struct sym_site *ss, char *text,
			  size_t len)
{
	char obj[PATH_MAX];
	const char *plus = strrchr(key, '+');
	uint64_t off;

	memset(ss, 0, sizeof(*ss));
	snprintf(text, len, "%s", key);
	if (!plus || strncmp(plus, "+0x", 3) || (size_t)(plus - key) >= sizeof(obj))
		return;
	memcpy(obj, key, plus - key);
	obj[plus - key] = 0;
	off = strtoull(plus + 3, NULL, 16);
	if (obj[0] != '/' || symbolize_resolve_offset(obj, off, ss)) {
		ss->object = NULL;
		return;
	}
	/* Call sites are return addresses: the line is the call's, one byte
	 * back. A function entry (a start routine) is taken as is. */
	if (call_site && ss->symbol && ss->sym_offset > 0 && off > 0 &&
	    symbolize_resolve_offset(obj, off - 1, ss) == 0)
		ss->sym_offset++;
	ss->object = ss->object ? ss->object : obj;
	ss->offset = off;
	symbolize_site_format(ss, text, len);
}

void syncov_site_describe(const char *key, struct sym_site *ss, char *text, size_t len)
{
	site_describe(key, true, ss, text, len);
}

void syncov_insn_describe(const char *key, struct sym_site *ss, char *text, size_t len)
{
	site_describe(key, false, ss, text, len);
}
