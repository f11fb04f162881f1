// SPDX-License-Identifier: MIT
/* The coverage of a window as observe and attach print it (cov_report.h). */
#include "results/cov_report.h"

#include <inttypes.h>

#include "kernel/symbolize.h"

void cov_report_json_site(struct json *j, const char *name, const char *key)
{
	struct sym_site ss;
	char text[1024];

	syncov_site_describe(key, &ss, text, sizeof(text));
	json_obj_begin(j, name);
	json_kv_str(j, "key", key);
	json_kv_str(j, "text", text);
	if (ss.symbol) {
		json_kv_str(j, "function", ss.symbol);
		json_kv_uint(j, "function_offset", ss.sym_offset);
	}
	if (ss.file) {
		json_kv_str(j, "file", ss.file);
		json_kv_int(j, "line", ss.line);
	}
	json_obj_end(j);
}

void cov_report_text(FILE *f, const struct syncov_set *tasks)
{
	char text[1024];
	size_t i, m;
	unsigned s;

	for (m = 0; m < SYNCOV__COUNT; m++) {
		fprintf(f, "%s tasks: %zu\n", syncov_metric_name(m), syncov_set_count(tasks, m));
		for (i = 0; i < tasks->n; i++) {
			const struct syncov_task *t = &tasks->tasks[i];
			struct sym_site ss;

			if (t->metric != m)
				continue;
			fprintf(f, "  ");
			if (t->detail && m != SYNCOV_GOODLOCK)
				fprintf(f, "%s ", t->detail);
			for (s = 0; s < t->nsites; s++) {
				syncov_site_describe(t->sites[s], &ss, text, sizeof(text));
				fprintf(f, "%s%s", s ? " -> " : "", text);
			}
			if (m == SYNCOV_GOODLOCK && t->detail)
				fprintf(f, " [%s]", t->detail);
			fprintf(f, "  hits %" PRIu64 "\n", t->hits);
		}
	}
}

void cov_report_json(struct json *j, const struct syncov_set *tasks, bool described)
{
	size_t i, m;
	unsigned s;

	json_obj_begin(j, "metrics");
	for (m = 0; m < SYNCOV__COUNT; m++) {
		json_obj_begin(j, syncov_metric_name(m));
		json_kv_uint(j, "count", syncov_set_count(tasks, m));
		json_arr_begin(j, "tasks");
		for (i = 0; i < tasks->n; i++) {
			const struct syncov_task *t = &tasks->tasks[i];

			if (t->metric != m)
				continue;
			json_obj_begin(j, NULL);
			json_kv_str(j, "key", t->key);
			json_kv_uint(j, "hits", t->hits);
			if (described && t->detail)
				json_kv_str(j, "detail", t->detail);
			json_arr_begin(j, "sites");
			for (s = 0; s < t->nsites; s++) {
				if (described)
					cov_report_json_site(j, NULL, t->sites[s]);
				else
					json_kv_str(j, NULL, t->sites[s]);
			}
			json_arr_end(j);
			json_obj_end(j);
		}
		json_arr_end(j);
		json_obj_end(j);
	}
	json_obj_end(j);
}
