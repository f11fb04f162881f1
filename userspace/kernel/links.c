// SPDX-License-Identifier: MIT
/* Destroying several BPF links at once (links.h). */
#include "kernel/links.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include <bpf/libbpf.h>

static void *destroy_one(void *link)
{
	bpf_link__destroy(link);
	return NULL;
}

void links_destroy(struct bpf_link **links, size_t n)
{
	pthread_t *t;
	bool *started;
	size_t i, last = n;

	/* The last non-NULL link is the caller's own: one thread fewer. */
	while (last > 0 && !links[last - 1])
		last--;
	if (last == 0)
		return;
	t = calloc(last, sizeof(*t));
	started = calloc(last, sizeof(*started));
	for (i = 0; t && started && i + 1 < last; i++)
		if (links[i])
			started[i] = !pthread_create(&t[i], NULL, destroy_one, links[i]);
	bpf_link__destroy(links[last - 1]);
	for (i = 0; i + 1 < last; i++) {
		if (started && started[i])
			pthread_join(t[i], NULL);
		else
			bpf_link__destroy(links[i]);
	}
	free(t);
	free(started);
}
