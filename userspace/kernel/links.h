/* SPDX-License-Identifier: MIT */
/*
 * Destroying several BPF links at once. Destroying a uprobe link waits
 * for grace periods (RCU tasks trace, then the uretprobes' SRCU): 36-64 ms
 * a link on this host. One after the other, a campaign
 * paid the sum of its links' waits at its end; destroyed on threads of
 * their own, the waits overlap, and waiters that overlap share a grace
 * period (docs/perf.md, "The campaign's end"). The caller waits on a
 * futex, not in pthread_join: a thread inside a libc pthread function
 * that has the campaign's return probe holds the destroy up.
 */
#ifndef CONCSCHED_KERNEL_LINKS_H
#define CONCSCHED_KERNEL_LINKS_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

struct bpf_link;

/* bpf_link__destroy() on each of the n links (NULL ones are skipped), at
 * once: every link is gone when it returns. A link whose thread cannot be
 * started is destroyed by the caller, after the others are started. */
void links_destroy(struct bpf_link **links, size_t n);

/* Links destroyed on threads of their own while the caller goes on
 * (links for a process that has exited: nothing waits for their grace
 * periods, and batches overlap). */
struct links_batch {
	pthread_t th;
	struct bpf_link **links;
	size_t n;
};

struct links_reaper {
	struct links_batch **batches; /* under way, or done and not joined */
	size_t n;
};

/* Destroy the n links (a copy of the array is taken) behind the caller's
 * back; without a thread, here. Joins the batches that are done. */
void links_reap_later(struct links_reaper *r, struct bpf_link **links, size_t n);
/* Every batch is gone. */
void links_reap_wait(struct links_reaper *r);

#endif
