// SPDX-License-Identifier: MIT
/* A run's observed schedule, for people (schedule.h). */
#include "results/schedule.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "concsched_abi.h"
#include "coverage/thread_model.h"
#include "lib/declog.h"
#include "lib/html.h"
#include "lib/xalloc.h"

static size_t thread_slot(struct sched_view *v, const char *path)
{
	size_t i;

	for (i = 0; i < v->nthreads; i++)
		if (!strcmp(v->threads[i], path))
			return i;
	v->threads = xrealloc(v->threads, (v->nthreads + 1) * sizeof(*v->threads));
	v->threads[v->nthreads] = xstrdup(path);
	return v->nthreads++;
}

static char *dup_or_null(const char *s)
{
	return s && *s ? xstrdup(s) : NULL;
}

/* A site with no function name: "libc.so.6+0x2a1c9". */
static char *object_offset(const char *object, uint64_t offset)
{
	const char *slash = strrchr(object, '/');
	char buf[256];

	snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, slash ? slash + 1 : object, offset);
	return xstrdup(buf);
}

/* A point without a site: the run recorded its op as -(op + 1)
 * (run/onerun.c pass_site_of). */
static char *siteless_point(int64_t arg)
{
	uint64_t op = (uint64_t)(-(arg + 1));
	char buf[48];

	if (op == CS_OP_START)
		return xstrdup("(thread start)");
	if (op == CS_OP_EXIT)
		return xstrdup("(thread exit)");
	if (op == CS_OP_PROC_EXIT)
		return xstrdup("(program exit)");
	snprintf(buf, sizeof(buf), "(%s)", thread_model_op_name(op > UINT32_MAX ? UINT32_MAX : op));
	return xstrdup(buf);
}

int schedule_load(struct store *s, int64_t run, struct sched_view *v)
{
	struct store_run sr = { 0 };
	struct declog dl = { 0 };
	void *blob = NULL;
	size_t len = 0, i, k;
	char *out = NULL, *err_text = NULL, fallback[24];
	int err;

	memset(v, 0, sizeof(*v));
	v->run = run;
	if (store_load_run(s, run, &sr))
		return -ENOENT;
	v->outcome = dup_or_null(sr.outcome);
	v->summary = dup_or_null(sr.summary);
	store_run_clear(&sr);
	err = store_load_run_blobs(s, run, &blob, &len, &out, &err_text);
	free(out);
	free(err_text);
	if (err || !blob || declog_decode(blob, len, &dl)) {
		free(blob);
		return -ENODATA;
	}
	free(blob);
	for (i = 0; i < dl.n; i++) {
		const struct declog_entry *e = &dl.entries[i];
		const char *path = declog_thread_path(&dl, e->thread);
		struct store_site site = { 0 };
		struct sched_step *st;

		if (e->action != DECLOG_PASS)
			continue;
		if (!path) {
			snprintf(fallback, sizeof(fallback), "#%08" PRIx64, e->thread >> 32);
			path = fallback;
		}
		v->steps = xrealloc(v->steps, (v->nsteps + 1) * sizeof(*v->steps));
		st = &v->steps[v->nsteps++];
		memset(st, 0, sizeof(*st));
		st->thread = thread_slot(v, path);
		st->point = e->event;
		if (e->arg > 0 && !store_get_site(s, e->arg, &site)) {
			st->function = site.function || !site.object
					       ? dup_or_null(site.function)
					       : object_offset(site.object, site.offset);
			st->file = dup_or_null(site.file);
			st->line = site.line;
		} else if (e->arg < 0) {
			st->function = siteless_point(e->arg);
		}
	}
	declog_free(&dl);
	if (!v->nsteps)
		return -ENODATA;
	/* A switch is a preemption when the thread switched away from passes
	 * another point later: it was stopped, not finished. */
	for (i = 1; i < v->nsteps; i++) {
		size_t prev = v->steps[i - 1].thread;

		if (v->steps[i].thread == prev)
			continue;
		v->steps[i].switched = true;
		v->nswitches++;
		for (k = i + 1; k < v->nsteps; k++)
			if (v->steps[k].thread == prev) {
				v->steps[i].preemption = true;
				v->npreemptions++;
				break;
			}
	}
	return 0;
}

void schedule_free(struct sched_view *v)
{
	size_t i;

	for (i = 0; i < v->nthreads; i++)
		free(v->threads[i]);
	for (i = 0; i < v->nsteps; i++) {
		free(v->steps[i].function);
		free(v->steps[i].file);
	}
	free(v->threads);
	free(v->steps);
	free(v->outcome);
	free(v->summary);
	memset(v, 0, sizeof(*v));
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

/* "function file:line", or what is known of it. */
static void step_label(const struct sched_step *st, char *buf, size_t len)
{
	const char *fn = st->function ? st->function : "?";

	if (st->file && st->line)
		snprintf(buf, len, "%s %s:%d", fn, base_name(st->file), st->line);
	else
		snprintf(buf, len, "%s", fn);
}

#define COL_W 30

void schedule_write_text(const struct sched_view *v, FILE *f)
{
	char label[256];
	size_t i, t;

	fprintf(f, "run %" PRId64 " (%s): %zu points, %zu threads, %zu switches, %zu preemptions\n",
		v->run, v->outcome ? v->outcome : "?", v->nsteps, v->nthreads, v->nswitches,
		v->npreemptions);
	fprintf(f, "%6s ", "step");
	for (t = 0; t < v->nthreads; t++)
		fprintf(f, " %-*.*s", COL_W, COL_W, v->threads[t]);
	fputc('\n', f);
	for (i = 0; i < v->nsteps; i++) {
		const struct sched_step *st = &v->steps[i];

		step_label(st, label, sizeof(label));
		fprintf(f, "%5zu%c ", i + 1, st->preemption ? '*' : ' ');
		for (t = 0; t < st->thread; t++)
			fprintf(f, " %-*s", COL_W, "");
		fprintf(f, " %.*s\n", COL_W, label);
	}
	fprintf(f, "%6s  %s%s%s\n", "end", v->outcome ? v->outcome : "?", v->summary ? ": " : "",
		v->summary ? v->summary : "");
	fputs("(* a preemption: the thread of the step before was switched away from and "
	      "goes on later)\n",
	      f);
}

void schedule_write_json(const struct sched_view *v, struct json *j, const char *key)
{
	size_t i;

	json_obj_begin(j, key);
	json_kv_int(j, "run", v->run);
	json_kv_str(j, "outcome", v->outcome);
	json_kv_str(j, "summary", v->summary);
	json_arr_begin(j, "threads");
	for (i = 0; i < v->nthreads; i++)
		json_kv_str(j, NULL, v->threads[i]);
	json_arr_end(j);
	json_arr_begin(j, "steps");
	for (i = 0; i < v->nsteps; i++) {
		const struct sched_step *st = &v->steps[i];

		json_obj_begin(j, NULL);
		json_kv_uint(j, "thread", st->thread);
		json_kv_uint(j, "point", st->point);
		json_kv_str(j, "function", st->function);
		json_kv_str(j, "file", st->file);
		json_kv_int(j, "line", st->line);
		json_kv_bool(j, "switch", st->switched);
		json_kv_bool(j, "preemption", st->preemption);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_kv_uint(j, "switches", v->nswitches);
	json_kv_uint(j, "preemptions", v->npreemptions);
	json_obj_end(j);
}

/* Line `line` of file, without its newline (malloc'd), or NULL. */
static char *source_line(const char *file, int line)
{
	char *buf = NULL, *res = NULL;
	size_t cap = 0;
	FILE *f;
	int n = 0;

	if (!file || line <= 0 || !(f = fopen(file, "r")))
		return NULL;
	while (getline(&buf, &cap, f) >= 0)
		if (++n == line) {
			buf[strcspn(buf, "\r\n")] = 0;
			res = xstrdup(buf + strspn(buf, " \t"));
			break;
		}
	free(buf);
	fclose(f);
	return res;
}

/* Swimlane geometry (SVG user units). */
#define SW_LANE 190
#define SW_ROW	24
#define SW_HEAD 34
#define SW_LEFT 44
#define SW_SRC	420

/* Lane header colours: one per thread, in order (tests count them). */
static const char *const lane_colors[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728",
					   "#9467bd", "#8c564b", "#e377c2", "#17becf" };

void schedule_write_svg(const struct sched_view *v, FILE *f)
{
	size_t i, t, nc = sizeof(lane_colors) / sizeof(lane_colors[0]);
	unsigned w = SW_LEFT + (unsigned)v->nthreads * SW_LANE + SW_SRC;
	unsigned h = SW_HEAD + (unsigned)(v->nsteps + 1) * SW_ROW + 8;
	size_t end_len = 8 + (v->outcome ? strlen(v->outcome) : 1) +
			 (v->summary ? strlen(v->summary) + 2 : 0);
	char label[256];

	/* Wide enough for the end line (monospace, 11 px: ~7 units a char). */
	if (w < 8 + 7 * end_len)
		w = 8 + 7 * (unsigned)end_len;

	fprintf(f,
		"<svg class=\"swimlane\" data-threads=\"%zu\" xmlns=\"http://www.w3.org/2000/svg\" "
		"width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" font-family=\"monospace\" "
		"font-size=\"11\">\n",
		v->nthreads, w, h, w, h);
	for (t = 0; t < v->nthreads; t++) {
		unsigned x = SW_LEFT + (unsigned)t * SW_LANE;

		fprintf(f,
			"<g class=\"lane\"><rect x=\"%u\" y=\"0\" width=\"%u\" height=\"%u\" "
			"fill=\"%s\"/><text x=\"%u\" y=\"18\" fill=\"#fff\">thread ",
			x + 2, SW_LANE - 4, SW_HEAD - 8, lane_colors[t % nc], x + 8);
		html_escape(f, v->threads[t]);
		fprintf(f,
			"</text><line x1=\"%u\" y1=\"%u\" x2=\"%u\" y2=\"%u\" "
			"stroke=\"#ccc\"/></g>\n",
			x + SW_LANE / 2, SW_HEAD, x + SW_LANE / 2, h - 4);
	}
	for (i = 0; i < v->nsteps; i++) {
		const struct sched_step *st = &v->steps[i];
		unsigned x = SW_LEFT + (unsigned)st->thread * SW_LANE,
			 y = SW_HEAD + (unsigned)i * SW_ROW;
		char *src = source_line(st->file, st->line);

		step_label(st, label, sizeof(label));
		if (st->preemption)
			fprintf(f,
				"<line class=\"preemption\" x1=\"4\" y1=\"%u\" x2=\"%u\" y2=\"%u\" "
				"stroke=\"#d00\" stroke-dasharray=\"4 3\"/>\n",
				y, SW_LEFT + (unsigned)v->nthreads * SW_LANE, y);
		fprintf(f,
			"<g class=\"step\"><text x=\"4\" y=\"%u\" fill=\"%s\">%zu%s</text>"
			"<rect x=\"%u\" y=\"%u\" width=\"%u\" height=\"%u\" rx=\"3\" "
			"fill=\"#f4f4f4\" "
			"stroke=\"%s\"/><text x=\"%u\" y=\"%u\">",
			y + 16, st->preemption ? "#d00" : "#555", i + 1, st->preemption ? "*" : "",
			x + 4, y + 3, SW_LANE - 8, SW_ROW - 6, lane_colors[st->thread % nc], x + 8,
			y + 16);
		html_escape(f, label);
		fputs("</text>", f);
		if (src) {
			fprintf(f, "<text x=\"%u\" y=\"%u\" fill=\"#444\">",
				SW_LEFT + (unsigned)v->nthreads * SW_LANE + 8, y + 16);
			html_escape(f, src);
			fputs("</text>", f);
			free(src);
		}
		fputs("</g>\n", f);
	}
	fprintf(f, "<text x=\"4\" y=\"%u\" fill=\"#d00\">end: ",
		SW_HEAD + (unsigned)v->nsteps * SW_ROW + 16);
	html_escape(f, v->outcome ? v->outcome : "?");
	if (v->summary) {
		fputs(": ", f);
		html_escape(f, v->summary);
	}
	fputs("</text>\n</svg>\n", f);
}

size_t schedule_swap_before(const struct declog_entry *v, size_t n, size_t from,
			    struct declog_entry *out)
{
	size_t i = from < n ? from : n;
	struct declog_entry t;

	while (i-- > 1) {
		if (v[i].thread == v[i - 1].thread)
			continue;
		memcpy(out, v, n * sizeof(*out));
		t = out[i];
		out[i] = out[i - 1];
		out[i - 1] = t;
		return i;
	}
	return 0;
}
