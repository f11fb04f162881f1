// SPDX-License-Identifier: GPL-2.0
/*
 * kick — the fexit half of the synchronous park (KERNEL.md Q3a).
 *
 * sched_ctl loads one copy of this object per BPF program that calls
 * cs_sched_point() (the synchronization uprobes, the scheduler's function
 * points) and attaches cs_kick as fexit to that program's subprogram
 * cs_sched_kick_hook(), which cs_sched_commit() calls at the end of the
 * program with preemption disabled when the point marked the current
 * thread (state *_PENDING in cs_thread_ctl). The fexit calls
 * scx_bpf_kick_cpu(self, SCX_KICK_PREEMPT); the thread is preempted as soon
 * as the probe program enables preemption again, still inside the uprobe
 * handler, so it executes no user instruction past the probe;
 * scx_concsched's ops.enqueue then parks it. A uprobe program cannot do
 * this itself: it may call no scx kfunc. It must not be preempted in here:
 * the trampoline's per-CPU recursion counter of this program would stay
 * taken while the thread is parked, and the kick of every other thread on
 * that CPU would be skipped (bpf/sched_point.bpf.h).
 *
 * It also carries out releases a CS_ACT_RELEASE point asked for (another
 * thread's event lets parked threads go): mark them released and kick
 * their CPUs, whose dispatch brings them home.
 *
 * It does not decide anything: the point did.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "sched_point.bpf.h"

char _license[] SEC("license") = "GPL";

__u64 kicks;

static long cs_kick_release_each(struct bpf_map *map, __u32 *tid, struct cs_thread_ctl *tc,
				 __u32 *target)
{
	/* Every parked thread of the releasing thread's target: another
	 * target's threads are another run's. */
	if (tc->target == *target && cs_release_mark(tc, CS_REL_EVENT))
		scx_bpf_kick_cpu(tc->cpu, SCX_KICK_PREEMPT);
	return 0;
}

static __always_inline void cs_kick_release(__u32 tid, __u32 target)
{
	struct cs_thread_ctl *tc;

	if (!tid) {
		bpf_for_each_map_elem(&cs_thread_ctl, cs_kick_release_each, &target, 0);
		return;
	}
	tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	if (tc && tc->target == target && cs_release_mark(tc, CS_REL_EVENT))
		scx_bpf_kick_cpu(tc->cpu, SCX_KICK_PREEMPT);
}

SEC("fexit")
int cs_kick(void *ctx)
{
	struct cs_thread_ctl *tc;
	__u32 tid = (__u32)bpf_get_current_pid_tgid(), release_tid, cpu, *slot;
	__u64 state;

	tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	if (!tc)
		return 0;
	if (tc->release_req) {
		release_tid = tc->release_req_tid;
		tc->release_req = 0;
		cs_kick_release(release_tid, tc->target);
	}
	state = tc->state;
	if (state != CS_TS_PARK_PENDING && state != CS_TS_DELAY_PENDING &&
	    state != CS_TS_YIELD_PENDING)
		return 0;
	__sync_fetch_and_add(&kicks, 1);
	/* Tell ops.enqueue that the preemption coming is this kick's
	 * (preemption is off until the probe program's commit ends). */
	cpu = bpf_get_smp_processor_id();
	slot = bpf_map_lookup_elem(&cs_sched_kicking, &cpu);
	if (slot)
		*slot = tid;
	scx_bpf_kick_cpu(cpu, SCX_KICK_PREEMPT);
	return 0;
}
