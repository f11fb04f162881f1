// SPDX-License-Identifier: MIT
#include "lib/json.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/xalloc.h"

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
		case '"':
			fputs("\\\"", f);
			break;
		case '\\':
			fputs("\\\\", f);
			break;
		case '\n':
			fputs("\\n", f);
			break;
		case '\r':
			fputs("\\r", f);
			break;
		case '\t':
			fputs("\\t", f);
			break;
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

void json_obj_begin(struct json *j, const char *k)
{
	open(j, k, '{');
}
void json_obj_end(struct json *j)
{
	close_(j, '}');
}
void json_arr_begin(struct json *j, const char *k)
{
	open(j, k, '[');
}
void json_arr_end(struct json *j)
{
	close_(j, ']');
}

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

void json_mem_open(struct json_mem *m)
{
	m->buf = NULL;
	m->len = 0;
	m->f = open_memstream(&m->buf, &m->len);
	if (!m->f) {
		perror("open_memstream");
		abort();
	}
	json_init(&m->j, m->f, false);
}

char *json_mem_close(struct json_mem *m)
{
	fclose(m->f);
	return m->buf;
}

/* ---- reading ---------------------------------------------------------------- */

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\t' || *p == '\r')
		p++;
	return p;
}

static void put_utf8(char *out, size_t *n, unsigned cp)
{
	if (cp < 0x80) {
		out[(*n)++] = (char)cp;
	} else if (cp < 0x800) {
		out[(*n)++] = (char)(0xc0 | cp >> 6);
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	} else {
		out[(*n)++] = (char)(0xe0 | cp >> 12);
		out[(*n)++] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[(*n)++] = (char)(0x80 | (cp & 0x3f));
	}
}

char *json_parse_string(const char **pp)
{
	const char *p = *pp;
	size_t n = 0;
	char *out;

	if (*p != '"')
		return NULL;
	out = malloc(strlen(p) * 3 + 1);
	if (!out)
		return NULL;
	for (p++; *p && *p != '"'; p++) {
		if (*p != '\\') {
			out[n++] = *p;
			continue;
		}
		switch (*++p) {
		case 'n':
			out[n++] = '\n';
			break;
		case 'r':
			out[n++] = '\r';
			break;
		case 't':
			out[n++] = '\t';
			break;
		case 'b':
			out[n++] = '\b';
			break;
		case 'f':
			out[n++] = '\f';
			break;
		case '"':
		case '\\':
		case '/':
			out[n++] = *p;
			break;
		case 'u': {
			unsigned cp = 0;
			int i;

			for (i = 1; i <= 4; i++) {
				char c = p[i];

				cp <<= 4;
				if (c >= '0' && c <= '9')
					cp |= (unsigned)(c - '0');
				else if ((c | 0x20) >= 'a' && (c | 0x20) <= 'f')
					cp |= (unsigned)((c | 0x20) - 'a' + 10);
				else
					goto bad;
			}
			put_utf8(out, &n, cp);
			p += 4;
			break;
		}
		default:
			goto bad;
		}
	}
	if (*p != '"')
		goto bad;
	out[n] = 0;
	*pp = p + 1;
	return out;
bad:
	free(out);
	return NULL;
}

int json_parse_string_array(const char *s, char ***out, size_t *n)
{
	const char *p = skip_ws(s);
	char **v = NULL;
	size_t k = 0;

	*out = NULL;
	*n = 0;
	if (*p++ != '[')
		return -EINVAL;
	p = skip_ws(p);
	while (*p && *p != ']') {
		char *str = json_parse_string(&p);

		if (!str)
			goto bad;
		v = xrealloc(v, (k + 2) * sizeof(*v));
		v[k++] = str;
		v[k] = NULL;
		p = skip_ws(p);
		if (*p == ',')
			p = skip_ws(p + 1);
		else if (*p != ']')
			goto bad;
	}
	if (*p != ']')
		goto bad;
	if (!v)
		v = xcalloc(1, sizeof(*v));
	*out = v;
	*n = k;
	return 0;
bad:
	while (k)
		free(v[--k]);
	free(v);
	return -EINVAL;
}

/* Position of the value of a top-level key, or NULL. */
static const char *find_value(const char *obj, const char *key)
{
	const char *p = skip_ws(obj);
	int depth = 0;

	if (*p != '{')
		return NULL;
	for (; *p; p++) {
		if (*p == '{' || *p == '[') {
			depth++;
		} else if (*p == '}' || *p == ']') {
			if (--depth == 0)
				break; /* the object ends here */
		} else if (*p == '"') {
			const char *q = p;
			char *str = json_parse_string(&q);
			bool hit;

			if (!str)
				return NULL;
			q = skip_ws(q);
			hit = depth == 1 && *q == ':' && !strcmp(str, key);
			free(str);
			if (hit)
				return skip_ws(q + 1);
			p = q - 1;
		}
	}
	return NULL;
}

char *json_get_string(const char *obj, const char *key)
{
	const char *v = find_value(obj, key);

	return v && *v == '"' ? json_parse_string(&v) : NULL;
}

int json_get_bool(const char *obj, const char *key, bool *out)
{
	const char *v = find_value(obj, key);

	if (v && !strncmp(v, "true", 4))
		*out = true;
	else if (v && !strncmp(v, "false", 5))
		*out = false;
	else
		return -ENOENT;
	return 0;
}

const char *json_get_object(const char *obj, const char *key)
{
	const char *v = find_value(obj, key);

	return v && *v == '{' ? v : NULL;
}

int json_get_int(const char *obj, const char *key, int64_t *out)
{
	const char *v = find_value(obj, key);
	char *end;

	if (!v)
		return -ENOENT;
	errno = 0;
	*out = strtoll(v, &end, 10);
	return end == v || errno ? -ENOENT : 0;
}
