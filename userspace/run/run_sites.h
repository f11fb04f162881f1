/* SPDX-License-Identifier: MIT */
/*
 * Sites of the run in flight as the campaign store names them: a runtime
 * address through the run's resolver to "OBJECT+0xOFF", to the store's site
 * id (code or data location), and coverage keys rewritten with "@N" site
 * references. Shared by onerun.c, access.c and campaign.c.
 */
#ifndef CONCSCHED_RUN_SITES_H
#define CONCSCHED_RUN_SITES_H

#include <stdint.h>

#include "run/run_types.h"

struct store;

/* Site id of "OBJECT+0xOFF" in the store (0: the key is not a site). */
int64_t run_sites_store_site(struct store *st, const char *key);
/* The same for an instruction (an access site): named by its own line, where
 * a call site is named by the call's (the return address's byte before). */
int64_t run_sites_store_insn_site(struct store *st, const char *key);
/* Store site id of a runtime address of the run's target, 0 if unknown. */
int64_t run_sites_id(struct store *st, struct onerun *r, uint32_t tgid, uint32_t gen,
		     uint64_t addr);
/* A coverage key with every site replaced by its "@N" reference; a lock
 * identity "KIND@SITE" becomes "KIND:@N" ('@' is reserved for refs). */
char *run_sites_store_key(struct store *st, const char *key);
/* Reload the probe's mapping table into r->res (sites resolve after it). */
void run_sites_refresh_vmas(struct onerun *r);
/* The run's thread with this tid, or NULL. */
struct strat_thread *run_sites_thread_find(struct onerun *r, uint32_t tid);

#endif
