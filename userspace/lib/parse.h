/* SPDX-License-Identifier: MIT */
/* Strict number parsing: the whole string, in range; 0 or -EINVAL/-ERANGE. */
#ifndef CONCSCHED_PARSE_H
#define CONCSCHED_PARSE_H

#include <stdint.h>

int parse_u64(const char *s, uint64_t *out); /* decimal, 0x hex or 0 octal; no sign */
int parse_i64(const char *s, int64_t *out);
int parse_double(const char *s, double *out);

#endif
