/* SPDX-License-Identifier: MIT */
/*
 * Seed 000 (TSA, tsa.h): sets of synchronization pairs <x, y>, the
 * estimated requirements and what runs covered of them.
 */
#ifndef CONCSCHED_TSA_PAIRSET_H
#define CONCSCHED_TSA_PAIRSET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- requirement sets --------------------------------------------------- */

/* A set of site pairs <x, y> with per-pair flags (open addressing). */
struct tsa_pairset {
	uint64_t *keys;
	uint8_t *flags; /* 0 = empty slot */
	size_t cap, count;
};

#define TSA_PAIR_ESTIMATED 0x01u
#define TSA_PAIR_COVERED   0x02u

void tsa_pairset_init(struct tsa_pairset *s);
void tsa_pairset_free(struct tsa_pairset *s);
/* OR `flags` into pair <x,y>'s flags; returns the previous flags (0: new). */
unsigned tsa_pairset_add(struct tsa_pairset *s, uint32_t x, uint32_t y, unsigned flags);
/* Flags of <x,y>, 0 if absent. */
unsigned tsa_pairset_get(const struct tsa_pairset *s, uint32_t x, uint32_t y);
/* Iterate: *pos starts at 0; returns false at the end. */
bool tsa_pairset_next(const struct tsa_pairset *s, size_t *pos, uint32_t *x, uint32_t *y,
		      unsigned *flags);

/* What the estimation saw; the counts behind Table 4's first column. */

#endif
