/* SPDX-License-Identifier: MIT */
/*
 * Control of the scx_concsched scheduler (sched/scx_concsched.bpf.c):
 * load it, share its policy maps with the probe objects, attach the fexit
 * kicks, park / release / delay / yield threads, serial mode, priorities,
 * read its notes and counters, and unload it printing the exit info.
 *
 * Lifecycle (docs/STYLE.md, Linux's tools/sched_ext): scx_concsched_open() checks the kernel,
 * loads and registers the scheduler; the caller shares maps into its probe
 * objects before loading them (scx_concsched_share_maps), then attaches a kick
 * to each loaded program that calls cs_sched_point (scx_concsched_attach_kick).
 * Before detaching any probe, call scx_concsched_quiesce(): a thread parked
 * inside a uprobe handler holds the uprobe SRCU read lock, so detaching
 * first would wait for it (KERNEL.md Q3). scx_concsched_close() quiesces too.
 */
#ifndef CONCSCHED_SCX_CONCSCHED_H
#define CONCSCHED_SCX_CONCSCHED_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <linux/types.h>

#include "concsched_abi.h"

struct bpf_object;
struct bpf_program;
struct sched_ctl;

#define SCHED_CTL_TIMEOUT_MS_DFL  30000 /* ops.timeout_ms: the kernel's largest */
#define SCHED_CTL_RESCUE_MS_DFL	  3750	/* starvation rescue with the default */
#define SCHED_CTL_WATCHDOG_MS_DFL 1000

struct scx_concsched_opts {
	unsigned watchdog_ms; /* park bound; 0: 1000; must be <= timeout_ms/2 */
	unsigned timeout_ms;  /* sched_ext stall timeout; 0: 30000           */
	unsigned rescue_ms;   /* starvation rescue; 0: 75% of a timeout_ms
			       * given, else 3750; below timeout_ms       */
	unsigned slice_us;    /* target time slice; 0: 5000                  */
	enum cs_serial_mode serial;
	uint64_t seed;
	bool no_rescue; /* keep a starved thread in SCHED_EXT (the kernel then
			 * ejects the scheduler at the timeout): `sched
			 * --no-rescue`, to see the stall and its dump */
};

/* Check the kernel (sched_ext present, kfuncs present, no other scheduler),
 * load and register the scheduler. Prints one actionable line on failure.
 * Returns 0, -ENOTSUP (kernel lacks sched_ext or too old), -EBUSY (another
 * scheduler), or another -errno. */
int scx_concsched_open(struct sched_ctl **out, const struct scx_concsched_opts *o);

/* One more target of the scheduler that owner loaded (run -j N): a handle
 * whose calls below act on its target's threads only (its configuration,
 * serial mode, site policies, releases, parked set, counters, reset) and
 * whose notes are its target's; the owner's handle is target 0. A process
 * is a target's once scx_concsched_own names it, before it enters SCHED_EXT;
 * what it forks follows. Open and close targets from one thread (or under
 * a lock); the owner is closed last. 0, -E2BIG (all CS_SCHED_MAX_TARGETS in
 * use) or -errno. scx_concsched_close closes it (the scheduler stays). */
int scx_concsched_target_open(struct sched_ctl *owner, struct sched_ctl **out);
uint32_t scx_concsched_target_index(const struct sched_ctl *c);
/* Process pid (launched, not yet in SCHED_EXT) is c's target's. */
int scx_concsched_own(struct sched_ctl *c, int pid);

/* Make the policy maps of bpf/sched_point.bpf.h in obj (opened, not
 * yet loaded) use the scheduler's. 0 or -errno. */
int scx_concsched_share_maps(struct sched_ctl *c, struct bpf_object *obj);

/* Attach the fexit kick to a loaded program that calls cs_sched_point. */
int scx_concsched_attach_kick(struct sched_ctl *c, struct bpf_program *prog);

/* Function point: uprobe on SYMBOL of BINARY for process pid (-1: all);
 * its site is CS_SITE_FUNC_KEY(*index). The kick is attached on first use.
 * A target's handle attaches it through the scheduler's (its kicks are
 * counted there) and sets its policy for its own target. */
int scx_concsched_add_point(struct sched_ctl *c, int pid, const char *binary, const char *symbol,
			    uint32_t *index);

/* If the controller dies, the kernel releases its files last-closed
 * first; keep a dup of the scheduler's link above every other fd so the
 * scheduler unregisters before the probe links are torn down (those wait
 * for threads parked inside their handlers). Done by attach_kick and
 * add_point; call it again after attaching anything else. */
int scx_concsched_guard(struct sched_ctl *c);

/* Decision points stop threads only while active. */
int scx_concsched_set_active(struct sched_ctl *c, bool active);
int scx_concsched_set_site(struct sched_ctl *c, uint64_t site, const struct cs_site_policy *sp);
int scx_concsched_clear_site(struct sched_ctl *c, uint64_t site);
/* One-shot action for thread tid at its next decision point. */
int scx_concsched_thread_next(struct sched_ctl *c, uint32_t tid, enum cs_action act,
			      uint64_t delay_ns);
int scx_concsched_set_prio(struct sched_ctl *c, uint32_t tid, uint32_t prio);
int scx_concsched_set_serial(struct sched_ctl *c, enum cs_serial_mode mode, uint64_t seed);
/* Release one thread (tid 0: all parked). Returns threads released or -errno. */
int scx_concsched_release(struct sched_ctl *c, uint32_t tid);
/* Parked/delayed threads (up to max tids). Returns the count. */
int scx_concsched_parked(struct sched_ctl *c, uint32_t *tids, int max);
int scx_concsched_thread(struct sched_ctl *c, uint32_t tid, struct cs_thread_ctl *out);
/* Forget per-thread and per-site state (between runs). */
void scx_concsched_reset(struct sched_ctl *c);

/* Wait up to timeout_ms for scheduler notes; calls fn for each.
 * Returns notes handled or -errno. */
typedef void (*sched_note_fn)(const struct cs_sched_note *n, void *ctx);
int scx_concsched_poll(struct sched_ctl *c, int timeout_ms, sched_note_fn fn, void *ctx);

/* An fd readable when notes wait (for an epoll set of several targets'). */
int scx_concsched_notes_fd(struct sched_ctl *c);

void scx_concsched_stats(struct sched_ctl *c, struct cs_sched_stats *out);
/* The starvation rescue's threshold in ms (0: no rescue). */
unsigned scx_concsched_rescue_ms(const struct sched_ctl *c);
uint64_t scx_concsched_kicks(struct sched_ctl *c);
/* The kernel ejected (or we unregistered) the scheduler. */
bool scx_concsched_exited(struct sched_ctl *c);
/* "scheduler exit: KIND (kind N, code C): reason: msg", once. */
void scx_concsched_print_exit(struct sched_ctl *c, FILE *f);
int scx_concsched_exit_kind(struct sched_ctl *c);

/* Stop parking and release everyone; call before detaching probes. */
void scx_concsched_quiesce(struct sched_ctl *c);
/* Quiesce, detach points and kicks, unregister the scheduler. The exit
 * info stays readable (scx_concsched_print_exit) until scx_concsched_close. */
void scx_concsched_detach(struct sched_ctl *c);
/* The kernel ended the scheduler before scx_concsched_detach unregistered it. */
bool scx_concsched_ejected(struct sched_ctl *c);
/* Detach if needed, print the exit info if the kernel ejected the
 * scheduler (or --verbose), free. NULL is fine. */
void scx_concsched_close(struct sched_ctl *c);

/* /sys/kernel/sched_ext/state, or "absent". Static buffer. */
const char *scx_concsched_state(void);

#endif
