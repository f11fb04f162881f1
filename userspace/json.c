// SPDX-License-Identifier: MIT
#include "json.h"

#include <math.h>

void json_init(struct json *j, FILE *f, bool pretty)
{
	j->f = f;
	j->pretty = pretty;
	j->depth = 0;
	j->need_comma[0] = false;
}

void json_write_string(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;

	fputc('"', f);
	for (; *p; p++) {
		switch (*p) {
		case '"': fputs("\\\"", f); break;
		case '\\': fputs("\\\\", f); break;
		case '\n': fputs("\\n", f); break;
		case '\r': fputs("\\r", f); break;
		case '\t': fputs("\\t", f); break;
		default:
			if (*p < 0x20)
				fprintf(f, "\\u%04x", *p);
			else
				fputc(*p, f);
		}
	}
	fputc('"', f);
}

static void indent(struct json *j)
{
	int i;

	if (!j->pretty)
		return;
	fputc('\n', j->f);
	for (i = 0; i < j->depth; i++)
		fputs("  ", j->f);
}

static void key(struct json *j, const char *k)
{
	if (j->need_comma[j->depth])
		fputc(',', j->f);
	j->need_comma[j->depth] = true;
	if (j->depth > 0)
		indent(j);
	if (k) {
		json_write_string(j->f, k);
		fputs(j->pretty ? ": " : ":", j->f);
	}
}

static void open(struct json *j, const char *k, char c)
{
	key(j, k);
	fputc(c, j->f);
	if (j->depth < JSON_MAX_DEPTH - 1)
		j->depth++;
	j->need_comma[j->depth] = false;
}

static void close_(struct json *j, char c)
{
	bool had = j->need_comma[j->depth];

	if (j->depth > 0)
		j->depth--;
	if (had)
		indent(j);
	fputc(c, j->f);
}

void json_obj_begin(struct json *j, const char *k) { open(j, k, '{'); }
void json_obj_end(struct json *j) { close_(j, '}'); }
void json_arr_begin(struct json *j, const char *k) { open(j, k, '['); }
void json_arr_end(struct json *j) { close_(j, ']'); }

void json_kv_str(struct json *j, const char *k, const char *v)
{
	key(j, k);
	if (v)
		json_write_string(j->f, v);
	else
		fputs("null", j->f);
}

void json_kv_int(struct json *j, const char *k, int64_t v)
{
	key(j, k);
	fprintf(j->f, "%lld", (long long)v);
}

void json_kv_uint(struct json *j, const char *k, uint64_t v)
{
	key(j, k);
	fprintf(j->f, "%llu", (unsigned long long)v);
}

void json_kv_dbl(struct json *j, const char *k, double v)
{
	key(j, k);
	if (isfinite(v))
		fprintf(j->f, "%.6g", v);
	else
		fputs("null", j->f);
}

void json_kv_bool(struct json *j, const char *k, bool v)
{
	key(j, k);
	fputs(v ? "true" : "false", j->f);
}

void json_kv_null(struct json *j, const char *k)
{
	key(j, k);
	fputs("null", j->f);
}

void json_end(struct json *j)
{
	fputc('\n', j->f);
	fflush(j->f);
}
