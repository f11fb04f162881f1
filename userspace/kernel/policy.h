/* SPDX-License-Identifier: MIT */
/*
 * The policy interface every strategy (tsa, map, noise, random, pct, ga)
 * steers the target through: park threads at sites or at their next point,
 * release, delay, yield, serialize with a next-thread rule, priorities, and
 * the "every runnable thread is parked" notification carrying the parked
 * set (DESIGN.md "One run", step 3; the moment seed 000's TSA and seed
 * 001's MAP release rules decide).
 *
 * Two backends behind the same calls:
 *  - policy_new_sched(): the real one, over sched_ctl (BPF maps and the
 *    SEC("syscall") release program of sched/scx_concsched.bpf.c);
 *  - policy_new_fake(): records every call in a log and simulates threads
 *    (runnable / parked / delayed / blocked, site hit counting exactly as
 *    bpf/sched_point.bpf.h does, delays, watchdog, the notification) so
 *    strategies are unit-tested without a kernel.
 *
 * Sites: what the probes report as cs_event.site (a user address), or
 * CS_SITE_OP_KEY(op) for every site of an operation, or
 * CS_SITE_FUNC_KEY(i) for a function point. tid 0 means "any thread".
 * Times are microseconds. Calls return 0 or -errno unless stated.
 */
#ifndef CONCSCHED_POLICY_H
#define CONCSCHED_POLICY_H

#include <stdbool.h>
#include <stdint.h>

#include <linux/types.h>

#include "concsched_abi.h"

struct policy;
struct sched_ctl;

/* Every runnable target thread is parked (or blocked): who is parked. */
struct policy_note {
	uint64_t ts_ns;
	uint32_t nr_parked;
	uint32_t nr_threads;
	uint32_t tids[CS_NOTE_MAX_TIDS]; /* the first min(nr_parked, 64) */
};

typedef void (*policy_all_parked_fn)(struct policy *p, const struct policy_note *n, void *ctx);

struct policy *policy_new_sched(struct sched_ctl *ctl);
struct policy *policy_new_fake(void);
void policy_free(struct policy *p);

/* Act at a site on hits skip+1 .. skip+count (count 0: every hit after
 * skip), for thread tid only (0: any). */
int policy_park_site(struct policy *p, uint64_t site, uint32_t tid, uint64_t skip, uint64_t count);
int policy_delay_site(struct policy *p, uint64_t site, uint32_t tid, uint64_t delay_us,
		      uint64_t skip, uint64_t count);
int policy_yield_site(struct policy *p, uint64_t site, uint32_t tid, uint64_t skip, uint64_t count);
/* When a thread (tid, 0: any) reaches site, it runs on and releases
 * release_tid (0: every parked thread) from BPF, with no round trip to
 * userspace: a release driven by another thread's event. */
int policy_release_at_site(struct policy *p, uint64_t site, uint32_t tid, uint32_t release_tid,
			   uint64_t skip, uint64_t count);
int policy_clear_site(struct policy *p, uint64_t site);

/* One-shot: thread tid at its next decision point. */
int policy_park_next(struct policy *p, uint32_t tid);
int policy_delay_next(struct policy *p, uint32_t tid, uint64_t delay_us);
int policy_yield_next(struct policy *p, uint32_t tid);

/* Release a parked thread (0: all). Returns how many were released. */
int policy_release(struct policy *p, uint32_t tid);
/* Serial mode: CS_SERIAL_OFF, _FIFO, _RANDOM (seeded), _PRIO (PCT). */
int policy_serialize(struct policy *p, enum cs_serial_mode mode, uint64_t seed);
/* Serial CS_SERIAL_PRIO: higher runs first (takes effect when the thread
 * next enters the run queue). */
int policy_set_prio(struct policy *p, uint32_t tid, uint32_t prio);

/* Parked/delayed threads now (up to max). Returns the count. */
int policy_parked(struct policy *p, uint32_t *tids, int max);

/* Register the all-parked callback; policy_poll() delivers it. */
void policy_on_all_parked(struct policy *p, policy_all_parked_fn fn, void *ctx);
/* A released (or delayed, or watchdog-released) thread ran again at ts_ns
 * (bpf_ktime_get_ns, the probes' clock), let go for reason (enum
 * cs_release_reason); policy_poll() delivers it. */
typedef void (*policy_resumed_fn)(struct policy *p, uint32_t tid, uint64_t ts_ns, uint32_t reason,
				  void *ctx);
void policy_on_resumed(struct policy *p, policy_resumed_fn fn, void *ctx);
/* Wait up to timeout_ms for notifications and deliver them. Returns the
 * number delivered or -errno. */
int policy_poll(struct policy *p, int timeout_ms);

/* ---- fake backend only ------------------------------------------------ */

/* A new runnable thread. */
int policy_fake_thread(struct policy *p, uint32_t tid);
/* Thread tid reaches a decision point: applies its one-shot action or the
 * site policy (site, then CS_SITE_OP_KEY(op)). Returns the enum cs_action
 * taken (CS_ACT_NONE if it ran on) or -errno (unknown / not running). */
int policy_fake_point(struct policy *p, uint32_t tid, uint64_t site, uint16_t op);
/* The thread blocks (futex wait...) or wakes up. */
int policy_fake_block(struct policy *p, uint32_t tid, bool blocked);
int policy_fake_exit(struct policy *p, uint32_t tid);
/* Advance simulated time: delays end, parks older than the watchdog
 * (1 s, or policy_fake_watchdog) are released. Returns threads released. */
int policy_fake_advance(struct policy *p, uint64_t us);
void policy_fake_watchdog(struct policy *p, uint64_t us);
/* enum cs_tstate of tid (CS_TS_PARKED, CS_TS_DELAYED, CS_TS_RUN), or
 * -ENOENT; blocked threads report CS_TS_RUN with policy_fake_blocked. */
int policy_fake_state(struct policy *p, uint32_t tid);
bool policy_fake_blocked(struct policy *p, uint32_t tid);
/* Serial mode and priority as last set, and counters. */
enum cs_serial_mode policy_fake_serial(struct policy *p);
uint32_t policy_fake_prio(struct policy *p, uint32_t tid);
uint64_t policy_fake_watchdog_releases(struct policy *p);
/* Every call, one line each ("park_site 0x4011a6 tid=0 skip=0 count=1").
 * The string lives until the next call or policy_fake_clear_log. */
const char *policy_fake_log(struct policy *p);
void policy_fake_clear_log(struct policy *p);

#endif
