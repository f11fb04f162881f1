// SPDX-License-Identifier: MIT
/* The threads a strategy delays (delayq.h). */
#include "lib/delayq.h"

#include "lib/now.h"

bool delayq_add(struct delay *q, size_t *n, size_t cap, uint32_t tid, uint64_t us)
{
	if (*n == cap)
		return false;
	q[*n].tid = tid;
	q[*n].due_ns = now_ns() + us * 1000;
	(*n)++;
	return true;
}

void delayq_due(struct delay *q, size_t *n, bool all, void (*go)(void *ctx, uint32_t tid),
		void *ctx)
{
	uint64_t now = now_ns();
	size_t i = 0;

	while (i < *n) {
		if (all || q[i].due_ns <= now) {
			go(ctx, q[i].tid);
			q[i] = q[--(*n)];
			continue;
		}
		i++;
	}
}

int delayq_next_ms(const struct delay *q, size_t n)
{
	uint64_t now = now_ns(), best = UINT64_MAX;
	size_t i;

	for (i = 0; i < n; i++)
		if (q[i].due_ns < best)
			best = q[i].due_ns;
	if (best == UINT64_MAX)
		return DELAYQ_POLL_MS;
	if (best <= now)
		return 0;
	return (int)((best - now) / 1000000 + 1 < DELAYQ_POLL_MS ? (best - now) / 1000000 + 1
								 : DELAYQ_POLL_MS);
}
