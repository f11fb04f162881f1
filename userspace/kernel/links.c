// SPDX-License-Identifier: MIT
/* Destroying several BPF links at once (links.h). */
#include "kernel/links.h"

#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "lib/xalloc.h"

struct destroyer {
	pthread_t th;
	bool started;
	struct bpf_link *link;
	int *left; /* destroyers still at work */
};

static void *destroy_one(void *arg)
{
	struct destroyer *d = arg;
	int *left = d->left;

	bpf_link__destroy(d->link);
	if (__atomic_sub_fetch(left, 1, __ATOMIC_SEQ_CST) == 0)
		syscall(SYS_futex, left, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
	return NULL;
}

void links_destroy(struct bpf_link **links, size_t n)
{
	struct destroyer *d = xcalloc(n, sizeof(*d));
	int left = 0, v;
	size_t i;

	for (i = 0; i < n; i++) {
		if (!links[i])
			continue;
		d[i].link = links[i];
		d[i].left = &left;
		__atomic_add_fetch(&left, 1, __ATOMIC_SEQ_CST);
		d[i].started = !pthread_create(&d[i].th, NULL, destroy_one, &d[i]);
		if (!d[i].started)
			__atomic_sub_fetch(&left, 1, __ATOMIC_SEQ_CST);
	}
	for (i = 0; i < n; i++)
		if (d[i].link && !d[i].started)
			bpf_link__destroy(d[i].link);
	/* Wait in the kernel, not in pthread_join: libc's pthread functions
	 * carry the campaign's return probes, and a thread waiting inside
	 * one holds up the unregistering's SRCU grace period (measured: a
	 * caller waiting in pthread_join made each destroy ~50 ms slower). */
	while ((v = __atomic_load_n(&left, __ATOMIC_SEQ_CST)) != 0)
		syscall(SYS_futex, &left, FUTEX_WAIT_PRIVATE, v, NULL, NULL, 0);
	for (i = 0; i < n; i++)
		if (d[i].started)
			pthread_join(d[i].th, NULL);
	free(d);
}

static void *reap_main(void *arg)
{
	struct links_batch *b = arg;

	links_destroy(b->links, b->n);
	return NULL;
}

/* Join the batches that are done (all with wait). */
static void reap_join(struct links_reaper *r, bool wait)
{
	size_t i, j;

	for (i = j = 0; i < r->n; i++) {
		struct links_batch *b = r->batches[i];

		if (wait ? pthread_join(b->th, NULL) : pthread_tryjoin_np(b->th, NULL)) {
			r->batches[j++] = b;
			continue;
		}
		free(b->links);
		free(b);
	}
	r->n = j;
}

void links_reap_wait(struct links_reaper *r)
{
	reap_join(r, true);
	free(r->batches);
	r->batches = NULL;
}

void links_reap_later(struct links_reaper *r, struct bpf_link **links, size_t n)
{
	struct links_batch *b = xcalloc(1, sizeof(*b));

	reap_join(r, false);
	b->links = xcalloc(n ? n : 1, sizeof(*links));
	memcpy(b->links, links, n * sizeof(*links));
	b->n = n;
	if (pthread_create(&b->th, NULL, reap_main, b)) {
		links_destroy(b->links, b->n);
		free(b->links);
		free(b);
		return;
	}
	r->batches = xrealloc(r->batches, (r->n + 1) * sizeof(*r->batches));
	r->batches[r->n++] = b;
}
