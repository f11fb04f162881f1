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
	CS_OP_LOCK_REQ,        /* mutex_lock entry (request)                */
	CS_OP_LOCK,            /* mutex acquired (lock/timedlock returned 0) */
	CS_OP_TRYLOCK_OK,      /* trylock acquired                           */
	CS_OP_TRYLOCK_FAIL,    /* trylock/timedlock did not acquire          */
	CS_OP_UNLOCK,
	CS_OP_RDLOCK_REQ,
	CS_OP_RDLOCK,
	CS_OP_WRLOCK_REQ,
	CS_OP_WRLOCK,
	CS_OP_RWUNLOCK,
	CS_OP_SPIN_LOCK,
	CS_OP_SPIN_UNLOCK,
	CS_OP_COND_WAIT,       /* entry: releases the mutex                  */
	CS_OP_COND_WAKE,       /* return: reacquired the mutex               */
	CS_OP_COND_SIGNAL,
	CS_OP_COND_BROADCAST,
	CS_OP_SEM_WAIT_REQ,
	CS_OP_SEM_WAIT,        /* sem_wait/trywait/timedwait succeeded       */
	CS_OP_SEM_POST,
	CS_OP_BARRIER,
	CS_OP_CREATE,          /* pthread_create returned; obj = new thread  */
	CS_OP_START,           /* first event of a new thread                */
	CS_OP_JOIN,            /* pthread_join returned; obj = joined thread */
	CS_OP_EXIT,            /* thread exit                                */
	CS_OP_READ,            /* memory access sites (access probes)        */
	CS_OP_WRITE,
	CS_OP_RW,              /* read-modify-write (lock prefix, xchg)      */
	CS_OP__COUNT,
};

/* Flags on an event. */
#define CS_EV_BLOCKED  (1u << 0) /* the lock had to wait (was held)        */
#define CS_EV_PARKED   (1u << 1) /* the scheduler parked the thread here   */
#define CS_EV_DELAYED  (1u << 2) /* a delay/yield was injected here        */
#define CS_EV_LIBC     (1u << 3) /* called from inside libc (internal use) */

/* One thread-model event. site is the user return address of the call
 * (the call site in the program) or the instruction address for memory
 * access sites; userspace turns it into object+offset. */
struct cs_event {
	__u64 ts_ns;   /* bpf_ktime_get_ns()                                  */
	__u64 obj;     /* lock / cond / sem / barrier / memory address / tid  */
	__u64 site;    /* user address of the action                          */
	__u64 arg;     /* op-specific: start routine (CREATE), size (access),
			* wait start ts (LOCK: time blocked = ts - arg)       */
	__u32 pid;     /* tgid                                                */
	__u32 tid;
	__u32 seq;     /* per-thread event index (replay keys on it)          */
	__u16 op;      /* enum cs_op                                          */
	__u16 flags;   /* CS_EV_*                                             */
	__u32 cpu;
	__u32 nlocks;  /* locks held after the action (lockset size)          */
};

#endif /* CONCSCHED_ABI_H */
