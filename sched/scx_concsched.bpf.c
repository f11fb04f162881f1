// SPDX-License-Identifier: GPL-2.0
/*
 * scx_concsched — the sched_ext scheduler that steers the target's threads.
 *
 * It governs only SCHED_EXT tasks (SCX_OPS_SWITCH_PARTIAL): the launcher puts
 * the target in that class, everything else stays on the fair scheduler.
 * Target threads run from one vtime-ordered shared DSQ; the key decides the
 * order: FIFO by default, seeded random or priority (PCT) in serial mode,
 * where at most one target thread runs at any moment system-wide.
 *
 * Pause / resume / delay (KERNEL.md Q3, Q4): a decision point
 * (bpf/sched_point.bpf.h) marks the thread and the fexit kick
 * (sched/kick.bpf.c) preempts it inside the uprobe handler. Because the
 * task is then migration-disabled and often alone on its CPU, the scheduler
 * needs SCX_OPS_ENQ_MIGRATION_DISABLED and SCX_OPS_ENQ_LAST to see that
 * enqueue at all. ops.enqueue parks the marked task in the private PARKED
 * DSQ and arms a per-thread bpf_timer: at the delay's absolute deadline
 * (probe timestamp + n, BPF_F_TIMER_ABS) for a delay, at the watchdog bound
 * for a park. A release (the SEC("syscall") program cs_release run by
 * userspace, a timer, teardown) marks the thread RELEASED and kicks its CPU;
 * that CPU's ops.dispatch moves it from PARKED back onto its own local DSQ
 * (the task is pinned there). Whenever every runnable target thread is
 * parked, a CS_NOTE_ALL_PARKED note with the parked set goes to userspace.
 *
 * Targets (run -j N): each process tree it governs belongs to a target
 * (bpf/sched_point.bpf.h, cs_sched_targets), with its own run queue,
 * serial token, configuration, counters, site policies and notes, so N
 * runs are steered at once, each as if alone: serial mode runs one thread
 * per target, and the all-parked note counts a target's threads only.
 *
 * It does not decide *which* points stop a thread or whom to release:
 * that is policy, in userspace (userspace/kernel/policy.c). It does not balance
 * load or care about fairness beyond FIFO.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sched_point.bpf.h"

char _license[] SEC("license") = "GPL";

#define CLOCK_MONOTONIC				1
#define BPF_STRUCT_OPS(name, args...)		SEC("struct_ops/" #name) BPF_PROG(name, ##args)
#define BPF_STRUCT_OPS_SLEEPABLE(name, args...) SEC("struct_ops.s/" #name) BPF_PROG(name, ##args)
#define CS_DSQ_PARKED				2
#define CS_DSQ_SHARED				16 /* + target: its run queue */
#define CS_TMASK				(CS_SCHED_MAX_TARGETS - 1)
#define CS_MAX_CPUS				256
#define CS_WATCHDOG_DFL_NS			1000000000ULL
#define CS_SLICE_DFL_NS				5000000ULL
/* serial_owner value while a dispatch is claiming the token */
#define CS_PF_EXITING	  0x00000004 /* include/linux/sched.h */
#define CS_TOKEN_CLAIM	  0xffffffffULL
#define CS_TOKEN_STALE_NS (100ULL * 1000 * 1000)
/* how often a released thread not yet home is checked (cs_release_thread) */
#define CS_RELEASE_RETRY_NS (5ULL * 1000 * 1000)

const volatile __u32 nr_cpus = 1; /* set by userspace before load */
/* A thread that waits this long to run, not parked, is noted as starved
 * (cs_starve_timer_fn); 0: never. Set by userspace before load. */
const volatile __u64 starve_ns = 0;

struct cs_sched_stats stats[CS_SCHED_MAX_TARGETS];
struct cs_target_state tgts[CS_SCHED_MAX_TARGETS];
__u64 vtime_seq;
__u32 dispatch_rr; /* which target's queue a dispatch looks at first */

/* Exit info copied in ops.exit, printed by userspace (scx_concsched_print_exit). */
struct {
	__s64 kind;
	__s64 exit_code;
	char reason[128];
	char msg[1024];
} uei;

/* The kernel's debug dump of an error exit (its CPUs, their tasks and
 * what cs_dump / cs_dump_task add), copied in ops.exit. */
#define CS_EXIT_DUMP_LEN 32768
char uei_dump[CS_EXIT_DUMP_LEN];

struct cs_park_timer {
	struct bpf_timer timer;
	__u32 tid;
	__u32 gen;
	__u32 retry; /* armed by a release: only checks the thread got home */
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_SCHED_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct cs_park_timer);
} cs_park_timers SEC(".maps");

struct cs_task {
	__u8 runnable;
	__u8 target;	   /* set in ops.enable */
	__u8 starve_noted; /* a starved note went out for this wait */
	__u8 pad[5];
	__u64 wait_ns; /* runnable and off its CPU since (0: running or asleep) */
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cs_task);
} cs_task_store SEC(".maps");

/* Notes go to their target's ring buffer: target 0's is this one,
 * another target's is made by userspace (scx_concsched_target) and put in
 * cs_sched_notes_of; a target without one drops its notes (counted). */
struct cs_notes_rb {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 256 * 1024);
} cs_sched_notes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, CS_SCHED_MAX_TARGETS);
	__type(key, __u32);
	__array(values, struct cs_notes_rb);
} cs_sched_notes_of SEC(".maps") = {
	.values = { [0] = &cs_sched_notes },
};

static __always_inline __u64 cs_slice(__u32 t)
{
	struct cs_sched_cfg *cfg = cs_cfg_of(t);

	return cfg && cfg->slice_ns ? cfg->slice_ns : CS_SLICE_DFL_NS;
}

static __always_inline __u32 cs_serial(__u32 t)
{
	struct cs_sched_cfg *cfg = cs_cfg_of(t);

	return cfg ? cfg->serial : CS_SERIAL_OFF;
}

static __always_inline __u64 cs_watchdog_ns(__u32 t)
{
	struct cs_sched_cfg *cfg = cs_cfg_of(t);

	return cfg && cfg->watchdog_ns ? cfg->watchdog_ns : CS_WATCHDOG_DFL_NS;
}

static __always_inline struct cs_target_state *cs_tgt(__u32 t)
{
	return &tgts[t & CS_TMASK];
}

static __always_inline struct cs_sched_stats *cs_stats(__u32 t)
{
	return &stats[t & CS_TMASK];
}

/* The target of a task the scheduler governs (ops.enable noted it). */
static __always_inline __u32 cs_task_target(struct task_struct *p)
{
	struct cs_task *ts = bpf_task_storage_get(&cs_task_store, p, 0, 0);

	return ts ? ts->target & CS_TMASK : cs_target_of_pid(p->tgid);
}

static __always_inline struct cs_sched_note *cs_note_reserve(__u32 t)
{
	struct cs_sched_note *n = NULL;
	__u32 key = t & CS_TMASK;
	void *rb;

	rb = bpf_map_lookup_elem(&cs_sched_notes_of, &key);
	if (rb)
		n = bpf_ringbuf_reserve(rb, sizeof(*n), 0);
	if (!n)
		__sync_fetch_and_add(&cs_stats(t)->notes_dropped, 1);
	return n;
}

/* Random queue key of a thread's n-th entry into the run queue: a hash of
 * (seed, thread ordinal, n), not a shared stream, so the same seed gives
 * the same order whatever the timing of other threads' wakeups. */
static __always_inline __u64 cs_rand_key(struct cs_thread_ctl *tc, __u32 t)
{
	struct cs_sched_cfg *cfg = cs_cfg_of(t);
	__u64 x = cfg && cfg->seed ? cfg->seed : 0x9e3779b97f4a7c15ULL;

	if (tc)
		x ^= ((__u64)tc->ordinal << 32) | tc->nenq;
	else
		x ^= __sync_fetch_and_add(&cs_tgt(t)->rand_state, 1);
	/* splitmix64 finalizer */
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Wake every idle CPU but except (-1: none) so its dispatch runs. */
static __always_inline void cs_kick_idle_cpus(s32 except)
{
	__u32 i;

	for (i = 0; i < CS_MAX_CPUS; i++) {
		if (i >= nr_cpus)
			break;
		if ((s32)i != except)
			scx_bpf_kick_cpu(i, SCX_KICK_IDLE);
	}
}

/* Serial mode: tid took target t's token: its run on the token starts. */
static __always_inline void cs_token_taken(struct task_struct *p, __u32 t)
{
	struct cs_target_state *ts = cs_tgt(t);

	ts->serial_owner_exec0 = BPF_CORE_READ(p, se.sum_exec_runtime);
	ts->serial_owner_yield = 0;
}

/* Serial mode: the thread gives its target's token up, if it holds it. */
static __always_inline void cs_serial_token_drop(struct task_struct *p, __u32 t)
{
	struct cs_target_state *ts = cs_tgt(t);
	__u64 tid = p->pid;

	if (ts->serial_owner != tid)
		return;
	ts->serial_owner_running = 0;
	ts->serial_owner_preempted = 0;
	if (__sync_val_compare_and_swap(&ts->serial_owner, tid, 0) == tid)
		cs_kick_idle_cpus(-1);
}

static __always_inline void cs_note_resumed(struct task_struct *p, struct cs_thread_ctl *tc,
					    __u64 now)
{
	struct cs_sched_stats *st = cs_stats(tc->target);
	struct cs_sched_note *n;

	n = cs_note_reserve(tc->target);
	if (!n)
		return;
	n->ts_ns = now;
	n->kind = CS_NOTE_RESUMED;
	n->target = tc->target;
	n->tid = p->pid;
	n->reason = tc->release_reason;
	n->nr_threads = st->nr_threads;
	n->nr_runnable = st->nr_runnable;
	n->parked_ns = now - tc->probe_ts;
	if (tc->release_reason == CS_REL_DELAY)
		n->late_ns = now - tc->deadline_ns;
	else
		n->late_ns = now - tc->release_ts;
	n->site = tc->site;
	n->park_ip = tc->park_ip;
	n->to_park_ns = tc->park_ts - tc->probe_ts;
	bpf_ringbuf_submit(n, 0);
	__sync_fetch_and_add(&st->notes, 1);
}

/* ---- starvation: a thread that cannot get a CPU ------------------------
 *
 * The scheduler is loaded in partial mode, below the fair class: a CPU
 * that fair-class work keeps busy runs none of our threads, and the ext
 * deadline server does not change that (measured on the 7.2 guest kernel:
 * two fair-class hogs on the two vCPUs starved a target past a 20 s stall
 * timeout; docs/sched.md "Starvation"). A thread that can run only there
 * (pinned, or migration-disabled: an exiting thread preempted inside our
 * exit tracepoint program, 55-attach in the flake hunt) waits until the
 * kernel's watchdog ejects the scheduler, and the run is lost. So a timer
 * looks at every thread some times per stall timeout, and one that has
 * waited starve_ns to run (not parked: a park is ours, its watchdog bounds
 * it) is noted to userspace once per wait, which moves it to the fair
 * class (scx_concsched.c, rescue_thread): it runs on, unsteered, instead
 * of the scheduler being ejected. */
struct cs_starve_timer {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cs_starve_timer);
} cs_starve_timer SEC(".maps");

__u64 starve_armed;

/* Starved notes have a ring of their own, read by a thread of their own
 * (scx_concsched.c, rescue_thread): the controller's loop may be blocked
 * in the very thing that waits for the starved thread (the launcher
 * waits for the target's exec, and an exec starved so). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 64 * 1024);
} cs_starved_rb SEC(".maps");

/* How often the timer looks: six times per starve_ns. */
#define CS_STARVE_CHECKS 6

static long cs_starve_one(struct bpf_map *map, __u32 *key, struct cs_thread_ctl *tc, __u64 *now)
{
	struct task_struct *p;
	struct cs_sched_note *n;
	struct cs_task *ts;
	__u64 state = tc->state, wait;
	__u32 tid = *key;

	if (state != CS_TS_RUN && state != CS_TS_RELEASED)
		return 0;
	p = bpf_task_from_pid(tid);
	if (!p)
		return 0;
	ts = bpf_task_storage_get(&cs_task_store, p, 0, 0);
	wait = ts ? ts->wait_ns : 0;
	if (!wait || ts->starve_noted || *now < wait || *now - wait < starve_ns ||
	    p->policy != CS_SCHED_EXT_POLICY) {
		bpf_task_release(p);
		return 0;
	}
	n = bpf_ringbuf_reserve(&cs_starved_rb, sizeof(*n), 0);
	if (!n)
		__sync_fetch_and_add(&cs_stats(tc->target)->notes_dropped, 1);
	if (n) {
		__builtin_memset(n, 0, sizeof(*n));
		n->ts_ns = *now;
		n->kind = CS_NOTE_STARVED;
		n->target = tc->target;
		n->tid = tid;
		n->parked_ns = *now - wait;
		n->cpu = scx_bpf_task_cpu(p);
		n->dsq_id = BPF_CORE_READ(p, scx.dsq, id);
		n->exiting = !!(p->flags & CS_PF_EXITING);
		bpf_ringbuf_submit(n, 0);
		ts->starve_noted = 1;
		__sync_fetch_and_add(&cs_stats(tc->target)->starved, 1);
	}
	bpf_task_release(p);
	return 0;
}

static int cs_starve_timer_fn(void *map, __u32 *key, struct cs_starve_timer *st)
{
	__u64 now = bpf_ktime_get_ns();

	bpf_for_each_map_elem(&cs_thread_ctl, cs_starve_one, &now, 0);
	bpf_timer_start(&st->timer, starve_ns / CS_STARVE_CHECKS, 0);
	return 0;
}

/* Start the starvation timer, once (from the first ops.enable). */
static __always_inline void cs_starve_arm(void)
{
	struct cs_starve_timer *st;
	__u32 zero = 0;

	if (!starve_ns || starve_armed || __sync_val_compare_and_swap(&starve_armed, 0, 1))
		return;
	st = bpf_map_lookup_elem(&cs_starve_timer, &zero);
	if (!st || bpf_timer_init(&st->timer, &cs_starve_timer, CLOCK_MONOTONIC) ||
	    bpf_timer_set_callback(&st->timer, cs_starve_timer_fn) ||
	    bpf_timer_start(&st->timer, starve_ns / CS_STARVE_CHECKS, 0))
		starve_armed = 0; /* the next ops.enable tries again */
}

/* The thread waits to run from now (runnable, off its CPU), unless it
 * already did. */
static __always_inline void cs_wait_since_now(struct cs_task *ts)
{
	if (ts && !ts->wait_ns) {
		ts->wait_ns = bpf_ktime_get_ns();
		ts->starve_noted = 0;
	}
}

static __always_inline void cs_wait_begin(struct task_struct *p)
{
	cs_wait_since_now(bpf_task_storage_get(&cs_task_store, p, 0, 0));
}

/* It runs, sleeps or leaves: no longer waiting. */
static __always_inline void cs_wait_end(struct task_struct *p)
{
	struct cs_task *ts = bpf_task_storage_get(&cs_task_store, p, 0, 0);

	if (ts)
		ts->wait_ns = 0;
}

/* Is this all-parked state newer than the one last noted? Two checks can
 * see one state: a thread parks and counts itself on one CPU while another
 * thread of the target goes to sleep (ops.quiescent) on the other, and each
 * then sees every runnable thread parked (cs_park lets the token go before
 * it counts, so the next thread can run and sleep in between; a vCPU the
 * host stalls there widens that to milliseconds). Two notes of one state
 * made the release rule release two threads for one round: the second
 * waited for the token, took it as soon as the first lost it mid-step, and
 * ran beside it (14-sched-targets: "overlap 1", the copy's order shifted).
 *
 * A state is the parked set's version (cs_sched_shared.parked_set), read
 * in one load, and it only grows: a check whose version is not above the
 * last noted one is late and sends nothing. Until 2026-11-30 the key was
 * the release count and the parked count read apart (releases << 32 |
 * parked): a check stalled between the two reads, across the release that
 * answered its state, paired the old parked count with the new release
 * count, noted that mixed state (a second note of the round, its thread
 * already released), and the next round's real state, the same pair, was
 * taken for noted: no note, and its park waited for the watchdog (ci58,
 * 11-sched-park's flip under two `make test` at once: 99 user releases, 1
 * watchdog, notes_repeated 1). */
static __always_inline bool cs_all_parked_new(__u32 t, __u64 version)
{
	struct cs_target_state *ts = cs_tgt(t);
	__u64 old;
	int i;

	for (i = 0; i < 4; i++) {
		old = ts->all_parked_key;
		if (version <= old) {
			__sync_fetch_and_add(&cs_stats(t)->notes_repeated, 1);
			return false;
		}
		if (__sync_val_compare_and_swap(&ts->all_parked_key, old, version) == old)
			return true;
	}
	return true;
}

/* Every runnable thread of target t is parked: tell userspace who, so its
 * release rule can pick (DESIGN.md "One run", step 3). Another target's
 * threads do not count: they are another run's. */
static __always_inline void cs_check_all_parked(__u32 t, __u32 parking_tid)
{
	struct task_struct *p;
	struct cs_sched_note *n;
	struct bpf_iter_scx_dsq it;
	struct cs_sched_shared *sh = cs_shared_of(t);
	struct cs_sched_stats *st = cs_stats(t);
	__u32 i = 0;
	__s64 parked;
	__u64 version;

	if (!sh)
		return;
	/* One load: the parked count and its version of one moment. */
	version = *(volatile __u64 *)&sh->parked_set;
	parked = CS_PARKED_SET_COUNT(version);
	if (parked <= 0 || parked < (__s64)st->nr_runnable)
		return;
	n = cs_note_reserve(t);
	if (!n)
		return;
	/* after the reserve: a note the ring could not take is not noted */
	if (!cs_all_parked_new(t, version)) {
		bpf_ringbuf_discard(n, 0);
		return;
	}
	__builtin_memset(n, 0, sizeof(*n));
	n->ts_ns = bpf_ktime_get_ns();
	n->kind = CS_NOTE_ALL_PARKED;
	n->target = t;
	n->nr_parked = parked;
	n->nr_threads = st->nr_threads;
	n->nr_runnable = st->nr_runnable;
	/* ops.enqueue's insert is committed after it returns: the thread
	 * being parked is not in the DSQ yet. */
	if (parking_tid)
		n->tids[i++] = parking_tid;
	bpf_iter_scx_dsq_new(&it, CS_DSQ_PARKED, 0);
	while ((p = bpf_iter_scx_dsq_next(&it))) {
		struct cs_thread_ctl *tc;
		__u32 tid = p->pid;

		tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
		if (!tc || tc->target != t ||
		    (tc->state != CS_TS_PARKED && tc->state != CS_TS_DELAYED) || tid == parking_tid)
			continue;
		if (i >= CS_NOTE_MAX_TIDS)
			break;
		n->tids[i & (CS_NOTE_MAX_TIDS - 1)] = tid;
		i++;
	}
	bpf_iter_scx_dsq_destroy(&it);
	bpf_ringbuf_submit(n, 0);
	__sync_fetch_and_add(&st->notes, 1);
}

/* Serial mode: is target t's token left behind, its holder neither running
 * nor preempted and last seen CS_TOKEN_STALE_NS ago or more? The flags are
 * read first, the holder's timestamp then, the clock last. A holder that
 * starts to run meanwhile writes running = 1, then its timestamp
 * (cs_serial_running): a timestamp read after that is newer than any
 * clock read before it. The clock used to be read first: such a timestamp
 * made the age wrap below zero, a huge unsigned number, and a token taken
 * back from a holder that had just started to run (ci105, 2026-12-02:
 * 12-sched-delay's "serial random: no overlap", overlap 3, serial_preempts
 * 1; traced in a guest loop under host stalls: age 2^64 - 224,850 ns, the
 * holder running 0.2 ms before, the only token taken back in 80 runs).
 * Running is read once more last: what is left is a holder that passes its
 * own token check (cs_serial_running) between that read and the caller's
 * compare-and-swap, a few instructions, after 100 ms of not running. */
static __always_inline bool cs_token_stale(struct cs_target_state *ts)
{
	__u64 seen, now;

	if (ts->serial_owner_running || ts->serial_owner_preempted)
		return false;
	asm volatile("" ::: "memory");
	seen = ts->serial_owner_ts;
	asm volatile("" ::: "memory");
	now = bpf_ktime_get_ns();
	if (now <= seen || now - seen < CS_TOKEN_STALE_NS)
		return false;
	asm volatile("" ::: "memory");
	return !ts->serial_owner_running;
}

/* Is a released thread's wait a lost wakeup? Its CPU is idle and nothing
 * should stop that CPU's dispatch from taking it home: no serial token, or
 * one that is free or stale (cs_dispatch_serial takes a stale one back). */
static __always_inline bool cs_release_stuck(struct cs_thread_ctl *tc)
{
	struct cs_target_state *ts = cs_tgt(tc->target);
	const struct cpumask *idle;
	__u64 owner = ts->serial_owner;
	bool cpu_idle;

	if (cs_serial(tc->target) != CS_SERIAL_OFF && owner != 0 && !cs_token_stale(ts))
		return false;
	idle = scx_bpf_get_idle_cpumask();
	cpu_idle = bpf_cpumask_test_cpu(tc->cpu, idle);
	scx_bpf_put_idle_cpumask(idle);
	return cpu_idle;
}

static int cs_park_timer_fn(void *map, __u32 *key, struct cs_park_timer *t);

#define CS_EINVAL 22

/* Arm tid's timer for deadline (absolute). False if the kernel did not:
 * bpf_timer_init allocates and can fail (a kmalloc from ops.enqueue, with
 * interrupts off), and a timer whose init failed makes every later start
 * fail with -EINVAL, so that is retried here; a start from ops.enqueue is
 * deferred to an irq_work on newer kernels and can fail for memory too.
 * The caller must not leave a thread parked without its timer: nothing
 * else would end the park before the kernel's stall watchdog. */
static __always_inline bool cs_arm_timer(__u32 tid, __u32 gen, __u64 deadline, __u32 retry)
{
	struct cs_park_timer *t, init = {};
	long err;

	t = bpf_map_lookup_elem(&cs_park_timers, &tid);
	if (!t) {
		init.tid = tid;
		bpf_map_update_elem(&cs_park_timers, &tid, &init, BPF_NOEXIST);
		t = bpf_map_lookup_elem(&cs_park_timers, &tid);
		if (!t)
			return false;
	}
	t->tid = tid;
	t->gen = gen;
	t->retry = retry;
	err = bpf_timer_start(&t->timer, deadline, BPF_F_TIMER_ABS);
	if (err == -CS_EINVAL) {
		/* never initialised, or its init failed: (again) now */
		bpf_timer_init(&t->timer, &cs_park_timers, CLOCK_MONOTONIC);
		bpf_timer_set_callback(&t->timer, cs_park_timer_fn);
		err = bpf_timer_start(&t->timer, deadline, BPF_F_TIMER_ABS);
	}
	return err == 0;
}

/* Release and wake the thread's CPU; its dispatch moves it home
 * (cs_release_mark in bpf/sched_point.bpf.h does the state change). The
 * park's timer then checks every CS_RELEASE_RETRY_NS that it got there: a
 * kick that lands while that CPU's dispatch is already failing (the token
 * claimed by another CPU's dispatch for a moment) is lost, and the thread
 * would wait for the next unrelated wakeup (measured: up to the 1 s
 * watchdog of the threads parked behind it). */
static __always_inline bool cs_release_thread(__u32 tid, struct cs_thread_ctl *tc, __u32 reason)
{
	__u64 from = tc->state;

	if (reason == CS_REL_WATCHDOG && from == CS_TS_DELAYED &&
	    bpf_ktime_get_ns() >= tc->deadline_ns &&
	    tc->deadline_ns < tc->park_ts + cs_watchdog_ns(tc->target))
		reason = CS_REL_DELAY;
	if (!cs_release_mark(tc, reason))
		return false;
	if (reason == CS_REL_WATCHDOG) {
		tc->nwatchdog++;
		__sync_fetch_and_add(&cs_stats(tc->target)->watchdog, 1);
	}
	scx_bpf_kick_cpu(tc->cpu, SCX_KICK_PREEMPT);
	if (tc->state == CS_TS_RELEASED)
		cs_arm_timer(tid, tc->park_gen, bpf_ktime_get_ns() + CS_RELEASE_RETRY_NS, 1);
	return true;
}

/* A park's timer: its delay ended or its watchdog fired; once released,
 * the retry that the thread reached its CPU. It may run while the thread
 * parks again (a new generation, the timer re-armed, retry cleared):
 * generation and kind are read first, and a release needs its time due;
 * a timer early by this CPU's clock is re-armed for then, never dropped
 * (a thread left parked for good: measured once in CI). */
static int cs_park_timer_fn(void *map, __u32 *key, struct cs_park_timer *t)
{
	struct cs_thread_ctl *tc;
	__u32 tid = t->tid, gen = t->gen, retry = t->retry;
	__u64 now = bpf_ktime_get_ns(), state, bound;

	tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	if (!tc || tc->park_gen != gen)
		return 0;
	state = tc->state;
	if (retry) {
		/* Home (RUN), or parked again: done. */
		if (state != CS_TS_RELEASED)
			return 0;
		if (cs_release_stuck(tc)) {
			__sync_fetch_and_add(&cs_stats(tc->target)->release_rekicks, 1);
			scx_bpf_kick_cpu(tc->cpu, SCX_KICK_IDLE);
		}
		bpf_timer_start(&t->timer, CS_RELEASE_RETRY_NS, 0);
		return 0;
	}
	if (state != CS_TS_PARKED && state != CS_TS_DELAYED)
		return 0;
	bound = tc->probe_ts + cs_watchdog_ns(tc->target);
	if (state == CS_TS_DELAYED && now >= tc->deadline_ns)
		cs_release_thread(tid, tc, CS_REL_DELAY);
	else if (now >= bound)
		cs_release_thread(tid, tc, CS_REL_WATCHDOG);
	else if (bpf_timer_start(&t->timer, /* not due by this CPU's clock: soon */
				 state == CS_TS_DELAYED && tc->deadline_ns < bound ? tc->deadline_ns
										   : bound,
				 BPF_F_TIMER_ABS)) {
		__sync_fetch_and_add(&cs_stats(tc->target)->timer_errors, 1);
		cs_release_thread(tid, tc, CS_REL_WATCHDOG);
	}
	return 0;
}

/* ops.enqueue of a thread its point marked: park it until released, its
 * delay ends or the watchdog fires, whichever is first. */
static __always_inline bool cs_park(struct task_struct *p, struct cs_thread_ctl *tc, __u64 from,
				    __u64 enq_flags)
{
	__u64 now = bpf_ktime_get_ns(), bound, deadline, to;
	__u32 tid = p->pid, gen, t = tc->target;
	struct cs_sched_shared *sh;
	struct pt_regs *regs;

	bound = tc->probe_ts + cs_watchdog_ns(t);
	to = from == CS_TS_DELAY_PENDING ? CS_TS_DELAYED : CS_TS_PARKED;
	gen = tc->park_gen + 1;
	tc->park_gen = gen;
	tc->park_ts = now;
	tc->release_ts = 0;
	tc->release_reason = CS_REL_NONE;
	tc->cpu = scx_bpf_task_cpu(p);
	regs = (struct pt_regs *)bpf_task_pt_regs(p);
	tc->park_ip = regs ? BPF_CORE_READ(regs, ip) : 0;
	/* A release between the point and here cancelled the park
	 * (cs_release_mark): the thread just runs on. The state is the one
	 * the caller saw pending, never read again here: read again, a
	 * cancel in between (RUN) would be parked anyway and wait for the
	 * watchdog (CI: 11-sched-park.t, event + watchdog releases 101). */
	if (__sync_val_compare_and_swap(&tc->state, from, to) != from)
		return false;
	if (to == CS_TS_DELAYED) {
		deadline = tc->deadline_ns < bound ? tc->deadline_ns : bound;
		tc->ndelays++;
		__sync_fetch_and_add(&cs_stats(t)->delays, 1);
	} else {
		deadline = bound;
		tc->nparks++;
		__sync_fetch_and_add(&cs_stats(t)->parks, 1);
	}
	/* Parked holding the token (cs_stopping kept it across a property
	 * change on the way here): let it go, or nothing else could run. */
	cs_serial_token_drop(p, t);
	sh = cs_shared_of(t);
	if (sh) {
		__sync_fetch_and_add(&sh->nr_parked, 1);
		__sync_fetch_and_add(&sh->parked_set, CS_PARKED_SET_PARK);
	}
	scx_bpf_dsq_insert(p, CS_DSQ_PARKED, cs_slice(t), enq_flags);
	if (!cs_arm_timer(tid, gen, deadline, 0)) {
		/* No timer: released at once (its CPU's dispatch takes it
		 * home once this insert is committed), as if its watchdog
		 * had fired; counted apart. */
		__sync_fetch_and_add(&cs_stats(t)->timer_errors, 1);
		cs_release_thread(tid, tc, CS_REL_WATCHDOG);
		return true;
	}
	cs_check_all_parked(t, tid);
	return true;
}

static __always_inline __u64 cs_vtime_key(struct task_struct *p, struct cs_thread_ctl *tc, __u32 t)
{
	__u64 seq = __sync_fetch_and_add(&vtime_seq, 1);

	if (tc)
		tc->nenq++;
	switch (cs_serial(t)) {
	case CS_SERIAL_RANDOM:
		return cs_rand_key(tc, t);
	case CS_SERIAL_PRIO:
		return ((__u64)(0xffffffffU - (tc ? tc->prio : 0)) << 32) | (seq & 0xffffffffULL);
	default:
		return seq;
	}
}

/* PCT runs the highest-priority runnable thread at every moment (seed
 * 002 / Burckhardt et al.): a thread entering the queue with a higher
 * priority than the running owner preempts it. */
static __always_inline void cs_prio_preempt(struct cs_thread_ctl *tc, __u32 t)
{
	struct cs_target_state *ts = cs_tgt(t);
	__u64 owner = ts->serial_owner;

	if (!tc || cs_serial(t) != CS_SERIAL_PRIO || owner == 0 || owner == CS_TOKEN_CLAIM)
		return;
	if (tc->prio <= ts->serial_owner_prio)
		return;
	ts->serial_owner_yield = owner; /* it gives the token up (cs_stopping) */
	__sync_fetch_and_add(&cs_stats(t)->prio_preempts, 1);
	scx_bpf_kick_cpu(ts->serial_owner_cpu, SCX_KICK_PREEMPT);
}

/* A new thread whose start point marked it (cs_sched_start_point): it
 * parks at its first enqueue without a kick, having never run. */
static __always_inline bool cs_start_marked(struct task_struct *p, u64 wake_flags)
{
	struct cs_thread_ctl *tc;
	__u32 tid = p->pid;

	if (!(wake_flags & SCX_WAKE_FORK))
		return false;
	tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	return tc && tc->op == CS_OP_START &&
	       (tc->state == CS_TS_PARK_PENDING || tc->state == CS_TS_DELAY_PENDING);
}

s32 BPF_STRUCT_OPS(cs_select_cpu, struct task_struct *p, s32 prev_cpu, u64 wake_flags)
{
	__u32 t = cs_task_target(p);
	bool idle = false;
	s32 cpu;

	cpu = scx_bpf_select_cpu_dfl(p, prev_cpu, wake_flags, &idle);
	/* Serial mode must see every wakeup in enqueue (the token); a new
	 * thread marked at its start, its first enqueue (the park). */
	if (idle && cs_serial(t) == CS_SERIAL_OFF && !cs_start_marked(p, wake_flags)) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cs_slice(t), 0);
		__sync_fetch_and_add(&cs_stats(t)->dispatches, 1);
	}
	return cpu;
}

/* Is this enqueue the preemption by the thread's own kick? The kick
 * (sched/kick.bpf.c) notes the tid in its CPU's cs_sched_kicking slot with
 * preemption disabled, so the next enqueue of that thread on this CPU is
 * the one the kick caused. A marked thread enqueued before it reached its
 * kick (its slice ended between the point and the commit, where its event
 * is not out yet) is not parked there: it queues like any thread, stays
 * marked, and parks at its kick when it runs again. */
static __always_inline bool cs_kicked_here(__u32 tid)
{
	__u32 cpu = bpf_get_smp_processor_id(), *slot;

	slot = bpf_map_lookup_elem(&cs_sched_kicking, &cpu);
	if (!slot)
		return true; /* more CPUs than slots: park as soon as enqueued */
	if (*slot != tid)
		return false;
	*slot = 0;
	return true;
}

/* Is the preemption coming on this CPU tid's own kick? (cs_kicked_here
 * without consuming it.) */
static __always_inline bool cs_kick_is(__u32 tid)
{
	__u32 cpu = bpf_get_smp_processor_id(), *slot;

	slot = bpf_map_lookup_elem(&cs_sched_kicking, &cpu);
	return !slot || *slot == tid;
}

void BPF_STRUCT_OPS(cs_enqueue, struct task_struct *p, u64 enq_flags)
{
	struct cs_thread_ctl *tc;
	__u32 tid = p->pid, t = cs_task_target(p);
	__u64 state;
	bool kicked;

	__sync_fetch_and_add(&cs_stats(t)->enqueues, 1);
	tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	/* The token holder taken off its CPU's queue and back (a property
	 * change, a migration) between its dispatch or preemption and its
	 * run: it still holds the token, so it goes back to run next. */
	if (cs_tgt(t)->serial_owner == tid && cs_serial(t) != CS_SERIAL_OFF &&
	    (!tc || tc->state == CS_TS_RUN)) {
		scx_bpf_dsq_insert(p, SCX_DSQ_LOCAL, cs_slice(t), enq_flags | SCX_ENQ_HEAD);
		__sync_fetch_and_add(&cs_stats(t)->dispatches, 1);
		return;
	}
	if (tc) {
		state = tc->state;
		/* Consumed whatever the state: a yield, or a park a release
		 * cancelled after the kick, must not leave the slot set. */
		/* A new thread marked at its start parks at its first
		 * enqueue: it never ran, so no kick is on its way. */
		kicked = cs_kicked_here(tid) || tc->op == CS_OP_START;
		if ((state == CS_TS_PARK_PENDING || state == CS_TS_DELAY_PENDING) && kicked &&
		    cs_park(p, tc, state, enq_flags))
			return;
		if (state == CS_TS_PARKED || state == CS_TS_DELAYED || state == CS_TS_RELEASED) {
			/* re-enqueue while parked (e.g. property change):
			 * stay put, dispatch decides. */
			scx_bpf_dsq_insert(p, CS_DSQ_PARKED, cs_slice(t), enq_flags);
			return;
		}
		if (state == CS_TS_YIELD_PENDING) {
			tc->state = CS_TS_RUN;
			tc->nyields++;
			__sync_fetch_and_add(&cs_stats(t)->yields, 1);
		}
	}
	/* A queued thread holds no token (a yield, or a marked thread
	 * queued before its kick, that kept it across a property change). */
	cs_serial_token_drop(p, t);
	scx_bpf_dsq_insert_vtime(p, CS_DSQ_SHARED + t, cs_slice(t), cs_vtime_key(p, tc, t),
				 enq_flags);
	cs_prio_preempt(tc, t);
	/* A pinned task (migration-disabled inside a probe) can only be
	 * taken by its own CPU's dispatch. */
	if (p->migration_disabled || p->nr_cpus_allowed == 1)
		scx_bpf_kick_cpu(scx_bpf_task_cpu(p), SCX_KICK_IDLE);
}

/* Serial mode: a dispatch that claimed target t's token and found nothing
 * to run gives it back. A released thread's dispatch on another CPU that
 * found the token claimed meanwhile said so (token_wanted, cs_take_token)
 * and may be going idle: wake the other CPUs so theirs runs again. Not
 * this one: its own dispatch just ran (kicking itself would loop). */
static __always_inline void cs_token_return(s32 self, __u32 t)
{
	struct cs_target_state *ts = cs_tgt(t);

	ts->serial_owner = 0;
	if (__sync_lock_test_and_set(&ts->token_wanted, 0))
		cs_kick_idle_cpus(self);
}

/* Take target t's free token for tid. On failure leave word first, then
 * try once more: either this try sees the token free, or the holder's
 * cs_token_return sees the word (both are full barriers). */
static __always_inline bool cs_take_token(__u64 tid, __u32 t)
{
	struct cs_target_state *ts = cs_tgt(t);

	if (__sync_val_compare_and_swap(&ts->serial_owner, 0, tid) == 0)
		return true;
	__sync_lock_test_and_set(&ts->token_wanted, 1);
	return __sync_val_compare_and_swap(&ts->serial_owner, 0, tid) == 0;
}

/* Any target with a released thread not yet home? */
static __always_inline bool cs_any_released(void)
{
	struct cs_sched_shared *sh;
	__u32 t;

	for (t = 0; t < CS_SCHED_MAX_TARGETS; t++) {
		sh = cs_shared_of(t);
		if (sh && sh->nr_released > 0)
			return true;
	}
	return false;
}

/* Move released threads pinned to this CPU home. Returns true if one of a
 * serial target was moved (then only it may run of its target, and this
 * dispatch is done). */
static __always_inline bool cs_dispatch_released(s32 cpu)
{
	struct task_struct *p;
	struct bpf_iter_scx_dsq it;
	bool moved = false;

	if (!cs_any_released())
		return false;
	bpf_iter_scx_dsq_new(&it, CS_DSQ_PARKED, 0);
	while ((p = bpf_iter_scx_dsq_next(&it))) {
		struct cs_target_state *ts;
		struct cs_sched_shared *sh;
		struct cs_thread_ctl *tc;
		__u32 tid = p->pid, t;
		bool serial;

		tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
		if (!tc || tc->state != CS_TS_RELEASED || scx_bpf_task_cpu(p) != cpu)
			continue;
		t = tc->target & CS_TMASK;
		ts = cs_tgt(t);
		serial = cs_serial(t) != CS_SERIAL_OFF;
		if (serial && !cs_take_token(tid, t))
			continue; /* its target's token is taken: another may go */
		if (serial) {
			ts->serial_owner_ts = bpf_ktime_get_ns();
			ts->serial_owner_running = 0;
			cs_token_taken(p, t);
		}
		if (scx_bpf_dsq_move(&it, p, SCX_DSQ_LOCAL, 0)) {
			tc->state = CS_TS_RUN;
			sh = cs_shared_of(t);
			if (sh)
				__sync_fetch_and_sub(&sh->nr_released, 1);
			__sync_fetch_and_add(&cs_stats(t)->dispatches, 1);
			if (serial) {
				moved = true;
				break;
			}
		} else if (serial) {
			cs_token_return(cpu, t);
		}
	}
	bpf_iter_scx_dsq_destroy(&it);
	return moved;
}

/* Serial mode: the head of target t's queue (lowest key) runs next, on
 * this CPU if it may, else on the CPU it is pinned to. Returns true if a
 * thread was moved. */
static __always_inline bool cs_dispatch_serial(s32 cpu, __u32 t)
{
	struct cs_target_state *ts = cs_tgt(t);
	struct task_struct *p;
	struct bpf_iter_scx_dsq it;
	__u64 owner, now = bpf_ktime_get_ns();
	bool moved = false;
	s32 tcpu;

	owner = __sync_val_compare_and_swap(&ts->serial_owner, 0, CS_TOKEN_CLAIM);
	if (owner != 0) {
		/* A token whose holder is not running and has not run for
		 * CS_TOKEN_STALE_NS (it left the queue without stopping)
		 * would stall the target: take it back. If the holder
		 * runs again, cs_serial_running() sends it to the queue. */
		if (!cs_token_stale(ts) ||
		    __sync_val_compare_and_swap(&ts->serial_owner, owner, CS_TOKEN_CLAIM) != owner)
			return false;
		__sync_fetch_and_add(&cs_stats(t)->serial_preempts, 1);
	}
	ts->serial_owner_ts = now;
	ts->serial_owner_running = 0;
	bpf_iter_scx_dsq_new(&it, CS_DSQ_SHARED + t, 0);
	p = bpf_iter_scx_dsq_next(&it);
	if (p) {
		__u32 tid = p->pid;
		__u64 dst = SCX_DSQ_LOCAL;

		tcpu = scx_bpf_task_cpu(p);
		if (tcpu != cpu && (p->migration_disabled || p->nr_cpus_allowed == 1 ||
				    !bpf_cpumask_test_cpu(cpu, p->cpus_ptr)))
			dst = SCX_DSQ_LOCAL_ON | tcpu;
		ts->serial_owner = tid;
		cs_token_taken(p, t);
		if (scx_bpf_dsq_move(&it, p, dst, 0)) {
			__sync_fetch_and_add(&cs_stats(t)->dispatches, 1);
			moved = true;
			if (dst != SCX_DSQ_LOCAL)
				scx_bpf_kick_cpu(tcpu, SCX_KICK_IDLE);
		} else {
			cs_token_return(cpu, t);
		}
	} else {
		cs_token_return(cpu, t);
	}
	bpf_iter_scx_dsq_destroy(&it);
	return moved;
}

/* Released threads first; then the targets' queues, from a different
 * target each time so that none waits behind another's (each target's
 * serial token is its own: two serial targets run one thread each). */
void BPF_STRUCT_OPS(cs_dispatch, s32 cpu, struct task_struct *prev)
{
	__u32 i, t, first;

	if (cs_dispatch_released(cpu))
		return;
	first = dispatch_rr++; /* a race only changes who looks first */
	for (i = 0; i < CS_SCHED_MAX_TARGETS; i++) {
		t = (first + i) & CS_TMASK;
		if (!scx_bpf_dsq_nr_queued(CS_DSQ_SHARED + t))
			continue;
		if (cs_serial(t) != CS_SERIAL_OFF) {
			if (cs_dispatch_serial(cpu, t))
				return;
		} else if (scx_bpf_dsq_move_to_local(CS_DSQ_SHARED + t)) {
			__sync_fetch_and_add(&cs_stats(t)->dispatches, 1);
			return;
		}
	}
}

/* nr_runnable counts a target's threads that are runnable: it goes down
 * only when one sleeps (or leaves, cs_disable). The core also takes a task
 * off its queue and puts it back for a property change
 * (SCX_DEQ_SCHED_CHANGE, e.g. migrate_disable_switch() and migrate_enable()
 * of a thread preempted inside a probe) or a migration, with
 * ops.quiescent/ops.runnable around it; counting those made the all-parked
 * note fire in between, while a marked thread was on its way to its park. */
void BPF_STRUCT_OPS(cs_runnable, struct task_struct *p, u64 enq_flags)
{
	struct cs_task *ts;

	ts = bpf_task_storage_get(&cs_task_store, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!ts)
		return;
	cs_wait_since_now(ts);
	if (ts->runnable)
		return;
	ts->runnable = 1;
	__sync_fetch_and_add(&cs_stats(ts->target)->nr_runnable, 1);
}

void BPF_STRUCT_OPS(cs_quiescent, struct task_struct *p, u64 deq_flags)
{
	struct cs_task *ts;
	__u32 t;

	if (!(deq_flags & SCX_DEQ_SLEEP))
		return;
	cs_wait_end(p);
	t = cs_task_target(p);
	/* Going to sleep: the token goes (cs_stopping left it for here). */
	cs_serial_token_drop(p, t);
	ts = bpf_task_storage_get(&cs_task_store, p, 0, 0);
	if (!ts || !ts->runnable)
		return;
	ts->runnable = 0;
	__sync_fetch_and_sub(&cs_stats(t)->nr_runnable, 1);
	cs_check_all_parked(t, 0);
}

/* docs/STYLE.md compat: the kfunc where it exists (7.x warns about the direct
 * write), the field on older kernels. */
static __always_inline void cs_set_slice(struct task_struct *p, __u64 slice)
{
	if (bpf_ksym_exists(scx_bpf_task_set_slice))
		scx_bpf_task_set_slice(p, slice);
	else
		p->scx.slice = slice;
}

/* ---- vCPU stalls: time the guest did not run ----------------------------
 *
 * A TCG guest's vCPUs are one host thread (-accel tcg,thread=single). On a
 * loaded host that thread is stopped for whole seconds (a 15 ms program
 * took 2.7 s in CI), and the guest clock runs on meanwhile: the core
 * charges the gap to the task that was current on each CPU, to its slice
 * and its se.sum_exec_runtime (update_curr_scx). A serial owner stalled
 * 1.8 s into a 2 s slice so "used up" its slice without running: its slice
 * end let the token go (cs_stopping), it was queued behind the threads it
 * had started, and they ran before it (12-sched-delay.t, "serial fifo: main
 * keeps the token", early 4 with enqueues 5, dispatches 5; reproduced by
 * stopping the qemu process for 2.5 s at random moments: 4 runs in 19;
 * tools/study/sched-stall.t does so).
 * The core charges a running thread at every tick (a few ms) and switch:
 * one charge of CS_STALL_NS or more is a stall, not run time. It does not
 * count as the owner's run on the token, so the slice end it caused keeps
 * the token (the path of a kick that is not the owner's: the owner runs
 * again first, with a new slice), and the owner's run stays bounded by the
 * slice it really ran. Counted as serial_stalls. */
#define CS_STALL_NS (50ULL * 1000 * 1000)

/* The thread current on this CPU when it was last seen (ops.running,
 * ops.tick, ops.stopping), and its se.sum_exec_runtime then. */
struct cs_cpu_seen {
	__u64 pid;
	__u64 sum;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cs_cpu_seen);
} cs_cpu_seen SEC(".maps");

/* The run time the core charged p, current on this CPU, since it was last
 * seen here (0 if it was not), and it is seen now. One charge is the time
 * since the previous one: a tick or less when the CPU ran. (Not a wall
 * clock gap: the core may charge a stall one update later, when a wakeup
 * skipped the clock update of the switch right after it.) */
static __always_inline __u64 cs_charged_since_seen(struct task_struct *p)
{
	__u64 sum = BPF_CORE_READ(p, se.sum_exec_runtime), d = 0;
	struct cs_cpu_seen *seen;
	__u32 zero = 0;

	seen = bpf_map_lookup_elem(&cs_cpu_seen, &zero);
	if (!seen)
		return 0;
	if (seen->pid == (__u64)p->pid && sum > seen->sum)
		d = sum - seen->sum;
	seen->pid = p->pid;
	seen->sum = sum;
	return d;
}

/* p, current on this CPU, was charged a stall of the vCPU: not its run on
 * the token. */
static __always_inline void cs_stall_uncount(struct task_struct *p, __u32 t)
{
	struct cs_target_state *ts = cs_tgt(t);
	__u64 d = cs_charged_since_seen(p), sum;

	if (d < CS_STALL_NS || cs_serial(t) == CS_SERIAL_OFF || ts->serial_owner != (__u64)p->pid)
		return;
	sum = BPF_CORE_READ(p, se.sum_exec_runtime);
	ts->serial_owner_exec0 += d;
	if (ts->serial_owner_exec0 > sum)
		ts->serial_owner_exec0 = sum;
	__sync_fetch_and_add(&cs_stats(t)->serial_stalls, 1);
}

/* Serial mode: the running thread must hold its target's token. One that
 * runs without it (it was running when it entered SCHED_EXT, or kept its
 * CPU across a preemption by a higher class) is sent back to the queue. */
static __always_inline void cs_serial_running(struct task_struct *p, struct cs_thread_ctl *tc,
					      __u32 t)
{
	struct cs_target_state *ts = cs_tgt(t);
	__u64 tid = p->pid, owner;

	if (cs_serial(t) == CS_SERIAL_OFF)
		return;
	owner = __sync_val_compare_and_swap(&ts->serial_owner, 0, tid);
	if (owner == 0)
		cs_token_taken(p, t);
	if (owner == 0 || owner == tid) {
		/* running first, then the timestamp: cs_token_stale */
		ts->serial_owner_running = 1;
		asm volatile("" ::: "memory");
		ts->serial_owner_ts = bpf_ktime_get_ns();
		ts->serial_owner_preempted = 0;
		ts->serial_owner_prio = tc ? tc->prio : 0;
		ts->serial_owner_cpu = scx_bpf_task_cpu(p);
		return;
	}
	/* An exiting thread (it runs no user code any more) is queued by the
	 * core itself, on its CPU's local DSQ (no SCX_OPS_ENQ_EXITING):
	 * sending it back would only have the core queue it again, thousands
	 * of times while the holder runs (measured: 39 and 708 in 2 of 89
	 * runs). Let it finish exiting. */
	if (p->flags & CS_PF_EXITING)
		return;
	__sync_fetch_and_add(&cs_stats(t)->serial_preempts, 1);
	cs_set_slice(p, 0);
	scx_bpf_kick_cpu(scx_bpf_task_cpu(p), SCX_KICK_PREEMPT);
}

void BPF_STRUCT_OPS(cs_running, struct task_struct *p)
{
	struct cs_thread_ctl *tc;
	__u32 tid = p->pid;

	cs_charged_since_seen(p);
	cs_wait_end(p);
	tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	cs_serial_running(p, tc, tc ? tc->target : cs_task_target(p));
	if (!tc || !tc->release_ts)
		return;
	cs_note_resumed(p, tc, bpf_ktime_get_ns());
	tc->release_ts = 0;
}

/* The owner is off its CPU, its serial_owner_ts and serial_owner_preempted
 * written: running goes to 0 last. cs_dispatch_serial's stale test reads
 * running, preempted, then ts, without a lock, from another CPU: cleared
 * first (as it was), running 0 with preempted not yet 1 and the ts of the
 * owner's last ops.running looked like a token left behind, whenever the
 * owner had run 100 ms since (main starting its workers does; after a
 * stall of the vCPU every ts is seconds old), and the other CPU took it
 * while the owner was only being preempted (serial_preempts 1, "early 2"
 * in 1 of 15 runs with 2.5 s host stalls). x86 keeps stores in order; the
 * barrier keeps the compiler from moving them. */
static __always_inline void cs_owner_stopped(struct cs_target_state *ts)
{
	asm volatile("" ::: "memory");
	ts->serial_owner_running = 0;
}

void BPF_STRUCT_OPS(cs_stopping, struct task_struct *p, bool runnable)
{
	struct cs_target_state *ts;
	struct cs_thread_ctl *tc;
	__u32 tid = p->pid, t;

	if (runnable)
		cs_wait_begin(p);
	tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	t = tc ? tc->target : cs_task_target(p);
	ts = cs_tgt(t);
	/* before the slice end below is judged */
	cs_stall_uncount(p, t);
	/* Marked at its point and on its way to the park: the token goes
	 * when it is parked (cs_park), or queued instead (cs_enqueue). Let
	 * go here, between this stop and the enqueue, the next thread could
	 * run and park first on another CPU (measured: the seeded order
	 * changed in 3-7 runs of 120 under TCG). */
	if (tc && (tc->state == CS_TS_PARK_PENDING || tc->state == CS_TS_DELAY_PENDING)) {
		if (ts->serial_owner == tid) {
			ts->serial_owner_ts = bpf_ktime_get_ns();
			/* preempted before its kick: it runs again first */
			ts->serial_owner_preempted = runnable && p->scx.slice;
			cs_owner_stopped(ts);
		}
		return;
	}
	/* Runnable with slice left: the core keeps it at the head of its
	 * local DSQ (preempted by a higher class); it keeps the token, and
	 * no other CPU takes it as stale meanwhile, however long the higher
	 * class runs (measured: a controller busy for 100 ms in the VM let
	 * a second worker start early, and the seeded order changed). */
	if (runnable && p->scx.slice) {
		if (ts->serial_owner == (__u64)p->pid) {
			ts->serial_owner_ts = bpf_ktime_get_ns();
			ts->serial_owner_preempted = 1;
			cs_owner_stopped(ts);
		}
		return;
	}
	/* Off its CPU but not runnable: a sleep (ops.quiescent with
	 * SCX_DEQ_SLEEP drops the token) or a property change of the running
	 * thread, after which it is queued again at once (cs_enqueue puts a
	 * holder back at the head of its CPU's queue): not a sleep. */
	if (!runnable) {
		if (ts->serial_owner == (__u64)p->pid) {
			ts->serial_owner_ts = bpf_ktime_get_ns();
			cs_owner_stopped(ts);
		}
		return;
	}
	/* Runnable, slice 0: its slice ran out, its own point's kick came
	 * (a park a release cancelled: it queues like a yield), PCT asked it
	 * to go (cs_prio_preempt) - or a kick meant for another thread: a
	 * release kicks the released thread's CPU with SCX_KICK_PREEMPT,
	 * which ends the slice of whatever runs there, another target's
	 * owner too. Such an owner keeps its token and runs again first
	 * (cs_enqueue puts it back at the head of its CPU's queue): let go
	 * there, a thread of its target released meanwhile ran inside its
	 * step (14-sched-targets, "overlap 1"). Its run on the token is
	 * still bounded by its slice: the next time the slice ends, the time
	 * it ran since it took the token is counted. */
	if (tc && tc->state == CS_TS_RUN && ts->serial_owner == (__u64)p->pid &&
	    ts->serial_owner_yield != (__u64)p->pid && !cs_kick_is(tid) &&
	    BPF_CORE_READ(p, se.sum_exec_runtime) - ts->serial_owner_exec0 < cs_slice(t)) {
		ts->serial_owner_ts = bpf_ktime_get_ns();
		ts->serial_owner_preempted = 1;
		cs_owner_stopped(ts);
		__sync_fetch_and_add(&cs_stats(t)->serial_kicks_kept, 1);
		return;
	}
	cs_serial_token_drop(p, t);
}

/* Called after the core charged the tick's time (and a stall's) to p,
 * before it looks at p's slice. */
void BPF_STRUCT_OPS(cs_tick, struct task_struct *p)
{
	struct cs_thread_ctl *tc;
	__u32 tid = p->pid;

	tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	cs_stall_uncount(p, tc ? tc->target : cs_task_target(p));
}

/* The target of a task entering SCHED_EXT: its process's (userspace
 * wrote it for the process it launched; a thread shares its process's),
 * else its parent process's, which a process forked by a target inherits
 * here; else target 0. */
static __always_inline __u32 cs_target_enter(struct task_struct *p)
{
	__u32 pid = p->tgid, ppid, *t;

	t = bpf_map_lookup_elem(&cs_sched_targets, &pid);
	if (t)
		return *t & CS_TMASK;
	ppid = BPF_CORE_READ(p, real_parent, tgid);
	t = bpf_map_lookup_elem(&cs_sched_targets, &ppid);
	if (!t)
		return 0;
	ppid = *t & CS_TMASK;
	bpf_map_update_elem(&cs_sched_targets, &pid, &ppid, BPF_NOEXIST);
	return ppid;
}

void BPF_STRUCT_OPS(cs_enable, struct task_struct *p)
{
	struct cs_thread_ctl init = {};
	struct cs_sched_cfg *cfg;
	struct cs_task *ts;
	__u32 tid = p->pid, t = cs_target_enter(p);

	ts = bpf_task_storage_get(&cs_task_store, p, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (ts)
		ts->target = t;
	/* A thread that was running when it entered SCHED_EXT (a launched
	 * target's main thread at its gate) is never inserted before it
	 * runs: without this it ran on the core's default slice (20 ms),
	 * whatever the target's. In serial mode that default let a VM's main
	 * thread lose the token while it created the workers, holding a lock
	 * (most likely its mm's), and the workers it blocked overlapped
	 * (12-sched-delay.t). A queued thread gets the target's slice at its
	 * insert anyway. */
	cs_set_slice(p, cs_slice(t));
	init.pid = p->tgid;
	init.target = t;
	init.ordinal = __sync_fetch_and_add(&cs_tgt(t)->thread_seq, 1) + 1;
	/* PCT: distinct random initial priorities from the seed; userspace
	 * may override them (policy_set_prio). */
	cfg = cs_cfg_of(t);
	if (cfg && cfg->serial == CS_SERIAL_PRIO)
		init.prio = (__u32)(cs_rand_key(&init, t) >> 40) | 1;
	if (bpf_map_update_elem(&cs_thread_ctl, &tid, &init, BPF_NOEXIST)) {
		/* the probe side created it first */
		struct cs_thread_ctl *tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);

		if (tc) {
			tc->ordinal = init.ordinal;
			tc->target = t;
		}
	}
	__sync_fetch_and_add(&cs_stats(t)->nr_threads, 1);
	cs_starve_arm();
}

void BPF_STRUCT_OPS(cs_disable, struct task_struct *p)
{
	struct cs_thread_ctl *tc;
	struct cs_task *ts;
	__u32 tid = p->pid, t = cs_task_target(p);

	__sync_fetch_and_sub(&cs_stats(t)->nr_threads, 1);
	cs_serial_token_drop(p, t);
	ts = bpf_task_storage_get(&cs_task_store, p, 0, 0);
	if (ts) {
		ts->wait_ns = 0;
		if (ts->runnable) {
			ts->runnable = 0;
			__sync_fetch_and_sub(&cs_stats(t)->nr_runnable, 1);
		}
	}
	tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	if (tc && tc->state == CS_TS_RELEASED) {
		struct cs_sched_shared *sh = cs_shared_of(t);

		tc->state = CS_TS_RUN;
		if (sh)
			__sync_fetch_and_sub(&sh->nr_released, 1);
	}
	bpf_map_delete_elem(&cs_park_timers, &tid);
}

s32 BPF_STRUCT_OPS_SLEEPABLE(cs_init)
{
	s32 err;
	__u32 t;

	for (t = 0; t < CS_SCHED_MAX_TARGETS; t++) {
		err = scx_bpf_create_dsq(CS_DSQ_SHARED + t, -1);
		if (err)
			return err;
	}
	return scx_bpf_create_dsq(CS_DSQ_PARKED, -1);
}

/* scx_bpf_dump_bstr with printf arguments: one line of the debug dump. */
#define cs_dumpf(fmt, args...)                                                                     \
	({                                                                                         \
		static char ___fmt[] = fmt;                                                        \
		unsigned long long ___param[___bpf_narg(args)];                                    \
                                                                                                   \
		_Pragma("GCC diagnostic push")                                                     \
			_Pragma("GCC diagnostic ignored \"-Wint-conversion\"")                     \
				___bpf_fill(___param, args);                                       \
		_Pragma("GCC diagnostic pop")                                                      \
			scx_bpf_dump_bstr(___fmt, ___param, sizeof(___param));                     \
	})

/* Microseconds since ts (-1: never; 0 if another CPU's clock is ahead). */
static __always_inline __s64 cs_age_us(__u64 now, __u64 ts)
{
	if (!ts)
		return -1;
	return ts > now ? 0 : (__s64)((now - ts) / 1000);
}

/* The dump's scheduler part: each target with threads, its counts and
 * its serial token (why a thread waits is in these and cs_dump_task). */
void BPF_STRUCT_OPS(cs_dump, struct scx_dump_ctx *dctx)
{
	struct cs_sched_shared *sh;
	struct cs_target_state *ts;
	struct cs_sched_stats *st;
	__u32 t;

	for (t = 0; t < CS_SCHED_MAX_TARGETS; t++) {
		st = cs_stats(t);
		if (!st->nr_threads)
			continue;
		ts = cs_tgt(t);
		sh = cs_shared_of(t);
		cs_dumpf(
			"concsched target %u: threads %llu runnable %llu parked %lld released %lld "
			"queued %d\n",
			t, st->nr_threads, st->nr_runnable, sh ? sh->nr_parked : -1LL,
			sh ? sh->nr_released : -1LL, scx_bpf_dsq_nr_queued(CS_DSQ_SHARED + t));
		cs_dumpf("concsched target %u: serial %u owner %llu running %llu preempted %llu "
			 "held %lld us wanted %llu; parks %llu releases %llu watchdog %llu\n",
			 t, cs_serial(t), ts->serial_owner, ts->serial_owner_running,
			 ts->serial_owner_preempted,
			 cs_age_us(bpf_ktime_get_ns(), ts->serial_owner_ts), ts->token_wanted,
			 st->parks, st->releases, st->watchdog);
		cs_dumpf("concsched target %u: timer errors %llu starved %llu rescued %llu\n", t,
			 st->timer_errors, st->starved, st->rescued);
	}
	cs_dumpf("concsched parked queue: %d\n", scx_bpf_dsq_nr_queued(CS_DSQ_PARKED));
}

/* The dump's line for one of our threads: where our state machine has it. */
void BPF_STRUCT_OPS(cs_dump_task, struct scx_dump_ctx *dctx, struct task_struct *p)
{
	struct cs_thread_ctl *tc;
	__u32 tid = p->pid;
	__u64 now = bpf_ktime_get_ns();

	tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	if (!tc) {
		cs_dumpf("concsched: tid %u target %u, never at a point\n", tid, cs_task_target(p));
		return;
	}
	cs_dumpf("concsched: tid %u target %u state %llu op %u gen %u cpu %u (now %d) reason %u\n",
		 tid, tc->target, tc->state, tc->op, tc->park_gen, tc->cpu, scx_bpf_task_cpu(p),
		 tc->release_reason);
	cs_dumpf("concsched: tid %u since point %lld us, park %lld us, release %lld us; parks %llu "
		 "watchdog %llu enq %u\n",
		 tid, cs_age_us(now, tc->probe_ts), cs_age_us(now, tc->park_ts),
		 cs_age_us(now, tc->release_ts), tc->nparks, tc->nwatchdog, tc->nenq);
}

void BPF_STRUCT_OPS(cs_exit, struct scx_exit_info *ei)
{
	bpf_probe_read_kernel_str(uei.reason, sizeof(uei.reason), ei->reason);
	bpf_probe_read_kernel_str(uei.msg, sizeof(uei.msg), ei->msg);
	if (ei->dump)
		bpf_probe_read_kernel_str(uei_dump, sizeof(uei_dump), ei->dump);
	uei.exit_code = ei->exit_code;
	/* kind last: userspace polls it to learn the scheduler is gone */
	__sync_lock_test_and_set(&uei.kind, (__s64)ei->kind);
}

SEC(".struct_ops.link")
struct sched_ext_ops concsched_ops = {
	.select_cpu = (void *)cs_select_cpu,
	.enqueue = (void *)cs_enqueue,
	.dispatch = (void *)cs_dispatch,
	.runnable = (void *)cs_runnable,
	.running = (void *)cs_running,
	.stopping = (void *)cs_stopping,
	.tick = (void *)cs_tick,
	.quiescent = (void *)cs_quiescent,
	.enable = (void *)cs_enable,
	.disable = (void *)cs_disable,
	.init = (void *)cs_init,
	.exit = (void *)cs_exit,
	.dump = (void *)cs_dump,
	.dump_task = (void *)cs_dump_task,
	.flags = SCX_OPS_SWITCH_PARTIAL | SCX_OPS_ENQ_LAST | SCX_OPS_ENQ_MIGRATION_DISABLED,
	.timeout_ms = 30000, /* userspace sets it before load */
	.exit_dump_len = CS_EXIT_DUMP_LEN,
	.name = "concsched",
};

/* ---- userspace entry points (BPF_PROG_RUN) ---------------------------- */

struct cs_release_ctx {
	__u32 reason;
	__u32 released;
	__u32 target;
};

static long cs_release_each(struct bpf_map *map, __u32 *tid, struct cs_thread_ctl *tc,
			    struct cs_release_ctx *rc)
{
	if ((rc->target == CS_TARGET_ALL || tc->target == rc->target) &&
	    cs_release_thread(*tid, tc, rc->reason))
		rc->released++;
	return 0;
}

/* Release one thread (args->tid) or every parked/delayed one of
 * args->target (tid 0; CS_TARGET_ALL: of every target). */
SEC("syscall")
int cs_release(struct cs_release_args *args)
{
	struct cs_release_ctx rc = { .reason = args->reason ? args->reason : CS_REL_USER,
				     .target = args->target };
	struct cs_thread_ctl *tc;
	__u32 tid = args->tid;

	if (tid) {
		tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
		if (tc && (rc.target == CS_TARGET_ALL || tc->target == rc.target) &&
		    cs_release_thread(tid, tc, rc.reason))
			rc.released = 1;
	} else {
		bpf_for_each_map_elem(&cs_thread_ctl, cs_release_each, &rc, 0);
	}
	args->released = rc.released;
	return 0;
}

/* Userspace's fields of a thread (args->what), written in place; the entry
 * is created when the thread has none yet (named before its first point).
 * The delay is written before the action its point reads first. */
SEC("syscall")
int cs_thread_set(struct cs_thread_set_args *args)
{
	struct cs_thread_ctl *tc, init = {};
	__u32 tid = args->tid;

	tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	if (!tc) {
		init.target = args->target & CS_TMASK;
		bpf_map_update_elem(&cs_thread_ctl, &tid, &init, BPF_NOEXIST);
		tc = bpf_map_lookup_elem(&cs_thread_ctl, &tid);
	}
	if (!tc) {
		args->err = -12; /* -ENOMEM: the thread table is full */
		return 0;
	}
	if (args->what & CS_THREAD_SET_NEXT) {
		tc->next_delay_ns = args->next_delay_ns;
		tc->next_action = args->next_action;
	}
	if (args->what & CS_THREAD_SET_PRIO)
		tc->prio = args->prio;
	args->err = 0;
	return 0;
}

/* ---- function points: park/delay/yield at any symbol of the target ---- */

/* A uprobe on a chosen function (scx_concsched_add_point); the cookie is the
 * point's index, its site CS_SITE_FUNC_KEY(index). */
SEC("uprobe")
int cs_func_point(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();

	/* Not preemptible inside: its frame is on the per-CPU private stack
	 * (see cs_sync_enter in probes/sync.bpf.c). */
	bpf_preempt_disable();
	cs_sched_point((__u32)id, CS_SITE_FUNC_KEY(bpf_get_attach_cookie(ctx)), CS_OP_NONE,
		       PT_REGS_PARM1(ctx));
	bpf_preempt_enable();
	return 0;
}

/* Its park, after it on the same function (scx_concsched_add_point): never
 * inside cs_func_point, whose frame is on the per-CPU private stack (see
 * cs_sync_commit in probes/sync.bpf.c). */
SEC("uprobe")
int cs_func_commit(struct pt_regs *ctx)
{
	cs_sched_commit();
	return 0;
}
