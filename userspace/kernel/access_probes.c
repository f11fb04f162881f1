// SPDX-License-Identifier: MIT
/*
 * Access probes and shared-variable discovery (see access_probes.h).
 */
#include "kernel/access_probes.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "access.skel.h"
#include "kernel/links.h"
#include "kernel/symbolize.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/xalloc.h"

/* ---- attach ------------------------------------------------------------ */

/* The kernel-internal ENOTSUPP (include/linux/errno.h), which uprobe
 * registration returns for an instruction it cannot probe (x86: lock
 * prefix) and libbpf passes through as errno. */
#define KERNEL_ENOTSUPP 524

/* libbpf's print function, while the sites attach: refusals (a lock-
 * prefixed instruction) are expected and bisected, not news. It is one
 * function for the whole process, and libbpf 1.4's libbpf_print() tests
 * it for NULL and then loads it again to call it: a NULL stored by
 * another thread in between has it call address 0. With -j N one
 * worker's attach restores the print while the other worker loads its
 * probe objects (hundreds of libbpf_print calls each, at the campaign's
 * first runs), so this file never stores NULL: silence (a campaign's
 * libbpf_set_print(NULL)) is restored as this function, which is silence
 * too. Suspected cause of a controller SIGSEGV at the start of a -j 2
 * --access campaign (docs/studies/flake-hunt-2026-11-29.md). */
static int access_quiet_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	return 0;
}

/* Attach the n sites idx[] of one object, all in one link (unregistering
 * a link waits for a grace period, ~30 ms here: one link per object, not
 * one per run of selected sites); on refusal split in halves so one
 * instruction the kernel cannot probe does not cost the whole object. */
static void access_attach_list(struct access_probes *ap, const char *path, pid_t pid,
			       const size_t *idx, size_t n, unsigned long *offs, __u64 *cookies)
{
	LIBBPF_OPTS(bpf_uprobe_multi_opts, o);
	struct bpf_link *link, *commit;
	size_t i;
	int saved;

	if (!n || ap->attach_err)
		return;
	for (i = 0; i < n; i++) {
		offs[i] = ap->set->sites[idx[i]].probe_offset;
		cookies[i] = (__u64)idx[i] | (__u64)ap->gen << 32;
	}
	o.offsets = offs;
	o.cookies = cookies;
	o.cnt = n;
	/* The park program first: uprobe consumers run newest first, so it
	 * runs after access_hit has emitted the event (probes/access.bpf.c). */
	commit = NULL;
	if (ap->run_events)
		commit = bpf_program__attach_uprobe_multi(ap->skel->progs.access_commit, pid, path,
							  NULL, &o);
	link = !ap->run_events || commit ? bpf_program__attach_uprobe_multi(
						   ap->skel->progs.access_hit, pid, path, NULL, &o)
					 : NULL;
	if (!link && commit) {
		saved = errno;
		bpf_link__destroy(commit);
		errno = saved;
	}
	if (link) {
		int gfd = bpf_map__fd(ap->skel->maps.site_gen);

		if (ap->run_events) {
			struct access_link_group *g;

			ap->groups = xrealloc(ap->groups, (ap->ngroups + 1) * sizeof(*ap->groups));
			g = &ap->groups[ap->ngroups++];
			g->commit = commit;
			g->hit = link;
			g->path = path;
			g->n = n;
			g->idx = xcalloc(n, sizeof(*g->idx));
			memcpy(g->idx, idx, n * sizeof(*idx));
		} else {
			ap->links = xrealloc(ap->links, (ap->nlinks + 2) * sizeof(*ap->links));
			if (commit)
				ap->links[ap->nlinks++] = commit;
			ap->links[ap->nlinks++] = link;
		}
		/* From now on the hits through this link count (site_gen). */
		for (i = 0; i < n; i++) {
			__u32 k = (__u32)idx[i];

			bpf_map_update_elem(gfd, &k, &ap->gen, BPF_ANY);
			ap->attached_site[idx[i]] = true;
		}
		ap->attached += n;
		return;
	}
	/* Only a refused instruction is worth bisecting for; anything else
	 * (no permission, no uprobe_multi, process gone) fails every half. */
	if (errno != KERNEL_ENOTSUPP && errno != EOPNOTSUPP && errno != EINVAL) {
		ap->attach_err = -errno;
		return;
	}
	if (n == 1) {
		log_debug("access probe refused at %s+0x%" PRIx64 ": %s", path,
			  ap->set->sites[idx[0]].offset, strerror(errno));
		return;
	}
	access_attach_list(ap, path, pid, idx, n / 2, offs, cookies);
	access_attach_list(ap, path, pid, idx + n / 2, n - n / 2, offs, cookies);
}

static int access_fill_sites(struct access_probes *ap)
{
	int fd = bpf_map__fd(ap->skel->maps.access_sites);
	size_t i;

	for (i = 0; i < ap->set->n; i++) {
		__u32 k = (__u32)i;

		if (bpf_map_update_elem(fd, &k, &ap->set->sites[i].decode, BPF_ANY))
			return -errno;
	}
	return 0;
}

char *access_probes_alloc_object(const char *prog)
{
	uint64_t off;

	if (symbolize_lookup_function(prog, "malloc", &off, NULL) == 0)
		return xstrdup(prog);
	return site_finder_resolve_object(prog, "libc.so.6");
}

/* Follow malloc/calloc/realloc in OBJECT (entry + return). Best effort: a
 * missing allocator only costs the allocation-site names. */
static void access_attach_allocs(struct access_probes *ap, const char *object, pid_t pid)
{
	static const char *const fns[CS_ALLOC__COUNT] = { "malloc", "calloc", "realloc" };
	unsigned long offs[CS_ALLOC__COUNT];
	__u64 cookies[CS_ALLOC__COUNT];
	LIBBPF_OPTS(bpf_uprobe_multi_opts, o);
	struct bpf_link *in, *out;
	size_t i, n = 0;
	uint64_t off;

	for (i = 0; i < CS_ALLOC__COUNT; i++) {
		if (symbolize_lookup_function(object, fns[i], &off, NULL))
			continue;
		offs[n] = off;
		cookies[n++] = i;
	}
	if (!n) {
		log_warn("%s has no malloc: heap blocks are named by their first access", object);
		return;
	}
	o.offsets = offs;
	o.cookies = cookies;
	o.cnt = n;
	in = bpf_program__attach_uprobe_multi(ap->skel->progs.alloc_enter, pid, object, NULL, &o);
	o.retprobe = true;
	out = in ? bpf_program__attach_uprobe_multi(ap->skel->progs.alloc_exit, pid, object, NULL,
						    &o)
		 : NULL;
	if (!in || !out) {
		log_warn("cannot follow malloc in %s (%s): heap blocks are named by their first "
			 "access",
			 object, strerror(errno));
		bpf_link__destroy(in);
		return;
	}
	ap->links = xrealloc(ap->links, (ap->nlinks + 2) * sizeof(*ap->links));
	ap->links[ap->nlinks++] = in;
	ap->links[ap->nlinks++] = out;
	ap->allocs_tracked = true;
}

int access_probes_load(struct access_probes *ap, const struct site_set *set,
		       const struct access_probes_opts *opts)
{
	int err;

	memset(ap, 0, sizeof(*ap));
	ap->set = set;
	ap->candidates = set->n;
	if (!set->n) {
		log_err("no access sites to probe (check --sites-include/--sites-exclude)");
		return -EINVAL;
	}
	ap->skel = access_bpf__open();
	if (!ap->skel) {
		err = -errno;
		log_err("cannot open the access probe BPF object: %s", strerror(-err));
		return err;
	}
	ap->skel->rodata->record_events = !opts || opts->record_events;
	ap->skel->rodata->run_events = opts && opts->run_events;
	if (opts && opts->run_events) {
		ap->skel->rodata->steer_cap = opts->steer_cap;
		ap->skel->rodata->steer_sample = opts->steer_sample ? opts->steer_sample : 64;
		ap->skel->rodata->probe_cap = opts->probe_cap;
		ap->skel->rodata->probe_budget = opts->probe_budget;
	}
	ap->run_events = opts && opts->run_events;
	bpf_map__set_max_entries(ap->skel->maps.access_sites, (__u32)set->n);
	bpf_map__set_max_entries(ap->skel->maps.site_hits, (__u32)set->n);
	bpf_map__set_max_entries(ap->skel->maps.site_gen, (__u32)set->n);
	bpf_map__set_max_entries(ap->skel->maps.site_cap, (__u32)set->n);
	if (opts && opts->run_events) {
		/* Events go to the sync probes' ring buffer. */
		bpf_map__set_max_entries(ap->skel->maps.access_events, 4096);
		err = bpf_map__reuse_fd(ap->skel->maps.cs_sync_events, opts->sync_events_fd);
		if (err) {
			log_err("cannot share the event ring buffer with the access probes: %s",
				strerror(-err));
			goto fail;
		}
	} else {
		bpf_map__set_max_entries(ap->skel->maps.cs_sync_events, 4096);
		if (opts && opts->ringbuf_bytes)
			bpf_map__set_max_entries(ap->skel->maps.access_events, opts->ringbuf_bytes);
	}
	if (opts && opts->before_load) {
		err = opts->before_load(ap->skel->obj, opts->before_load_arg);
		if (err)
			goto fail;
	}
	err = access_bpf__load(ap->skel);
	if (err) {
		log_err("cannot load the access probe BPF program: %s%s", strerror(-err),
			err == -EPERM ? " (run as root)" : "");
		goto fail;
	}
	err = access_fill_sites(ap);
	if (err) {
		log_err("cannot fill the access site table: %s", strerror(-err));
		goto fail;
	}
	if (opts && opts->alloc_object)
		ap->alloc_object = xstrdup(opts->alloc_object);
	ap->attached_site = xcalloc(set->n, sizeof(*ap->attached_site));
	ap->shed = xcalloc(set->n, sizeof(*ap->shed));
	return 0;
fail:
	access_probes_close(ap);
	return err;
}

/* A link that access_probes_shed let go: destroyed on a thread of its own,
 * since unregistering waits for a grace period (tens of ms, more under
 * TCG) that the run's loop need not wait for. */
static void *reap_link(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

static void reap_later(struct access_probes *ap, struct bpf_link *link)
{
	pthread_t t;

	if (!link)
		return;
	if (pthread_create(&t, NULL, reap_link, link)) {
		bpf_link__destroy(link);
		return;
	}
	ap->reapers = xrealloc(ap->reapers, (ap->nreapers + 1) * sizeof(*ap->reapers));
	ap->reapers[ap->nreapers++] = t;
}

/* Every link access_probes_shed let go is gone. */
static void reap_wait(struct access_probes *ap)
{
	size_t i;

	for (i = 0; i < ap->nreapers; i++)
		pthread_join(ap->reapers[i], NULL);
	free(ap->reapers);
	ap->reapers = NULL;
	ap->nreapers = 0;
}

static int access_probes_shed(struct access_probes *ap, const bool *drop);

static void *shed_main(void *arg)
{
	struct access_probes *ap = arg;
	uint64_t t0 = now_ns();

	ap->shed_result = access_probes_shed(ap, ap->shed_drop);
	ap->shed_ns = now_ns() - t0;
	__atomic_store_n(&ap->shed_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

int access_probes_shed_start(struct access_probes *ap, const bool *drop)
{
	if (ap->shedding)
		return -EBUSY;
	if (!ap->shed_drop)
		ap->shed_drop = xcalloc(ap->set->n, sizeof(*ap->shed_drop));
	memcpy(ap->shed_drop, drop, ap->set->n * sizeof(*drop));
	ap->shed_done = 0;
	if (pthread_create(&ap->shedder, NULL, shed_main, ap)) {
		shed_main(ap); /* no thread: here, then */
		ap->shedding = false;
		return 0;
	}
	ap->shedding = true;
	return 0;
}

int access_probes_shed_poll(struct access_probes *ap, bool wait, int *result, uint64_t *ns)
{
	if (!ap->shedding && !__atomic_load_n(&ap->shed_done, __ATOMIC_ACQUIRE))
		return 0;
	if (ap->shedding) {
		if (!wait && !__atomic_load_n(&ap->shed_done, __ATOMIC_ACQUIRE))
			return 0;
		pthread_join(ap->shedder, NULL);
		ap->shedding = false;
	}
	ap->shed_done = 0;
	if (result)
		*result = ap->shed_result;
	if (ns)
		*ns = ap->shed_ns;
	return 1;
}

/* Move the site groups' links to out (2 * ngroups slots) and forget the
 * groups; their sites are no longer shed. */
static size_t take_group_links(struct access_probes *ap, struct bpf_link **out)
{
	size_t i, n = 0;

	for (i = 0; i < ap->ngroups; i++) {
		out[n++] = ap->groups[i].commit;
		out[n++] = ap->groups[i].hit;
		free(ap->groups[i].idx);
	}
	free(ap->groups);
	ap->groups = NULL;
	ap->ngroups = 0;
	if (ap->shed)
		memset(ap->shed, 0, ap->set->n * sizeof(*ap->shed));
	ap->nshed = 0;
	return n;
}

static void drop_site_links(struct access_probes *ap)
{
	struct bpf_link **links;
	size_t n;

	access_probes_shed_poll(ap, true, NULL, NULL);
	reap_wait(ap);
	/* Each group's two links, destroyed at once (kernel/links.h). */
	links = xcalloc(2 * ap->ngroups + 1, sizeof(*links));
	n = take_group_links(ap, links);
	links_destroy(links, n);
	free(links);
}

/* Sites a link holds at most (concsched run; attach_picked), unless that
 * would make more than ACCESS_MAX_GROUPS groups: each group is two links,
 * two file descriptors, and the usual limit is 1,024 (zstd's 29,798
 * sites in links of 32 were 1,862: "Too many open files", 2026-11-29). */
#define ACCESS_LINK_SITES 32
#define ACCESS_MAX_GROUPS 128

/* Attach the sites i with pick[i] (NULL: all) of each object, object by
 * object (site_finder_find appends them so), in links of at most
 * ACCESS_LINK_SITES sites (more when there are many: ACCESS_MAX_GROUPS):
 * access_probes_shed replaces each link that loses a site by one with the
 * rest, and one link per object made every shed of an estimation run
 * register its 2,600 other sites again (lbzip2: 40-300 ms a shed, a shed
 * at a time, its hot sites trapping meanwhile). */
static void attach_picked(struct access_probes *ap, pid_t pid, const bool *pick)
{
	const struct site_set *set = ap->set;
	unsigned long *offs = xcalloc(set->n, sizeof(*offs));
	__u64 *cookies = xcalloc(set->n, sizeof(*cookies));
	size_t *idx = xcalloc(set->n, sizeof(*idx));
	size_t i, j, k, chunk = set->n, total = 0;

	if (ap->run_events) {
		for (i = 0; i < set->n; i++)
			total += !pick || pick[i];
		chunk = (total + ACCESS_MAX_GROUPS - 1) / ACCESS_MAX_GROUPS;
		if (chunk < ACCESS_LINK_SITES)
			chunk = ACCESS_LINK_SITES;
	}
	for (i = 0; i < set->n; i = j) {
		size_t n = 0;

		for (j = i; j < set->n && set->sites[j].object == set->sites[i].object; j++)
			;
		for (k = i; k < j; k++)
			if (!pick || pick[k])
				idx[n++] = k;
		for (k = 0; k < n; k += chunk)
			access_attach_list(ap, set->sites[i].object, pid, idx + k,
					   n - k < chunk ? n - k : chunk, offs, cookies);
	}
	free(offs);
	free(cookies);
	free(idx);
}

/* The probe cap: take the uprobes of the sites i with drop[i] away for
 * the rest of the run (a trap costs more than the probe's work). Each
 * object link holding such a site is replaced by one without it, attached
 * before the old one goes, so the other sites miss no hit; the BPF side
 * counts a hit through one link only (site_gen). The old links are
 * destroyed on threads of their own (a grace period each): the caller does
 * not wait. The next attach puts the sites back. Returns the sites taken
 * away, or -errno (then the old links stay). concsched run only (site
 * links in groups). */
static int access_probes_shed(struct access_probes *ap, const bool *drop)
{
	size_t i, j, ng = ap->ngroups, gone = 0, *keep, attached = ap->attached;
	unsigned long *offs;
	__u64 *cookies;
	int err = 0;

	if (!ap->run_events || !ng)
		return 0;
	keep = xcalloc(ap->set->n, sizeof(*keep));
	offs = xcalloc(ap->set->n, sizeof(*offs));
	cookies = xcalloc(ap->set->n, sizeof(*cookies));
	ap->gen++;
	for (i = 0; i < ng; i++) {
		struct access_link_group *g = &ap->groups[i];
		size_t n = 0, before = ap->ngroups;

		for (j = 0; j < g->n; j++)
			if (!drop[g->idx[j]])
				keep[n++] = g->idx[j];
		if (n == g->n)
			continue;
		/* The rest of the object first, then the old link goes. */
		if (n) {
			ap->attach_err = 0;
			access_attach_list(ap, g->path, ap->pid, keep, n, offs, cookies);
			if (ap->attach_err || ap->ngroups == before) {
				err = ap->attach_err ? ap->attach_err : -EOPNOTSUPP;
				continue;
			}
			g = &ap->groups[i]; /* the array moved */
		}
		for (j = 0; j < g->n; j++)
			if (drop[g->idx[j]]) {
				ap->attached_site[g->idx[j]] = false;
				ap->shed[g->idx[j]] = true;
				ap->nshed++;
				gone++;
			}
		reap_later(ap, g->commit);
		reap_later(ap, g->hit);
		free(g->idx);
		g->n = 0;
		g->commit = g->hit = NULL;
		g->idx = NULL;
	}
	for (i = j = 0; i < ap->ngroups; i++)
		if (ap->groups[i].hit)
			ap->groups[j++] = ap->groups[i];
	ap->ngroups = j;
	ap->attached = attached; /* the run's sites, shed ones too */
	free(keep);
	free(offs);
	free(cookies);
	return gone ? (int)gone : err;
}

int access_probes_attach(struct access_probes *ap, pid_t pid, const bool *mask)
{
	const struct site_set *set = ap->set;
	libbpf_print_fn_t old_print = NULL;
	__u32 tgid = (__u32)pid;
	__u8 one = 1;
	uint64_t t0;
	int err;

	if (bpf_map_update_elem(bpf_map__fd(ap->skel->maps.access_tgids), &tgid, &one, BPF_ANY)) {
		err = -errno;
		log_err("cannot record the target process for the access probes: %s",
			strerror(-err));
		return err;
	}
	access_probes_shed_poll(ap, true, NULL, NULL);
	reap_wait(ap);
	ap->pid = pid;
	ap->attach_err = 0;
	if (!log_verbose)
		old_print = libbpf_set_print(access_quiet_print);
	drop_site_links(ap);
	ap->attached = 0;
	memset(ap->attached_site, 0, set->n * sizeof(*ap->attached_site));
	t0 = now_ns();
	ap->gen++;
	attach_picked(ap, pid, mask);
	ap->attach_ns = now_ns() - t0;
	if (!log_verbose)
		libbpf_set_print(old_print ? old_print : access_quiet_print);
	log_debug("access probes: %zu sites attached for pid %d (%.3g ms)", ap->attached, (int)pid,
		  ap->attach_ns / 1e6);
	/* Followed per process: for every process, they would trap every
	 * malloc on the machine, concsched's own included. */
	if (ap->alloc_object && !ap->attach_err)
		access_attach_allocs(ap, ap->alloc_object, pid);
	if (ap->attach_err || !ap->attached) {
		err = ap->attach_err ? ap->attach_err : -EOPNOTSUPP;
		log_err("cannot attach access probes (%zu sites): %s (%s)", set->n, strerror(-err),
			err == -EMFILE || err == -ENFILE
				? "each link is a file descriptor: raise the limit, e.g. ulimit -n "
				  "4096"
				: "uprobe.multi needs Linux 6.6+ and root");
		return err;
	}
	return 0;
}

int access_probes_open(struct access_probes *ap, const struct site_set *set, pid_t pid,
		       const struct access_probes_opts *opts)
{
	int err = access_probes_load(ap, set, opts);

	if (err)
		return err;
	err = access_probes_attach(ap, pid, NULL);
	if (err)
		access_probes_close(ap);
	return err;
}

static void access_map_empty(struct bpf_map *m)
{
	char *next = xcalloc(1, bpf_map__key_size(m));
	int fd = bpf_map__fd(m);

	while (bpf_map_get_next_key(fd, NULL, next) == 0) {
		if (bpf_map_delete_elem(fd, next))
			break;
	}
	free(next);
}

static void access_array_zero(struct bpf_map *m, bool percpu)
{
	int ncpu = libbpf_num_possible_cpus(), fd = bpf_map__fd(m);
	size_t vsz = bpf_map__value_size(m) * (percpu && ncpu > 0 ? (size_t)ncpu : 1);
	void *zero = xcalloc(1, vsz);
	__u32 k;

	for (k = 0; k < bpf_map__max_entries(m); k++)
		bpf_map_update_elem(fd, &k, zero, BPF_ANY);
	free(zero);
}

void access_probes_detach(struct access_probes *ap)
{
	access_probes_shed_poll(ap, true, NULL, NULL);
	reap_wait(ap);
	/* The site links, the run's process's, go with the allocator links,
	 * their grace periods overlapping. */
	if (ap->ngroups) {
		ap->links =
			xrealloc(ap->links, (ap->nlinks + 2 * ap->ngroups) * sizeof(*ap->links));
		ap->nlinks += take_group_links(ap, ap->links + ap->nlinks);
	}
	links_destroy(ap->links, ap->nlinks);
	free(ap->links);
	ap->links = NULL;
	ap->nlinks = 0;
	ap->allocs_tracked = false;
}

int access_probes_stop(struct access_probes *ap)
{
	__u32 tgid = (__u32)ap->pid;
	int err = 0;

	if (!ap->skel)
		return 0;
	if (ap->pid && bpf_map_delete_elem(bpf_map__fd(ap->skel->maps.access_tgids), &tgid) &&
	    errno != ENOENT)
		err = -errno;
	drop_site_links(ap);
	access_probes_detach(ap);
	return err;
}

void access_probes_reset(struct access_probes *ap)
{
	access_probes_detach(ap);
	ap->pid = 0;
	if (!ap->skel)
		return;
	access_map_empty(ap->skel->maps.access_tgids);
	access_map_empty(ap->skel->maps.alloc_pending);
	access_array_zero(ap->skel->maps.site_hits, false);
	if (ap->run_events) {
		access_array_zero(ap->skel->maps.site_cap, false);
		access_array_zero(ap->skel->maps.run_hits, false);
		access_map_empty(ap->skel->maps.thread_hits);
	}
	access_array_zero(ap->skel->maps.access_stats, true);
	ap->nevents = 0;
	ap->nallocs = 0;
}

int access_probes_alloc_fd(struct access_probes *ap)
{
	return ap->skel ? bpf_map__fd(ap->skel->maps.alloc_events) : -EINVAL;
}

static int access_on_event(void *ctx, void *data, size_t len)
{
	struct access_probes *ap = ctx;

	if (len < sizeof(struct cs_access_event))
		return 0;
	if (ap->nevents == ap->cap) {
		ap->cap = ap->cap ? ap->cap * 2 : 4096;
		ap->events = xrealloc(ap->events, ap->cap * sizeof(*ap->events));
	}
	memcpy(&ap->events[ap->nevents++], data, sizeof(struct cs_access_event));
	return 0;
}

static int access_on_alloc(void *ctx, void *data, size_t len)
{
	struct access_probes *ap = ctx;

	if (len < sizeof(struct cs_alloc_event))
		return 0;
	if (ap->nallocs == ap->alloc_cap) {
		ap->alloc_cap = ap->alloc_cap ? ap->alloc_cap * 2 : 1024;
		ap->allocs = xrealloc(ap->allocs, ap->alloc_cap * sizeof(*ap->allocs));
	}
	memcpy(&ap->allocs[ap->nallocs++], data, sizeof(struct cs_alloc_event));
	return 0;
}

int access_probes_poll(struct access_probes *ap, int timeout_ms)
{
	size_t before = ap->nevents;
	int err;

	if (!ap->rb) {
		ap->rb = ring_buffer__new(bpf_map__fd(ap->skel->maps.access_events),
					  access_on_event, ap, NULL);
		if (!ap->rb)
			return -errno;
		if (ring_buffer__add(ap->rb, bpf_map__fd(ap->skel->maps.alloc_events),
				     access_on_alloc, ap))
			return -errno;
	}
	err = ring_buffer__poll(ap->rb, timeout_ms);
	if (err < 0 && err != -EINTR)
		return err;
	return (int)(ap->nevents - before);
}

uint64_t access_probes_stat(struct access_probes *ap, enum cs_access_stat slot)
{
	int ncpu = libbpf_num_possible_cpus(), i;
	__u32 k = slot;
	uint64_t sum = 0, *v;

	if (ncpu <= 0 || !ap->skel)
		return 0;
	v = xcalloc((size_t)ncpu, sizeof(*v));
	if (bpf_map_lookup_elem(bpf_map__fd(ap->skel->maps.access_stats), &k, v) == 0)
		for (i = 0; i < ncpu; i++)
			sum += v[i];
	free(v);
	return sum;
}

uint64_t access_probes_site_hits(struct access_probes *ap, size_t i)
{
	__u32 k = (__u32)i;
	__u64 v = 0;

	if (ap->skel)
		bpf_map_lookup_elem(bpf_map__fd(ap->skel->maps.site_hits), &k, &v);
	return v;
}

enum access_cap_state access_probes_site_cap(struct access_probes *ap, size_t i)
{
	struct {
		__u64 capped_threads, closed;
	} v = { 0, 0 };
	__u32 k = (__u32)i;

	if (!ap->skel || !ap->run_events ||
	    bpf_map_lookup_elem(bpf_map__fd(ap->skel->maps.site_cap), &k, &v))
		return ACCESS_CAP_NONE;
	return v.closed		  ? ACCESS_CAP_CLOSED
	       : v.capped_threads ? ACCESS_CAP_THREAD
				  : ACCESS_CAP_NONE;
}

void access_probes_close(struct access_probes *ap)
{
	links_destroy(ap->links, ap->nlinks);
	drop_site_links(ap);
	free(ap->shed);
	free(ap->shed_drop);
	ring_buffer__free(ap->rb);
	access_bpf__destroy(ap->skel);
	free(ap->alloc_object);
	free(ap->links);
	free(ap->attached_site);
	free(ap->events);
	free(ap->allocs);
	memset(ap, 0, sizeof(*ap));
}

/* ---- shared-variable discovery ----------------------------------------- */

struct sv_thread {
	uint32_t tid;
	uint64_t min_sp, max_sp;
};

struct sv_bias {
	const char *object;
	uint64_t bias;
};

static int sv_cmp_addr(const void *a, const void *b)
{
	const struct cs_access_event *x = *(const struct cs_access_event *const *)a;
	const struct cs_access_event *y = *(const struct cs_access_event *const *)b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->ts_ns < y->ts_ns ? -1 : x->ts_ns > y->ts_ns;
}

#define SV_MAIN_STACK (8ULL << 20) /* default RLIMIT_STACK */

uint64_t access_probes_main_stack_top(pid_t pid)
{
	char path[64], line[512];
	unsigned long long lo, hi;
	uint64_t top = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, "[stack]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2)
			top = hi;
	fclose(f);
	return top;
}

static bool sv_on_stack(const struct sv_thread *th, size_t nth, uint64_t stack_top, uint64_t addr)
{
	size_t i;

	if (stack_top && addr < stack_top && addr + SV_MAIN_STACK >= stack_top)
		return true;
	for (i = 0; i < nth; i++)
		if (addr + 4096 >= th[i].min_sp && addr <= th[i].max_sp + 65536)
			return true;
	return false;
}

static void sv_add_thread(struct sv_thread **th, size_t *n, const struct cs_access_event *e)
{
	size_t i;

	for (i = 0; i < *n; i++) {
		if ((*th)[i].tid != e->tid)
			continue;
		if (e->sp < (*th)[i].min_sp)
			(*th)[i].min_sp = e->sp;
		if (e->sp > (*th)[i].max_sp)
			(*th)[i].max_sp = e->sp;
		return;
	}
	*th = xrealloc(*th, (*n + 1) * sizeof(**th));
	(*th)[(*n)++] = (struct sv_thread){ .tid = e->tid, .min_sp = e->sp, .max_sp = e->sp };
}

/* Load bias of each probed object, from any event of one of its sites. */
static void sv_add_bias(struct sv_bias **b, size_t *n, const struct site_set *set,
			const struct cs_access_event *e)
{
	const struct mem_site *s;
	size_t i;

	if (e->site >= set->n)
		return;
	s = &set->sites[e->site];
	for (i = 0; i < *n; i++)
		if ((*b)[i].object == s->object)
			return;
	*b = xrealloc(*b, (*n + 1) * sizeof(**b));
	/* The probe may sit before the instruction (lock prefix). */
	(*b)[(*n)++] =
		(struct sv_bias){ .object = s->object,
				  .bias = e->ip - (s->vaddr - (s->offset - s->probe_offset)) };
}

/* Resolve a data address: through the probed objects' biases first, then
 * the live symbolizer. */
static void sv_resolve(const struct sv_bias *b, size_t nb, struct symbolizer *sz, uint64_t addr,
		       struct sym_site *out)
{
	size_t i;

	for (i = 0; i < nb; i++)
		if (symbolize_resolve_vaddr(b[i].object, addr - b[i].bias, out) == 0)
			return;
	memset(out, 0, sizeof(*out));
	if (sz)
		symbolize_resolve(sz, addr, out);
}

static void sv_add_site(struct shared_var *v, size_t site)
{
	size_t i;

	for (i = 0; i < v->nsites; i++)
		if (v->sites[i] == site)
			return;
	v->sites = xrealloc(v->sites, (v->nsites + 1) * sizeof(*v->sites));
	for (i = v->nsites; i > 0 && v->sites[i - 1] > site; i--)
		v->sites[i] = v->sites[i - 1];
	v->sites[i] = site;
	v->nsites++;
}

static int sv_cmp_var(const void *a, const void *b)
{
	const struct shared_var *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The allocation whose block holds addr at time ts: the latest one before. */
static const struct cs_alloc_event *sv_alloc_of(const struct access_trace *t, uint64_t addr,
						uint64_t ts)
{
	const struct cs_alloc_event *best = NULL;
	size_t i;

	for (i = 0; i < t->nallocs; i++) {
		const struct cs_alloc_event *a = &t->allocs[i];
		uint64_t size = a->size ? a->size : 1;

		if (addr >= a->addr && addr - a->addr < size && a->ts_ns <= ts &&
		    (!best || a->ts_ns > best->ts_ns))
			best = a;
	}
	return best;
}

struct shared_var *access_probes_shared_vars(const struct access_trace *t,
					     const struct site_set *set, struct symbolizer *sz,
					     size_t *nout, bool *site_shared)
{
	const struct cs_access_event **by_addr;
	struct sv_thread *th = NULL;
	struct sv_bias *bias = NULL;
	struct shared_var *vars = NULL;
	uint32_t *tids = NULL, ntids;
	size_t nth = 0, nb = 0, nv = 0, i, j, k, n;

	*nout = 0;
	if (!t->nevents)
		return NULL;
	by_addr = xcalloc(t->nevents, sizeof(*by_addr));
	for (i = 0; i < t->nevents; i++) {
		by_addr[i] = &t->events[i];
		sv_add_thread(&th, &nth, &t->events[i]);
		sv_add_bias(&bias, &nb, set, &t->events[i]);
	}
	qsort(by_addr, t->nevents, sizeof(*by_addr), sv_cmp_addr);
	tids = xcalloc(nth, sizeof(*tids));
	for (i = 0; i < t->nevents; i = j) {
		uint64_t addr = by_addr[i]->addr, key;
		const struct cs_alloc_event *alloc = NULL;
		struct shared_var *v = NULL;
		struct sym_site ss;

		ntids = 0;
		for (j = i; j < t->nevents && by_addr[j]->addr == addr; j++) {
			for (n = 0; n < ntids && tids[n] != by_addr[j]->tid; n++)
				;
			if (n == ntids && ntids < nth)
				tids[ntids++] = by_addr[j]->tid;
		}
		if (ntids < 2 || sv_on_stack(th, nth, t->stack_top, addr))
			continue;
		sv_resolve(bias, nb, sz, addr, &ss);
		/* Identity (ALGORITHMS.md §8): a global by its symbol's start
		 * (every element of an array is one variable), a heap block by
		 * its allocation's call site, anything else by address. */
		if (!ss.object)
			alloc = sv_alloc_of(t, addr, by_addr[i]->ts_ns);
		key = ss.object && ss.symbol ? addr - ss.sym_offset : alloc ? alloc->caller : addr;
		for (k = 0; k < nv && !v; k++)
			if (vars[k].object == ss.object && vars[k].has_alloc == !!alloc &&
			    vars[k].key == key)
				v = &vars[k];
		if (!v) {
			vars = xrealloc(vars, (nv + 1) * sizeof(*vars));
			v = &vars[nv++];
			*v = (struct shared_var){
				.addr = addr,
				.key = key,
				.object = ss.object,
				.symbol = ss.symbol,
				.sym_offset = ss.sym_offset,
				.heap = !ss.object,
				.first_site = by_addr[i]->site,
				.has_alloc = alloc != NULL,
				.alloc_size = alloc ? alloc->size : 0,
			};
			if (alloc)
				sv_resolve(bias, nb, sz, alloc->caller, &v->alloc_site);
		}
		if (ntids > v->nthreads)
			v->nthreads = ntids;
		for (k = i; k < j; k++) {
			v->reads += !!(by_addr[k]->flags & CS_ACC_READ);
			v->writes += !!(by_addr[k]->flags & CS_ACC_WRITE);
			if (by_addr[k]->site < set->n) {
				sv_add_site(v, by_addr[k]->site);
				if (site_shared)
					site_shared[by_addr[k]->site] = true;
			}
		}
	}
	free(tids);
	free(by_addr);
	free(th);
	free(bias);
	if (nv)
		qsort(vars, nv, sizeof(*vars), sv_cmp_var);
	*nout = nv;
	return vars;
}

void access_probes_shared_vars_free(struct shared_var *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i].sites);
	free(v);
}
