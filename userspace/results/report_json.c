// SPDX-License-Identifier: MIT
/*
 * A campaign report as JSON (report.h, docs/report.md: schema
 * REPORT_JSON_SCHEMA).
 */
#include "results/report.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "strategies/declog_summary.h"
#include "lib/json.h"

static void json_sites(struct json *j, const struct report_site *s, size_t n)
{
	size_t i;

	json_arr_begin(j, "sites");
	for (i = 0; i < n; i++) {
		json_obj_begin(j, NULL);
		json_kv_int(j, "id", s[i].id);
		json_kv_str(j, "text", s[i].text);
		json_kv_str(j, "function", s[i].function);
		json_kv_str(j, "file", s[i].file);
		json_kv_int(j, "line", s[i].line);
		json_kv_str(j, "object", s[i].object);
		json_kv_uint(j, "offset", s[i].offset);
		json_obj_end(j);
	}
	json_arr_end(j);
}

static void json_campaign(const struct report *r, struct json *j)
{
	char spec[48];
	size_t i;

	json_obj_begin(j, "campaign");
	json_kv_str(j, "dir", r->dir);
	json_kv_str(j, "uuid", r->c.uuid);
	json_kv_str(j, "program", r->c.program);
	json_kv_str(j, "args", r->c.args_json);
	json_kv_str(j, "binary_hash", r->c.binary_hash);
	json_kv_str(j, "strategy", r->c.strategy);
	json_kv_str(j, "config", r->c.config_json);
	json_kv_str(j, "metric", r->c.metric);
	json_kv_str(j, "saturation", saturation_format(&r->sat, spec, sizeof(spec)));
	json_kv_uint(j, "seed", r->c.seed);
	json_kv_str(j, "host", r->c.host);
	json_kv_str(j, "where", r->c.where);
	json_kv_str(j, "kernel", r->c.kernel);
	json_kv_int(j, "created_ns", r->c.created_ns);
	json_kv_str(j, "version", r->c.version);
	json_arr_begin(j, "inputs");
	for (i = 0; i < r->ninputs; i++) {
		const struct store_input *in = &r->inputs[i];

		json_obj_begin(j, NULL);
		json_kv_str(j, "uuid", in->uuid);
		json_kv_str(j, "dir", in->dir);
		json_kv_str(j, "strategy", in->strategy);
		json_kv_uint(j, "seed", in->seed);
		json_kv_int(j, "runs", in->runs);
		json_kv_str(j, "host", in->host);
		json_kv_str(j, "where", in->where);
		json_kv_str(j, "kernel", in->kernel);
		json_kv_str(j, "version", in->version);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void json_runs(const struct report *r, struct json *j)
{
	size_t i;
	int o;

	json_obj_begin(j, "runs");
	json_kv_uint(j, "total", r->nruns);
	json_kv_dbl(j, "duration_s", r->total_s);
	json_obj_begin(j, "outcomes");
	for (o = 0; o < OUTCOME_COUNT; o++)
		json_kv_uint(j, oracle_outcome_name(o), r->outcomes[o]);
	json_kv_uint(j, "other", r->outcomes[OUTCOME_COUNT]);
	json_obj_end(j);
	json_kv_int(j, "jobs", r->jobs);
	json_kv_uint(j, "overlapped", r->noverlapped);
	json_arr_begin(j, "list");
	for (i = 0; i < r->nruns; i++) {
		const struct store_run *x = &r->runs[i];

		json_obj_begin(j, NULL);
		json_kv_int(j, "run", x->index);
		json_kv_str(j, "uuid", x->uuid);
		json_kv_uint(j, "seed", x->seed);
		json_kv_str(j, "outcome", x->outcome);
		json_kv_str(j, "summary", x->summary);
		json_kv_dbl(j, "duration_s", (double)x->duration_ns / 1e9);
		json_kv_str(j, "origin_host", x->origin_host);
		if (r->beside[i].n) {
			size_t k;

			json_arr_begin(j, "beside");
			for (k = 0; k < r->beside[i].n && k < REPORT_BESIDE_MAX; k++)
				json_kv_int(j, NULL, r->beside[i].runs[k]);
			json_arr_end(j);
			json_kv_uint(j, "beside_count", r->beside[i].n);
		}
		json_obj_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

static void json_metric(const struct report *r, const struct report_metric *m, struct json *j)
{
	size_t i;

	json_obj_begin(j, NULL);
	json_kv_str(j, "name", m->name);
	json_kv_int(j, "covered", m->covered);
	if (m->estimated) {
		json_kv_int(j, "estimated", m->estimated);
		json_kv_dbl(j, "percent", 100.0 * (double)m->covered / (double)m->estimated);
		json_kv_int(j, "covered_estimated", m->covered_estimated);
		json_kv_int(j, "false_positives", m->estimated - m->covered_estimated);
		json_kv_int(j, "false_negatives", m->covered - m->covered_estimated);
	} else {
		json_kv_null(j, "estimated");
		json_kv_null(j, "percent");
	}
	json_kv_bool(j, "stopping_metric", m->stop);
	json_obj_begin(j, "saturation");
	json_kv_bool(j, "by_time", r->sat.by_time);
	json_kv_dbl(j, "window", r->sat.window);
	json_kv_dbl(j, "threshold", r->sat.threshold);
	json_kv_bool(j, "enough", m->sat.enough);
	json_kv_bool(j, "saturated", m->sat.saturated);
	json_kv_dbl(j, "slope", m->sat.slope);
	json_kv_dbl(j, "r2", m->sat.r2);
	if (m->sat_at >= 0)
		json_kv_int(j, "saturated_at_run", report_metric_sat_run(m));
	else
		json_kv_null(j, "saturated_at_run");
	json_obj_end(j);
	json_arr_begin(j, "series");
	for (i = 0; i < m->npts; i++) {
		json_arr_begin(j, NULL);
		json_kv_int(j, NULL, m->pts[i].run);
		json_kv_dbl(j, NULL, m->pts[i].t_s);
		json_kv_dbl(j, NULL, m->pts[i].covered);
		json_arr_end(j);
	}
	json_arr_end(j);
	json_obj_end(j);
}

void report_write_json(const struct report *r, FILE *f)
{
	struct json j;
	char cmd[1200];
	size_t i;

	json_init(&j, f, true);
	json_obj_begin(&j, NULL);
	json_kv_str(&j, "schema", REPORT_JSON_SCHEMA);
	json_campaign(r, &j);
	json_runs(r, &j);
	json_arr_begin(&j, "metrics");
	for (i = 0; i < r->nmetrics; i++)
		json_metric(r, &r->metrics[i], &j);
	json_arr_end(&j);
	declog_summary_json(r->logsum, &j);
	json_arr_begin(&j, "search");
	for (i = 0; i < r->nlog; i++)
		json_kv_str(&j, NULL, r->log[i]);
	json_arr_end(&j);
	json_arr_begin(&j, "failures");
	for (i = 0; i < r->nfailures; i++) {
		const struct report_failure *x = &r->failures[i];

		json_obj_begin(&j, NULL);
		json_kv_int(&j, "run", x->run);
		json_kv_str(&j, "kind", x->kind);
		json_kv_str(&j, "summary", x->summary);
		json_kv_str(&j, "detail", x->detail);
		if (x->arm)
			json_kv_str(&j, "arm", x->arm);
		json_kv_bool(&j, "steered_throughout", run_steering_kept(&x->steering));
		if (x->steering.watchdog_releases || !run_steering_kept(&x->steering)) {
			json_obj_begin(&j, "steering");
			json_kv_uint(&j, "watchdog_releases", x->steering.watchdog_releases);
			json_kv_uint(&j, "rescued_threads", x->steering.rescued_threads);
			json_kv_uint(&j, "serial_preempts", x->steering.serial_preempts);
			json_obj_end(&j);
		}
		json_sites(&j, x->sites, x->nsites);
		json_kv_str(&j, "replay", report_replay_cmd(r, x->run, cmd, sizeof(cmd)));
		if (x->replays) {
			json_kv_uint(&j, "replays", x->replays);
			json_kv_uint(&j, "reproduced", x->reproduced);
		}
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr_begin(&j, "warnings");
	for (i = 0; i < r->nwarnings; i++) {
		const struct report_warning *w = &r->warnings[i];

		json_obj_begin(&j, NULL);
		json_kv_str(&j, "kind", w->kind);
		json_kv_str(&j, "variable", w->variable);
		json_kv_str(&j, "threads", w->threads);
		json_kv_str(&j, "locks", w->locks);
		json_sites(&j, w->sites, w->nsites);
		json_kv_uint(&j, "runs", w->runs);
		json_kv_int(&j, "first_run", w->first_run);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	json_end(&j);
}
