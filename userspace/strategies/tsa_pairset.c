// SPDX-License-Identifier: MIT
/*
 * Seed 000 (TSA): sets of site pairs with per-pair flags (tsa_pairset.h).
 */
#include "strategies/tsa_pairset.h"

#include <string.h>

#include "strategies/tsa_map.h"
#include "lib/xalloc.h"

/* ---- pair sets ------------------------------------------------------------ */

static uint64_t pair_key(uint32_t x, uint32_t y)
{
	return (uint64_t)x << 32 | y;
}

void tsa_pairset_init(struct tsa_pairset *s)
{
	memset(s, 0, sizeof(*s));
}

void tsa_pairset_free(struct tsa_pairset *s)
{
	free(s->keys);
	free(s->flags);
	memset(s, 0, sizeof(*s));
}

static size_t pairset_slot(const struct tsa_pairset *s, uint64_t key)
{
	size_t i = mix64(key) & (s->cap - 1);

	while (s->flags[i] && s->keys[i] != key)
		i = (i + 1) & (s->cap - 1);
	return i;
}

static void pairset_grow(struct tsa_pairset *s)
{
	struct tsa_pairset n;

	n.cap = s->cap ? s->cap * 2 : 64;
	n.count = s->count;
	n.keys = xcalloc(n.cap, sizeof(*n.keys));
	n.flags = xcalloc(n.cap, 1);
	for (size_t i = 0; i < s->cap; i++) {
		size_t j;

		if (!s->flags[i])
			continue;
		j = pairset_slot(&n, s->keys[i]);
		n.keys[j] = s->keys[i];
		n.flags[j] = s->flags[i];
	}
	free(s->keys);
	free(s->flags);
	*s = n;
}

unsigned tsa_pairset_add(struct tsa_pairset *s, uint32_t x, uint32_t y, unsigned flags)
{
	uint64_t key = pair_key(x, y);
	unsigned old;
	size_t i;

	flags &= 0xff;
	if (!flags)
		return tsa_pairset_get(s, x, y);
	if ((s->count + 1) * 4 > s->cap * 3)
		pairset_grow(s);
	i = pairset_slot(s, key);
	old = s->flags[i];
	if (!old) {
		s->keys[i] = key;
		s->count++;
	}
	s->flags[i] = old | flags;
	return old;
}

unsigned tsa_pairset_get(const struct tsa_pairset *s, uint32_t x, uint32_t y)
{
	if (!s->count)
		return 0;
	return s->flags[pairset_slot(s, pair_key(x, y))];
}

bool tsa_pairset_next(const struct tsa_pairset *s, size_t *pos, uint32_t *x, uint32_t *y,
		      unsigned *flags)
{
	for (; *pos < s->cap; (*pos)++) {
		size_t i = *pos;

		if (!s->flags[i])
			continue;
		*x = (uint32_t)(s->keys[i] >> 32);
		*y = (uint32_t)s->keys[i];
		*flags = s->flags[i];
		(*pos)++;
		return true;
	}
	return false;
}
