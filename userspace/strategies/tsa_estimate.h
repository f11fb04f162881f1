/* SPDX-License-Identifier: MIT */
/*
 * Seed 000 (TSA, tsa.h): the estimation phase. The thread model of one
 * observed run (per thread its lock actions with locksets, who created whom
 * and when) and the SP requirements AC1-AC4 keep from it.
 */
#ifndef CONCSCHED_TSA_ESTIMATE_H
#define CONCSCHED_TSA_ESTIMATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "strategies/tsa_pairset.h"

/* ---- thread model (estimation input) ---------------------------------- */

/* One lock action: the lock at `site` on `lock`, and the locks the thread
 * held when it started (lockset(p) of the paper, without `lock` itself). */
struct tsa_lock_action {
	uint32_t site;
	uint64_t lock;
	uint64_t *lockset; /* owned, sorted, unique */
	uint32_t nlockset;
};

struct tsa_thread_model {
	struct tsa_lock_action *actions;
	uint32_t nactions, cap;
	/* Creation (the paper's precedence relation): the creator's first
	 * `create_pos` lock actions precede every action of this thread.
	 * creator < 0 for threads nobody in the model created (main). */
	int32_t creator;
	uint32_t create_pos;
};

struct tsa_model {
	struct tsa_thread_model *threads;
	uint32_t nthreads, cap;
};

void tsa_estimate_model_init(struct tsa_model *m);
void tsa_estimate_model_free(struct tsa_model *m);
/* Add a thread; returns its index (>= 0) or -EINVAL for a bad creator.
 * create_pos is the creator's number of lock actions so far. */
int tsa_estimate_model_add_thread(struct tsa_model *m, int32_t creator, uint32_t create_pos);
/* Append a lock action to thread t. The lockset is copied, sorted and
 * deduplicated. 0 or -EINVAL. */
int tsa_estimate_model_add_lock(struct tsa_model *m, uint32_t t, uint32_t site, uint64_t lock,
				const uint64_t *lockset, uint32_t nlockset);

struct tsa_estimate_stats {
	uint64_t lock_actions; /* lock actions in the model               */
	uint64_t classes;      /* distinct (thread, site, lock, locksets) */
	uint64_t candidates;   /* action-class pairs examined             */
	uint64_t accepted_ac1; /* site pairs accepted by AC1 (same thread)*/
	uint64_t rejected_ac2; /* cross-thread candidates each AC rejected*/
	uint64_t rejected_ac3;
	uint64_t rejected_ac4;
	uint64_t requirements; /* distinct site pairs accepted            */
};

/* Estimation phase (seed 000 section 2.3): add every accepted <x,y> to
 * `out` with TSA_PAIR_ESTIMATED. 0 or -errno. */
int tsa_estimate(const struct tsa_model *m, struct tsa_pairset *out, struct tsa_estimate_stats *st);

#endif
