// SPDX-License-Identifier: GPL-2.0
/*
 * sync.bpf.c — synchronization probes: uprobes on the pthread API of the
 * target (mutex, rwlock, spinlock, condvar, semaphore, barrier, create,
 * join, exit), libc's exit() and stdio output functions, plus three
 * scheduler tracepoints (fork, exit, exec).
 *
 * What it does:
 *  - ONE uprobe.multi entry program, cs_sync_enter, on every probed
 *    function; the BPF cookie says which function (enum cs_sync_fn). It is
 *    the decision point of the scheduler: it calls cs_sched_point() for
 *    every lock/trylock/rwlock/spin request, cond wait/signal, sem wait/post,
 *    barrier, create and join, and for exit() and stdio output calls
 *    (printf, fputs, fflush, ...) while another thread of the process
 *    lives, so a thread can be parked synchronously inside this program
 *    (sched_point.bpf.h). The fork tracepoint makes a new thread's
 *    start a decision point too (cs_sched_start_point).
 *  - ONE uretprobe.multi program, cs_sync_return, on the functions whose
 *    outcome matters (acquisitions, try/timed results, cond_wait's mutex
 *    reacquisition, sem_wait, join).
 *  - Keeps per thread its lockset (bounded, overflow counted), per lock its
 *    loc_last and holder, and aggregates coverage in hash maps: SP pairs
 *    <loc_last, loc> (ALGORITHMS.md §1), GoodLock, HBPair and Sync (§4),
 *    each with hit counts. Thread-model events go to a ring buffer; a full
 *    ring buffer or map is counted in cs_sync_stats, never silent.
 *  - Records every mapping a site or lock lives in (cs_sync_vmas), so
 *    userspace can turn addresses into object+offset after the process is
 *    gone, and ignores calls whose return address lies in libc or ld.so
 *    (glibc-internal locking, e.g. ld.so's TLS lock in pthread_create).
 *
 * What it does not do: interpret anything. Sites are raw user addresses
 * keyed by (tgid, exec generation); abstract identities, symbolization and
 * run-to-run matching happen in userspace (thread_model.c, coverage.c).
 * It never decides to pause: that is the policy maps' job.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "concsched_abi.h"
#include "sched_point.bpf.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by userspace before load. */
const volatile __u32 cs_sync_scope = CS_SCOPE_TRACKED;
const volatile __u32 cs_follow_forks;
const volatile char cs_comm[16];      /* CS_SCOPE_ALL: leader comm; "" any */
const volatile __u64 cs_cgroup_id;    /* CS_SCOPE_ALL: cgroup v2 id; 0 any */
const volatile __u32 cs_cgroup_level; /* its depth below the root          */

#define CS_MAX_PROCS   4096
#define CS_MAX_THREADS 16384
#define CS_MAX_LOCKS   32768
#define CS_MAX_TASKS   32768

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct cs_proc);
} cs_sync_tracked SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_MAX_THREADS);
	__type(key, __u32);
	__type(value, struct cs_sync_thread);
} cs_sync_threads SEC(".maps");

/* Never written: the zeroed template new thread states are copied from
 * (struct cs_sync_thread does not fit on the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cs_sync_thread);
} cs_sync_zero SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_MAX_LOCKS);
	__type(key, struct cs_lock_key);
	__type(value, struct cs_lock_state);
} cs_sync_locks SEC(".maps");

/* pthread_t of a created thread -> its tid (for pthread_join). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_MAX_THREADS);
	__type(key, struct cs_lock_key);
	__type(value, __u32);
} cs_sync_pthreads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_MAX_TASKS);
	__type(key, struct cs_sp_key);
	__type(value, __u64);
} cs_sync_sp SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_MAX_TASKS);
	__type(key, struct cs_goodlock_key);
	__type(value, __u64);
} cs_sync_goodlock SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_MAX_TASKS);
	__type(key, struct cs_hb_key);
	__type(value, __u64);
} cs_sync_hb SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CS_MAX_TASKS);
	__type(key, struct cs_sync_key);
	__type(value, __u64);
} cs_sync_sync SEC(".maps");

/* [enum cs_keylog_slot] = keys added to that map this run */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, CS_KEYLOG__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} cs_sync_keylog_n SEC(".maps");

#define CS_KEYLOG_MAP(name, ktype)                                                                 \
	struct {                                                                                   \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                                  \
		__uint(max_entries, CS_KEYLOG_MAX);                                                \
		__type(key, __u32);                                                                \
		__type(value, ktype);                                                              \
	} name SEC(".maps")
CS_KEYLOG_MAP(cs_sync_sp_log, struct cs_sp_key);
CS_KEYLOG_MAP(cs_sync_goodlock_log, struct cs_goodlock_key);
CS_KEYLOG_MAP(cs_sync_hb_log, struct cs_hb_key);
CS_KEYLOG_MAP(cs_sync_sync_log, struct cs_sync_key);

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct cs_vma_key);
	__type(value, struct cs_vma);
} cs_sync_vmas SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 64);
	__type(key, struct cs_inode_key);
	__type(value, __u32);
} cs_sync_runtime SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cs_rt_text);
} cs_sync_rt_text SEC(".maps");

/* The files whose paths the controller knows (it adds each one it learns;
 * a campaign's run starts again with the target's, libc's and ld.so's). A
 * site, lock or start routine in a mapping of any other file (a library
 * ld.so or dlopen mapped after the exec) is new: the event that follows
 * wakes the controller, flagged CS_EV_NEWFILE, so it reads the process's
 * maps while the process lives. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 4096);
	__type(key, struct cs_inode_key);
	__type(value, __u8);
} cs_sync_known SEC(".maps");

/* The files tracked processes exec'd, by the name they were exec'd by
 * (struct cs_exec): a short-lived child's sites resolve to its path. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, struct cs_inode_key);
	__type(value, struct cs_exec);
} cs_sync_execs SEC(".maps");

/* Per CPU: a new file was met since this CPU's last event (vma_record),
 * in the same program run as a rule. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cs_sync_newfile SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, CS_SSTAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} cs_sync_stats SEC(".maps");

/* Userspace sizes it (probes.c); a power of two pages. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 8 << 20);
} cs_sync_events SEC(".maps");

static __always_inline void stat_inc(__u32 slot)
{
	__u64 *v = bpf_map_lookup_elem(&cs_sync_stats, &slot);

	if (v)
		(*v)++;
}

/* A key new in its map this run goes to the map's key log (the harvest
 * reads those entries by key); past CS_KEYLOG_MAX only the count grows,
 * and the harvest walks the whole map. */
static __always_inline void keylog_add(void *log, __u32 slot, void *key)
{
	__u64 *n = bpf_map_lookup_elem(&cs_sync_keylog_n, &slot), i;
	__u32 idx;

	if (!n)
		return;
	i = __sync_fetch_and_add(n, 1);
	if (i >= CS_KEYLOG_MAX)
		return;
	idx = (__u32)i;
	bpf_map_update_elem(log, &idx, key, BPF_ANY);
}

/* count[key]++, creating the entry (logged); a full map is counted, not
 * silent. */
static __always_inline void count_inc(void *map, void *key, void *log, __u32 slot)
{
	__u64 one = 1, *v;

	v = bpf_map_lookup_elem(map, key);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	if (!bpf_map_update_elem(map, key, &one, BPF_NOEXIST)) {
		keylog_add(log, slot, key);
		return;
	}
	v = bpf_map_lookup_elem(map, key);
	if (v)
		__sync_fetch_and_add(v, 1);
	else
		stat_inc(CS_SSTAT_MAP_FULL);
}

/* The four counting maps' increments, as global functions: the verifier
 * checks each once, apart from its callers, instead of once per inlined
 * copy and path (goodlock_request's loop alone made eight; docs/kernel.md,
 * "Global functions in the probe programs"). A key on the caller's stack
 * is a pointer to memory of the key's size, or NULL, as global functions
 * take them. */
#define CS_COUNT_FN(name, ktype, slot)                                                             \
	__noinline int cs_count_##name(ktype *k)                                                   \
	{                                                                                          \
		if (k)                                                                             \
			count_inc(&cs_sync_##name, k, &cs_sync_##name##_log, slot);                \
		return 0;                                                                          \
	}
CS_COUNT_FN(sp, struct cs_sp_key, CS_KEYLOG_SP)
CS_COUNT_FN(goodlock, struct cs_goodlock_key, CS_KEYLOG_GOODLOCK)
CS_COUNT_FN(hb, struct cs_hb_key, CS_KEYLOG_HB)
CS_COUNT_FN(sync, struct cs_sync_key, CS_KEYLOG_SYNC)

/* ---- scope ---------------------------------------------------------- */

static __always_inline bool comm_matches(struct task_struct *task)
{
	char comm[16];
	int i;

	if (!cs_comm[0])
		return true;
	if (bpf_probe_read_kernel(comm, sizeof(comm), BPF_CORE_READ(task, group_leader, comm)))
		return false;
	for (i = 0; i < 16; i++) {
		if (comm[i] != cs_comm[i])
			return false;
		if (!comm[i])
			break;
	}
	return true;
}

/* The process's state if it is a target: tracked explicitly, or (system-
 * wide mode) passing the comm/cgroup filters, tracked from then on. */
static __always_inline struct cs_proc *proc_in_scope(__u32 tgid)
{
	struct cs_proc *p, init = {};

	p = bpf_map_lookup_elem(&cs_sync_tracked, &tgid);
	if (p || cs_sync_scope != CS_SCOPE_ALL)
		return p;
	if (cs_cgroup_id && bpf_get_current_ancestor_cgroup_id(cs_cgroup_level) != cs_cgroup_id)
		return NULL;
	if (!comm_matches(bpf_get_current_task_btf()))
		return NULL;
	bpf_map_update_elem(&cs_sync_tracked, &tgid, &init, BPF_NOEXIST);
	return bpf_map_lookup_elem(&cs_sync_tracked, &tgid);
}

/* ---- threads -------------------------------------------------------- */

static __always_inline struct cs_sync_thread *thread_new(__u32 tid, __u32 tgid, __u32 gen)
{
	struct cs_sync_thread *t, *zero;
	__u32 z = 0;

	zero = bpf_map_lookup_elem(&cs_sync_zero, &z);
	if (!zero)
		return NULL;
	if (bpf_map_update_elem(&cs_sync_threads, &tid, zero, BPF_ANY)) {
		stat_inc(CS_SSTAT_MAP_FULL);
		return NULL;
	}
	t = bpf_map_lookup_elem(&cs_sync_threads, &tid);
	if (!t)
		return NULL;
	t->tgid = tgid;
	t->gen = gen;
	t->start_ts = bpf_ktime_get_ns();
	if (tid == tgid)
		t->flags = CS_THR_MAIN;
	return t;
}

/* The thread's state; a tid seen in an older image (exec) or a reused tid
 * starts afresh. */
static __always_inline struct cs_sync_thread *thread_get(__u32 tid, __u32 tgid, __u32 gen)
{
	struct cs_sync_thread *t = bpf_map_lookup_elem(&cs_sync_threads, &tid);

	if (t && t->tgid == tgid && t->gen == gen && !(t->flags & CS_THR_EXITED))
		return t;
	return thread_new(tid, tgid, gen);
}

static __always_inline void emit_x(struct cs_sync_thread *t, __u32 tgid, __u32 tid, __u32 gen,
				   __u16 op, __u64 obj, __u64 site, __u64 arg, __u16 flags,
				   __u32 exit_code)
{
	struct cs_event *e;
	__u32 seq = 0, nlocks = 0, zero = 0, *nf;
	__u64 avail;
	bool wake;

	if (t) {
		seq = t->seq++; /* advances on a drop too: userspace sees the gap */
		nlocks = t->nheld;
	}
	e = bpf_ringbuf_reserve(&cs_sync_events, sizeof(*e), 0);
	if (!e) {
		stat_inc(CS_SSTAT_RB_DROPS);
		return;
	}
	e->ts_ns = bpf_ktime_get_ns();
	e->obj = obj;
	e->site = site;
	e->arg = arg;
	e->pid = tgid;
	e->tid = tid;
	e->seq = seq;
	e->op = op;
	e->flags = flags;
	e->cpu = bpf_get_smp_processor_id();
	e->nlocks = nlocks;
	e->gen = gen;
	e->exit_code = exit_code;
	/* Wake the consumer only when the buffer fills up, or for the rare
	 * events after which it must read /proc/PID/maps while the process
	 * lives (a file it has no path for, a new process); it also polls on
	 * a short timeout. A wakeup per event would add a context switch to
	 * every probe. A thread parked at its point waits for the
	 * controller's decision: that one must be read now. */
	nf = bpf_map_lookup_elem(&cs_sync_newfile, &zero);
	if (nf && *nf) {
		*nf = 0;
		e->flags |= CS_EV_NEWFILE;
	}
	avail = bpf_ringbuf_query(&cs_sync_events, BPF_RB_AVAIL_DATA);
	wake = avail > (1 << 20) || op == CS_OP_FORK || (e->flags & (CS_EV_PARKED | CS_EV_NEWFILE));
	bpf_ringbuf_submit(e, wake ? BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	stat_inc(CS_SSTAT_EVENTS);
}

static __always_inline void emit(struct cs_sync_thread *t, __u32 tgid, __u32 tid, __u32 gen,
				 __u16 op, __u64 obj, __u64 site, __u64 arg, __u16 flags)
{
	emit_x(t, tgid, tid, gen, op, obj, site, arg, flags, 0);
}

/* ---- mappings: object identity and the libc-internal filter ---------- */

struct vma_probe {
	struct cs_vma v;
	__u64 start;
	__u32 found;
	__u32 pad;
};

static long vma_probe_cb(struct task_struct *task, struct vm_area_struct *vma, void *data)
{
	struct vma_probe *vp = data;
	struct file *f = vma->vm_file;

	vp->found = 1;
	vp->start = vma->vm_start;
	vp->v.end = vma->vm_end;
	vp->v.pgoff = vma->vm_pgoff << 12;
	if (!f)
		return 0;
	vp->v.file = 1;
	vp->v.ino = f->f_inode->i_ino;
	vp->v.dev = f->f_inode->i_sb->s_dev;
	bpf_probe_read_kernel_str(vp->v.name, sizeof(vp->v.name), f->f_path.dentry->d_name.name);
	return 0;
}

/* Record the mapping holding addr; returns 1 if it is libc or ld.so
 * (cs_sync_runtime), 0 otherwise or when unmapped. */
static __always_inline __u32 vma_record(struct cs_proc_key *pk, __u64 addr, struct vma_probe *vp)
{
	struct cs_inode_key ik = {};
	struct cs_vma_key vk = {};
	bool fresh;

	__builtin_memset(vp, 0, sizeof(*vp));
	bpf_find_vma(bpf_get_current_task_btf(), addr, vma_probe_cb, vp, 0);
	if (!vp->found)
		return 0;
	vk.p = *pk;
	vk.start = vp->start;
	fresh = !bpf_map_update_elem(&cs_sync_vmas, &vk, &vp->v, BPF_NOEXIST);
	if (!vp->v.file)
		return 0;
	ik.ino = vp->v.ino;
	ik.dev = vp->v.dev;
	if (fresh && !bpf_map_lookup_elem(&cs_sync_known, &ik)) {
		__u32 zero = 0, *nf = bpf_map_lookup_elem(&cs_sync_newfile, &zero);

		if (nf)
			*nf = 1;
	}
	return bpf_map_lookup_elem(&cs_sync_runtime, &ik) ? 1 : 0;
}

#define CS_AT_BASE    7	 /* auxv: the interpreter's load address */
#define CS_AUXV_PAIRS 32 /* more than any kernel's AT_VECTOR_SIZE / 2 */

/* The process's ld.so load base, from the auxiliary vector the kernel
 * saved at its exec; 0 if none. */
static __always_inline __u64 ldso_base(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	unsigned long *auxv = task->mm ? task->mm->saved_auxv : NULL;
	__u64 pair[2];
	int i;

	if (!auxv)
		return 0;
	for (i = 0; i < CS_AUXV_PAIRS; i++) {
		if (bpf_probe_read_kernel(pair, sizeof(pair), auxv + 2 * i) || !pair[0])
			return 0;
		if (pair[0] == CS_AT_BASE)
			return pair[1];
	}
	return 0;
}

/* Without its mapping: is site in libc's or ld.so's code (struct
 * cs_rt_text)? The call probed is fn's, at libc's address func_ip. */
static __always_inline bool site_in_runtime_text(__u32 fn, __u64 func_ip, __u64 site)
{
	__u32 zero = 0;
	struct cs_rt_text *rt = bpf_map_lookup_elem(&cs_sync_rt_text, &zero);
	__u64 off, base;

	if (!rt)
		return false;
	off = rt->fn_off[fn & (CS_RT_FN_SLOTS - 1)];
	if (off && off >= rt->libc_off_lo && off < rt->libc_off_hi &&
	    site >= func_ip - (off - rt->libc_off_lo) && site < func_ip + (rt->libc_off_hi - off))
		return true;
	if (!rt->ldso_hi)
		return false;
	base = ldso_base();
	return base && site >= base + rt->ldso_lo && site < base + rt->ldso_hi;
}

/* Is this call made by libc/ld.so itself? Caches the caller's mapping in
 * the thread (almost every call comes from the same object). When the
 * mapping cannot be looked up (bpf_find_vma fails while the address
 * space's lock is taken or waited for), the runtime's code ranges decide
 * and the cache stays as it was: before 2026-12-01 such a failure set the
 * cached mapping's flag to "not internal", and a thread of a busy process
 * (one thread mmapping while another starts threads) then took ld.so's
 * internal calls for the program's own (tests/host/59-internal-calls.t). */
static __always_inline bool site_is_internal(struct cs_sync_thread *t, struct cs_proc_key *pk,
					     __u64 site, __u32 fn, __u64 func_ip)
{
	struct vma_probe vp;
	__u32 internal;

	if (site >= t->vma_start && site < t->vma_end)
		return t->vma_internal;
	internal = vma_record(pk, site, &vp);
	if (!vp.found)
		return site_in_runtime_text(fn, func_ip, site);
	t->vma_start = vp.start;
	t->vma_end = vp.v.end;
	t->vma_internal = internal;
	return internal;
}

/* ---- coverage bookkeeping -------------------------------------------- */

static __always_inline void sync_mode(struct cs_proc_key *pk, __u32 mode, __u64 site)
{
	struct cs_sync_key k = {};

	if (!site)
		return;
	k.p = *pk;
	k.mode = mode;
	k.site = site;
	cs_count_sync(&k);
}

static __always_inline void hb_pair(struct cs_proc_key *pk, __u32 kind, __u32 tid1, __u32 tid2,
				    __u64 site1, __u64 site2, __u64 obj)
{
	struct cs_hb_key k = {};

	k.p = *pk;
	k.kind = kind;
	k.tid1 = tid1;
	k.tid2 = tid2;
	k.site1 = site1;
	k.site2 = site2;
	k.obj = obj;
	cs_count_hb(&k);
}

static __always_inline struct cs_lock_state *lock_get(struct cs_proc_key *pk, __u64 addr,
						      __u32 kind, __u64 site)
{
	struct cs_lock_state *ls, init = {};
	struct cs_lock_key k = {};
	struct vma_probe vp;

	k.p = *pk;
	k.addr = addr;
	ls = bpf_map_lookup_elem(&cs_sync_locks, &k);
	if (ls)
		return ls;
	init.first_site = site;
	init.kind = kind;
	if (bpf_map_update_elem(&cs_sync_locks, &k, &init, BPF_NOEXIST) == 0)
		vma_record(pk, addr, &vp); /* static locks: object+offset identity */
	ls = bpf_map_lookup_elem(&cs_sync_locks, &k);
	if (!ls)
		stat_inc(CS_SSTAT_MAP_FULL);
	return ls;
}

static __always_inline void lockset_push(struct cs_sync_thread *t, __u64 lock, __u64 site,
					 __u32 mode)
{
	__u32 n = t->nheld;

	if (n >= CS_LOCKSET_MAX) {
		t->overflow++;
		stat_inc(CS_SSTAT_LOCKSET_OVF);
		return;
	}
	t->held[n & (CS_LOCKSET_MAX - 1)].lock = lock;
	t->held[n & (CS_LOCKSET_MAX - 1)].site = site;
	t->held[n & (CS_LOCKSET_MAX - 1)].mode = mode;
	t->nheld = n + 1;
}

/* Remove the innermost hold of lock; returns its mode or -1 if not held
 * (acquired before we attached, or lost to overflow). */
static __always_inline int lockset_remove(struct cs_sync_thread *t, __u64 lock)
{
	__u32 n = t->nheld, i, found = CS_LOCKSET_MAX;
	int mode;

	for (i = 0; i < CS_LOCKSET_MAX; i++) {
		if (i >= n)
			break;
		if (t->held[i].lock == lock)
			found = i;
	}
	if (found >= CS_LOCKSET_MAX) {
		if (t->overflow)
			t->overflow--;
		return -1;
	}
	mode = t->held[found].mode;
	for (i = 0; i < CS_LOCKSET_MAX - 1; i++) {
		if (i < found)
			continue;
		if (i + 1 >= n)
			break;
		t->held[i] = t->held[i + 1];
	}
	t->nheld = n - 1;
	return mode;
}

/* GoodLock*: every lock held while requesting another (§4). */
static __always_inline void goodlock_request(struct cs_proc_key *pk, struct cs_sync_thread *t,
					     __u32 tid, __u64 lock, __u64 site)
{
	struct cs_goodlock_key k = {};
	__u32 i, n = t->nheld;

	k.p = *pk;
	k.tid = tid;
	k.req_site = site;
	k.req_lock = lock;
	for (i = 0; i < CS_LOCKSET_MAX; i++) {
		if (i >= n)
			break;
		if (t->held[i].lock == lock)
			continue; /* recursive or read re-entry: not an order */
		k.held_site = t->held[i].site;
		k.held_lock = t->held[i].lock;
		cs_count_goodlock(&k);
	}
}

/* A lock action completed (ALGORITHMS.md §1): SP pair with loc_last,
 * unlock->lock HBPair, holder and lockset update. */
static __always_inline void lock_acquired(struct cs_proc_key *pk, struct cs_sync_thread *t,
					  __u32 tid, __u64 lock, __u32 kind, __u64 site, __u32 read)
{
	struct cs_lock_state *ls = lock_get(pk, lock, kind, site);
	struct cs_sp_key sk = {};

	if (ls) {
		if (ls->last_site) {
			sk.p = *pk;
			sk.site_last = ls->last_site;
			sk.site = site;
			cs_count_sp(&sk);
		}
		if (ls->rel_tid && ls->rel_tid != tid)
			hb_pair(pk, CS_HB_UNLOCK_LOCK, ls->rel_tid, tid, ls->rel_site, site, lock);
		ls->last_site = site;
		ls->last_tid = tid;
		if (read) {
			ls->readers++;
		} else {
			ls->holder_tid = tid;
			ls->holder_site = site;
		}
	}
	lockset_push(t, lock, site, read);
}

static __always_inline void lock_released(struct cs_proc_key *pk, struct cs_sync_thread *t,
					  __u32 tid, __u64 lock, __u32 kind, __u64 site)
{
	struct cs_lock_state *ls = lock_get(pk, lock, kind, site);
	int mode = lockset_remove(t, lock);

	if (!ls)
		return;
	if (kind == CS_OBJ_RWLOCK && (mode == 1 || (mode < 0 && ls->holder_tid != tid))) {
		if (ls->readers)
			ls->readers--;
	} else {
		ls->holder_tid = 0;
		ls->holder_site = 0;
	}
	ls->rel_site = site;
	ls->rel_tid = tid;
	ls->rel_ts = bpf_ktime_get_ns();
}

/* ---- function classes -------------------------------------------------- */

static __always_inline __u32 fn_kind(__u32 fn)
{
	if (fn >= CS_FN_MUTEX_LOCK && fn <= CS_FN_MUTEX_UNLOCK)
		return CS_OBJ_MUTEX;
	if (fn >= CS_FN_RW_RDLOCK && fn <= CS_FN_RW_UNLOCK)
		return CS_OBJ_RWLOCK;
	if (fn >= CS_FN_SPIN_LOCK && fn <= CS_FN_SPIN_UNLOCK)
		return CS_OBJ_SPIN;
	if (fn >= CS_FN_COND_WAIT && fn <= CS_FN_COND_BROADCAST)
		return CS_OBJ_COND;
	if (fn >= CS_FN_SEM_WAIT && fn <= CS_FN_SEM_POST)
		return CS_OBJ_SEM;
	if (fn == CS_FN_BARRIER_WAIT)
		return CS_OBJ_BARRIER;
	return CS_OBJ_THREAD;
}

static __always_inline bool fn_is_try(__u32 fn)
{
	return fn == CS_FN_MUTEX_TRYLOCK || fn == CS_FN_RW_TRYRDLOCK || fn == CS_FN_RW_TRYWRLOCK ||
	       fn == CS_FN_SPIN_TRYLOCK;
}

/* Requests that give up instead of waiting for good: try and timed. */
static __always_inline bool fn_is_nowait(__u32 fn)
{
	return fn_is_try(fn) || fn == CS_FN_MUTEX_TIMEDLOCK || fn == CS_FN_MUTEX_CLOCKLOCK ||
	       fn == CS_FN_RW_TIMEDRDLOCK || fn == CS_FN_RW_CLOCKRDLOCK ||
	       fn == CS_FN_RW_TIMEDWRLOCK || fn == CS_FN_RW_CLOCKWRLOCK;
}

static __always_inline bool fn_is_read(__u32 fn)
{
	return fn >= CS_FN_RW_RDLOCK && fn <= CS_FN_RW_CLOCKRDLOCK;
}

/* Event op of a request (decision point) and of a successful acquisition. */
static __always_inline __u16 fn_req_op(__u32 fn)
{
	if (fn_is_read(fn))
		return CS_OP_RDLOCK_REQ;
	if (fn >= CS_FN_RW_WRLOCK && fn <= CS_FN_RW_CLOCKWRLOCK)
		return CS_OP_WRLOCK_REQ;
	return CS_OP_LOCK_REQ;
}

static __always_inline __u16 fn_acq_op(__u32 fn)
{
	if (fn_is_read(fn))
		return CS_OP_RDLOCK;
	if (fn >= CS_FN_RW_WRLOCK && fn <= CS_FN_RW_CLOCKWRLOCK)
		return CS_OP_WRLOCK;
	if (fn == CS_FN_SPIN_LOCK || fn == CS_FN_SPIN_TRYLOCK)
		return CS_OP_SPIN_LOCK;
	if (fn == CS_FN_MUTEX_TRYLOCK)
		return CS_OP_TRYLOCK_OK;
	return CS_OP_LOCK;
}

/* Does the thread hold lock (its lockset; a lock state's holder_tid is
 * cleared by a recursive mutex's inner unlock while the outer hold lasts)? */
static __always_inline bool holds_lock(struct cs_sync_thread *t, __u64 lock)
{
	__u32 i;

	for (i = 0; i < CS_LOCKSET_MAX; i++) {
		if (i >= t->nheld)
			break;
		if (t->held[i].lock == lock)
			return true;
	}
	return false;
}

/* glibc's pthread_mutex_t: __kind at offset 16 on 64-bit targets
 * (struct __pthread_mutex_s), its low two bits the type
 * (PTHREAD_MUTEX_KIND_MASK_NP). */
#define GLIBC_MUTEX_KIND_OFF   16
#define GLIBC_MUTEX_KIND_MASK  3
#define GLIBC_MUTEX_RECURSIVE  1
#define GLIBC_MUTEX_ERRORCHECK 2

/* A mutex request by a thread that holds it already never waits for good
 * when the mutex is recursive (taken again at once) or error-checking
 * (EDEADLK at once); a normal or adaptive one self-deadlocks. */
static __always_inline bool relock_never_waits(__u64 mutex)
{
	int kind = 0;

	if (bpf_probe_read_user(&kind, sizeof(kind), (void *)(mutex + GLIBC_MUTEX_KIND_OFF)))
		return false;
	kind &= GLIBC_MUTEX_KIND_MASK;
	return kind == GLIBC_MUTEX_RECURSIVE || kind == GLIBC_MUTEX_ERRORCHECK;
}

static __always_inline bool lock_busy_for(struct cs_lock_state *ls, __u32 tid, bool read)
{
	if (ls->holder_tid && ls->holder_tid != tid)
		return true;
	return !read && ls->readers && ls->holder_tid != tid;
}

/* ---- entry ------------------------------------------------------------ */

static __always_inline void enter_lock(void *ctx, struct cs_proc_key *pk, struct cs_sync_thread *t,
				       __u32 tid, __u32 fn, __u64 obj, __u64 site)
{
	__u32 kind = fn_kind(fn), flags = 0;
	bool read = fn_is_read(fn);
	struct cs_lock_state *ls;
	__u16 op = fn_req_op(fn);
	/* a mutex request by its holder (the lockset's word, see holds_lock) */
	bool relock = kind == CS_OBJ_MUTEX && !fn_is_try(fn) && holds_lock(t, obj);

	ls = lock_get(pk, obj, kind, site);
	/* A trylock never waits: it fails instead (TRYLOCK_FAIL event). */
	if (ls && !fn_is_try(fn) && lock_busy_for(ls, tid, read)) {
		flags |= CS_EV_BLOCKED;
		sync_mode(pk, CS_SYNC_BLOCKED, site);
		sync_mode(pk, CS_SYNC_BLOCKING, ls->holder_site ? ls->holder_site : ls->last_site);
	}
	if (!fn_is_try(fn))
		goodlock_request(pk, t, tid, obj, site);
	flags |= cs_sched_point(tid, site, op, obj);
	/* A try or timed request never waits for good: a deadlock analysis
	 * must not take it for a blocked acquisition. */
	if (flags && fn_is_nowait(fn))
		flags |= CS_EV_NOWAIT;
	/* Nor does the re-lock of a recursive or error-checking mutex by its
	 * holder (issue 32: SQLite's connection mutex, taken again by
	 * sqlite3_reset inside sqlite3_step, parked there by a strategy, was
	 * read as a self-deadlock). */
	if (relock && relock_never_waits(obj))
		flags |= CS_EV_NOWAIT;
	/* Requests are recorded only when they tell something (blocked,
	 * steered, or a blocking request by the lock's own holder: a
	 * recursive mutex's, whose acquisition follows at once, or a
	 * self-deadlock, whose never does): the acquisition event follows on
	 * return anyway. */
	if (flags || relock || (ls && !fn_is_try(fn) && ls->holder_tid == tid))
		emit(t, pk->tgid, tid, pk->gen, op, obj, site, 0, flags);
	t->pending.fn = fn;
	t->pending.obj = obj;
	t->pending.arg = 0;
	t->pending.site = site;
	t->pending.ts = bpf_ktime_get_ns();
	t->pending.flags = flags;
}

static __always_inline void set_pending(struct cs_sync_thread *t, __u32 fn, __u64 obj, __u64 arg,
					__u64 site, __u32 flags)
{
	t->pending.fn = fn;
	t->pending.obj = obj;
	t->pending.arg = arg;
	t->pending.site = site;
	t->pending.ts = bpf_ktime_get_ns();
	t->pending.flags = flags;
}

static __always_inline void enter_unlock(struct cs_proc_key *pk, struct cs_sync_thread *t,
					 __u32 tid, __u32 fn, __u64 obj, __u64 site)
{
	__u32 kind = fn_kind(fn);
	__u16 op = kind == CS_OBJ_RWLOCK ? CS_OP_RWUNLOCK
		   : kind == CS_OBJ_SPIN ? CS_OP_SPIN_UNLOCK
					 : CS_OP_UNLOCK;

	lock_released(pk, t, tid, obj, kind, site);
	emit(t, pk->tgid, tid, pk->gen, op, obj, site, 0, 0);
}

static __always_inline void enter_cond(void *ctx, struct cs_proc_key *pk, struct cs_sync_thread *t,
				       __u32 tid, __u32 fn, __u64 cond, __u64 mutex, __u64 site)
{
	struct cs_lock_state *cs = lock_get(pk, cond, CS_OBJ_COND, site);
	__u32 flags;

	if (fn == CS_FN_COND_SIGNAL || fn == CS_FN_COND_BROADCAST) {
		__u16 op = fn == CS_FN_COND_SIGNAL ? CS_OP_COND_SIGNAL : CS_OP_COND_BROADCAST;

		flags = cs_sched_point(tid, site, op, cond);
		if (cs) {
			cs->rel_site = site;
			cs->rel_tid = tid;
			cs->rel_ts = bpf_ktime_get_ns();
		}
		emit(t, pk->tgid, tid, pk->gen, op, cond, site, 0, flags);
		return;
	}
	/* wait: releases the mutex now, reacquires it on return */
	flags = cs_sched_point(tid, site, CS_OP_COND_WAIT, cond);
	lock_released(pk, t, tid, mutex, CS_OBJ_MUTEX, site);
	emit(t, pk->tgid, tid, pk->gen, CS_OP_COND_WAIT, cond, site, mutex, flags);
	set_pending(t, fn, cond, mutex, site, flags);
}

static __always_inline void enter_sem(void *ctx, struct cs_proc_key *pk, struct cs_sync_thread *t,
				      __u32 tid, __u32 fn, __u64 sem, __u64 site)
{
	struct cs_lock_state *ss = lock_get(pk, sem, CS_OBJ_SEM, site);
	__u32 flags;

	if (fn == CS_FN_SEM_POST) {
		flags = cs_sched_point(tid, site, CS_OP_SEM_POST, sem);
		if (ss) {
			ss->rel_site = site;
			ss->rel_tid = tid;
			ss->rel_ts = bpf_ktime_get_ns();
		}
		emit(t, pk->tgid, tid, pk->gen, CS_OP_SEM_POST, sem, site, 0, flags);
		return;
	}
	flags = cs_sched_point(tid, site, CS_OP_SEM_WAIT_REQ, sem);
	if (flags)
		emit(t, pk->tgid, tid, pk->gen, CS_OP_SEM_WAIT_REQ, sem, site, 0, flags);
	set_pending(t, fn, sem, 0, site, flags);
}

/* pthread_once(once_control, routine): arg 1 when once_control already
 * says done (glibc: bit 1, __PTHREAD_ONCE_DONE; its fast path returns at
 * once). The return (return_once) is matched through once_obj, not
 * `pending`, which the routine's own pthread calls reuse. */
static __always_inline void enter_once(struct cs_proc_key *pk, struct cs_sync_thread *t, __u32 tid,
				       __u64 once, __u64 site)
{
	int state = 0;
	__u64 done;

	bpf_probe_read_user(&state, sizeof(state), (void *)once);
	done = (state & 2) ? 1 : 0;
	t->once_obj = once;
	t->once_site = site;
	emit(t, pk->tgid, tid, pk->gen, CS_OP_ONCE_ENTER, once, site, done, 0);
}

static __always_inline void enter_thread(void *ctx, struct cs_proc_key *pk,
					 struct cs_sync_thread *t, __u32 tid, __u32 fn,
					 struct pt_regs *regs, __u64 site)
{
	__u64 arg1 = PT_REGS_PARM1(regs);
	struct cs_lock_key pkey = {};
	struct cs_sync_thread *jt;
	struct vma_probe vp;
	__u32 flags, *jtid;

	if (fn == CS_FN_EXIT) {
		t->exit_site = site;
		return;
	}
	if (fn == CS_FN_CREATE) {
		__u64 start = PT_REGS_PARM3(regs);

		flags = cs_sched_point(tid, site, CS_OP_CREATE, 0);
		vma_record(pk, start, &vp); /* the start routine must resolve too */
		t->create_site_pending = site;
		t->create_start_pending = start;
		return;
	}
	/* join family: arg1 is the pthread_t */
	pkey.p = *pk;
	pkey.addr = arg1;
	jtid = bpf_map_lookup_elem(&cs_sync_pthreads, &pkey);
	flags = cs_sched_point(tid, site, CS_OP_JOIN, jtid ? *jtid : 0);
	if (jtid) {
		__u32 j = *jtid;

		jt = bpf_map_lookup_elem(&cs_sync_threads, &j);
		if (jt && !(jt->flags & CS_THR_EXITED))
			sync_mode(pk, CS_SYNC_BLOCKED, site);
	}
	set_pending(t, fn, arg1, 0, site, flags);
}

/* exit() (main's return calls it from libc): the end of the process is a
 * decision point while another thread of the process lives, so a strategy
 * can hold it back and let the others run first. A process whose other
 * threads are gone exits as before: no point, no event. The event goes out
 * only when the point steered the thread, like a sem_wait request's; its
 * site may lie in libc (__libc_start_call_main), so it skips the filter
 * of libc-internal calls. */
static __always_inline void enter_proc_exit(struct cs_proc_key *pk, struct cs_sync_thread *t,
					    __u32 tid, __u64 site)
{
	struct task_struct *task = bpf_get_current_task_btf();
	int live = BPF_CORE_READ(task, signal, live.counter);
	struct vma_probe vp;
	__u32 flags;

	if (live <= 1)
		return;
	flags = cs_sched_point(tid, site, CS_OP_PROC_EXIT, pk->tgid);
	if (!flags)
		return;
	vma_record(pk, site, &vp); /* the site must resolve, in libc too */
	emit(t, pk->tgid, tid, pk->gen, CS_OP_PROC_EXIT, pk->tgid, site, live - 1, flags);
}

/* A stdio output function's stream: the FILE * argument, 0 for those
 * that write to stdout (its address is libc's variable, not an argument). */
static __always_inline __u64 stdio_stream(struct pt_regs *ctx, __u32 fn)
{
	__u64 p1 = PT_REGS_PARM1(ctx), p2 = PT_REGS_PARM2(ctx), p4 = PT_REGS_PARM4(ctx);

	/* Each read at its own constant offset: clang would otherwise pick
	 * the offset by fn and read ctx at a computed one, which the
	 * verifier refuses ("dereference of modified ctx ptr", 6.18). */
	barrier_var(p1);
	barrier_var(p2);
	barrier_var(p4);
	if (fn >= CS_FN_FPRINTF && fn <= CS_FN_FFLUSH)
		return p1;
	if (fn >= CS_FN_FPUTS && fn <= CS_FN_PUTC)
		return p2;
	if (fn == CS_FN_FWRITE)
		return p4;
	return 0;
}

/* A stdio output call (printf, fputs, fflush, ...) from outside libc:
 * glibc takes the stream's own lock inside, which no pthread probe sees,
 * so a window between two critical sections with only stdio in it had no
 * decision point. It is one while another thread of the process lives (a
 * single-threaded phase costs the probe hit only); the event goes out only
 * when the point steered the thread, like exit()'s. */
static __always_inline void enter_stdio(struct pt_regs *ctx, struct cs_proc_key *pk,
					struct cs_sync_thread *t, __u32 tid, __u32 fn, __u64 site)
{
	struct task_struct *task = bpf_get_current_task_btf();
	int live = BPF_CORE_READ(task, signal, live.counter);
	__u64 stream = stdio_stream(ctx, fn);
	__u32 flags;

	if (live <= 1)
		return;
	/* the site's mapping is recorded: site_is_internal has seen it */
	flags = cs_sched_point(tid, site, CS_OP_STDIO, stream);
	if (flags)
		emit(t, pk->tgid, tid, pk->gen, CS_OP_STDIO, stream, site, fn, flags);
}

static __always_inline void remember_first_site(struct cs_sync_thread *t, __u64 site)
{
	__u32 n = t->nfirst;

	if (n >= CS_THREAD_SIG_N)
		return;
	t->first_sites[n & (CS_THREAD_SIG_N - 1)] = site;
	t->nfirst = n + 1;
}

/* glibc x86-64 aliases pthread_spin_init to pthread_spin_unlock (both
 * store 1). An "unlock" of a spin lock nobody holds is taken as the init. */
static __always_inline bool spin_init_alias(struct cs_proc_key *pk, struct cs_sync_thread *t,
					    __u64 obj)
{
	struct cs_lock_key k = {};
	struct cs_lock_state *ls;

	if (holds_lock(t, obj))
		return false;
	k.p = *pk;
	k.addr = obj;
	ls = bpf_map_lookup_elem(&cs_sync_locks, &k);
	return !ls || !ls->holder_tid;
}

/* The calling thread's state, in scope. A thread already known in this
 * image is in scope (its state exists only for a tracked process, and the
 * maps are emptied together between runs): one hash lookup, not two, on
 * every event (each costs ~100 ns on the development host, docs/perf.md).
 * Otherwise the process decides, and the thread starts afresh. */
static __always_inline struct cs_sync_thread *thread_in_scope(__u32 tid, __u32 tgid,
							      struct cs_proc_key *pk)
{
	struct cs_sync_thread *t = bpf_map_lookup_elem(&cs_sync_threads, &tid);
	struct cs_proc *proc;

	if (t && t->tgid == tgid && !(t->flags & (CS_THR_EXITED | CS_THR_STALE))) {
		pk->tgid = tgid;
		pk->gen = t->gen;
		return t;
	}
	proc = proc_in_scope(tgid);
	if (!proc) {
		stat_inc(CS_SSTAT_OUT_OF_SCOPE);
		return NULL;
	}
	pk->tgid = tgid;
	pk->gen = proc->gen;
	return thread_get(tid, tgid, pk->gen);
}

static __always_inline int sync_enter(struct pt_regs *ctx)
{
	__u32 fn = (__u32)bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid(), site = 0, obj;
	__u32 tgid = id >> 32, tid = (__u32)id, kind;
	struct cs_sync_thread *t;
	struct cs_proc_key pk;

	t = thread_in_scope(tid, tgid, &pk);
	if (!t)
		return 0;
	/* At function entry the return address is on top of the stack: it
	 * is the call site, the "site" of the action. */
	if (bpf_probe_read_user(&site, sizeof(site), (void *)PT_REGS_SP(ctx)))
		return 0;
	if (fn == CS_FN_PROC_EXIT) {
		enter_proc_exit(&pk, t, tid, site);
		return 0;
	}
	if (site_is_internal(t, &pk, site, fn, bpf_get_func_ip(ctx))) {
		stat_inc(CS_SSTAT_INTERNAL);
		return 0;
	}
	if (fn >= CS_FN_PRINTF && fn <= CS_FN_FWRITE) {
		enter_stdio(ctx, &pk, t, tid, fn, site);
		return 0;
	}
	obj = PT_REGS_PARM1(ctx);
	if (fn == CS_FN_SPIN_UNLOCK && spin_init_alias(&pk, t, obj))
		return 0;
	stat_inc(CS_SSTAT_HITS);
	remember_first_site(t, site);
	sync_mode(&pk, CS_SYNC_VISITED, site);
	kind = fn_kind(fn);
	switch (fn) {
	case CS_FN_MUTEX_UNLOCK:
	case CS_FN_RW_UNLOCK:
	case CS_FN_SPIN_UNLOCK:
		enter_unlock(&pk, t, tid, fn, obj, site);
		return 0;
	case CS_FN_SPIN_LOCK_ACQUIRED:
		/* Probed on its success return (probes.c): the request is not
		 * visible, so no decision point and no blocked/blocking. */
		goodlock_request(&pk, t, tid, obj, site);
		lock_acquired(&pk, t, tid, obj, CS_OBJ_SPIN, site, 0);
		emit(t, tgid, tid, pk.gen, CS_OP_SPIN_LOCK, obj, site, 0, 0);
		return 0;
	case CS_FN_ONCE:
		enter_once(&pk, t, tid, obj, site);
		return 0;
	case CS_FN_BARRIER_WAIT: {
		__u32 flags = cs_sched_point(tid, site, CS_OP_BARRIER, obj);

		lock_get(&pk, obj, CS_OBJ_BARRIER, site);
		emit(t, tgid, tid, pk.gen, CS_OP_BARRIER, obj, site, 0, flags);
		return 0;
	}
	default:
		break;
	}
	if (kind == CS_OBJ_MUTEX || kind == CS_OBJ_RWLOCK || kind == CS_OBJ_SPIN)
		enter_lock(ctx, &pk, t, tid, fn, obj, site);
	else if (kind == CS_OBJ_COND)
		enter_cond(ctx, &pk, t, tid, fn, obj, PT_REGS_PARM2(ctx), site);
	else if (kind == CS_OBJ_SEM)
		enter_sem(ctx, &pk, t, tid, fn, obj, site);
	else
		enter_thread(ctx, &pk, t, tid, fn, ctx, site);
	return 0;
}

/* A uprobe program runs preemptible, but this one's frame is on the
 * per-CPU BPF private stack (the JIT puts frames of 64 bytes or more
 * there for kprobe-type programs): a thread preempted inside it (the
 * scheduler kicks CPUs all the time) and the next thread to hit a probe on
 * that CPU would share the frame, and the first one would resume on the
 * second one's data. Measured: guest oopses writing through a user
 * address in cs_sync_enter (docs/kernel.md). So the body runs with
 * preemption disabled; the thread can only be preempted in the final
 * bpf_preempt_enable(), when the frame is no longer read. */
SEC("uprobe.multi")
int cs_sync_enter(struct pt_regs *ctx)
{
	bpf_preempt_disable();
	sync_enter(ctx);
	bpf_preempt_enable();
	return 0;
}

/* The park itself, in a program of its own attached to the same functions
 * and run after cs_sync_enter (userspace/kernel/sync.c): a thread must never be
 * preempted inside cs_sync_enter, whose frame lives on the per-CPU BPF
 * private stack (its stack is > 64 bytes) that the next thread on that CPU
 * reuses (docs/kernel.md, "parking inside a BPF program"). This one's
 * frame is tiny, on the thread's own kernel stack. */
SEC("uprobe.multi")
int cs_sync_commit(struct pt_regs *ctx)
{
	cs_sched_commit();
	return 0;
}

/* ---- return ------------------------------------------------------------ */

static __always_inline void return_join(struct cs_proc_key *pk, struct cs_sync_thread *t, __u32 tid,
					struct cs_pending *p)
{
	struct cs_lock_key pkey = {};
	struct cs_sync_thread *jt;
	__u32 j = 0, *jtid;
	__u64 site1 = 0;

	pkey.p = *pk;
	pkey.addr = p->obj;
	jtid = bpf_map_lookup_elem(&cs_sync_pthreads, &pkey);
	if (jtid) {
		j = *jtid;
		jt = bpf_map_lookup_elem(&cs_sync_threads, &j);
		if (jt)
			site1 = jt->exit_site ? jt->exit_site : jt->start_routine;
		hb_pair(pk, CS_HB_EXIT_JOIN, j, tid, site1, p->site, j);
		bpf_map_delete_elem(&cs_sync_pthreads, &pkey); /* pthread_t is reused */
	}
	emit(t, pk->tgid, tid, pk->gen, CS_OP_JOIN, j, p->site, p->obj, p->flags);
}

static __always_inline int sync_return(struct pt_regs *ctx)
{
	__u32 fn = (__u32)bpf_get_attach_cookie(ctx);
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, kind;
	long ret = PT_REGS_RC(ctx);
	struct cs_sync_thread *t;
	struct cs_lock_state *ls;
	struct cs_pending p;
	struct cs_proc_key pk;

	t = bpf_map_lookup_elem(&cs_sync_threads, &tid);
	if (fn == CS_FN_ONCE && t && t->tgid == tgid && t->once_obj) {
		emit(t, tgid, tid, t->gen, CS_OP_ONCE, t->once_obj, t->once_site, 0, 0);
		t->once_obj = 0;
		return 0;
	}
	/* No entry recorded: out of scope, or a libc-internal call. */
	if (!t || t->tgid != tgid || t->pending.fn != fn)
		return 0;
	p = t->pending;
	t->pending.fn = 0;
	pk.tgid = tgid;
	pk.gen = t->gen;
	kind = fn_kind(fn);
	if (kind == CS_OBJ_MUTEX || kind == CS_OBJ_RWLOCK || kind == CS_OBJ_SPIN) {
		if ((int)ret != 0) {
			emit(t, tgid, tid, pk.gen, CS_OP_TRYLOCK_FAIL, p.obj, p.site, (int)ret,
			     p.flags);
			return 0;
		}
		lock_acquired(&pk, t, tid, p.obj, kind, p.site, fn_is_read(fn));
		emit(t, tgid, tid, pk.gen, fn_acq_op(fn), p.obj, p.site, p.ts, p.flags);
		return 0;
	}
	if (kind == CS_OBJ_COND) {
		/* The mutex is reacquired whatever the result (timeouts too):
		 * a lock action on it at the wait's site. */
		lock_acquired(&pk, t, tid, p.arg, CS_OBJ_MUTEX, p.site, 0);
		ls = lock_get(&pk, p.obj, CS_OBJ_COND, p.site);
		if (ls && ls->rel_tid && ls->rel_tid != tid && ls->rel_ts >= p.ts)
			hb_pair(&pk, CS_HB_SIGNAL_WAKE, ls->rel_tid, tid, ls->rel_site, p.site,
				p.obj);
		emit(t, tgid, tid, pk.gen, CS_OP_COND_WAKE, p.obj, p.site, p.arg, p.flags);
		return 0;
	}
	if (kind == CS_OBJ_SEM) {
		if ((int)ret != 0)
			return 0;
		ls = lock_get(&pk, p.obj, CS_OBJ_SEM, p.site);
		if (ls && ls->rel_tid && ls->rel_tid != tid)
			hb_pair(&pk, CS_HB_POST_WAIT, ls->rel_tid, tid, ls->rel_site, p.site,
				p.obj);
		emit(t, tgid, tid, pk.gen, CS_OP_SEM_WAIT, p.obj, p.site, p.ts, p.flags);
		return 0;
	}
	if (fn >= CS_FN_JOIN && fn <= CS_FN_CLOCKJOIN && (int)ret == 0)
		return_join(&pk, t, tid, &p);
	return 0;
}

SEC("uretprobe.multi")
int cs_sync_return(struct pt_regs *ctx)
{
	/* Not preemptible inside: see cs_sync_enter. */
	bpf_preempt_disable();
	sync_return(ctx);
	bpf_preempt_enable();
	return 0;
}

/* ---- scheduler tracepoints -------------------------------------------- */

SEC("tp_btf/sched_process_fork")
int BPF_PROG(cs_sync_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ptid = parent->pid;
	__u32 ctgid = child->tgid, ctid = child->pid;
	struct cs_sync_thread *pt, *ct;
	struct cs_proc *proc, init = {};
	struct cs_lock_key pkey = {};
	__u64 create_site = 0, start = 0;
	struct cs_proc_key pk;
	__u32 flags;

	proc = bpf_map_lookup_elem(&cs_sync_tracked, &ptgid);
	if (!proc)
		return 0;
	pk.tgid = ptgid;
	pk.gen = proc->gen;
	pt = bpf_map_lookup_elem(&cs_sync_threads, &ptid);
	if (pt && (pt->tgid != ptgid || pt->gen != pk.gen))
		pt = NULL;
	if (ctgid != ptgid) {
		if (!cs_follow_forks) {
			stat_inc(CS_SSTAT_FORKS); /* run says the children are not steered */
			return 0;
		}
		bpf_map_update_elem(&cs_sync_tracked, &ctgid, &init, BPF_ANY);
		emit(pt, ptgid, ptid, pk.gen, CS_OP_FORK, ctgid, 0, 0, 0);
		return 0;
	}
	ct = thread_new(ctid, ctgid, pk.gen);
	if (!ct)
		return 0;
	ct->parent_tid = ptid;
	ct->pthread_self = child->thread.fsbase; /* == pthread_t on x86-64 */
	if (pt && pt->create_site_pending) {
		create_site = pt->create_site_pending;
		start = pt->create_start_pending;
		pt->create_site_pending = 0;
		ct->flags |= CS_THR_CREATED;
		hb_pair(&pk, CS_HB_CREATE_START, ptid, ctid, create_site, start, ctid);
	}
	ct->create_site = create_site;
	ct->start_routine = start;
	pkey.p = pk;
	pkey.addr = ct->pthread_self;
	bpf_map_update_elem(&cs_sync_pthreads, &pkey, &ctid, BPF_ANY);
	emit(pt, ptgid, ptid, pk.gen, CS_OP_CREATE, ctid, create_site, start, 0);
	/* The new thread's start is a decision point before its first
	 * instruction: the scheduler parks it at its first enqueue, which
	 * comes after this tracepoint (wake_up_new_task). Its event, the
	 * child's first, goes out only when the point steered it; the site
	 * is the start routine, arg the pthread_create call site. */
	if (start) {
		flags = cs_sched_start_point(ctid, start, child->policy);
		if (flags)
			emit(ct, ctgid, ctid, pk.gen, CS_OP_START, ctid, start, create_site, flags);
	}
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(cs_sync_thread_exit, struct task_struct *task)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct cs_sync_thread *t;
	struct cs_proc *proc;

	proc = bpf_map_lookup_elem(&cs_sync_tracked, &tgid);
	if (!proc)
		return 0;
	t = thread_get(tid, tgid, proc->gen);
	if (!t)
		return 0;
	t->flags |= CS_THR_EXITED;
	t->exit_ts = bpf_ktime_get_ns();
	/* exit_code is set before this tracepoint (do_exit): attach tells a
	 * crash of a process it did not start from it. */
	emit_x(t, tgid, tid, proc->gen, CS_OP_EXIT, tid, t->exit_site, t->start_routine, 0,
	       (__u32)BPF_CORE_READ(task, exit_code));
	return 0;
}

/* Per CPU: the exec's name being recorded (too big for the stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct cs_exec);
} cs_sync_exec_buf SEC(".maps");

SEC("tp_btf/sched_process_exec")
int BPF_PROG(cs_sync_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct cs_inode_key ik = {};
	struct cs_proc *proc;
	struct cs_exec *x;
	__u32 zero = 0;

	struct cs_sync_thread *t;

	proc = bpf_map_lookup_elem(&cs_sync_tracked, &tgid);
	if (!proc)
		return 0;
	proc->gen++;
	/* The file run (a script's interpreter: interp names it) and the
	 * name it was run by, once per file. */
	x = bpf_map_lookup_elem(&cs_sync_exec_buf, &zero);
	if (x && bprm->file) {
		ik.ino = bprm->file->f_inode->i_ino;
		ik.dev = bprm->file->f_inode->i_sb->s_dev;
		if (!bpf_map_lookup_elem(&cs_sync_execs, &ik) &&
		    bpf_probe_read_kernel_str(x->path, sizeof(x->path), bprm->interp) > 1)
			bpf_map_update_elem(&cs_sync_execs, &ik, x, BPF_NOEXIST);
	}
	/* The thread that exec'd keeps its tid (the leader's): its state
	 * belongs to the old image, and thread_in_scope must not take it. */
	t = bpf_map_lookup_elem(&cs_sync_threads, &tid);
	if (t && t->tgid == tgid)
		t->flags |= CS_THR_STALE;
	emit(NULL, tgid, tid, proc->gen, CS_OP_EXEC, tgid, 0, 0, 0);
	return 0;
}
