/* SPDX-License-Identifier: MIT */
/*
 * Race warnings from a GoldiLocks-style detector with the short-circuit
 * (SC) checks (Elmas, Qadeer, Tasiran, PLDI'07; as used by seed 004's
 * GoldiLock-SC metric, ALGORITHMS.md section 4).
 *
 * For each variable the detector keeps the last write and the reads since
 * it, each with its thread, site, lockset and GoldiLocks lockset (GLS: the
 * threads, locks and atomic variables through which later code is ordered
 * after that access). A new access is checked against every conflicting
 * earlier access by another thread (write vs anything, read vs the last
 * write), in order:
 *   SCT  every conflicting earlier access was made by this thread;
 *   SCL  each one held a lock this thread holds now;
 *   LS   each one's GLS contains this thread or a lock it holds;
 *   E    otherwise.
 * These states are the GoldiLock-SC coverage metric. The race warnings
 * come from the happens-before detector (hb.h) the same events feed:
 * variable, both sites, both threads, both locksets. Warnings are not
 * failures.
 * Synchronization updates every GLS: acquire of o by t adds t if o is in
 * it; release of o by t adds o if t is in it; create adds the child if the
 * parent is in it; join adds the joiner if the child is. Mutexes, rwlocks,
 * spinlocks, condition variables (signal = release, wake = acquire),
 * semaphores (post = release, wait = acquire) and barriers (release then
 * acquire) are sync objects; a lock-prefixed read-modify-write (CS_OP_RW)
 * is atomic: it acts as acquire + release of its variable and never races
 * with another RW.
 * The update is lazy (races.c's header comment): a sync event appends its
 * rule to a log, and a record replays the rules it missed only when it is
 * judged past the short-circuit checks; the log is bounded (4 MiB), its
 * oldest part applied to the records that still need it and dropped.
 * Verdicts are those of the eager update (every rule applied to every
 * live record at once).
 */
#ifndef CONCSCHED_RACES_H
#define CONCSCHED_RACES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coverage/cov_event.h"
#include "coverage/hb.h"

/* GoldiLock-SC states and their WGoldiLockSC weights (seed 004 5.5.1). */
enum cov_goldi_state {
	GOLDI_SCT = 0, /* short-circuit: same thread             weight 1  */
	GOLDI_SCL,     /* short-circuit: a common lock           weight 5  */
	GOLDI_LS,      /* full GoldiLocks lockset proved it      weight 5  */
	GOLDI_E,       /* race: warning                          weight 10 */
};
const char *races_goldi_state_name(enum cov_goldi_state s);
unsigned races_goldi_weight(enum cov_goldi_state s);

/* What the detector concluded about one access. */
struct race_verdict {
	enum cov_goldi_state state;
	/* GLS of the conflicting access that decided the LS state, "{t1,l2}"
	 * style (threads t, sync objects l, atomic variables v); "" else. */
	char gls[128];
	unsigned new_warnings; /* from the happens-before detector */
};

struct race_detector;

struct race_detector *races_new(void);
void races_free(struct race_detector *rd);
/* Forget per-run state; warnings accumulate across runs. */
void races_run_begin(struct race_detector *rd);
/* A heap block was handed out (hb_alloc): a new variable. */
void races_alloc(struct race_detector *rd, uint64_t addr, uint64_t size);
/* Synchronization events of the run were lost: hb_forget. */
void races_sync_lost(struct race_detector *rd);
/* Feed one event. Returns 1 and fills *out for a memory access, 0 for
 * other events (sync events update the GLSs). */
int races_feed(struct race_detector *rd, const struct cov_event *ev, struct race_verdict *out);
/* The GoldiLocks rule log's default bound, in rules of 8 bytes (4 MiB).
 * Tests lower it (0: back to the default) to trim it on short streams. */
#define RACES_GLS_LOG_MAX (1u << 19)
void races_gls_log_limit(struct race_detector *rd, size_t rules);

size_t races_warning_count(const struct race_detector *rd);
const struct race_warning *races_warning_get(const struct race_detector *rd, size_t i);
/* "race v3: t1 W s4 {} vs t2 R s7 {l1}" */
char *races_warning_fmt(const struct race_warning *w, char *buf, size_t len);

#endif
