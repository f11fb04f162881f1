/* SPDX-License-Identifier: MIT */
/* The 64-bit FNV-1a hash (Fowler, Noll, Vo), for content keys. */
#ifndef CONCSCHED_FNV1A64_H
#define CONCSCHED_FNV1A64_H

#include <stddef.h>
#include <stdint.h>

/* 64-bit FNV-1a of len bytes, continuing from h (FNV1A64_INIT to start). */
uint64_t fnv1a64(const void *data, size_t len, uint64_t h);
#define FNV1A64_INIT 0xcbf29ce484222325ULL

#endif
