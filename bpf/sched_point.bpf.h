/* SPDX-License-Identifier: GPL-2.0 */
/*
 * sched_point.bpf.h — the probe-side half of pause / resume / delay.
 *
 * Every BPF program that observes a decision point of the target (the
 * synchronization uprobes in probes/, the function points of the scheduler
 * object) calls
 *
 *	__u32 flags = cs_sched_point(tid, site, op, obj);
 *
 * at the point, from the uprobe program itself. It consults the policy maps
 * below and, if the thread must stop here, marks it in cs_thread_ctl
 * (state *_PENDING). It returns CS_EV_PARKED / CS_EV_DELAYED (a
 * yield counts as delayed) or 0, for the probe to OR into its event flags.
 * A CS_ACT_RELEASE site lets the thread run on and asks the kick to release
 * parked threads: a release driven by another thread's event.
 *
 * Why a mark and not a direct action: a uprobe program (BPF_PROG_TYPE_KPROBE)
 * may not call any sched_ext kfunc (KERNEL.md Q3d). The program ends with
 * cs_sched_commit(), after its event is out: if the point marked the
 * thread, it disables preemption and calls cs_sched_kick_hook(), a tiny
 * subprogram on which sched_ctl attaches the fexit kick (sched/kick.bpf.c,
 * one per program that calls cs_sched_point). The kick calls
 * scx_bpf_kick_cpu(self, SCX_KICK_PREEMPT); the self-IPI arrives at once but
 * cannot preempt yet, so the thread is preempted at bpf_preempt_enable(),
 * back in the uprobe program, still inside the uprobe handler, and the
 * scheduler's ops.enqueue parks it. So the thread executes no instruction
 * past the probe until released (KERNEL.md "How (a) actually works").
 *
 * Why not simply let the self-IPI preempt the thread inside the fexit
 * program (the first design): the BPF trampoline guards every fexit
 * program with a per-CPU recursion counter, held while the program runs.
 * A thread parked inside the kick kept its CPU's counter taken, and the
 * trampoline skipped the kick of every other thread that reached a point
 * on that CPU until it was released ("recursion misses"): those threads
 * returned CS_EV_PARKED and ran on. Serial mode hit this in most runs
 * (docs/sched.md, "Serial mode and synchronous parks"). Preempted with
 * preemption enabled again only in the uprobe program, which has no such
 * counter, a parked thread holds nothing per-CPU of BPF's.
 *
 * The request lives in the thread's own entry, not in a per-CPU slot: a
 * BPF program can be preempted between the point and the commit, and
 * another thread's point on the same CPU must not consume the request.
 *
 * Contract for the probe programs:
 *  - call it at most once per probe hit, from the uprobe/uretprobe program
 *    whose BPF program you give to sched_ctl (scx_concsched_attach_kick);
 *  - end that program with cs_sched_commit() on every path that may have
 *    called cs_sched_point, after the event is emitted (the park happens
 *    there: an event emitted later would reach userspace only after the
 *    release);
 *  - tid is the kernel tid (bpf_get_current_pid_tgid() & 0xffffffff);
 *    site the user address of the action (ABI: cs_event.site); op an
 *    enum cs_op; obj the lock/object address;
 *  - it costs one task read, one array and two hash lookups when the
 *    scheduler is active, and one task read when it is not;
 *  - share the maps (scx_concsched_share_maps) before loading the object.
 *
 * The maps are defined here so the probe object and the scheduler object
 * both contain them; userspace creates them once and shares the fds with
 * bpf_map__reuse_fd() before each object loads (KERNEL.md "Recommended
 * design consequences"). Names are the contract: do not rename.
 */
#ifndef CONCSCHED_SCHED_POINT_BPF_H
#define CONCSCHED_SCHED_POINT_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "concsched_abi.h"

#ifndef CS_SCHED_MAX_THREADS
#define CS_SCHED_MAX_THREADS 8192
#endif
#ifndef CS_SCHED_MAX_SITES
#define CS_SCHED_MAX_SITES 4096
#endif
#define CS_SCHED_EXT_POLICY 7 /* SCHED_EXT, include/uapi/linux/sched.h */

/* tid -> struct cs_thread_ctl */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_SCHED_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct cs_thread_ctl);
} cs_thread_ctl SEC(".maps");

/* site -> struct cs_site_policy */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_SCHED_MAX_SITES);
	__type(key, __u64);
	__type(value, struct cs_site_policy);
} cs_site_policy SEC(".maps");

/* [target] = struct cs_sched_shared: counters of the scheduler and the kicks */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CS_SCHED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct cs_sched_shared);
} cs_sched_shared_map SEC(".maps");

/* [cpu] = tid of the thread whose kick runs on that CPU (sched/kick.bpf.c
 * writes it with preemption disabled, ops.enqueue consumes it): a marked
 * thread parks only when its own kick preempts it, after its event. */
#ifndef CS_SCHED_MAX_CPUS
#define CS_SCHED_MAX_CPUS 1024
#endif
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CS_SCHED_MAX_CPUS);
	__type(key, __u32);
	__type(value, __u32);
} cs_sched_kicking SEC(".maps");

/* [target] = struct cs_sched_cfg */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CS_SCHED_MAX_TARGETS);
	__type(key, __u32);
	__type(value, struct cs_sched_cfg);
} cs_sched_cfg_map SEC(".maps");

/* tgid -> target (CS_SCHED_MAX_TARGETS): written by userspace for the
 * process it launches, before it enters SCHED_EXT; a process it forks
 * inherits its parent's (the scheduler's ops.enable adds it). A process
 * missing here is target 0's. */
#ifndef CS_SCHED_MAX_PROCS
#define CS_SCHED_MAX_PROCS 4096
#endif
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_SCHED_MAX_PROCS);
	__type(key, __u32);
	__type(value, __u32);
} cs_sched_targets SEC(".maps");

static __always_inline __u32 cs_target_of_pid(__u32 pid)
{
	__u32 *t = bpf_map_lookup_elem(&cs_sched_targets, &pid);

	return t ? *t & (CS_SCHED_MAX_TARGETS - 1) : 0;
}

static __always_inline struct cs_sched_cfg *cs_cfg_of(__u32 target)
{
	__u32 key = target & (CS_SCHED_MAX_TARGETS - 1);

	return bpf_map_lookup_elem(&cs_sched_cfg_map, &key);
}

static __always_inline struct cs_sched_shared *cs_shared_of(__u32 target)
{
	__u32 key = target & (CS_SCHED_MAX_TARGETS - 1);

	return bpf_map_lookup_elem(&cs_sched_shared_map, &key);
}

/* The action this point takes for this thread, from the one-shot request
 * (userspace: "this thread, at its next point") or the site policy. */
static __always_inline __u32 cs_point_action(struct cs_thread_ctl *tc, __u32 tid, __u64 site,
					     __u16 op, __u64 *delay_ns, __u32 *release_tid)
{
	struct cs_site_policy *sp;
	__u64 key = CS_SITE_TKEY(site, tc->target), hit;
	__u32 act;

	act = tc->next_action;
	if (act != CS_ACT_NONE) {
		tc->next_action = CS_ACT_NONE;
		*delay_ns = tc->next_delay_ns;
		return act == CS_ACT_RELEASE ? CS_ACT_NONE : act;
	}
	sp = bpf_map_lookup_elem(&cs_site_policy, &key);
	if (!sp) {
		key = CS_SITE_TKEY(CS_SITE_OP_KEY(op), tc->target);
		sp = bpf_map_lookup_elem(&cs_site_policy, &key);
	}
	if (!sp || sp->action == CS_ACT_NONE)
		return CS_ACT_NONE;
	if (sp->tid && sp->tid != tid)
		return CS_ACT_NONE;
	hit = __sync_fetch_and_add(&sp->hits, 1) + 1;
	if (hit <= sp->skip)
		return CS_ACT_NONE;
	if (sp->count && hit > sp->skip + sp->count)
		return CS_ACT_NONE;
	*delay_ns = sp->delay_ns;
	*release_tid = sp->release_tid;
	return sp->action;
}

/* PARKED/DELAYED -> RELEASED, or a pending park cancelled, for whoever
 * releases (the scheduler's syscall program and timers, the kick after a
 * CS_ACT_RELEASE point).
 * Only the caller that wins the state change counts; it must then kick
 * tc->cpu (SCX_KICK_PREEMPT) so that CPU's dispatch moves the thread
 * home — which this header cannot do: uprobe programs include it. */
static __always_inline bool cs_release_mark(struct cs_thread_ctl *tc, __u32 reason)
{
	struct cs_sched_shared *sh;
	__u64 from = tc->state, now;

	/* Marked at its point but not parked yet (the kick is on its way):
	 * cancel the park; ops.enqueue then queues it like a yield. */
	if (from == CS_TS_PARK_PENDING || from == CS_TS_DELAY_PENDING) {
		if (__sync_val_compare_and_swap(&tc->state, from, CS_TS_RUN) != from)
			return false;
		sh = cs_shared_of(tc->target);
		if (sh) {
			__sync_fetch_and_add(&sh->releases, 1);
			__sync_fetch_and_add(&sh->park_cancels, 1);
			if (reason == CS_REL_EVENT)
				__sync_fetch_and_add(&sh->event_releases, 1);
		}
		return true;
	}
	if (from != CS_TS_PARKED && from != CS_TS_DELAYED)
		return false;
	if (__sync_val_compare_and_swap(&tc->state, from, CS_TS_RELEASED) != from)
		return false;
	now = bpf_ktime_get_ns();
	tc->release_ts = now;
	tc->release_reason = reason;
	tc->park_ns_total += now - tc->park_ts;
	sh = cs_shared_of(tc->target);
	if (sh) {
		__sync_fetch_and_sub(&sh->nr_parked, 1);
		__sync_fetch_and_add(&sh->parked_set, CS_PARKED_SET_LEAVE);
		__sync_fetch_and_add(&sh->nr_released, 1);
		__sync_fetch_and_add(&sh->releases, 1);
		if (reason == CS_REL_EVENT)
			__sync_fetch_and_add(&sh->event_releases, 1);
	}
	return true;
}

/* A new thread's entry is built here rather than on the stack: the
 * callers' frames and cs_sched_point's must fit 512 bytes together on a
 * kernel without the private stack. Per CPU: every caller runs with
 * preemption disabled. Not shared between objects. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cs_thread_ctl);
} cs_thread_ctl_new SEC(".maps");

static __always_inline struct cs_thread_ctl *cs_thread_ctl_get(__u32 tid)
{
	struct cs_thread_ctl *tc, *init;
	__u32 zero = 0;

	tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	if (tc)
		return tc;
	init = bpf_map_lookup_elem(&cs_thread_ctl_new, &zero);
	if (!init)
		return NULL;
	__builtin_memset(init, 0, sizeof(*init));
	init->pid = bpf_get_current_pid_tgid() >> 32;
	init->target = cs_target_of_pid(init->pid);
	bpf_map_update_elem(&cs_thread_ctl, &tid, init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&cs_thread_ctl, &tid);
}

/* Mark the thread at its point for action act (park, delay or yield):
 * the scheduler applies it at the thread's next enqueue. Returns the
 * event flags. */
static __always_inline __u32 cs_point_mark(struct cs_thread_ctl *tc, __u64 site, __u32 op,
					   __u64 obj, __u32 act, __u64 delay_ns)
{
	__u64 now = bpf_ktime_get_ns();

	tc->probe_ts = now;
	tc->site = site;
	tc->obj = obj;
	tc->op = op;
	tc->action = act;
	tc->cpu = bpf_get_smp_processor_id();
	if (act == CS_ACT_DELAY) {
		tc->deadline_ns = now + delay_ns;
		tc->state = CS_TS_DELAY_PENDING;
	} else if (act == CS_ACT_PARK) {
		tc->state = CS_TS_PARK_PENDING;
	} else {
		tc->state = CS_TS_YIELD_PENDING;
	}
	return act == CS_ACT_PARK ? CS_EV_PARKED : CS_EV_DELAYED;
}

/* Global, not inlined: the verifier checks a global function once, apart
 * from its callers, where an inlined copy is checked again at every call
 * and along every path to it (the sync probe calls it at eight places:
 * 45% of its load's verification, docs/perf.md). Scalars only in and out,
 * as a global function requires. */
__noinline __u32 cs_sched_point(__u32 tid, __u64 site, __u32 op, __u64 obj)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct cs_sched_cfg *cfg;
	struct cs_thread_ctl *tc;
	__u32 act, release_tid = 0;
	__u64 state;
	__u64 delay_ns = 0;

	/* Only threads the scheduler governs can be parked; anything else
	 * would keep its mark and stop at an unrelated preemption. */
	if (BPF_CORE_READ(task, policy) != CS_SCHED_EXT_POLICY)
		return 0;
	tc = cs_thread_ctl_get(tid);
	if (!tc)
		return 0;
	cfg = cs_cfg_of(tc->target);
	if (!cfg || !cfg->active)
		return 0;
	__sync_fetch_and_add(&cfg->points, 1);
	tc->points++;
	state = tc->state;
	/* A mark whose kick never turned into a park (the scheduler went
	 * away in between) is stale: forget it. */
	if (state == CS_TS_PARK_PENDING || state == CS_TS_DELAY_PENDING ||
	    state == CS_TS_YIELD_PENDING)
		tc->state = CS_TS_RUN;
	else if (state != CS_TS_RUN)
		return 0;
	act = cs_point_action(tc, tid, site, op, &delay_ns, &release_tid);
	if (act == CS_ACT_RELEASE) {
		tc->release_req_tid = release_tid;
		tc->release_req = 1;
		return 0;
	}
	if (act == CS_ACT_NONE || act > CS_ACT_YIELD)
		return 0;
	return cs_point_mark(tc, site, op, obj, act, delay_ns);
}

/* A new thread's start, before its first instruction (CS_OP_START), from
 * the fork tracepoint in its creator's context: the point is the child's,
 * tid its tid, site its start routine, policy its scheduling policy (the
 * child inherits SCHED_EXT). A park or delay marks the child; having never
 * run it takes no kick: the scheduler parks it at its first enqueue
 * (wake_up_new_task's), which comes after this tracepoint. A yield is
 * nothing here (a new thread queues anyway). Same return as
 * cs_sched_point. */
static __always_inline __u32 cs_sched_start_point(__u32 tid, __u64 site, __u32 policy)
{
	struct cs_sched_cfg *cfg;
	struct cs_thread_ctl *tc;
	__u32 act, release_tid = 0;
	__u64 delay_ns = 0;

	if (policy != CS_SCHED_EXT_POLICY)
		return 0;
	tc = cs_thread_ctl_get(tid);
	if (!tc)
		return 0;
	cfg = cs_cfg_of(tc->target);
	if (!cfg || !cfg->active || tc->state != CS_TS_RUN)
		return 0;
	__sync_fetch_and_add(&cfg->points, 1);
	tc->points++;
	act = cs_point_action(tc, tid, site, CS_OP_START, &delay_ns, &release_tid);
	if (act != CS_ACT_PARK && act != CS_ACT_DELAY)
		return 0;
	return cs_point_mark(tc, site, CS_OP_START, tid, act, delay_ns);
}

/* The attach point of the fexit kick (sched/kick.bpf.c, sched_ctl attaches
 * it by this name). Called only with preemption disabled: the kick's
 * self-IPI then cannot preempt the thread inside the fexit program, where
 * the trampoline's per-CPU recursion counter would stay taken while it is
 * parked. Not inlined: the trampoline needs a function to attach to; the
 * asm keeps the call. */
static __noinline __attribute__((unused)) int cs_sched_kick_hook(__u32 tid)
{
	asm volatile("" ::: "memory");
	return tid != 0;
}

/* End of a program that called cs_sched_point: if the point marked this
 * thread (park, delay, yield) or asked for a release, run the kick now.
 * The thread is preempted in bpf_preempt_enable() below and ops.enqueue
 * parks it; it resumes here once released. */
static __always_inline void cs_sched_commit(void)
{
	struct cs_sched_cfg *cfg;
	struct cs_thread_ctl *tc;
	__u32 tid = (__u32)bpf_get_current_pid_tgid();
	__u64 state;

	tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	if (!tc)
		return;
	cfg = cs_cfg_of(tc->target);
	if (!cfg || !cfg->active)
		return;
	state = tc->state;
	if (!tc->release_req && state != CS_TS_PARK_PENDING && state != CS_TS_DELAY_PENDING &&
	    state != CS_TS_YIELD_PENDING)
		return;
	bpf_preempt_disable();
	cs_sched_kick_hook(tid);
	bpf_preempt_enable();
}

#endif /* CONCSCHED_SCHED_POINT_BPF_H */
