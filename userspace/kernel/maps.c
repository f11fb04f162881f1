// SPDX-License-Identifier: MIT
/* Reading and emptying BPF maps in batches (maps.h). */
#include "kernel/maps.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>

#include "lib/xalloc.h"

/* Every entry of a hash map, read in batches: a syscall per 256 entries
 * instead of two per entry (a run's harvest made ~100 of them). A kernel
 * without batch lookups (before 5.6) is read key by key. */
static void map_read(int fd, size_t ksz, size_t vsz, struct maps_dump *d, bool take);

void maps_dump(int fd, size_t ksz, size_t vsz, struct maps_dump *d)
{
	map_read(fd, ksz, vsz, d, false);
}

void maps_take(int fd, size_t ksz, size_t vsz, struct maps_dump *d)
{
	map_read(fd, ksz, vsz, d, true);
}

static void map_read(int fd, size_t ksz, size_t vsz, struct maps_dump *d, bool take)
{
	size_t cap = 256;
	__u64 in = 0, out = 0; /* a hash map's batch token: a bucket index */
	bool first = true;
	__u32 count;
	int err;

	d->n = 0;
	d->keys = xcalloc(cap, ksz);
	d->vals = xcalloc(cap, vsz);
	for (;;) {
		if (cap - d->n < 64) {
			cap *= 2;
			d->keys = xrealloc(d->keys, cap * ksz);
			d->vals = xrealloc(d->vals, cap * vsz);
		}
		count = (__u32)(cap - d->n);
		if (take)
			err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out,
							      d->keys + d->n * ksz,
							      d->vals + d->n * vsz, &count, NULL);
		else
			err = bpf_map_lookup_batch(fd, first ? NULL : &in, &out,
						   d->keys + d->n * ksz, d->vals + d->n * vsz,
						   &count, NULL);
		if (err && errno == ENOSPC && count == 0) {
			/* a bucket holds more than the room left */
			cap *= 2;
			d->keys = xrealloc(d->keys, cap * ksz);
			d->vals = xrealloc(d->vals, cap * vsz);
			continue;
		}
		if (err && errno != ENOENT)
			break; /* no batch lookups (EINVAL): key by key below */
		d->n += count;
		if (err) /* ENOENT: the last batch */
			return;
		first = false;
		in = out;
	}
	d->n = 0;
	{
		char *prev = NULL;

		for (;;) {
			if (d->n == cap) {
				cap *= 2;
				d->keys = xrealloc(d->keys, cap * ksz);
				d->vals = xrealloc(d->vals, cap * vsz);
				prev = d->n ? d->keys + (d->n - 1) * ksz : NULL;
			}
			if (bpf_map_get_next_key(fd, prev, d->keys + d->n * ksz))
				break;
			prev = d->keys + d->n * ksz;
			if (!bpf_map_lookup_elem(fd, prev, d->vals + d->n * vsz))
				d->n++;
			else if (d->n) /* gone meanwhile: go on from the last kept */
				prev = d->keys + (d->n - 1) * ksz;
			else
				prev = NULL;
		}
	}
	if (take) {
		size_t i;

		for (i = 0; i < d->n; i++)
			bpf_map_delete_elem(fd, d->keys + i * ksz);
	}
}

int maps_take_logged(int fd, int log_fd, size_t n, size_t ksz, size_t vsz, struct maps_dump *d)
{
	char *logged = xcalloc(n ? n : 1, ksz);
	__u32 i, count = (__u32)n, out = 0;
	size_t j;
	int err = 0;

	d->n = 0;
	d->keys = xcalloc(n ? n : 1, ksz);
	d->vals = xcalloc(n ? n : 1, vsz);
	if (n) {
		__u32 *idx = xcalloc(n, sizeof(*idx));

		/* One batch for the log (an array: indexes 0..n-1). */
		if (bpf_map_lookup_batch(log_fd, NULL, &out, idx, logged, &count, NULL) &&
		    errno != ENOENT)
			count = 0;
		free(idx);
		if (count < n) {
			for (i = 0; i < n && !err; i++)
				if (bpf_map_lookup_elem(log_fd, &i, logged + (size_t)i * ksz))
					err = -errno;
		}
	}
	for (j = 0; j < n && !err; j++) {
		if (bpf_map_lookup_and_delete_elem(fd, logged + j * ksz, d->vals + d->n * vsz)) {
			if (errno != ENOENT)
				err = -errno; /* before Linux 5.14: no lookup-and-delete */
			continue;
		}
		memcpy(d->keys + d->n * ksz, logged + j * ksz, ksz);
		d->n++;
	}
	free(logged);
	return err;
}

void maps_dump_free(struct maps_dump *d)
{
	free(d->keys);
	free(d->vals);
}

void maps_empty(int fd, size_t ksz, size_t vsz)
{
	struct maps_dump d;
	__u32 count;
	size_t i;

	maps_dump(fd, ksz, vsz, &d);
	count = (__u32)d.n;
	if (d.n && bpf_map_delete_batch(fd, d.keys, &count, NULL))
		for (i = 0; i < d.n; i++) /* a kernel without batch deletes */
			bpf_map_delete_elem(fd, d.keys + i * ksz);
	maps_dump_free(&d);
}
