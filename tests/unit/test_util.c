// SPDX-License-Identifier: MIT
/* util.c and json.c: strict number parsing, cache dir rule, JSON escaping. */
#include <stdlib.h>

#include "lib/json.h"
#include "tap.h"
#include "lib/util.h"

static char *json_of(void (*fill)(struct json *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct json j;

	json_init(&j, f, false);
	fill(&j);
	fclose(f);
	return buf;
}

static void fill_nested(struct json *j)
{
	json_obj_begin(j, NULL);
	json_kv_str(j, "s", "a\"b\\c\nd\x01");
	json_arr_begin(j, "a");
	json_kv_int(j, NULL, -3);
	json_kv_uint(j, NULL, 18446744073709551615ULL);
	json_obj_begin(j, NULL);
	json_obj_end(j);
	json_arr_end(j);
	json_kv_bool(j, "t", true);
	json_kv_null(j, "n");
	json_kv_dbl(j, "d", 0.5);
	json_kv_str(j, "z", NULL);
	json_obj_end(j);
}

int main(void)
{
	uint64_t u;
	int64_t i;
	double d;
	char *s;

	tap_plan(14);
	tap_ok(parse_u64("42", &u) == 0 && u == 42, "parse_u64 accepts 42");
	tap_ok(parse_u64("0x10", &u) == 0 && u == 16, "parse_u64 accepts hex");
	tap_ok(parse_u64("-1", &u) < 0, "parse_u64 rejects negative");
	tap_ok(parse_u64("12abc", &u) < 0, "parse_u64 rejects trailing junk");
	tap_ok(parse_u64("", &u) < 0, "parse_u64 rejects empty");
	tap_ok(parse_u64("99999999999999999999999", &u) < 0, "parse_u64 rejects overflow");
	tap_ok(parse_i64("-7", &i) == 0 && i == -7, "parse_i64 accepts -7");
	tap_ok(parse_double("0.25", &d) == 0 && d == 0.25, "parse_double accepts 0.25");
	tap_ok(parse_double("1e", &d) < 0, "parse_double rejects 1e");

	setenv("CONCSCHED_CACHE", "/tmp/x", 1);
	tap_is_str(cs_cache_dir(), "/tmp/x", "CONCSCHED_CACHE wins");
	unsetenv("CONCSCHED_CACHE");
	setenv("XDG_CACHE_HOME", "/tmp/xdg", 1);
	tap_is_str(cs_cache_dir(), "/tmp/xdg/concsched", "XDG_CACHE_HOME next");
	unsetenv("XDG_CACHE_HOME");
	setenv("HOME", "/home/u", 1);
	tap_is_str(cs_cache_dir(), "/home/u/.cache/concsched", "then ~/.cache");

	s = json_of(fill_nested);
	tap_is_str(s,
		   "{\"s\":\"a\\\"b\\\\c\\nd\\u0001\",\"a\":[-3,18446744073709551615,{}],"
		   "\"t\":true,\"n\":null,\"d\":0.5,\"z\":null}",
		   "json nests, escapes and separates");
	free(s);
	tap_is_int(fnv1a64("a", 1, FNV1A64_INIT), 0xaf63dc4c8601ec8cULL, "fnv1a64 of 'a'");
	return tap_done();
}
