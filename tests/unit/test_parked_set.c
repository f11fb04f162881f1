// SPDX-License-Identifier: MIT
/* The parked set's version (bpf/concsched_abi.h, cs_sched_shared.parked_set;
 * sched/scx_concsched.bpf.c, cs_all_parked_new): what the scheduler's
 * all-parked notes rely on. A park adds CS_PARKED_SET_PARK, a release of a
 * parked thread CS_PARKED_SET_LEAVE; a check reads the word once and notes
 * it only when it is above the last noted one. Checked here: the word
 * grows at every change and carries the count, a release that overtakes
 * its park reads as nothing parked, and the interleaving of ci58 (a check
 * stalled across the release that answered its state) leaves the next
 * round's state new. */
#include <stdint.h>

#include "concsched_abi.h"
#include "lib/rng.h"
#include "tap.h"

/* cs_all_parked_new's rule, on one thread: note VERSION when above KEY. */
static int note(uint64_t *key, uint64_t version)
{
	if (version <= *key)
		return 0;
	*key = version;
	return 1;
}

int main(void)
{
	struct cs_rng r;
	uint64_t w = 0, prev, key = 0, v1, late, v2;
	int64_t count = 0;
	int grows = 1, counts = 1, leaves_ok = 1;
	uint64_t leaves = 0;

	tap_plan(8);

	/* 1. Random parks and releases from a word carried over from earlier
	 * runs: it only grows, and its halves are the leaves and the count. */
	rng_seed(&r, 30);
	w = (uint64_t)7 << 32; /* 7 leaves before, nothing parked */
	leaves = 7;
	for (int i = 0; i < 100000; i++) {
		prev = w;
		if (count > 0 && rng_chance(&r, 0.5)) {
			w += CS_PARKED_SET_LEAVE;
			count--;
			leaves++;
		} else {
			w += CS_PARKED_SET_PARK;
			count++;
		}
		grows &= w > prev;
		counts &= CS_PARKED_SET_COUNT(w) == count;
		leaves_ok &= (w >> 32) == leaves;
	}
	tap_ok(grows, "every park and every release makes the word larger (100000 random steps)");
	tap_ok(counts, "its low half is the parked count");
	tap_ok(leaves_ok, "its high half counts the leaves");

	/* 2. A release that overtakes its park's count: the instant between
	 * reads as nothing parked (the check returns), and the end state is
	 * one leave, nothing parked, above the start. */
	w = ((uint64_t)3 << 32) | 0;
	prev = w;
	w += CS_PARKED_SET_LEAVE;
	tap_ok(CS_PARKED_SET_COUNT(w) < 0, "a release before its park's count reads below zero");
	w += CS_PARKED_SET_PARK;
	tap_ok(CS_PARKED_SET_COUNT(w) == 0 && (w >> 32) == 4 && w > prev,
	       "after the park's count: 4 leaves, nothing parked, a larger word");

	/* 3. ci58's rounds: round k's state V1 (A parked) is noted; a second
	 * check read V1 too and stalls; userspace releases A; A parks again
	 * in round k+1 (V2); the stalled check goes on with V1 and the round
	 * k+1 check with V2. */
	w = ((uint64_t)41 << 32) | 0;
	key = 0;
	w += CS_PARKED_SET_PARK;
	v1 = w;
	late = w;
	tap_ok(note(&key, v1), "round k: its all-parked state is noted");
	w += CS_PARKED_SET_LEAVE; /* A released */
	w += CS_PARKED_SET_PARK;  /* A parks in round k+1 */
	v2 = w;
	tap_ok(!note(&key, late), "the stalled check of round k sends no second note");
	tap_ok(note(&key, v2), "round k+1's state is new: noted, not taken for round k's");
	tap_done();
}
