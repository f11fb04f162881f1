/* SPDX-License-Identifier: MIT */
/*
 * Reading and emptying BPF maps with few syscalls: a run's harvest and
 * reset touch a dozen hash maps of 32768 buckets, and an entry at a time
 * (two syscalls each, and a walk from the first bucket for each delete)
 * was a good part of a run's fixed cost (docs/perf.md). Batches need Linux
 * 5.6; before it, the same results key by key.
 */
#ifndef CONCSCHED_KERNEL_MAPS_H
#define CONCSCHED_KERNEL_MAPS_H

#include <stddef.h>

/* Every entry of a map: n keys of ksz bytes and n values of vsz bytes. */
struct maps_dump {
	size_t n;
	char *keys, *vals;
};

void maps_dump(int fd, size_t ksz, size_t vsz, struct maps_dump *d);
/* The same, emptying the hash map as it goes: one walk of its buckets
 * where maps_dump and maps_empty make two (a run's harvest, then the next
 * run's reset, was ~14% of a campaign's CPU time). */
void maps_take(int fd, size_t ksz, size_t vsz, struct maps_dump *d);
/* The entries of a hash map whose keys a key log names (n keys of ksz
 * bytes in log_fd, an array map, from index 0), emptying them: a lookup
 * and delete per key where maps_take walks every bucket. A key whose entry
 * is gone is left out. 0, or -errno when the log cannot be read or an
 * entry taken (before Linux 5.14): *d holds what was taken, and the
 * caller takes the rest with maps_take. */
int maps_take_logged(int fd, int log_fd, size_t n, size_t ksz, size_t vsz, struct maps_dump *d);
void maps_dump_free(struct maps_dump *d);
/* Delete every entry of a hash map (keys ksz bytes, values vsz bytes). */
void maps_empty(int fd, size_t ksz, size_t vsz);

#endif
