// SPDX-License-Identifier: MIT
/* maps.c on real BPF hash maps (root): maps_dump reads every entry and
 * leaves them, maps_take reads every entry and leaves the map empty (the
 * harvest that spares the next run's reset a walk); on maps larger than
 * one batch and on empty maps. maps_take_logged takes the entries a key
 * log names, and only those. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "kernel/maps.h"
#include "tap.h"

#define BUCKETS 32768

static int new_map(unsigned n)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_HASH, "cs_test_maps", sizeof(__u64), sizeof(__u64),
				BUCKETS, NULL);
	unsigned i;

	for (i = 0; fd >= 0 && i < n; i++) {
		__u64 k = (__u64)i * 7919 + 3, v = k * 2 + 1;

		bpf_map_update_elem(fd, &k, &v, BPF_NOEXIST);
	}
	return fd;
}

static unsigned count(int fd)
{
	__u64 k, prev;
	unsigned n = 0;
	bool first = true;

	while (!bpf_map_get_next_key(fd, first ? NULL : &prev, &k)) {
		prev = k;
		first = false;
		n++;
	}
	return n;
}

/* Every key came once, each with its value. */
static bool all_there(const struct maps_dump *d, unsigned n)
{
	bool *seen = calloc(n ? n : 1, 1);
	bool ok = d->n == n;
	size_t i;

	for (i = 0; ok && i < d->n; i++) {
		__u64 k, v;

		memcpy(&k, d->keys + i * sizeof(k), sizeof(k));
		memcpy(&v, d->vals + i * sizeof(v), sizeof(v));
		ok = k >= 3 && (k - 3) % 7919 == 0 && (k - 3) / 7919 < n && v == k * 2 + 1 &&
		     !seen[(k - 3) / 7919];
		if (ok)
			seen[(k - 3) / 7919] = true;
	}
	free(seen);
	return ok;
}

/* A key log (an array map) naming the first n keys of new_map(), then
 * `stale` keys with no entry. */
static int new_log(unsigned n, unsigned stale)
{
	int fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "cs_test_log", sizeof(__u32), sizeof(__u64),
				n + stale + 1, NULL);
	__u32 i;

	for (i = 0; fd >= 0 && i < n + stale; i++) {
		__u64 k = i < n ? (__u64)i * 7919 + 3 : 1;

		bpf_map_update_elem(fd, &i, &k, BPF_ANY);
	}
	return fd;
}

static void test_logged(void)
{
	struct maps_dump d;
	int fd = new_map(50), log = new_log(20, 2);

	if (fd < 0 || log < 0) {
		tap_diag("bpf_map_create: %s", strerror(errno));
		for (int i = 0; i < 5; i++)
			tap_ok(0, "maps_take_logged");
		return;
	}
	tap_is_int(maps_take_logged(fd, log, 22, sizeof(__u64), sizeof(__u64), &d), 0,
		   "maps_take_logged: 20 logged keys and 2 without an entry: no error");
	tap_ok(all_there(&d, 20), "maps_take_logged: the 20 logged entries, each with its value");
	maps_dump_free(&d);
	tap_is_int(count(fd), 30, "maps_take_logged: the 30 entries no log names are left");
	tap_is_int(maps_take_logged(fd, log, 0, sizeof(__u64), sizeof(__u64), &d), 0,
		   "maps_take_logged: an empty log: no error");
	tap_is_int(d.n, 0, "maps_take_logged: an empty log takes nothing");
	maps_dump_free(&d);
	close(fd);
	close(log);
}

int main(void)
{
	static const unsigned sizes[] = { 0, 1, 1000, 20000 };
	struct maps_dump d;
	size_t i;
	int fd;

	tap_plan(4 * 5 + 5);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		unsigned n = sizes[i];

		fd = new_map(n);
		if (!tap_ok(fd >= 0, "%u entries: a hash map of %d buckets", n, BUCKETS)) {
			tap_diag("bpf_map_create: %s", strerror(errno));
			tap_ok(0, "maps_dump");
			tap_ok(0, "maps_dump left");
			tap_ok(0, "maps_take");
			tap_ok(0, "maps_take emptied");
			continue;
		}
		maps_dump(fd, sizeof(__u64), sizeof(__u64), &d);
		tap_ok(all_there(&d, n), "%u entries: maps_dump reads each once, with its value",
		       n);
		maps_dump_free(&d);
		tap_is_int(count(fd), n, "%u entries: maps_dump leaves them", n);
		maps_take(fd, sizeof(__u64), sizeof(__u64), &d);
		tap_ok(all_there(&d, n), "%u entries: maps_take reads each once, with its value",
		       n);
		maps_dump_free(&d);
		tap_is_int(count(fd), 0, "%u entries: maps_take leaves the map empty", n);
		close(fd);
	}
	test_logged();
	return tap_done();
}
