/* SPDX-License-Identifier: MIT */
/*
 * Streaming JSON writer: objects/arrays nest, commas and escaping are
 * handled here so callers only name keys and values.
 *   struct json j; json_init(&j, stdout, true);
 *   json_obj_begin(&j, NULL); json_kv_int(&j, "runs", 3); json_obj_end(&j);
 */
#ifndef CONCSCHED_JSON_H
#define CONCSCHED_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define JSON_MAX_DEPTH 32

struct json {
	FILE *f;
	bool pretty;
	int depth;
	bool need_comma[JSON_MAX_DEPTH];
};

void json_init(struct json *j, FILE *f, bool pretty);
/* key is NULL inside arrays and at top level. */
void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_kv_str(struct json *j, const char *key, const char *v); /* NULL -> null */
void json_kv_int(struct json *j, const char *key, int64_t v);
void json_kv_uint(struct json *j, const char *key, uint64_t v);
void json_kv_dbl(struct json *j, const char *key, double v);
void json_kv_bool(struct json *j, const char *key, bool v);
void json_kv_null(struct json *j, const char *key);
/* Finish the document with a newline. */
void json_end(struct json *j);
/* Write s as a JSON string literal (with quotes). */
void json_write_string(FILE *f, const char *s);

/* A document built in memory: json_mem_open, write with m.j, then
 * json_mem_close returns the malloc'd text. */
struct json_mem {
	struct json j;
	FILE *f;
	char *buf;
	size_t len;
};
void json_mem_open(struct json_mem *m);
char *json_mem_close(struct json_mem *m);

/* ---- reading back what we wrote ----------------------------------------- */

/* Parse a JSON string literal at *p (which must point at '"'): returns a
 * malloc'd UTF-8 string and moves *p past the closing quote; NULL on a
 * malformed literal. */
char *json_parse_string(const char **p);
/* A flat array of strings, e.g. a campaign's args: 0 or -EINVAL. */
int json_parse_string_array(const char *s, char ***out, size_t *n);
/* The string value of "key" at the top level of a flat object written by
 * this writer (nested objects are skipped over); malloc'd, NULL if absent
 * or not a string. */
char *json_get_string(const char *obj, const char *key);
/* The object value of a top-level key: a pointer into obj at its '{'
 * (the getters read its keys), or NULL if absent or not an object. */
const char *json_get_object(const char *obj, const char *key);
/* Integer value of a top-level key; -ENOENT if absent or not a number. */
int json_get_int(const char *obj, const char *key, int64_t *out);
/* The boolean value of key: 0, or -ENOENT (missing, or not true/false). */
int json_get_bool(const char *obj, const char *key, bool *out);

#endif
