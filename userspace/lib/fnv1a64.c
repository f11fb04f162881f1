// SPDX-License-Identifier: MIT
/* 64-bit FNV-1a (fnv1a64.h). */
#include "lib/fnv1a64.h"

uint64_t fnv1a64(const void *data, size_t len, uint64_t h)
{
	const unsigned char *p = data;

	while (len--) {
		h ^= *p++;
		h *= 0x100000001b3ULL;
	}
	return h;
}
