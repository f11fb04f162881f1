// SPDX-License-Identifier: MIT
/* The JSON writer round-trips through the small reader run/replay use. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "tap.h"

static char *write_doc(void)
{
	struct json_mem m;
	struct json *jp = &m.j;

	json_mem_open(&m);
	json_obj_begin(jp, NULL);
	json_kv_str(jp, "strategy", "rnd-s10:0.3");
	json_obj_begin(jp, "nested");
	json_kv_str(jp, "serial", "inner");
	json_obj_end(jp);
	json_kv_str(jp, "serial", "random");
	json_kv_uint(jp, "seed", 18446744073709551ULL);
	json_kv_str(jp, "quote", "a \"b\"\n\\c\t\x01");
	json_obj_end(jp);
	return json_mem_close(&m);
}

int main(void)
{
	char *doc = write_doc(), *v, **arr;
	const char *p;
	size_t n;
	int64_t i;

	tap_plan(16);
	v = json_get_string(doc, "strategy");
	tap_ok(v && !strcmp(v, "rnd-s10:0.3"), "top-level string");
	free(v);
	v = json_get_string(doc, "serial");
	tap_ok(v && !strcmp(v, "random"), "nested key of the same name is skipped");
	free(v);
	v = json_get_string(doc, "quote");
	tap_ok(v && !strcmp(v, "a \"b\"\n\\c\t\x01"), "escapes round-trip");
	free(v);
	tap_ok(json_get_string(doc, "seed") == NULL, "a number is not a string");
	tap_ok(json_get_string(doc, "absent") == NULL, "absent key");
	tap_ok(json_get_int(doc, "seed", &i) == 0 && i == 18446744073709551LL, "integer value");
	tap_ok(json_get_int(doc, "strategy", &i) == -ENOENT, "a string is not an integer");
	tap_ok(json_get_string("[1,2]", "x") == NULL, "not an object");

	tap_ok(json_parse_string_array("[\"a b\", \"c\\u00e9\", \"\"]", &arr, &n) == 0 && n == 3,
	       "string array parses");
	tap_ok(n == 3 && !strcmp(arr[0], "a b") && !strcmp(arr[1], "c\xc3\xa9") && !arr[2][0] &&
		       arr[3] == NULL,
	       "values, \\u escape as UTF-8, NULL-terminated");
	while (n)
		free(arr[--n]);
	free(arr);
	tap_ok(json_parse_string_array(" [ ] ", &arr, &n) == 0 && n == 0 && arr && !arr[0],
	       "empty array");
	free(arr);
	tap_ok(json_parse_string_array("[\"a\" \"b\"]", &arr, &n) == -EINVAL, "missing comma");
	tap_ok(json_parse_string_array("[\"a\"", &arr, &n) == -EINVAL, "unterminated array");
	tap_ok(json_parse_string_array("[1]", &arr, &n) == -EINVAL, "non-string element");
	p = "\"bad \\x escape\"";
	tap_ok(json_parse_string(&p) == NULL, "unknown escape rejected");
	p = "\"open";
	tap_ok(json_parse_string(&p) == NULL, "unterminated string rejected");
	free(doc);
	return tap_done();
}
