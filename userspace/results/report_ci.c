// SPDX-License-Identifier: MIT
/* The JSON model the CI renderings read (report_ci.h). */
#include "results/report_ci.h"

#include <stdlib.h>
#include <string.h>

#include "results/run_steering.h"
#include "lib/log.h"
#include "lib/xalloc.h"

/* Length of the valid UTF-8 sequence at p (up to end), 0 when invalid. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n, i;

	if (p[0] < 0x80)
		return 1;
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		n = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef)
		n = 3;
	else if (p[0] >= 0xf0 && p[0] <= 0xf4)
		n = 4;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (i = 1; i < n; i++)
		if ((p[i] & 0xc0) != 0x80)
			return 0;
	/* Overlong 3- and 4-byte forms, surrogates, past U+10FFFF. */
	if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f) ||
	    (p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f))
		return 0;
	return n;
}

static void utf8_sanitize(char *buf, size_t len)
{
	unsigned char *p = (unsigned char *)buf, *end = p + len;

	while (p < end) {
		size_t n = utf8_len(p, end);

		if (!n) {
			*p++ = '?';
			continue;
		}
		p += n;
	}
}

/* Seeds are 64-bit unsigned, past jansson's json_int_t: the model holds
 * them as strings ("seed": "11522521254665373972"). Inside a JSON string a
 * quote is escaped, so the key pattern only matches keys. */
static char *quote_seeds(const char *buf, size_t len, size_t *out_len)
{
	static const char key[] = "\"seed\": ";
	char *out = xcalloc(len + 1, 2), *o = out;
	const char *p = buf, *end = buf + len;

	while (p < end) {
		const char *k = memmem(p, end - p, key, sizeof(key) - 1);
		size_t digits;

		if (!k) {
			memcpy(o, p, end - p);
			o += end - p;
			break;
		}
		k += sizeof(key) - 1;
		memcpy(o, p, k - p);
		o += k - p;
		digits = strspn(k, "0123456789");
		if (digits) {
			*o++ = '"';
			memcpy(o, k, digits);
			o += digits;
			*o++ = '"';
		}
		p = k + digits;
	}
	*out_len = o - out;
	return out;
}

json_t *report_ci_model(const struct report *r)
{
	char *buf = NULL, *quoted;
	size_t len = 0, qlen;
	json_error_t e;
	json_t *model;
	FILE *f = open_memstream(&buf, &len);

	if (!f) {
		log_err("cannot render the report: out of memory");
		return NULL;
	}
	report_write_json(r, f);
	fclose(f);
	utf8_sanitize(buf, len);
	quoted = quote_seeds(buf, len, &qlen);
	model = json_loadb(quoted, qlen, 0, &e);
	if (!model)
		log_err("cannot read back the report's JSON: %s (line %d)", e.text, e.line);
	free(quoted);
	free(buf);
	return model;
}

const char *report_ci_str(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));

	return s ? s : "";
}

long long report_ci_int(const json_t *obj, const char *key)
{
	return json_integer_value(json_object_get(obj, key));
}

double report_ci_real(const json_t *obj, const char *key)
{
	return json_number_value(json_object_get(obj, key));
}

json_t *report_ci_array(const json_t *obj, const char *key)
{
	json_t *a = json_object_get(obj, key);

	return json_is_array(a) ? a : NULL;
}

const char *report_ci_program_name(const json_t *model)
{
	const char *p = report_ci_str(json_object_get(model, "campaign"), "program");
	const char *slash = strrchr(p, '/');

	return slash && slash[1] ? slash + 1 : p[0] ? p : "program";
}

json_t *report_ci_run(const json_t *model, long long n)
{
	json_t *list = report_ci_array(json_object_get(model, "runs"), "list"), *run;
	size_t i;

	json_array_foreach(list, i, run) if (report_ci_int(run, "run") == n) return run;
	return NULL;
}

bool report_ci_steering_lost(const json_t *fail, char *buf, size_t len)
{
	const json_t *st = json_object_get(fail, "steering");
	struct run_steering s = {
		(uint64_t)report_ci_int(st, "watchdog_releases"),
		(uint64_t)report_ci_int(st, "rescued_threads"),
		(uint64_t)report_ci_int(st, "serial_preempts"),
	};

	if (!json_is_false(json_object_get(fail, "steered_throughout")))
		return false;
	run_steering_describe(&s, buf, len);
	return true;
}
