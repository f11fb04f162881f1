// SPDX-License-Identifier: MIT
/* Strict number parsing (parse.h). */
#include "lib/parse.h"

#include <errno.h>
#include <stdlib.h>

int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !*s || *s == '-')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_i64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 0);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	if (!s || !*s)
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno)
		return -errno;
	if (*end)
		return -EINVAL;
	*out = v;
	return 0;
}
