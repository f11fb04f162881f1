/* SPDX-License-Identifier: MIT */
/*
 * The threads a strategy delays, each until its due time: a small
 * unordered array the caller owns (a run's, attach's window), filled by
 * delayq_add, emptied by delayq_due, and timing the event loop's poll
 * through delayq_next_ms.
 */
#ifndef CONCSCHED_DELAYQ_H
#define CONCSCHED_DELAYQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct delay {
	uint32_t tid;
	uint64_t due_ns;
};

/* The longest poll delayq_next_ms asks for. */
#define DELAYQ_POLL_MS 20

/* Queue tid to go on us microseconds from now. false (nothing queued)
 * when the *n entries of q already fill its cap: the caller lets it go. */
bool delayq_add(struct delay *q, size_t *n, size_t cap, uint32_t tid, uint64_t us);
/* Take out the entries due by now (all: every one), calling go(ctx, tid)
 * for each as it goes. */
void delayq_due(struct delay *q, size_t *n, bool all, void (*go)(void *ctx, uint32_t tid),
		void *ctx);
/* Milliseconds until the first entry is due: 0 when one is, at most
 * DELAYQ_POLL_MS (also when none is queued). */
int delayq_next_ms(const struct delay *q, size_t n);

#endif
