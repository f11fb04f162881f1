// SPDX-License-Identifier: MIT
/*
 * A campaign's covered tasks with their sites resolved (report.h:
 * concsched report --tasks).
 */
#include "results/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "kernel/symbolize.h"
#include "lib/log.h"
#include "lib/xalloc.h"

/* Append store site id as text: an instruction as "function+0xoff
 * (file:line)" from the object when it is still there, else as stored
 * ("function (file:line)" or "object+0xoff"); a named entity (prefix 'v'
 * variable, 'f' function, ...: "v@N") by its stored name. */
/* ---- report --tasks: the covered tasks of one metric, sites resolved ---- */

struct tasks_ctx {
	struct store *s;
	struct json *j; /* NULL: text */
	FILE *f;
	size_t n;
};

static void tasks_site_text(struct store *s, int64_t id, bool named, char **out, size_t *n,
			    size_t *cap)
{
	struct store_site site;
	struct sym_site ss;
	char buf[1024];
	const char *obj, *file;
	size_t l;

	if (store_get_site(s, id, &site)) {
		snprintf(buf, sizeof(buf), "@%lld", (long long)id);
	} else if (named && site.function) {
		snprintf(buf, sizeof(buf), "%s", site.function);
	} else if (!named && !symbolize_resolve_offset(site.object, site.offset, &ss) &&
		   ss.symbol && ss.is_func) {
		symbolize_site_format(&ss, buf, sizeof(buf));
	} else {
		obj = strrchr(site.object, '/') ? strrchr(site.object, '/') + 1 : site.object;
		file = site.file && strrchr(site.file, '/') ? strrchr(site.file, '/') + 1
							    : site.file;
		if (site.function && file && site.line)
			snprintf(buf, sizeof(buf), "%s (%s:%d)", site.function, file, site.line);
		else if (site.function)
			snprintf(buf, sizeof(buf), "%s", site.function);
		else
			snprintf(buf, sizeof(buf), "%s+0x%llx", obj,
				 (unsigned long long)site.offset);
	}
	l = strlen(buf);
	if (*n + l + 1 > *cap) {
		*cap = (*n + l + 1) * 2;
		*out = xrealloc(*out, *cap);
	}
	memcpy(*out + *n, buf, l + 1);
	*n += l;
}

/* A task key with every store site reference "@N" replaced by the site. */
char *report_tasks_key_text(struct store *s, const char *key)
{
	size_t cap = strlen(key) + 64, n = 0;
	char *out = xcalloc(1, cap), *end;
	const char *p = key;
	long long id;
	bool named;

	while (*p) {
		if (*p == '@' && p[1] >= '0' && p[1] <= '9') {
			named = n && ((out[n - 1] >= 'a' && out[n - 1] <= 'z') ||
				      (out[n - 1] >= 'A' && out[n - 1] <= 'Z'));
			if (named) { /* "v@12" -> "v=name" */
				if (n + 2 > cap) {
					cap *= 2;
					out = xrealloc(out, cap);
				}
				out[n++] = '=';
				out[n] = 0;
			}
			id = strtoll(p + 1, &end, 10);
			tasks_site_text(s, id, named, &out, &n, &cap);
			p = end;
			continue;
		}
		if (n + 2 > cap) {
			cap *= 2;
			out = xrealloc(out, cap);
		}
		out[n++] = *p++;
		out[n] = 0;
	}
	return out;
}

static int tasks_one(const struct store_task *t, void *arg)
{
	struct tasks_ctx *x = arg;
	char *text = report_tasks_key_text(x->s, t->key);

	if (x->j) {
		json_obj_begin(x->j, NULL);
		json_kv_str(x->j, "key", t->key);
		json_kv_str(x->j, "text", text);
		json_kv_int(x->j, "first_run", t->first_run);
		json_kv_uint(x->j, "hits", t->hits);
		json_obj_end(x->j);
	} else {
		fprintf(x->f, "%6lld %8llu  %s\n", (long long)t->first_run,
			(unsigned long long)t->hits, text);
	}
	free(text);
	x->n++;
	return 0;
}

int report_tasks_write(struct store *s, const char *metric, bool json, FILE *f)
{
	struct tasks_ctx x = { .s = s, .f = f };
	struct json j;
	char **names = NULL;
	size_t nnames = 0, i;
	bool known = false;
	int err;

	if (store_metrics(s, &names, &nnames) == 0) {
		for (i = 0; i < nnames; i++)
			known |= !strcmp(names[i], metric);
		if (!known) {
			char list[1024] = "";
			size_t off = 0;

			for (i = 0; i < nnames && off < sizeof(list) - 1; i++)
				off += snprintf(list + off, sizeof(list) - off, "%s%s",
						i ? ", " : "", names[i]);
			log_err("no metric '%s' in this campaign (it has: %s)", metric,
				nnames ? list : "none");
			store_strings_free(names, nnames);
			return -ENOENT;
		}
		store_strings_free(names, nnames);
	}
	if (json) {
		json_init(&j, f, true);
		json_obj_begin(&j, NULL);
		json_kv_str(&j, "metric", metric);
		json_arr_begin(&j, "tasks");
		x.j = &j;
	} else {
		fprintf(f, "%6s %8s  %s task\n", "run", "hits", metric);
	}
	err = store_for_each_task(s, metric, tasks_one, &x);
	if (json) {
		json_arr_end(&j);
		json_kv_uint(&j, "count", x.n);
		json_obj_end(&j);
		json_end(&j);
	}
	return err;
}
