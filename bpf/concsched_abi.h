/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The one ABI header: every struct, enum and constant the BPF programs and
 * the userspace controller exchange (ring-buffer events, map keys/values,
 * policy maps). Uses only __uN types so it compiles both against vmlinux.h
 * (BPF) and <linux/types.h> (userspace), and so bpftool skeletons do not
 * collide with BPF-side typedefs (KERNEL.md).
 */
#ifndef CONCSCHED_ABI_H
#define CONCSCHED_ABI_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* ---- thread-model events (probes -> ring buffer) ---------------------- */

/* Operation of one observed action (ALGORITHMS.md notation). */
enum cs_op {
	CS_OP_NONE = 0,
	CS_OP_LOCK_REQ,	    /* mutex_lock entry (request)                */
	CS_OP_LOCK,	    /* mutex acquired (lock/timedlock returned 0) */
	CS_OP_TRYLOCK_OK,   /* trylock acquired                           */
	CS_OP_TRYLOCK_FAIL, /* trylock/timedlock did not acquire          */
	CS_OP_UNLOCK,
	CS_OP_RDLOCK_REQ,
	CS_OP_RDLOCK,
	CS_OP_WRLOCK_REQ,
	CS_OP_WRLOCK,
	CS_OP_RWUNLOCK,
	CS_OP_SPIN_LOCK,
	CS_OP_SPIN_UNLOCK,
	CS_OP_COND_WAIT, /* entry: releases the mutex                  */
	CS_OP_COND_WAKE, /* return: reacquired the mutex               */
	CS_OP_COND_SIGNAL,
	CS_OP_COND_BROADCAST,
	CS_OP_SEM_WAIT_REQ,
	CS_OP_SEM_WAIT, /* sem_wait/trywait/timedwait succeeded       */
	CS_OP_SEM_POST,
	CS_OP_BARRIER,
	CS_OP_CREATE, /* pthread_create returned; obj = new thread  */
	CS_OP_START,  /* a new thread's start, before its first
		       * instruction (from the fork tracepoint): obj =
		       * tid, site = start routine, arg = create site.
		       * Emitted only when steered (parked or delayed) */
	CS_OP_JOIN,   /* pthread_join returned; obj = joined thread */
	CS_OP_EXIT,   /* thread exit                                */
	CS_OP_READ,   /* memory access sites (access probes)        */
	CS_OP_WRITE,
	CS_OP_RW,	  /* read-modify-write (lock prefix, xchg)      */
	CS_OP_FORK,	  /* a tracked process forked; obj = child pid  */
	CS_OP_EXEC,	  /* a tracked process exec'd (new image)       */
	CS_OP_ONCE_ENTER, /* pthread_once entry; arg 1: once_control said
			   * done (the fast path: no routine to run or
			   * wait for)                                  */
	CS_OP_ONCE,	  /* pthread_once returned (the routine has run) */
	CS_OP_PROC_EXIT,  /* exit() entry (main's return too) while another
			   * thread of the process lives: the end of the
			   * process as a decision point; obj = tgid, arg =
			   * the other live threads. Emitted only when
			   * steered (parked or delayed) */
	CS_OP_STDIO,	  /* a stdio output call (printf, fputs, fwrite,
			   * fflush, ...: glibc locks the stream inside,
			   * no pthread probe sees it) from outside libc
			   * while another thread of the process lives;
			   * obj = the FILE * (0: stdout, implicit), arg =
			   * the function (enum cs_sync_fn). Emitted only
			   * when steered (parked or delayed) */
	CS_OP__COUNT,
};

/* Flags on an event. */
#define CS_EV_BLOCKED (1u << 0) /* the lock had to wait (was held)        */
#define CS_EV_PARKED  (1u << 1) /* the scheduler parked the thread here   */
#define CS_EV_DELAYED (1u << 2) /* a delay/yield was injected here        */
#define CS_EV_LIBC    (1u << 3) /* called from inside libc (internal use) */
#define CS_EV_NOWAIT  (1u << 4) /* a try or timed request: never waits for good */
#define CS_EV_NEWFILE                                                                              \
	(1u << 5) /* a mapping of a file not in cs_sync_known was                                  \
		   * recorded for it (its site, lock or start                                      \
		   * routine): read /proc/PID/maps now      */

/* One thread-model event. site is the user return address of the call
 * (the call site in the program) or the instruction address for memory
 * access sites; userspace turns it into object+offset. */
struct cs_event {
	__u64 ts_ns; /* bpf_ktime_get_ns()                                  */
	__u64 obj;   /* lock / cond / sem / barrier / memory address / tid  */
	__u64 site;  /* user address of the action                          */
	__u64 arg;   /* op-specific: start routine (CREATE), size (access),
		      * wait start ts (LOCK: time blocked = ts - arg)       */
	__u32 pid;   /* tgid                                                */
	__u32 tid;
	__u32 seq;   /* per-thread event index (replay keys on it)          */
	__u16 op;    /* enum cs_op                                          */
	__u16 flags; /* CS_EV_*                                             */
	__u32 cpu;
	__u32 nlocks;	 /* locks held after the action (lockset size)          */
	__u32 gen;	 /* exec generation of pid (struct cs_proc_key)         */
	__u32 exit_code; /* CS_OP_EXIT: the task's exit_code (a wait status:
			  * the signal that killed it, or status << 8); else 0 */
};

/* ---- synchronization probes (probes/sync.bpf.c, userspace/kernel/sync.c) -- */

/* Which pthread function a sync probe sits on: the uprobe.multi cookie of
 * cs_sync_enter and cs_sync_exit. */
enum cs_sync_fn {
	CS_FN_NONE = 0,
	CS_FN_MUTEX_LOCK,
	CS_FN_MUTEX_TRYLOCK,
	CS_FN_MUTEX_TIMEDLOCK,
	CS_FN_MUTEX_CLOCKLOCK,
	CS_FN_MUTEX_UNLOCK,
	CS_FN_RW_RDLOCK,
	CS_FN_RW_TRYRDLOCK,
	CS_FN_RW_TIMEDRDLOCK,
	CS_FN_RW_CLOCKRDLOCK,
	CS_FN_RW_WRLOCK,
	CS_FN_RW_TRYWRLOCK,
	CS_FN_RW_TIMEDWRLOCK,
	CS_FN_RW_CLOCKWRLOCK,
	CS_FN_RW_UNLOCK,
	CS_FN_SPIN_LOCK,
	CS_FN_SPIN_TRYLOCK,
	CS_FN_SPIN_UNLOCK,
	CS_FN_COND_WAIT,
	CS_FN_COND_TIMEDWAIT,
	CS_FN_COND_CLOCKWAIT,
	CS_FN_COND_SIGNAL,
	CS_FN_COND_BROADCAST,
	CS_FN_SEM_WAIT,
	CS_FN_SEM_TRYWAIT,
	CS_FN_SEM_TIMEDWAIT,
	CS_FN_SEM_CLOCKWAIT,
	CS_FN_SEM_POST,
	CS_FN_BARRIER_WAIT,
	CS_FN_CREATE,
	CS_FN_JOIN,
	CS_FN_TRYJOIN,
	CS_FN_TIMEDJOIN,
	CS_FN_CLOCKJOIN,
	CS_FN_EXIT,
	/* Not an entry: the success return of a function whose entry cannot
	 * carry a uprobe (glibc's pthread_spin_lock starts lock-prefixed). */
	CS_FN_SPIN_LOCK_ACQUIRED,
	CS_FN_ONCE,
	CS_FN_PROC_EXIT, /* libc's exit(): the process ends (CS_OP_PROC_EXIT) */
	/* stdio output functions that lock the stream (CS_OP_STDIO); the
	 * stream is implicit (stdout) for the first five, else an argument */
	CS_FN_PRINTF,
	CS_FN_PRINTF_CHK,
	CS_FN_VPRINTF,
	CS_FN_VPRINTF_CHK,
	CS_FN_PUTS,
	CS_FN_PUTCHAR,
	CS_FN_FPRINTF, /* stream: 1st argument */
	CS_FN_FPRINTF_CHK,
	CS_FN_VFPRINTF,
	CS_FN_VFPRINTF_CHK,
	CS_FN_FFLUSH, /* NULL: every stream */
	CS_FN_FPUTS,  /* stream: 2nd argument */
	CS_FN_FPUTC,
	CS_FN_PUTC,
	CS_FN_FWRITE, /* stream: 4th argument */
	CS_FN__COUNT,
};

/* Kind of synchronization object (abstract lock identity, §8 "type"). */
enum cs_obj_kind {
	CS_OBJ_NONE = 0,
	CS_OBJ_MUTEX,
	CS_OBJ_RWLOCK,
	CS_OBJ_SPIN,
	CS_OBJ_COND,
	CS_OBJ_SEM,
	CS_OBJ_BARRIER,
	CS_OBJ_THREAD,
	CS_OBJ__COUNT,
};

/* Which processes the sync probes record (rodata cs_sync_scope). */
enum cs_sync_scope {
	CS_SCOPE_TRACKED = 0, /* tgids in cs_sync_tracked (+ forks if follow) */
	CS_SCOPE_ALL,	      /* every process, filtered by comm / cgroup     */
};

#define CS_LOCKSET_MAX	 8 /* locks one thread can hold that we track     */
#define CS_THREAD_SIG_N	 8 /* first action sites kept per thread (§8)     */
#define CS_VMA_NAME_LEN	 64
#define CS_EXEC_PATH_LEN 256

/* Per-process key prefix: tgid plus its exec generation, because an exec
 * reuses the tgid with a new address space. */
struct cs_proc_key {
	__u32 tgid;
	__u32 gen;
};

/* cs_sync_tracked value: tgid -> generation and flags. */
struct cs_proc {
	__u32 gen; /* bumped on every exec of this tgid                    */
	__u32 flags;
};

struct cs_held_lock {
	__u64 lock;
	__u64 site; /* where it was acquired                                 */
	__u32 mode; /* 1 read (rwlock reader), 0 exclusive                   */
	__u32 pad;
};

/* The call in flight on a thread, from entry to return. */
struct cs_pending {
	__u64 obj;
	__u64 arg; /* cond_wait: mutex; create: start routine               */
	__u64 site;
	__u64 ts;
	__u32 fn;    /* enum cs_sync_fn; 0: none                              */
	__u32 flags; /* CS_EV_* decided at entry (BLOCKED, PARKED, ...)        */
};

/* cs_sync_threads value, key: tid. Per-thread state and identity. */
struct cs_sync_thread {
	__u32 tgid;
	__u32 gen;
	__u32 parent_tid;  /* creating thread; 0: not seen created           */
	__u32 seq;	   /* events emitted so far                          */
	__u64 create_site; /* pthread_create call site; 0: main/pre-existing */
	__u64 start_routine;
	__u64 pthread_self; /* pthread_t (the thread pointer, fsbase)         */
	__u64 exit_site;    /* pthread_exit call site, if called              */
	__u64 start_ts, exit_ts;
	__u32 flags;  /* CS_THR_*                                       */
	__u32 nfirst; /* valid entries in first_sites                   */
	__u64 first_sites[CS_THREAD_SIG_N];
	__u32 nheld;	/* lockset size (<= CS_LOCKSET_MAX)               */
	__u32 overflow; /* acquisitions not recorded: lockset full         */
	struct cs_held_lock held[CS_LOCKSET_MAX];
	struct cs_pending pending;
	/* pthread_once in flight, apart from `pending`: its routine may call
	 * pthread functions. */
	__u64 once_obj, once_site;
	/* pthread_create in flight, apart from `pending`: libc may lock
	 * internally inside it (static binaries) before the clone. */
	__u64 create_site_pending, create_start_pending;
	__u64 vma_start, vma_end; /* cache: last site's mapping              */
	__u32 vma_internal;	  /* that mapping is libc/ld.so              */
	__u32 pad;
};
#define CS_THR_MAIN    (1u << 0)
#define CS_THR_EXITED  (1u << 1)
#define CS_THR_CREATED (1u << 2) /* its pthread_create was observed      */
#define CS_THR_STALE   (1u << 3) /* its process exec'd: state of the old image */

/* cs_sync_locks key/value: per synchronization object state. */
struct cs_lock_key {
	struct cs_proc_key p;
	__u64 addr;
};
struct cs_lock_state {
	__u64 first_site;  /* first action on it (abstract identity, §8)     */
	__u64 last_site;   /* loc_last: site of the latest lock action       */
	__u64 holder_site; /* where the current holder (writer) acquired it  */
	__u64 rel_site;	   /* latest unlock / post / signal site             */
	__u64 rel_ts;
	__u32 last_tid;
	__u32 holder_tid; /* exclusive holder; 0 none                       */
	__u32 rel_tid;
	__u32 readers; /* rwlock readers holding it                      */
	__u32 kind;    /* enum cs_obj_kind                               */
	__u32 pad;
};

/* cs_sync_sp: SP pair <loc_last, loc> (ALGORITHMS.md §1) -> hit count. */
struct cs_sp_key {
	struct cs_proc_key p;
	__u64 site_last;
	__u64 site;
};

/* cs_sync_goodlock: thread tid holding held_lock (taken at held_site)
 * requests req_lock at req_site (§4 GoodLock*) -> count. */
struct cs_goodlock_key {
	struct cs_proc_key p;
	__u32 tid;
	__u32 pad;
	__u64 held_site;
	__u64 req_site;
	__u64 held_lock;
	__u64 req_lock;
};

/* HBPair kinds (§4 HBPair*). */
enum cs_hb_kind {
	CS_HB_UNLOCK_LOCK = 1, /* unlock by t1 -> lock by t2 (mutex, rwlock, spin) */
	CS_HB_SIGNAL_WAKE,     /* cond signal/broadcast -> cond_wait return  */
	CS_HB_POST_WAIT,       /* sem_post -> sem_wait return                */
	CS_HB_CREATE_START,    /* pthread_create -> new thread's start routine */
	CS_HB_EXIT_JOIN,       /* thread exit -> pthread_join return         */
	CS_HB__COUNT,
};
/* cs_sync_hb key -> count. site2 of CREATE_START is the start routine;
 * site1 of EXIT_JOIN is the pthread_exit call site, else the start routine. */
struct cs_hb_key {
	struct cs_proc_key p;
	__u32 kind;
	__u32 tid1;
	__u32 tid2;
	__u32 pad;
	__u64 site1;
	__u64 site2;
	__u64 obj;
};

/* Sync modes (§4 Sync). */
enum cs_sync_mode {
	CS_SYNC_VISITED = 1, /* the sync operation at this site ran          */
	CS_SYNC_BLOCKED,     /* a request at this site found the object held  */
	CS_SYNC_BLOCKING,    /* the holder that blocked someone acquired here */
	CS_SYNC__COUNT,
};
struct cs_sync_key {
	struct cs_proc_key p;
	__u32 mode;
	__u32 pad;
	__u64 site;
};

/* cs_sync_vmas: every mapping that contained a site or a lock, recorded
 * in BPF at first sight so sites resolve after the process is gone. */
struct cs_vma_key {
	struct cs_proc_key p;
	__u64 start;
};
struct cs_vma {
	__u64 end;
	__u64 pgoff; /* file offset of start, bytes                         */
	__u64 ino;
	__u32 dev;		    /* kernel dev_t: major << 20 | minor                  */
	__u32 file;		    /* 0: anonymous mapping                                */
	char name[CS_VMA_NAME_LEN]; /* file's basename (dentry name)          */
};

/* cs_sync_runtime: objects whose calls into pthread are libc-internal
 * (libc, ld.so), key (dev, ino) as in struct cs_vma. cs_sync_known: the
 * files whose paths the controller knows, same key. */
struct cs_inode_key {
	__u64 ino;
	__u32 dev;
	__u32 pad;
};

/* cs_sync_rt_text[0]: where libc's and ld.so's code lie, for the calls
 * whose caller's mapping cannot be looked up (bpf_find_vma fails while
 * another thread holds or waits for the address space's lock, as in
 * pthread_create or munmap): the libc-internal filter then decides by
 * these ranges. libc's executable segment in file offsets, with each
 * probed function's probe offset (index: enum cs_sync_fn; 0 when not
 * probed): the probe's address less its offset places the segment. ld.so's
 * in addresses from its load base (the auxiliary vector's AT_BASE). All 0:
 * no runtime (a static target). */
#define CS_RT_FN_SLOTS 64 /* a power of two above CS_FN__COUNT: a masked index */
struct cs_rt_text {
	__u64 libc_off_lo, libc_off_hi;
	__u64 ldso_lo, ldso_hi;
	__u64 fn_off[CS_RT_FN_SLOTS];
};
_Static_assert(CS_FN__COUNT <= CS_RT_FN_SLOTS, "cs_rt_text.fn_off holds every function");

/* cs_sync_execs, key (dev, ino) of a file a tracked process exec'd: the
 * name it was exec'd by (bprm->interp: absolute, or relative to the
 * exec'ing process's directory), so its sites get the file's path even
 * when the process is gone before the controller reads its maps. */
struct cs_exec {
	char path[CS_EXEC_PATH_LEN];
};

/* The keys each counting map got this run, in the order they were added
 * (cs_sync_keylog_n[slot] counts them, cs_sync_*_log hold the first
 * CS_KEYLOG_MAX): the harvest takes those entries by key instead of
 * walking all of a map's buckets (32,768 a map, for tens of entries). */
#define CS_KEYLOG_MAX 4096
enum cs_keylog_slot {
	CS_KEYLOG_SP = 0,
	CS_KEYLOG_GOODLOCK,
	CS_KEYLOG_HB,
	CS_KEYLOG_SYNC,
	CS_KEYLOG__COUNT,
};

/* cs_sync_stats slots (per-CPU counters). */
enum cs_sync_stat {
	CS_SSTAT_HITS = 0,     /* probe hits from in-scope threads           */
	CS_SSTAT_EVENTS,       /* events written to the ring buffer           */
	CS_SSTAT_RB_DROPS,     /* ring buffer full: event lost                */
	CS_SSTAT_INTERNAL,     /* calls from libc/ld.so itself, ignored       */
	CS_SSTAT_MAP_FULL,     /* a coverage/state map was full: task lost    */
	CS_SSTAT_LOCKSET_OVF,  /* lockset deeper than CS_LOCKSET_MAX          */
	CS_SSTAT_UNMATCHED,    /* return without a matching entry             */
	CS_SSTAT_OUT_OF_SCOPE, /* hits in processes that are not targets      */
	CS_SSTAT_FORKS,	       /* a tracked process forked; child not followed */
	CS_SSTAT__COUNT,
};

/* ---- scheduler control (sched/, bpf/sched_point.bpf.h, scx_concsched.c) --- */

/* What a decision point does to the thread that reached it. */
enum cs_action {
	CS_ACT_NONE = 0,
	CS_ACT_PARK,	/* stop before the probed instruction until released   */
	CS_ACT_DELAY,	/* stop for delay_ns from the probe's timestamp         */
	CS_ACT_YIELD,	/* preempt now, go to the back of the run queue         */
	CS_ACT_RELEASE, /* site policy only: the thread runs on and releases
			 * cs_site_policy.release_tid (0: every parked one)  */
};

/* Thread state in cs_thread_ctl (the per-tid control map). The *_PENDING
 * states are set by the probe side; the scheduler's ops.enqueue turns them
 * into PARKED (park, delay) or back to RUN (yield). */
enum cs_tstate {
	CS_TS_RUN = 0,
	CS_TS_PARK_PENDING,
	CS_TS_DELAY_PENDING,
	CS_TS_YIELD_PENDING,
	CS_TS_PARKED,	/* in the PARKED DSQ until released                  */
	CS_TS_DELAYED,	/* in the PARKED DSQ until its timer fires           */
	CS_TS_RELEASED, /* released, on its way back to its own CPU          */
};

/* Per-thread control, key: tid (__u32). Created by the scheduler when a
 * task enters SCHED_EXT and by the probe side on first point. Userspace
 * writes next_action/next_delay_ns/prio (in place, through the syscall
 * program cs_thread_set); BPF owns the rest. */
struct cs_thread_ctl {
	__u64 state;	     /* enum cs_tstate (64-bit: BPF v1 atomics)       */
	__u32 next_action;   /* one-shot action at the thread's next point   */
	__u32 ordinal;	     /* n-th thread to enter the scheduler (from 1)   */
	__u64 next_delay_ns; /* delay for next_action == CS_ACT_DELAY         */
	__u32 pid;	     /* tgid                                          */
	__u32 cpu;	     /* CPU the thread is parked on (pinned there)    */
	__u32 prio;	     /* serial mode CS_SERIAL_PRIO: higher runs first */
	__u32 park_gen;	     /* bumped per park; stale timers compare it      */
	__u64 probe_ts;	     /* bpf_ktime_get_ns() at the point               */
	__u64 park_ts;	     /* when ops.enqueue parked it                    */
	__u64 deadline_ns;   /* delay end, absolute CLOCK_MONOTONIC           */
	__u64 site;	     /* site of the point it stopped at               */
	__u64 obj;	     /* object of that point (lock address, ...)      */
	__u16 op;	     /* enum cs_op of that point                      */
	__u16 action;	     /* enum cs_action being applied                  */
	__u32 points;	     /* decision points this thread reached           */
	__u64 nparks, ndelays, nyields, nwatchdog; /* per-thread counters     */
	__u64 park_ns_total;  /* time spent parked/delayed                     */
	__u64 release_ts;     /* when it was released (0: not yet)             */
	__u32 release_reason; /* enum cs_release_reason                      */
	__u32 nenq;	      /* times it entered the shared run queue         */
	__u64 park_ip;	      /* user instruction pointer when parked: the
			       * probed address if the park was synchronous    */
	__u32 release_req;    /* it reached a CS_ACT_RELEASE point: its fexit
			       * kick releases release_req_tid (0: all)        */
	__u32 release_req_tid;
	__u32 target; /* the target it belongs to (CS_SCHED_MAX_TARGETS)      */
	__u32 pad_t;
};

/* Per-site policy, key: site (__u64). Also looked up under
 * CS_SITE_OP_KEY(op) so one entry can cover every site of an operation
 * (e.g. every pthread_mutex_lock). Sites of function points (uprobes on a
 * symbol, scx_concsched_add_point) are CS_SITE_FUNC_KEY(index). */
#define CS_SITE_OP_KEY(op)    ((1ULL << 62) | (__u64)(op))
#define CS_SITE_FUNC_KEY(idx) ((1ULL << 63) | (__u64)(idx))

/* Targets steered at once (run -j N): each process tree the scheduler
 * governs belongs to one target, whose threads have their own serial
 * token, run queue, counters, configuration (cs_sched_cfg_map[target]),
 * notes and site policies. A site key is the site with its target in bits
 * 56-58 (user addresses and the keys above leave them clear); target 0's
 * keys are the plain ones. */
#define CS_SCHED_MAX_TARGETS	8
#define CS_TARGET_ALL		0xffffffffU /* cs_release_args.target: every target */
#define CS_SITE_TKEY(key, t)	((__u64)(key) | ((__u64)((t) & (CS_SCHED_MAX_TARGETS - 1)) << 56))
#define CS_SITE_KEY_TARGET(key) ((__u32)(((key) >> 56) & (CS_SCHED_MAX_TARGETS - 1)))
struct cs_site_policy {
	__u32 action;	   /* enum cs_action                                     */
	__u32 tid;	   /* only this thread; 0 = any                          */
	__u64 delay_ns;	   /* CS_ACT_DELAY                                       */
	__u64 skip;	   /* let the first `skip` hits pass                     */
	__u64 count;	   /* then act on this many hits; 0 = every hit          */
	__u64 hits;	   /* hits so far (BPF increments)                       */
	__u32 release_tid; /* CS_ACT_RELEASE: whom to release; 0 = all parked */
	__u32 pad;
};

/* Counters both the scheduler and the kick objects update (map
 * cs_sched_shared_map, one element per target). */
struct cs_sched_shared {
	__s64 nr_parked;      /* parked or delayed right now                  */
	__s64 nr_released;    /* released, not yet back on their CPU          */
	__u64 releases;	      /* every release                                */
	__u64 event_releases; /* releases by CS_ACT_RELEASE points            */
	__u64 park_cancels;   /* releases that came between a thread's point
			       * and its park: the park was cancelled       */
	/* The parked set's version: leaves << 32 | parked, one atomic add per
	 * change (a park +1, a leave +2^32 - 1), so that one load reads both
	 * halves of one moment, and the word only grows: every change of the
	 * set makes it larger (the all-parked notes, cs_all_parked_new). */
	__u64 parked_set;
};
#define CS_PARKED_SET_PARK  1ULL	       /* a park's add to parked_set */
#define CS_PARKED_SET_LEAVE ((1ULL << 32) - 1) /* a release's: leaves + 1, parked - 1 */
/* parked_set's parked count; below zero for an instant when a release
 * overtakes the park it ends (cs_park counts after its state change). */
#define CS_PARKED_SET_COUNT(v) ((__s64)(__s32)(__u32)(v))

/* Next-thread selection in serial mode. */
enum cs_serial_mode {
	CS_SERIAL_OFF = 0,
	CS_SERIAL_FIFO,	  /* order of becoming runnable                       */
	CS_SERIAL_RANDOM, /* uniformly among the runnable, seeded             */
	CS_SERIAL_PRIO,	  /* highest cs_thread_ctl.prio first (PCT)           */
};

/* A target's configuration, its element of cs_sched_cfg_map. */
struct cs_sched_cfg {
	__u32 active;	   /* 0: points never stop threads (teardown, observe) */
	__u32 serial;	   /* enum cs_serial_mode                              */
	__u64 watchdog_ns; /* no park/delay lasts longer; 0 = default 1 s      */
	__u64 seed;	   /* CS_SERIAL_RANDOM                                 */
	__u64 slice_ns;	   /* time slice of target threads; 0 = default        */
	__u64 points;	   /* decision points seen (BPF increments)            */
};

/* Scheduler -> userspace notifications (ring buffer cs_sched_notes). */
enum cs_note_kind {
	CS_NOTE_ALL_PARKED = 1, /* every runnable target thread is parked     */
	CS_NOTE_RESUMED,	/* a parked/delayed thread ran again          */
	CS_NOTE_STARVED,	/* a thread waited the starvation bound to run */
};
/* Why a parked thread was let go (cs_thread_ctl.release_reason). */
enum cs_release_reason {
	CS_REL_NONE = 0,
	CS_REL_USER,	 /* scx_concsched_release (SEC("syscall") program)        */
	CS_REL_DELAY,	 /* its delay timer fired                             */
	CS_REL_WATCHDOG, /* the park outlived cs_sched_cfg.watchdog_ns        */
	CS_REL_TEARDOWN, /* release-all before detach/unload                  */
	CS_REL_EVENT,	 /* another thread reached a CS_ACT_RELEASE point     */
};
#define CS_NOTE_MAX_TIDS 64
struct cs_sched_note {
	__u64 ts_ns;
	__u32 kind;	  /* enum cs_note_kind                               */
	__u32 tid;	  /* RESUMED: the thread                             */
	__u32 reason;	  /* RESUMED: enum cs_release_reason                 */
	__u32 nr_parked;  /* ALL_PARKED: parked threads (first 64 in tids)   */
	__u32 nr_threads; /* target threads known to the scheduler          */
	__u32 nr_runnable;
	__u64 parked_ns;  /* RESUMED: from the probe's timestamp to running;
			   * STARVED: how long it has waited to run         */
	__u64 late_ns;	  /* RESUMED: running - release (USER/WATCHDOG) or
			   * running - deadline (DELAY); signed as __s64     */
	__u64 site;	  /* RESUMED: where it was stopped                   */
	__u64 park_ip;	  /* RESUMED: user IP while it was stopped           */
	__u64 to_park_ns; /* RESUMED: from the probe's timestamp to the park */
	__u32 tids[CS_NOTE_MAX_TIDS];
	__u32 target;  /* the target whose threads these are                */
	__s32 cpu;     /* STARVED: the CPU it waits on                      */
	__u64 dsq_id;  /* STARVED: the queue it waits in                    */
	__u32 exiting; /* STARVED: it is exiting                           */
	__u32 pad;
};

/* BPF_PROG_RUN context of the SEC("syscall") release program. */
struct cs_release_args {
	__u32 tid;	/* 0: every parked/delayed thread                     */
	__u32 reason;	/* enum cs_release_reason                             */
	__u32 released; /* out: threads released                              */
	__u32 target;	/* tid 0: that target's threads (CS_TARGET_ALL: all) */
};

/* BPF_PROG_RUN context of the SEC("syscall") program cs_thread_set: the
 * fields userspace owns in a thread's cs_thread_ctl, written in place (a
 * read-modify-write of the whole entry from userspace would write back the
 * BPF side's state and park generation as they were when read, losing a
 * park or release in between: a thread left parked for good). */
enum cs_thread_set_what {
	CS_THREAD_SET_NEXT = 1 << 0, /* next_action, next_delay_ns */
	CS_THREAD_SET_PRIO = 1 << 1, /* prio                       */
};

struct cs_thread_set_args {
	__u32 tid;
	__u32 what; /* enum cs_thread_set_what                            */
	__u64 next_delay_ns;
	__u32 next_action;
	__u32 prio;
	__s32 err;    /* out: 0, or -ENOMEM when the table is full           */
	__u32 target; /* the thread's target, if its entry is created here */
};

/* A target's serial token and what goes with it (the scheduler object's
 * .bss, tgts[target]): at most one of its threads runs in serial mode,
 * whatever the other targets do. */
struct cs_target_state {
	__u64 serial_owner;	      /* tid allowed to run in serial mode, 0: free */
	__u64 serial_owner_ts;	      /* when it took the token or last started running */
	__u64 serial_owner_running;   /* the owner is on a CPU right now */
	__u64 serial_owner_preempted; /* the owner was preempted with slice left: it
				       * waits at the head of its CPU's local DSQ */
	__u64 token_wanted;	      /* a released thread's dispatch found the token taken */
	__u32 serial_owner_prio;      /* CS_SERIAL_PRIO: priority of the running owner */
	__s32 serial_owner_cpu;
	__u64 rand_state;
	__u64 thread_seq;	  /* ordinals of its threads */
	__u64 all_parked_key;	  /* the parked set last noted (cs_sched_shared.parked_set) */
	__u64 serial_owner_exec0; /* the owner's sum_exec_runtime when it took the token */
	__u64 serial_owner_yield; /* tid of an owner asked to give the token up (PCT) */
};

/* Scheduler counters (the scheduler object's .bss, read by userspace). */
struct cs_sched_stats {
	__u64 enqueues, dispatches, parks, releases, delays, yields;
	__u64 watchdog, notes, notes_dropped, stale_marks, kicks;
	__u64 delay_err_ns_total; /* sum of (unpark time - deadline)        */
	__u64 delay_err_ns_max;
	__u64 nr_threads, nr_runnable, nr_parked; /* current values          */
	__u64 serial_preempts;			  /* serial mode: a thread found running without
						   * the token was sent back to the queue          */
	__u64 prio_preempts;			  /* CS_SERIAL_PRIO: a higher-priority thread
						   * became runnable and preempted the owner       */
	__u64 event_releases;			  /* releases by CS_ACT_RELEASE points          */
	__u64 release_rekicks;			  /* a released thread was still off its CPU
						   * CS_RELEASE_RETRY_NS later: its CPU was
						   * kicked again (a lost wakeup, counted)      */
	__u64 timer_errors;			  /* a park's timer could not be armed: the
						   * thread was released at once (a park
						   * without a timer would stall it)           */
	__u64 notes_repeated;			  /* all-parked notes not sent: the same
						   * parked set was noted already               */
	__u64 serial_kicks_kept;		  /* serial mode: a kick meant for another
						   * thread ended the owner's slice early; it
						   * kept its token                             */
	__u64 starved;				  /* starved notes: a thread waited the
						   * starvation bound to run (not parked)       */
	__u64 rescued;				  /* written by userspace: starved threads
						   * it moved to the fair class                 */
	__u64 serial_stalls;			  /* serial mode: the owner was charged a
						   * stall of its CPU (CS_STALL_NS or more at
						   * once), not counted as its run on the token */
	__u64 park_cancels;			  /* a release came between a thread's point
						   * and its park: it ran on, not parked        */
};

/* ---- memory-access sites (site_finder.c -> probes/access.bpf.c) ------ */

/* Register numbers are the __u64 slot of each register in the x86-64
 * struct pt_regs, so both sides name registers the same way. */
enum cs_reg {
	CS_REG_R15 = 0,
	CS_REG_R14,
	CS_REG_R13,
	CS_REG_R12,
	CS_REG_BP,
	CS_REG_BX,
	CS_REG_R11,
	CS_REG_R10,
	CS_REG_R9,
	CS_REG_R8,
	CS_REG_AX,
	CS_REG_CX,
	CS_REG_DX,
	CS_REG_SI,
	CS_REG_DI,
	CS_REG_ORIG_AX,
	CS_REG_IP,
	CS_REG_CS,
	CS_REG_FLAGS,
	CS_REG_SP,
	CS_REG_SS,
	CS_REG_NONE = 0xff,
};

#define CS_ACC_READ  (1u << 0) /* loads memory                              */
#define CS_ACC_WRITE (1u << 1) /* stores memory (both bits: read-modify-write) */
#define CS_ACC_LOCK  (1u << 2) /* atomic: lock prefix or xchg with memory   */
#define CS_ACC_RIP   (1u << 3) /* rip-relative: ea = probe address + disp    */

/* Operand decode of one access site: value of the access_sites array map,
 * indexed by the site's uprobe.multi cookie. ea = base + index * scale +
 * disp; for CS_ACC_RIP, disp already includes the instruction length, so
 * ea = instruction address + disp. */
struct cs_access_site {
	__s64 disp;
	__u8 base;  /* enum cs_reg, CS_REG_NONE */
	__u8 index; /* enum cs_reg, CS_REG_NONE */
	__u8 scale; /* 1, 2, 4, 8 */
	__u8 size;  /* bytes accessed, 0: unknown */
	__u8 flags; /* CS_ACC_* */
	__u8 pad[3];
};

/* One executed access (ring buffer "access_events"). */
struct cs_access_event {
	__u64 ts_ns; /* bpf_ktime_get_ns()                                  */
	__u64 addr;  /* effective address                                   */
	__u64 ip;    /* runtime address of the instruction                  */
	__u64 sp;    /* user stack pointer (tells thread-stack addresses)   */
	__u32 pid;   /* tgid                                                */
	__u32 tid;
	__u32 site; /* cookie: index into the site table                   */
	__u8 flags; /* CS_ACC_* of the site (R/W/both, lock)               */
	__u8 size;
	__u16 cpu;
};

/* Heap allocators the access probes follow to name heap blocks by their
 * allocation site (ALGORITHMS.md §8): the uprobe cookie of alloc_enter. */
enum cs_alloc_fn {
	CS_ALLOC_MALLOC = 0, /* malloc(size)                                  */
	CS_ALLOC_CALLOC,     /* calloc(n, size)                               */
	CS_ALLOC_REALLOC,    /* realloc(p, size)                              */
	CS_ALLOC__COUNT,
};

/* One heap allocation that returned a block (ring buffer "alloc_events"). */
struct cs_alloc_event {
	__u64 ts_ns;  /* when the allocator returned                         */
	__u64 addr;   /* block                                               */
	__u64 size;   /* requested bytes                                     */
	__u64 caller; /* return address of the allocator call (call site)   */
	__u32 pid;
	__u32 tid;
};

/* access_stats array map slots (per-CPU counters). */
enum cs_access_stat {
	CS_ASTAT_HITS = 0,	/* probe ran for a target thread                 */
	CS_ASTAT_EVENTS,	/* events written to the ring buffer             */
	CS_ASTAT_DROPPED,	/* ring buffer full: event lost                  */
	CS_ASTAT_FILTERED,	/* hit in a process that is not a target         */
	CS_ASTAT_ALLOCS,	/* heap allocations recorded                     */
	CS_ASTAT_ALLOC_DROPPED, /* alloc ring buffer full                     */
	CS_ASTAT_UNSTEERED,	/* run: a hit past its site's steering cap,
				 * not a decision point                      */
	CS_ASTAT_UNPROBED,	/* run: a hit past its site's probe cap: no
				 * event (its uprobe is on its way out)      */
	CS_ASTAT_CAPPED,	/* run: sites closed by the probe cap        */
	CS_ASTAT_BUDGET,	/* run: of those, closed by the probe budget */
	CS_ASTAT__COUNT,
};

#endif /* CONCSCHED_ABI_H */
