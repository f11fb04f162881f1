// SPDX-License-Identifier: GPL-2.0
/*
 * Access probes (issue 7 items 2-3): one uprobe.multi program attached at
 * the file offsets of load/store instructions chosen by the site finder.
 * The attach cookie indexes access_sites, the per-site operand decode
 * (struct cs_access_site); from the registers in pt_regs the program
 * computes the effective address the instruction is about to access
 * (base + index * scale + disp, or instruction address + disp when
 * rip-relative) and, for threads of a target process (access_tgids),
 * counts the hit per site and records (thread, site, address, R/W, size)
 * in the access_events ring buffer; a full ring buffer is counted as a
 * drop, never waited on.
 *
 * alloc_enter/alloc_exit follow malloc, calloc and realloc of the target
 * (entry: size and call site; return: block) so userspace can name a
 * shared heap block by its allocation site. access_bare is an empty
 * program for the benchmark's baseline.
 *
 * Two output modes, chosen before load:
 *  - record_events (concsched sites --shared): struct cs_access_event in
 *    access_events, batched;
 *  - run_events (concsched run --access, strategy map): a struct cs_event
 *    (op CS_OP_READ / CS_OP_WRITE / CS_OP_RW) in cs_sync_events, the ring
 *    buffer of the synchronization probes whose fd userspace shares before
 *    load, so accesses and synchronization of one thread arrive in program
 *    order in one stream. The access is then a decision point of the
 *    scheduler: cs_sched_point() (bpf/sched_point.bpf.h, maps shared with
 *    the scheduler) may park the thread right here, before the access
 *    executes; userspace attaches the fexit kick to access_hit. Layout of
 *    such an event: obj = effective address, site = probe address, arg =
 *    user stack pointer, seq = the site's index in the decode table (the
 *    cookie), nlocks = size | CS_ACC_* flags << 8, gen = 0.
 *
 * It does not follow fs/gs-relative operands (the site finder never
 * selects them) and does not tell stack from heap (userspace does, from
 * the recorded stack pointer).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "concsched_abi.h"
#include "sched_point.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Whether to write ring-buffer events (else only per-site counters). */
const volatile bool record_events = true;
/* Whether to write struct cs_event into cs_sync_events and call the
 * scheduler's decision point (concsched run). */
const volatile bool run_events = false;
/* run_events: each site's first steer_cap hits of a run are decision
 * points, later ones only 1 in steer_sample (0: no cap); the others go on
 * at once and count as CS_ASTAT_UNSTEERED (issue 12: bounded cost). */
const volatile __u64 steer_cap = 0;
const volatile __u32 steer_sample = 64;
/* run_events: the probe cap (0: none). Each thread's first probe_cap hits
 * of a site in a run are probed; its later ones write no event and are no
 * decision point. A site closes once two threads went past their cap there
 * (both were seen at length), or after PROBE_CLOSE_FACTOR * probe_cap hits
 * in all (one hot thread): then no hit of it is probed any more, the site
 * counts once in CS_ASTAT_CAPPED and userspace takes its uprobe away for
 * the rest of the run (the trap is the cost: userspace/kernel/
 * access_probes.c, access_probes_shed). All by count, so a replay sees the
 * same points; the uprobe's removal only saves time. */
const volatile __u64 probe_cap = 0;
#define PROBE_CLOSE_FACTOR 4
/* run_events, with a probe cap: the run's budget of hits (0: none). The
 * cap bounds each site, not the run: a program with many hot sites (a
 * compressor's loops) still trapped hundreds of thousands of times a
 * run, each site closing on its own (issue 32). Once the run's hits at
 * its access sites, probed or not, pass probe_budget, every site with
 * more than probe_cap / PROBE_HOT_DIVISOR hits in the run closes at its
 * next hit, so the hot ones close together and lose their uprobes in one
 * change; the others are probed on until they pass that too, a bar that
 * falls as the run's hits grow: at k budgets, probe_cap / (k *
 * PROBE_HOT_DIVISOR), so the sites that warm up one after the other
 * later in the run (an estimation run probes thousands) close sooner,
 * and the coldest, where a one-off shared access lives, last. By count,
 * as the cap. */
const volatile __u64 probe_budget = 0;
#define PROBE_HOT_DIVISOR 8
/* run_events: the last 1/SYNC_RING_SHARE of cs_sync_events is kept for
 * the synchronization probes' events (access_run_event). */
#define SYNC_RING_SHARE 4

/* max_entries of access_sites and site_hits are set by userspace to the
 * number of sites before load. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cs_access_site);
} access_sites SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} site_hits SEC(".maps");

/* The generation of each site's live link: the attach cookie carries the
 * site's index (low 32 bits) and the generation of its link (high 32). A
 * site moved to a new link (access_probes_shed) is briefly in two, and
 * only the hits through the link of site_gen count. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} site_gen SEC(".maps");

/* The probe cap, per site: threads past their cap there, and whether the
 * site is closed (non-zero); per (site, thread): its hits. */
struct probe_cap_site {
	__u64 capped_threads;
	__u64 closed;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct probe_cap_site);
} site_cap SEC(".maps");

/* The run's hits at its access sites (the probe budget). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} run_hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, __u64); /* site << 32 | tid */
	__type(value, __u64);
} thread_hits SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, __u32); /* tgid */
	__type(value, __u8);
} access_tgids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 << 20);
} access_events SEC(".maps");

/* The synchronization probes' ring buffer (probes/sync.bpf.c): userspace
 * reuses its fd in run_events mode, else shrinks it to one page. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} cs_sync_events SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CS_ASTAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} access_stats SEC(".maps");

static __always_inline void access_stat(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&access_stats, &slot);

	if (v)
		(*v)++;
}

/* ctx reads must have constant offsets (the verifier rejects a computed
 * one, and clang turns a switch into exactly that), so copy the general
 * registers to the stack in pt_regs order and index the copy. */
struct access_regs {
	__u64 r[CS_REG_SP + 1];
};

static __always_inline void access_regs_load(struct access_regs *g, struct pt_regs *r)
{
	g->r[CS_REG_R15] = r->r15;
	g->r[CS_REG_R14] = r->r14;
	g->r[CS_REG_R13] = r->r13;
	g->r[CS_REG_R12] = r->r12;
	g->r[CS_REG_BP] = r->bp;
	g->r[CS_REG_BX] = r->bx;
	g->r[CS_REG_R11] = r->r11;
	g->r[CS_REG_R10] = r->r10;
	g->r[CS_REG_R9] = r->r9;
	g->r[CS_REG_R8] = r->r8;
	g->r[CS_REG_AX] = r->ax;
	g->r[CS_REG_CX] = r->cx;
	g->r[CS_REG_DX] = r->dx;
	g->r[CS_REG_SI] = r->si;
	g->r[CS_REG_DI] = r->di;
	g->r[CS_REG_ORIG_AX] = 0;
	g->r[CS_REG_IP] = 0;
	g->r[CS_REG_CS] = 0;
	g->r[CS_REG_FLAGS] = 0;
	g->r[CS_REG_SP] = r->sp;
}

static __always_inline __u64 access_reg(const struct access_regs *g, __u8 reg)
{
	if (reg > CS_REG_SP)
		return 0;
	return g->r[reg];
}

/* run_events mode: the access as a thread-model event, and a decision
 * point (may mark the thread for a park; access_commit parks it). */
static __always_inline void access_run_event(struct pt_regs *ctx, __u64 id, __u32 idx,
					     const struct cs_access_site *site, __u64 ip, __u64 ea,
					     bool steer)
{
	__u32 tid = (__u32)id, flags;
	struct cs_event *e;
	__u64 avail, ring;
	__u16 op;

	if ((site->flags & (CS_ACC_READ | CS_ACC_WRITE)) == (CS_ACC_READ | CS_ACC_WRITE))
		op = CS_OP_RW;
	else if (site->flags & CS_ACC_WRITE)
		op = CS_OP_WRITE;
	else
		op = CS_OP_READ;
	if (steer) {
		flags = cs_sched_point(tid, ip, op, ea);
	} else {
		flags = 0;
		access_stat(CS_ASTAT_UNSTEERED);
	}
	/* The last part of the ring is the synchronization probes': past
	 * it an access event is dropped, unless its thread parks here (the
	 * controller must see that one). A lost access only hides races;
	 * a lost lock, unlock or create orders nothing, and the race
	 * analysis then reports accesses it did order (issue 32: with
	 * libsqlite3 probed, 93% of the sync events were lost to the
	 * accesses filling the ring). */
	ring = bpf_ringbuf_query(&cs_sync_events, BPF_RB_RING_SIZE);
	if (!(flags & CS_EV_PARKED) &&
	    bpf_ringbuf_query(&cs_sync_events, BPF_RB_AVAIL_DATA) > ring - ring / SYNC_RING_SHARE) {
		access_stat(CS_ASTAT_DROPPED);
		return;
	}
	e = bpf_ringbuf_reserve(&cs_sync_events, sizeof(*e), 0);
	if (!e) {
		access_stat(CS_ASTAT_DROPPED);
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->obj = ea;
	e->site = ip;
	e->arg = ctx->sp;
	e->pid = id >> 32;
	e->tid = tid;
	e->seq = idx;
	e->op = op;
	e->flags = (__u16)flags;
	e->cpu = bpf_get_smp_processor_id();
	e->nlocks = (__u32)site->size | (__u32)site->flags << 8;
	e->gen = 0;
	e->exit_code = 0;
	/* As the sync probes: batch, but a parked thread's event (the
	 * controller must decide now) and a filling buffer wake it. */
	avail = bpf_ringbuf_query(&cs_sync_events, BPF_RB_AVAIL_DATA);
	bpf_ringbuf_submit(e, avail > (1 << 20) || (flags & CS_EV_PARKED) ? BPF_RB_FORCE_WAKEUP
									  : BPF_RB_NO_WAKEUP);
	access_stat(CS_ASTAT_EVENTS);
}

/* The run's hits at its access sites, this one counted (0: no budget). */
static __always_inline __u64 probe_budget_hits(void)
{
	__u32 zero = 0;
	__u64 *h;

	if (!probe_budget)
		return 0;
	h = bpf_map_lookup_elem(&run_hits, &zero);
	return h ? __sync_fetch_and_add(h, 1) + 1 : 0;
}

/* The probe cap: is this hit (thread tid at site idx, the site's n-th of
 * the run, the run's total-th) past it? Closes the site when its rule, or
 * the spent budget, says so. */
static __always_inline bool probe_capped(__u32 idx, __u32 tid, __u64 n, __u64 total)
{
	struct probe_cap_site *cs = bpf_map_lookup_elem(&site_cap, &idx);
	__u64 key = (__u64)idx << 32 | tid, one = 1, *tn, k;
	bool close = n > PROBE_CLOSE_FACTOR * probe_cap;
	bool hot = total > probe_budget && n * PROBE_HOT_DIVISOR * total > probe_cap * probe_budget;

	if (!cs || cs->closed)
		return true;
	tn = bpf_map_lookup_elem(&thread_hits, &key);
	if (tn) {
		k = __sync_fetch_and_add(tn, 1) + 1;
	} else {
		/* A full table: the thread is not followed, so not probed. */
		if (bpf_map_update_elem(&thread_hits, &key, &one, BPF_NOEXIST) &&
		    !bpf_map_lookup_elem(&thread_hits, &key))
			return true;
		k = 1;
	}
	if (k == probe_cap + 1 && __sync_fetch_and_add(&cs->capped_threads, 1) + 1 >= 2)
		close = true;
	if (close || hot) {
		if (__sync_fetch_and_add(&cs->closed, 1) == 0) {
			access_stat(CS_ASTAT_CAPPED);
			if (!close)
				access_stat(CS_ASTAT_BUDGET);
		}
		return true;
	}
	return k > probe_cap;
}

static __always_inline int access_hit_body(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ip, ea, *hits, cookie, n = 0;
	__u32 tgid = id >> 32, idx, *gen;
	struct cs_access_site *site;
	struct cs_access_event *e;
	struct access_regs regs;

	if (!bpf_map_lookup_elem(&access_tgids, &tgid)) {
		access_stat(CS_ASTAT_FILTERED);
		return 0;
	}
	cookie = bpf_get_attach_cookie(ctx);
	idx = (__u32)cookie;
	gen = bpf_map_lookup_elem(&site_gen, &idx);
	if (gen && *gen != (__u32)(cookie >> 32))
		return 0; /* the other link of a site being moved */
	site = bpf_map_lookup_elem(&access_sites, &idx);
	if (!site)
		return 0;
	ip = bpf_get_func_ip(ctx);
	ea = (__u64)site->disp;
	if (site->flags & CS_ACC_RIP)
		ea += ip;
	access_regs_load(&regs, ctx);
	if (site->base != CS_REG_NONE)
		ea += access_reg(&regs, site->base);
	if (site->index != CS_REG_NONE)
		ea += access_reg(&regs, site->index) * site->scale;
	access_stat(CS_ASTAT_HITS);
	hits = bpf_map_lookup_elem(&site_hits, &idx);
	if (hits)
		n = __sync_fetch_and_add(hits, 1) + 1;
	if (run_events) {
		bool steer =
			!steer_cap || n <= steer_cap || (steer_sample && n % steer_sample == 0);

		if (probe_cap && probe_capped(idx, (__u32)id, n, probe_budget_hits())) {
			access_stat(CS_ASTAT_UNPROBED);
			return 0;
		}

		/* A point that marked this thread parks in access_commit,
		 * after its event is out and before the access executes. */
		access_run_event(ctx, id, idx, site, ip, ea, steer);
		return 0;
	}
	if (!record_events)
		return 0;
	e = bpf_ringbuf_reserve(&access_events, sizeof(*e), 0);
	if (!e) {
		access_stat(CS_ASTAT_DROPPED);
		return 0;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->addr = ea;
	e->ip = ip;
	e->sp = ctx->sp;
	e->pid = tgid;
	e->tid = (__u32)id;
	e->site = idx;
	e->flags = site->flags;
	e->size = site->size;
	e->cpu = (__u16)bpf_get_smp_processor_id();
	bpf_ringbuf_submit(e, 0);
	access_stat(CS_ASTAT_EVENTS);
	return 0;
}

/* The frame of access_hit (the register copy alone is 160 bytes) lives on
 * the per-CPU BPF private stack, which the next thread to hit a probe on
 * that CPU reuses: a thread must never be preempted inside it (guest oopses,
 * docs/kernel.md "parking inside a BPF program"; probes/sync.bpf.c has the
 * same rule). So the body runs with preemption disabled ... */
SEC("uprobe.multi")
int access_hit(struct pt_regs *ctx)
{
	bpf_preempt_disable();
	access_hit_body(ctx);
	bpf_preempt_enable();
	return 0;
}

/* ... and the park is a program of its own with a tiny frame on the
 * thread's kernel stack, attached to the same sites before access_hit so
 * that it runs after it (uprobe consumers run newest first;
 * userspace/kernel/access_probes.c). Only concsched run attaches it. */
SEC("uprobe.multi")
int access_commit(struct pt_regs *ctx)
{
	cs_sched_commit();
	return 0;
}

/* ---- heap allocations: name heap blocks by allocation site ---------- */

struct alloc_req {
	__u64 size;
	__u64 caller;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 8192);
	__type(key, __u32); /* tid */
	__type(value, struct alloc_req);
} alloc_pending SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} alloc_events SEC(".maps");

/* Entry of malloc/calloc/realloc (cookie: enum cs_alloc_fn): remember the
 * requested size and the call site (the return address on the stack). */
SEC("uprobe.multi")
int alloc_enter(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct alloc_req req = {};

	if (!bpf_map_lookup_elem(&access_tgids, &tgid))
		return 0;
	switch (bpf_get_attach_cookie(ctx)) {
	case CS_ALLOC_MALLOC:
		req.size = ctx->di;
		break;
	case CS_ALLOC_CALLOC:
		req.size = ctx->di * ctx->si;
		break;
	case CS_ALLOC_REALLOC:
		req.size = ctx->si;
		break;
	default:
		return 0;
	}
	bpf_probe_read_user(&req.caller, sizeof(req.caller), (void *)ctx->sp);
	bpf_map_update_elem(&alloc_pending, &tid, &req, BPF_ANY);
	return 0;
}

/* Return of the same: the block it handed out. */
SEC("uretprobe.multi")
int alloc_exit(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)id;
	struct alloc_req *req = bpf_map_lookup_elem(&alloc_pending, &tid);
	struct cs_alloc_event *e;

	if (!req)
		return 0;
	if (ctx->ax) {
		e = bpf_ringbuf_reserve(&alloc_events, sizeof(*e), 0);
		if (e) {
			e->ts_ns = bpf_ktime_get_ns();
			e->addr = ctx->ax;
			e->size = req->size;
			e->caller = req->caller;
			e->pid = id >> 32;
			e->tid = tid;
			bpf_ringbuf_submit(e, 0);
			access_stat(CS_ASTAT_ALLOCS);
		} else {
			access_stat(CS_ASTAT_ALLOC_DROPPED);
		}
	}
	bpf_map_delete_elem(&alloc_pending, &tid);
	return 0;
}

/* Baseline for tools/bench/access_cost.sh: the cost of the uprobe itself
 * (trap, single-step, program dispatch) on the same instructions. Never
 * attached by concsched. */
SEC("uprobe.multi")
int access_bare(struct pt_regs *ctx)
{
	return 0;
}
