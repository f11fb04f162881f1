/* SPDX-License-Identifier: MIT */
/*
 * Happens-before race detection over the event stream (issue 32): the
 * race warnings of `run --access` and `attach --access` (races.h feeds
 * it; docs/races.md has the model next to Helgrind's and TSan's).
 *
 * Vector clocks per thread and per synchronization object (DJIT+ /
 * FastTrack style). What orders what:
 *   lock, trylock, spin lock   acquire the lock's clock; unlock releases;
 *   rwlock                     a read lock acquires what writers released,
 *                              a write lock what writers and readers
 *                              released; an unlock releases into the side
 *                              it held;
 *   cond signal/broadcast      release the condition; the wake acquires it
 *                              and the mutex; the wait's entry releases the
 *                              mutex (cov_event.addr2);
 *   sem post / wait            release / acquire the semaphore;
 *   barrier                    the entry releases into the generation, the
 *                              party's next event acquires it (races.h);
 *   create / join              the child starts with the parent's clock;
 *                              the joiner acquires the child's;
 *   atomics                    a lock-prefixed read-modify-write (an
 *                              unsplit CS_OP_RW) acquires and releases its
 *                              location, which is atomic from then on in
 *                              the run: its plain loads acquire, its plain
 *                              stores release (x86: a release store and an
 *                              acquire load are plain movs), and accesses to
 *                              it are never reported.
 * Memory is shadowed per 8-byte granule with a byte mask, so accesses to
 * different bytes (array elements, struct fields) never conflict; each
 * granule keeps up to HB_CELL_RECS recent accesses (TSan keeps 4). An
 * access races with a recorded one of another thread when their bytes
 * overlap, one of them writes and the recorded one is not ordered before
 * it. A heap block allocated again (hb_alloc) is a new variable: its
 * granules' history is dropped; so is every granule's after lost
 * synchronization events (hb_forget).
 * Warnings: one per unordered pair of code sites, kept across runs.
 * Events without an address (cov_event.addr 0: hand-built events,
 * variables known by id only) use the variable id as one 8-byte granule.
 */
#ifndef CONCSCHED_HB_H
#define CONCSCHED_HB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "coverage/cov_event.h"

#define HB_CELL_RECS 4

struct race_access {
	uint32_t thread;
	uint32_t site;
	uint16_t op;	  /* CS_OP_READ / WRITE / RW */
	uint16_t size;	  /* bytes accessed, 0 unknown */
	uint32_t var_off; /* byte offset in the variable (cov_event.var_off) */
	struct cov_lockset held;
};

struct race_warning {
	uint32_t var;
	struct race_access first;  /* the earlier access  */
	struct race_access second; /* the access that raced with it */
};

struct hb;

struct hb *hb_new(void);
void hb_free(struct hb *h);
/* Forget per-run state (clocks, shadow memory); warnings accumulate. */
void hb_run_begin(struct hb *h);
/* Feed one event; the number of new warnings it made. */
unsigned hb_feed(struct hb *h, const struct cov_event *ev);
/* A heap block [addr, addr + size) was handed out: a new variable. */
void hb_alloc(struct hb *h, uint64_t addr, uint64_t size);
/* Synchronization events were lost (a thread's sequence numbers skip):
 * what they ordered is unknown, so every access recorded up to now is
 * forgotten and none is judged against a later one. A lost acquire then
 * costs nothing: the clocks it would have joined only cover epochs the
 * records forgotten had (a thread's later records have later epochs). A
 * lost release can still make false warnings between it and this call
 * (its thread's next event). Races across the loss are missed. */
void hb_forget(struct hb *h);

size_t hb_warning_count(const struct hb *h);
const struct race_warning *hb_warning_get(const struct hb *h, size_t i);

#endif
