/* SPDX-License-Identifier: MIT */
/*
 * A small u64 -> u64 open-addressing map and the hash mix under it, shared
 * by the TSA engine (tsa.c), its estimation (tsa_estimate.c) and its pair
 * sets (tsa_pairset.c). Nothing outside them includes it.
 */
#ifndef CONCSCHED_TSA_MAP_H
#define CONCSCHED_TSA_MAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "lib/xalloc.h"

struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	uint8_t *used;
	size_t cap, count;
};

static inline uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	return x ^ (x >> 33);
}

static inline void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	free(m->used);
	memset(m, 0, sizeof(*m));
}

static inline void u64map_clear(struct u64map *m)
{
	if (m->used)
		memset(m->used, 0, m->cap);
	m->count = 0;
}

static inline size_t u64map_slot(const struct u64map *m, uint64_t key)
{
	size_t i = mix64(key) & (m->cap - 1);

	while (m->used[i] && m->keys[i] != key)
		i = (i + 1) & (m->cap - 1);
	return i;
}

static inline void u64map_grow(struct u64map *m)
{
	struct u64map n = { 0 };

	n.cap = m->cap ? m->cap * 2 : 64;
	n.keys = xcalloc(n.cap, sizeof(*n.keys));
	n.vals = xcalloc(n.cap, sizeof(*n.vals));
	n.used = xcalloc(n.cap, 1);
	for (size_t i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->used[i])
			continue;
		j = u64map_slot(&n, m->keys[i]);
		n.used[j] = 1;
		n.keys[j] = m->keys[i];
		n.vals[j] = m->vals[i];
		n.count++;
	}
	u64map_free(m);
	*m = n;
}

static inline uint64_t *u64map_find(const struct u64map *m, uint64_t key)
{
	size_t i;

	if (!m->count)
		return NULL;
	i = u64map_slot(m, key);
	return m->used[i] ? &m->vals[i] : NULL;
}

/* Value slot for key, inserted as 0 if absent. */
static inline uint64_t *u64map_ref(struct u64map *m, uint64_t key)
{
	size_t i;

	if ((m->count + 1) * 4 > m->cap * 3)
		u64map_grow(m);
	i = u64map_slot(m, key);
	if (!m->used[i]) {
		m->used[i] = 1;
		m->keys[i] = key;
		m->vals[i] = 0;
		m->count++;
	}
	return &m->vals[i];
}

#endif
