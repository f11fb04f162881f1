// SPDX-License-Identifier: MIT
/*
 * Userspace side of scx_concsched: load / share / attach / control / unload.
 * See scx_concsched.h for the lifecycle and sched/scx_concsched.bpf.c for the
 * mechanism it drives.
 */
#include "kernel/scx_concsched.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "concsched_abi.h"
#include "kick.skel.h"
#include "scx_concsched.skel.h"
#include "lib/array_size.h"
#include "lib/file.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/xalloc.h"

#define SCHED_EXT_SYSFS	     "/sys/kernel/sched_ext"
#define SCHED_CTL_MAX_KICKS  64
#define SCHED_CTL_MAX_POINTS 64

/* The maps bpf/sched_point.bpf.h defines in every object that includes it. */
static const char *const shared_map_names[] = {
	"cs_thread_ctl",       "cs_site_policy",   "cs_sched_cfg_map",
	"cs_sched_shared_map", "cs_sched_kicking", "cs_sched_targets",
};

#define SCHED_CTL_NOTES_SIZE (256 * 1024) /* struct cs_notes_rb's */

/* The scheduler (owner == NULL, target 0) or one more target of it
 * (scx_concsched_target_open): a handle steers its target's threads only. */
struct sched_ctl {
	struct scx_concsched_bpf *skel; /* the owner's */
	struct sched_ctl *owner;	/* NULL: this handle loaded the scheduler */
	uint32_t target;
	int notes_fd;				/* another target's ring buffer map */
	bool target_used[CS_SCHED_MAX_TARGETS]; /* owner: handles open */
	struct bpf_link *ops_link;
	struct ring_buffer *notes;
	sched_note_fn note_fn;
	void *note_ctx;
	struct kick_bpf *kicks[SCHED_CTL_MAX_KICKS];
	int nr_kicks;
	struct bpf_link *points[SCHED_CTL_MAX_POINTS];
	int nr_points;
	bool point_kick; /* kick attached to cs_func_point */
	bool exit_printed;
	bool detached;
	uint64_t kicks_total;	     /* kicks of the kick objects already destroyed */
	int guard_fd;		     /* dup of the struct_ops link above every fd */
	bool ejected;		     /* the kernel ended the scheduler before we unregistered */
	struct ring_buffer *starved; /* owner: starved-thread notes (rescue_thread) */
	pthread_t rescue;
	bool rescue_on, rescue_stop;
};

const char *scx_concsched_state(void)
{
	static char buf[64];
	char *s = file_read_line(SCHED_EXT_SYSFS "/state");

	if (!s)
		return "absent";
	snprintf(buf, sizeof(buf), "%s", s);
	free(s);
	return buf;
}

/* Every kfunc the scheduler cannot do without. Older kernels named them
 * scx_bpf_dispatch / scx_bpf_consume (before 6.13). */
static const char *const required_kfuncs[] = {
	"scx_bpf_dsq_insert",	"scx_bpf_dsq_insert_vtime", "scx_bpf_dsq_move_to_local",
	"scx_bpf_dsq_move",	"scx_bpf_kick_cpu",	    "scx_bpf_create_dsq",
	"bpf_iter_scx_dsq_new", "scx_bpf_task_cpu",	    "scx_bpf_select_cpu_dfl",
};

/* Is sched_ext there and free? Cheap: sysfs only. */
static int sched_check_kernel(void)
{
	const char *state = scx_concsched_state();

	if (!strcmp(state, "absent")) {
		log_err("this kernel has no sched_ext (CONFIG_SCHED_CLASS_EXT): "
			"run under 'concsched vm' or boot a 6.13+ kernel with sched_ext");
		return -ENOTSUP;
	}
	if (strcmp(state, "disabled")) {
		char *ops = file_read_line(SCHED_EXT_SYSFS "/root/ops");

		log_err("another sched_ext scheduler is %s (%s): unload it first", state,
			ops ? ops : "unknown");
		free(ops);
		return -EBUSY;
	}
	return 0;
}

/* After a failed load: is it because the kernel lacks a kfunc we need?
 * Parsing the kernel BTF costs ~0.5 s under TCG, so only on failure. */
static int sched_check_kfuncs(void)
{
	struct btf *btf;
	size_t i;
	int err = 0;

	btf = btf__load_vmlinux_btf();
	if (!btf) {
		log_err("cannot read kernel BTF (/sys/kernel/btf/vmlinux): %s", strerror(errno));
		return -ENOTSUP;
	}
	for (i = 0; i < ARRAY_SIZE(required_kfuncs); i++) {
		if (btf__find_by_name_kind(btf, required_kfuncs[i], BTF_KIND_FUNC) < 0) {
			log_err("kernel too old: sched_ext lacks %s (Linux 6.13 or newer is "
				"needed)",
				required_kfuncs[i]);
			err = -ENOTSUP;
			break;
		}
	}
	btf__free(btf);
	return err;
}

static struct cs_sched_cfg *sched_cfg_read(struct sched_ctl *c, struct cs_sched_cfg *cfg)
{
	__u32 key = c->target;

	memset(cfg, 0, sizeof(*cfg));
	bpf_map__lookup_elem(c->skel->maps.cs_sched_cfg_map, &key, sizeof(key), cfg, sizeof(*cfg),
			     0);
	return cfg;
}

static int sched_cfg_write(struct sched_ctl *c, const struct cs_sched_cfg *cfg)
{
	__u32 key = c->target;

	return bpf_map__update_elem(c->skel->maps.cs_sched_cfg_map, &key, sizeof(key), cfg,
				    sizeof(*cfg), 0);
}

static int scx_concsched_load(struct sched_ctl *c, const struct scx_concsched_opts *o)
{
	unsigned timeout_ms = o->timeout_ms ? o->timeout_ms : SCHED_CTL_TIMEOUT_MS_DFL;
	unsigned watchdog_ms = o->watchdog_ms ? o->watchdog_ms : SCHED_CTL_WATCHDOG_MS_DFL;
	struct cs_sched_cfg cfg = { 0 };
	int err, ncpus;
	uint64_t t0;

	if (timeout_ms > 30000) {
		log_err("scheduler timeout %u ms is above the kernel's 30000 ms limit", timeout_ms);
		return -EINVAL;
	}
	if (o->rescue_ms >= timeout_ms) {
		log_err("starvation rescue at %u ms must come before the scheduler timeout (%u ms)",
			o->rescue_ms, timeout_ms);
		return -EINVAL;
	}
	if (watchdog_ms > timeout_ms / 2) {
		log_err("watchdog %u ms must stay well under the scheduler timeout (%u ms): "
			"use at most %u",
			watchdog_ms, timeout_ms, timeout_ms / 2);
		return -EINVAL;
	}
	c->skel = scx_concsched_bpf__open();
	if (!c->skel) {
		err = -errno;
		log_err("cannot open the scheduler BPF object: %s", strerror(-err));
		return err;
	}
	ncpus = libbpf_num_possible_cpus();
	c->skel->rodata->nr_cpus = ncpus > 0 ? (__u32)ncpus : 1;
	c->skel->struct_ops.concsched_ops->timeout_ms = timeout_ms;
	/* A thread that waited the rescue threshold to run is moved to the
	 * fair class (sched_rescue): the caller's, or 75% of a stall timeout
	 * the caller set, else 3750 ms (75% of the 5 s timeout the default was until
	 * 2026-11-29). The scheduler looks six times per threshold, so it is
	 * noted by 7/6 of it. The kernel's watchdog ejects the scheduler past
	 * the whole timeout; the default's 30 s leaves the rescue 26 s to act
	 * (a controller thread must run to act), where 5 s left 1.25 s, which
	 * a guest starved by other VMs overran (tests/vm/58 beside five VMs:
	 * "failed to run for 7.068s"; docs/sched.md "Starvation"). Threads
	 * that wait less (a PCT thread behind a long higher-priority one)
	 * keep their schedule. */
	if (o->no_rescue)
		c->skel->rodata->starve_ns = 0;
	else if (o->rescue_ms)
		c->skel->rodata->starve_ns = (uint64_t)o->rescue_ms * 1000000ULL;
	else if (o->timeout_ms)
		c->skel->rodata->starve_ns = (uint64_t)timeout_ms * 750000ULL;
	else
		c->skel->rodata->starve_ns = (uint64_t)SCHED_CTL_RESCUE_MS_DFL * 1000000ULL;
	t0 = now_ns();
	err = scx_concsched_bpf__load(c->skel);
	log_debug("scheduler: BPF load %.1f ms; stall timeout %u ms, starvation rescue at %u ms, "
		  "parks at most %u ms",
		  (now_ns() - t0) / 1e6, timeout_ms,
		  (unsigned)(c->skel->rodata->starve_ns / 1000000ULL), watchdog_ms);
	if (err && sched_check_kfuncs())
		return -ENOTSUP;
	if (err) {
		log_err("cannot load the scheduler BPF programs: %s (run as root; "
			"'concsched --verbose' shows the verifier log)",
			strerror(-err));
		return err;
	}
	cfg.watchdog_ns = (uint64_t)watchdog_ms * 1000000ULL;
	cfg.slice_ns = (uint64_t)(o->slice_us ? o->slice_us : 5000) * 1000ULL;
	cfg.serial = o->serial;
	cfg.seed = o->seed;
	err = sched_cfg_write(c, &cfg);
	if (err)
		return err;
	c->ops_link = bpf_map__attach_struct_ops(c->skel->maps.concsched_ops);
	if (!c->ops_link) {
		err = -errno;
		log_err("cannot register the sched_ext scheduler: %s (is another one loading?)",
			strerror(-err));
		return err;
	}
	return 0;
}

/* An all-parked note lists the parked DSQ, but a park whose ops.enqueue
 * has not returned yet is counted and not in the DSQ: the other CPU's
 * note (its thread went to sleep) then names fewer threads than it counts,
 * or none. The thread table has them all (cs_park sets the state before
 * it counts), so a short list is completed from it, in the note's order
 * first. Without this the round waited for the watchdog (14-sched-targets
 * under --copies 2: 99 user releases and 1 watchdog in 100 rounds). */
static void sched_note_complete(struct sched_ctl *c, struct cs_sched_note *n)
{
	uint32_t tids[CS_NOTE_MAX_TIDS], want, have = 0, named, i, k;
	int nr;

	want = n->nr_parked < CS_NOTE_MAX_TIDS ? n->nr_parked : CS_NOTE_MAX_TIDS;
	for (i = 0; i < want; i++)
		if (n->tids[i])
			n->tids[have++] = n->tids[i];
	if (have == want)
		return;
	named = have;
	nr = scx_concsched_parked(c, tids, CS_NOTE_MAX_TIDS);
	for (i = 0; i < (uint32_t)nr && i < CS_NOTE_MAX_TIDS && have < CS_NOTE_MAX_TIDS; i++) {
		for (k = 0; k < have && n->tids[k] != tids[i]; k++)
			;
		if (k == have)
			n->tids[have++] = tids[i];
	}
	log_debug("all-parked note of target %u named %u of its %u parked threads; now %u",
		  c->target, named, want, have);
	for (i = have; i < CS_NOTE_MAX_TIDS; i++)
		n->tids[i] = 0;
	n->nr_parked = have;
}

/* A thread waited the starvation bound to run (sched/scx_concsched.bpf.c,
 * "starvation"): other work, fair-class work that sched_ext ranks below,
 * holds the only CPU it can run on. Left there, it stalls until the kernel
 * ejects the scheduler and the run is lost; moved to the fair class, it
 * competes with that work and runs on, no longer steered (its points do
 * not stop it: bpf/sched_point.bpf.h looks at the policy). Counted in the
 * target's stats (`rescued`) for the run's and the session's summary. */
static int sched_rescue(void *ctx, void *data, size_t len)
{
	struct sched_ctl *c = ctx;
	struct sched_param zero = { 0 };
	struct cs_sched_note n;

	if (len < sizeof(n))
		return 0;
	memcpy(&n, data, sizeof(n));
	if (sched_setscheduler((pid_t)n.tid, SCHED_OTHER, &zero)) {
		log_debug("starved thread %u (waited %.0f ms on CPU %d): cannot move it to the "
			  "fair class: %s",
			  n.tid, n.parked_ns / 1e6, n.cpu, strerror(errno));
		return 0;
	}
	__atomic_fetch_add(&c->skel->bss->stats[n.target & (CS_SCHED_MAX_TARGETS - 1)].rescued, 1,
			   __ATOMIC_RELAXED);
	log_debug("starved thread %u%s waited %.0f ms to run on CPU %d (queue %#llx): moved to "
		  "the fair class, unsteered from here",
		  n.tid, n.exiting ? " (exiting)" : "", n.parked_ns / 1e6, n.cpu,
		  (unsigned long long)n.dsq_id);
	return 0;
}

/* The owner's rescue thread: reads the starved ring whatever the
 * controller's loop is doing, until scx_concsched_close. */
static void *rescue_thread(void *arg)
{
	struct sched_ctl *c = arg;

	while (!__atomic_load_n(&c->rescue_stop, __ATOMIC_ACQUIRE))
		ring_buffer__poll(c->starved, 100);
	ring_buffer__consume(c->starved);
	return NULL;
}

static int rescue_start(struct sched_ctl *c)
{
	int err;

	c->starved =
		ring_buffer__new(bpf_map__fd(c->skel->maps.cs_starved_rb), sched_rescue, c, NULL);
	if (!c->starved) {
		err = -errno;
		log_err("cannot open the scheduler's starved-thread ring buffer: %s",
			strerror(-err));
		return err;
	}
	err = pthread_create(&c->rescue, NULL, rescue_thread, c);
	if (err) {
		log_err("cannot start the starved-thread rescue: %s", strerror(err));
		return -err;
	}
	c->rescue_on = true;
	return 0;
}

static void rescue_stop(struct sched_ctl *c)
{
	if (c->rescue_on) {
		__atomic_store_n(&c->rescue_stop, true, __ATOMIC_RELEASE);
		pthread_join(c->rescue, NULL);
		c->rescue_on = false;
	}
	ring_buffer__free(c->starved);
	c->starved = NULL;
}

static int sched_note_cb(void *ctx, void *data, size_t len)
{
	struct sched_ctl *c = ctx;
	struct cs_sched_note n;

	if (len < sizeof(n) || !c->note_fn)
		return 0;
	memcpy(&n, data, sizeof(n));
	if (!c->note_fn)
		return 0;
	if (n.kind == CS_NOTE_ALL_PARKED)
		sched_note_complete(c, &n);
	if (n.kind == CS_NOTE_ALL_PARKED && !n.nr_parked)
		return 0; /* stale: everything it counted has been let go */
	c->note_fn(&n, c->note_ctx);
	return 0;
}

int scx_concsched_open(struct sched_ctl **out, const struct scx_concsched_opts *o)
{
	struct sched_ctl *c;
	int err;

	uint64_t t0 = now_ns(), t1;

	*out = NULL;
	err = sched_check_kernel();
	if (err)
		return err;
	t1 = now_ns();
	c = xcalloc(1, sizeof(*c));
	c->guard_fd = -1;
	c->notes_fd = -1;
	c->target_used[0] = true;
	err = scx_concsched_load(c, o);
	if (err)
		goto cleanup;
	log_debug("scheduler: kernel check %.1f ms, load+register %.1f ms", (t1 - t0) / 1e6,
		  (now_ns() - t1) / 1e6);
	c->notes =
		ring_buffer__new(bpf_map__fd(c->skel->maps.cs_sched_notes), sched_note_cb, c, NULL);
	if (!c->notes) {
		err = -errno;
		log_err("cannot open the scheduler's note ring buffer: %s", strerror(-err));
		goto cleanup;
	}
	if (!o->no_rescue) {
		err = rescue_start(c);
		if (err)
			goto cleanup;
	}
	*out = c;
	return 0;
cleanup:
	scx_concsched_close(c);
	return err;
}

static int highest_open_fd(void)
{
	struct dirent *d;
	DIR *dir = opendir("/proc/self/fd");
	int fd, max = 2;

	if (!dir)
		return 1023;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.' && (fd = atoi(d->d_name)) > max)
			max = fd;
	closedir(dir);
	return max;
}

int scx_concsched_target_open(struct sched_ctl *owner, struct sched_ctl **out)
{
	struct sched_ctl *c;
	struct cs_sched_cfg cfg;
	struct cs_sched_shared sh = { 0 };
	uint32_t t;
	int err;

	*out = NULL;
	if (owner->owner || !owner->ops_link)
		return -EINVAL;
	for (t = 1; t < CS_SCHED_MAX_TARGETS && owner->target_used[t]; t++)
		;
	if (t == CS_SCHED_MAX_TARGETS) {
		log_err("the scheduler steers at most %d targets at once", CS_SCHED_MAX_TARGETS);
		return -E2BIG;
	}
	c = xcalloc(1, sizeof(*c));
	c->skel = owner->skel;
	c->owner = owner;
	c->target = t;
	c->guard_fd = -1;
	c->notes_fd = bpf_map_create(BPF_MAP_TYPE_RINGBUF, "cs_notes_t", 0, 0, SCHED_CTL_NOTES_SIZE,
				     NULL);
	if (c->notes_fd < 0) {
		err = -errno;
		log_err("cannot make target %u's note ring buffer: %s", t, strerror(-err));
		free(c);
		return err;
	}
	err = bpf_map__update_elem(owner->skel->maps.cs_sched_notes_of, &t, sizeof(t), &c->notes_fd,
				   sizeof(c->notes_fd), 0);
	c->notes = err ? NULL : ring_buffer__new(c->notes_fd, sched_note_cb, c, NULL);
	if (!c->notes) {
		err = err ? err : -errno;
		log_err("cannot open target %u's note ring buffer: %s", t, strerror(-err));
		close(c->notes_fd);
		free(c);
		return err;
	}
	owner->target_used[t] = true;
	/* The owner's configuration (watchdog, slice), inactive. */
	sched_cfg_read(owner, &cfg);
	cfg.active = 0;
	cfg.points = 0;
	sched_cfg_write(c, &cfg);
	bpf_map__update_elem(c->skel->maps.cs_sched_shared_map, &t, sizeof(t), &sh, sizeof(sh), 0);
	memset(&c->skel->bss->stats[t], 0, sizeof(c->skel->bss->stats[t]));
	scx_concsched_reset(c);
	*out = c;
	return 0;
}

uint32_t scx_concsched_target_index(const struct sched_ctl *c)
{
	return c->target;
}

int scx_concsched_own(struct sched_ctl *c, int pid)
{
	__u32 key = (__u32)pid, t = c->target;

	return bpf_map__update_elem(c->skel->maps.cs_sched_targets, &key, sizeof(key), &t,
				    sizeof(t), 0);
}

int scx_concsched_guard(struct sched_ctl *c)
{
	struct bpf_link *link = c->owner ? c->owner->ops_link : c->ops_link;
	int fd;

	if (!link)
		return -ENOENT;
	fd = fcntl(bpf_link__fd(link), F_DUPFD_CLOEXEC, highest_open_fd() + 1);
	if (fd < 0)
		return -errno;
	if (c->guard_fd >= 0)
		close(c->guard_fd);
	c->guard_fd = fd;
	return 0;
}

int scx_concsched_share_maps(struct sched_ctl *c, struct bpf_object *obj)
{
	struct bpf_map *mine, *theirs;
	size_t i;
	int err;

	for (i = 0; i < ARRAY_SIZE(shared_map_names); i++) {
		theirs = bpf_object__find_map_by_name(obj, shared_map_names[i]);
		if (!theirs)
			continue; /* the object does not use it */
		mine = bpf_object__find_map_by_name(c->skel->obj, shared_map_names[i]);
		err = bpf_map__reuse_fd(theirs, bpf_map__fd(mine));
		if (err) {
			log_err("cannot share map %s with %s: %s", shared_map_names[i],
				bpf_object__name(obj), strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The subprogram of bpf/sched_point.bpf.h that cs_sched_commit() calls
 * with preemption disabled: the kick's fexit attaches to it. */
#define SCHED_CTL_KICK_HOOK "cs_sched_kick_hook"

/* Does the loaded program contain the kick hook (it calls cs_sched_commit)? */
static bool prog_has_kick_hook(struct bpf_program *prog)
{
	struct bpf_prog_info info = { 0 };
	struct bpf_func_info *fi;
	__u32 len = sizeof(info), i, n;
	struct btf *btf = NULL;
	bool found = false;

	if (bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len) || !info.btf_id ||
	    !info.nr_func_info)
		return false;
	n = info.nr_func_info;
	fi = xcalloc(n, sizeof(*fi));
	memset(&info, 0, sizeof(info));
	info.nr_func_info = n;
	info.func_info_rec_size = sizeof(*fi);
	info.func_info = (__u64)(unsigned long)fi;
	len = sizeof(info);
	if (!bpf_prog_get_info_by_fd(bpf_program__fd(prog), &info, &len))
		btf = btf__load_from_kernel_by_id(info.btf_id);
	for (i = 0; btf && i < n && !found; i++) {
		const struct btf_type *t = btf__type_by_id(btf, fi[i].type_id);
		const char *name = t ? btf__name_by_offset(btf, t->name_off) : NULL;

		found = name && strcmp(name, SCHED_CTL_KICK_HOOK) == 0;
	}
	btf__free(btf);
	free(fi);
	return found;
}

int scx_concsched_attach_kick(struct sched_ctl *c, struct bpf_program *prog)
{
	const char *target = SCHED_CTL_KICK_HOOK;
	struct kick_bpf *k;
	int err;

	if (c->nr_kicks >= SCHED_CTL_MAX_KICKS) {
		log_err("too many probe programs to kick (max %d)", SCHED_CTL_MAX_KICKS);
		return -E2BIG;
	}
	/* A program without cs_sched_commit() gets the kick on its exit (the
	 * first design): it works, but a thread parked inside that fexit
	 * blocks the kicks of the other threads on its CPU. */
	if (!prog_has_kick_hook(prog)) {
		target = bpf_program__name(prog);
		log_debug("kick: %s does not call cs_sched_commit(); kicking on its exit", target);
	}
	k = kick_bpf__open();
	if (!k)
		return -errno;
	err = scx_concsched_share_maps(c, k->obj);
	if (err)
		goto fail;
	err = bpf_program__set_attach_target(k->progs.cs_kick, bpf_program__fd(prog), target);
	if (err)
		goto fail;
	err = kick_bpf__load(k);
	if (err) {
		log_err("cannot load the fexit kick for %s: %s", bpf_program__name(prog),
			strerror(-err));
		goto fail;
	}
	err = kick_bpf__attach(k);
	if (err) {
		log_err("cannot attach the fexit kick to %s: %s", bpf_program__name(prog),
			strerror(-err));
		goto fail;
	}
	c->kicks[c->nr_kicks++] = k;
	scx_concsched_guard(c);
	return 0;
fail:
	kick_bpf__destroy(k);
	return err;
}

int scx_concsched_add_point(struct sched_ctl *c, int pid, const char *binary, const char *symbol,
			    uint32_t *index)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo);
	struct bpf_link *l;
	int err;

	/* Attached by the scheduler's handle; the caller's target sets the
	 * point's policy (its site key is the target's). */
	if (c->owner)
		return scx_concsched_add_point(c->owner, pid, binary, symbol, index);
	if (!c->point_kick) {
		err = scx_concsched_attach_kick(c, c->skel->progs.cs_func_commit);
		if (err)
			return err;
		c->point_kick = true;
	}
	if (c->nr_points + 1 >= SCHED_CTL_MAX_POINTS) {
		log_err("too many function points (max %d)", SCHED_CTL_MAX_POINTS / 2);
		return -E2BIG;
	}
	/* Two links per point; its index counts points, not links. */
	uo.func_name = symbol;
	uo.bpf_cookie = (__u64)(c->nr_points / 2);
	/* The commit first: the kernel runs a uprobe's consumers newest
	 * first, so cs_func_point marks and cs_func_commit then parks. */
	l = bpf_program__attach_uprobe_opts(c->skel->progs.cs_func_commit, pid, binary, 0, &uo);
	if (!l) {
		err = -errno;
		log_err("cannot attach a uprobe to %s in %s: %s", symbol, binary, strerror(-err));
		return err;
	}
	c->points[c->nr_points++] = l;
	l = bpf_program__attach_uprobe_opts(c->skel->progs.cs_func_point, pid, binary, 0, &uo);
	if (!l) {
		err = -errno;
		log_err("cannot attach a uprobe to %s in %s: %s", symbol, binary, strerror(-err));
		return err;
	}
	*index = (uint32_t)(c->nr_points / 2);
	c->points[c->nr_points++] = l;
	scx_concsched_guard(c);
	return 0;
}

int scx_concsched_set_active(struct sched_ctl *c, bool active)
{
	struct cs_sched_cfg cfg;

	sched_cfg_read(c, &cfg);
	cfg.active = active;
	return sched_cfg_write(c, &cfg);
}

int scx_concsched_set_serial(struct sched_ctl *c, enum cs_serial_mode mode, uint64_t seed)
{
	struct cs_sched_cfg cfg;
	int err;

	sched_cfg_read(c, &cfg);
	cfg.serial = mode;
	cfg.seed = seed;
	err = sched_cfg_write(c, &cfg);
	if (!err)
		c->skel->bss->tgts[c->target].rand_state = 0; /* reseed on next draw */
	return err;
}

int scx_concsched_set_site(struct sched_ctl *c, uint64_t site, const struct cs_site_policy *sp)
{
	__u64 key = CS_SITE_TKEY(site, c->target);

	return bpf_map__update_elem(c->skel->maps.cs_site_policy, &key, sizeof(key), sp,
				    sizeof(*sp), 0);
}

int scx_concsched_clear_site(struct sched_ctl *c, uint64_t site)
{
	__u64 key = CS_SITE_TKEY(site, c->target);
	int err = bpf_map__delete_elem(c->skel->maps.cs_site_policy, &key, sizeof(key), 0);

	return err == -ENOENT ? 0 : err;
}

/* Userspace's fields of one thread's control entry, written in place by
 * the syscall program cs_thread_set (created if absent: a thread userspace
 * names before its first point). Never a read-modify-write of the whole
 * entry from here: it would put back the BPF side's fields as they were
 * when read, and a park or release in between would be lost. */
static int sched_thread_set(struct sched_ctl *c, struct cs_thread_set_args *args)
{
	/* A syscall program's context is written back into ctx_in. */
	LIBBPF_OPTS(bpf_test_run_opts, ro, .ctx_in = args, .ctx_size_in = sizeof(*args));
	int err;

	err = bpf_prog_test_run_opts(bpf_program__fd(c->skel->progs.cs_thread_set), &ro);
	if (err) {
		log_debug("setting thread %u failed: %s", args->tid, strerror(-err));
		return err;
	}
	return args->err;
}

int scx_concsched_thread_next(struct sched_ctl *c, uint32_t tid, enum cs_action act,
			      uint64_t delay_ns)
{
	struct cs_thread_set_args args = {
		.tid = tid,
		.what = CS_THREAD_SET_NEXT,
		.next_action = act,
		.next_delay_ns = delay_ns,
		.target = c->target,
	};

	return sched_thread_set(c, &args);
}

int scx_concsched_set_prio(struct sched_ctl *c, uint32_t tid, uint32_t prio)
{
	struct cs_thread_set_args args = {
		.tid = tid, .what = CS_THREAD_SET_PRIO, .prio = prio, .target = c->target
	};

	return sched_thread_set(c, &args);
}

/* Release tid, or (tid 0) every parked thread of target (CS_TARGET_ALL:
 * of every target). */
static int sched_release_run(struct sched_ctl *c, uint32_t tid, uint32_t reason, uint32_t target)
{
	struct cs_release_args args = { .tid = tid, .reason = reason, .target = target };
	/* A syscall program's context is written back into ctx_in. */
	LIBBPF_OPTS(bpf_test_run_opts, ro, .ctx_in = &args, .ctx_size_in = sizeof(args));
	int err;

	err = bpf_prog_test_run_opts(bpf_program__fd(c->skel->progs.cs_release), &ro);
	if (err) {
		log_debug("release of tid %u failed: %s", tid, strerror(-err));
		return err;
	}
	return (int)args.released;
}

int scx_concsched_release(struct sched_ctl *c, uint32_t tid)
{
	return sched_release_run(c, tid, CS_REL_USER, c->target);
}

int scx_concsched_thread(struct sched_ctl *c, uint32_t tid, struct cs_thread_ctl *out)
{
	return bpf_map__lookup_elem(c->skel->maps.cs_thread_ctl, &tid, sizeof(tid), out,
				    sizeof(*out), 0);
}

int scx_concsched_parked(struct sched_ctl *c, uint32_t *tids, int max)
{
	struct bpf_map *m = c->skel->maps.cs_thread_ctl;
	struct cs_thread_ctl tc;
	__u32 key, next;
	int n = 0;
	void *prev = NULL;

	while (bpf_map__get_next_key(m, prev, &next, sizeof(next)) == 0) {
		key = next;
		prev = &key;
		if (bpf_map__lookup_elem(m, &key, sizeof(key), &tc, sizeof(tc), 0))
			continue;
		if (tc.target != c->target ||
		    (tc.state != CS_TS_PARKED && tc.state != CS_TS_DELAYED))
			continue;
		if (n < max)
			tids[n] = key;
		n++;
	}
	return n;
}

/* Which of a map's entries belong to target t (the key, its value). */
typedef bool (*map_entry_of_fn)(const void *key, const void *val, uint32_t t);

static bool site_of_target(const void *key, const void *val, uint32_t t)
{
	(void)val;
	return CS_SITE_KEY_TARGET(*(const __u64 *)key) == t;
}

static bool thread_of_target(const void *key, const void *val, uint32_t t)
{
	(void)key;
	return ((const struct cs_thread_ctl *)val)->target == t;
}

static bool proc_of_target(const void *key, const void *val, uint32_t t)
{
	(void)key;
	return *(const __u32 *)val == t;
}

/* Delete target t's entries of a hash map: the keys first, then the
 * deletes (a key deleted under get_next_key restarts the walk). */
static void map_clear_target(struct bpf_map *m, size_t key_size, size_t val_size,
			     map_entry_of_fn of, uint32_t t)
{
	char key[16], next[16], *keys = NULL;
	size_t n = 0, cap = 0, i;
	void *val = xcalloc(1, val_size);
	void *prev = NULL;

	while (bpf_map__get_next_key(m, prev, next, key_size) == 0) {
		memcpy(key, next, key_size);
		prev = key;
		if (bpf_map__lookup_elem(m, key, key_size, val, val_size, 0) || !of(key, val, t))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 64;
			keys = xrealloc(keys, cap * key_size);
		}
		memcpy(keys + n++ * key_size, key, key_size);
	}
	for (i = 0; i < n; i++)
		bpf_map__delete_elem(m, keys + i * key_size, key_size, 0);
	free(keys);
	free(val);
}

void scx_concsched_reset(struct sched_ctl *c)
{
	struct bpf_map *tmap = c->skel->maps.cs_thread_ctl;
	struct cs_sched_cfg cfg;
	struct cs_thread_ctl tc;
	__u32 cpu, tid, zero = 0;

	map_clear_target(c->skel->maps.cs_site_policy, sizeof(__u64), sizeof(struct cs_site_policy),
			 site_of_target, c->target);
	map_clear_target(tmap, sizeof(__u32), sizeof(struct cs_thread_ctl), thread_of_target,
			 c->target);
	map_clear_target(c->skel->maps.cs_sched_targets, sizeof(__u32), sizeof(__u32),
			 proc_of_target, c->target);
	/* A kick slot left by a park of this target that never happened (an
	 * array: zero it); another target's may be in use right now. */
	for (cpu = 0; cpu < c->skel->rodata->nr_cpus; cpu++) {
		if (bpf_map__lookup_elem(c->skel->maps.cs_sched_kicking, &cpu, sizeof(cpu), &tid,
					 sizeof(tid), 0) ||
		    !tid)
			continue;
		if (!bpf_map__lookup_elem(tmap, &tid, sizeof(tid), &tc, sizeof(tc), 0) &&
		    tc.target != c->target)
			continue;
		bpf_map__update_elem(c->skel->maps.cs_sched_kicking, &cpu, sizeof(cpu), &zero,
				     sizeof(zero), 0);
	}
	sched_cfg_read(c, &cfg);
	cfg.points = 0;
	sched_cfg_write(c, &cfg);
	c->skel->bss->tgts[c->target].thread_seq = 0;
	c->skel->bss->tgts[c->target].all_parked_key = 0;
}

int scx_concsched_poll(struct sched_ctl *c, int timeout_ms, sched_note_fn fn, void *ctx)
{
	int n;

	c->note_fn = fn;
	c->note_ctx = ctx;
	n = ring_buffer__poll(c->notes, timeout_ms);
	if (n == -EINTR)
		return 0;
	return n;
}

int scx_concsched_notes_fd(struct sched_ctl *c)
{
	return ring_buffer__epoll_fd(c->notes);
}

unsigned scx_concsched_rescue_ms(const struct sched_ctl *c)
{
	return (unsigned)(c->skel->rodata->starve_ns / 1000000ULL);
}

void scx_concsched_stats(struct sched_ctl *c, struct cs_sched_stats *out)
{
	struct cs_sched_shared sh = { 0 };
	__u32 key = c->target;

	*out = c->skel->bss->stats[c->target];
	/* Releases and the parked count are shared with the kick objects. */
	if (bpf_map__lookup_elem(c->skel->maps.cs_sched_shared_map, &key, sizeof(key), &sh,
				 sizeof(sh), 0) == 0) {
		out->releases = sh.releases;
		out->event_releases = sh.event_releases;
		out->park_cancels = sh.park_cancels;
		out->nr_parked = sh.nr_parked > 0 ? (__u64)sh.nr_parked : 0;
	}
}

uint64_t scx_concsched_kicks(struct sched_ctl *c)
{
	uint64_t sum = c->kicks_total;
	int i;

	for (i = 0; i < c->nr_kicks; i++)
		sum += c->kicks[i]->bss->kicks;
	return sum;
}

bool scx_concsched_exited(struct sched_ctl *c)
{
	return __atomic_load_n(&c->skel->bss->uei.kind, __ATOMIC_ACQUIRE) != 0;
}

int scx_concsched_exit_kind(struct sched_ctl *c)
{
	return (int)c->skel->bss->uei.kind;
}

/* include/linux/sched/ext.h: enum scx_exit_kind */
static const char *sched_exit_kind_name(int64_t kind)
{
	switch (kind) {
	case 1:
		return "done";
	case 64:
		return "unregistered";
	case 65:
		return "unregistered by BPF";
	case 66:
		return "unregistered by sysrq";
	case 1024:
		return "error";
	case 1025:
		return "BPF error";
	case 1026:
		return "runnable task stall";
	default:
		return "exit";
	}
}

void scx_concsched_print_exit(struct sched_ctl *c, FILE *f)
{
	typeof(c->skel->bss->uei) *u = &c->skel->bss->uei;

	if (!u->kind || c->exit_printed)
		return;
	fprintf(f, "concsched: scheduler exit: %s (kind %lld, code %lld)%s%s%s%s\n",
		sched_exit_kind_name(u->kind), (long long)u->kind, (long long)u->exit_code,
		u->reason[0] ? ": " : "", u->reason, u->msg[0] ? ": " : "", u->msg);
	c->exit_printed = true;
	/* An error exit (1024 and up): the kernel's debug dump, which says
	 * where every CPU and every waiting thread was (cs_dump_task adds
	 * our state of each), so that an ejection can be explained. */
	if (u->kind >= 1024 && c->skel->bss->uei_dump[0]) {
		const char *d = c->skel->bss->uei_dump;
		size_t n = strnlen(d, sizeof(c->skel->bss->uei_dump));

		fprintf(f, "concsched: the kernel's debug dump of that exit:\n%.*s%s", (int)n, d,
			n && d[n - 1] != '\n' ? "\n" : "");
		fprintf(f, "concsched: end of the debug dump\n");
	}
}

void scx_concsched_quiesce(struct sched_ctl *c)
{
	if (!c || !c->skel)
		return;
	scx_concsched_set_active(c, false);
	if (!scx_concsched_exited(c))
		sched_release_run(c, 0, CS_REL_TEARDOWN, c->target);
}

void scx_concsched_detach(struct sched_ctl *c)
{
	uint64_t t0;
	int i;

	if (!c || c->detached)
		return;
	c->detached = true;
	if (c->skel && c->skel->bss) {
		scx_concsched_quiesce(c);
		/* The scheduler goes: every target's threads go on. */
		if (!c->owner && !scx_concsched_exited(c))
			sched_release_run(c, 0, CS_REL_TEARDOWN, CS_TARGET_ALL);
		c->ejected = scx_concsched_exited(c);
	}
	for (i = 0; i < c->nr_points; i++)
		bpf_link__destroy(c->points[i]);
	c->nr_points = 0;
	c->kicks_total = scx_concsched_kicks(c);
	for (i = 0; i < c->nr_kicks; i++) {
		struct bpf_prog_info info = { 0 };
		__u32 len = sizeof(info);

		/* A kick the trampoline skipped is a park that did not happen
		 * (bpf/sched_point.bpf.h): worth a debug line. */
		if (!bpf_prog_get_info_by_fd(bpf_program__fd(c->kicks[i]->progs.cs_kick), &info,
					     &len) &&
		    info.recursion_misses)
			log_debug(
				"kick %d: %llu kicks skipped by the trampoline (recursion misses)",
				i, (unsigned long long)info.recursion_misses);
		kick_bpf__destroy(c->kicks[i]);
	}
	c->nr_kicks = 0;
	if (c->owner)
		return; /* the scheduler is the owner's */
	/* Unregistering waits for the kernel's disable work, so the exit
	 * info is filled in when this returns. */
	t0 = now_ns();
	if (c->guard_fd >= 0)
		close(c->guard_fd);
	c->guard_fd = -1;
	bpf_link__destroy(c->ops_link);
	c->ops_link = NULL;
	log_debug("scheduler: unregister %.1f ms", (now_ns() - t0) / 1e6);
}

bool scx_concsched_ejected(struct sched_ctl *c)
{
	return c->ejected;
}

/* Another target's handle: its threads let go, its kicks and ring buffer
 * gone, its entries forgotten; the scheduler stays. */
static void scx_concsched_target_close(struct sched_ctl *c)
{
	uint32_t t = c->target;

	scx_concsched_detach(c);
	if (c->guard_fd >= 0)
		close(c->guard_fd);
	bpf_map__delete_elem(c->skel->maps.cs_sched_notes_of, &t, sizeof(t), 0);
	ring_buffer__free(c->notes);
	close(c->notes_fd);
	scx_concsched_reset(c);
	c->owner->target_used[t] = false;
	free(c);
}

void scx_concsched_close(struct sched_ctl *c)
{
	if (!c)
		return;
	if (c->owner) {
		scx_concsched_target_close(c);
		return;
	}
	scx_concsched_detach(c);
	/* A kernel ejection is always news; our own unregistration only
	 * with --verbose. */
	if (c->skel && c->skel->bss && !c->exit_printed && (c->ejected || log_verbose))
		scx_concsched_print_exit(c, stderr);
	rescue_stop(c);
	ring_buffer__free(c->notes);
	scx_concsched_bpf__destroy(c->skel);
	free(c);
}
