// SPDX-License-Identifier: MIT
/*
 * A campaign report as a self-contained HTML page (report.h): charts are
 * inline SVG, with no scripts, fonts or other external assets, so the page
 * can be attached to a CI artifact or a bug report.
 */
#include "results/report.h"
#include "results/schedule.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/html.h"

/* Chart geometry (SVG user units). */
#define CH_W 640
#define CH_H 240
#define CH_L 56
#define CH_R 16
#define CH_T 16
#define CH_B 36

/* Failures whose schedule the HTML page draws. */
#define HTML_SCHEDULES 5

static double ch_x(double v, double max)
{
	return CH_L + (max > 1 ? (v - 1) / (max - 1) : 0.5) * (CH_W - CH_L - CH_R);
}

static double ch_y(double v, double max)
{
	return CH_H - CH_B - (max > 0 ? v / max : 0) * (CH_H - CH_T - CH_B);
}

/* Cumulative coverage over runs, saturation point and failing runs. */
static void html_chart(const struct report *r, const struct report_metric *m, FILE *f)
{
	double xmax = (double)(m->npts ? m->npts : 1), ymax = 1, x;
	size_t i, k;

	for (i = 0; i < m->npts; i++)
		if (m->pts[i].covered > ymax)
			ymax = m->pts[i].covered;
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"chart\" width=\"%d\" "
		"height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" aria-label=\"",
		CH_W, CH_H, CH_W, CH_H);
	html_escape(f, m->name);
	fprintf(f, " coverage over runs\">\n");
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" "
		"stroke=\"#999\"/>\n",
		CH_L, CH_T, CH_W - CH_L - CH_R, CH_H - CH_T - CH_B);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.0f</text>\n", CH_L - 6, CH_T + 10,
		ymax);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">0</text>\n", CH_L - 6, CH_H - CH_B);
	fprintf(f, "<text x=\"%d\" y=\"%d\">1</text>\n", CH_L, CH_H - CH_B + 16);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%zu</text>\n", CH_W - CH_R,
		CH_H - CH_B + 16, m->npts);
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">run</text>\n", (CH_W + CH_L) / 2,
		CH_H - 6);
	/* Failing runs: red ticks along the bottom. */
	for (k = 0; k < r->nfailures; k++)
		for (i = 0; i < m->npts; i++)
			if (m->pts[i].run == r->failures[k].run)
				fprintf(f,
					"<line class=\"fail\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" "
					"y2=\"%d\" stroke=\"#c00\"/>\n",
					ch_x((double)(i + 1), xmax), CH_H - CH_B,
					ch_x((double)(i + 1), xmax), CH_H - CH_B - 8);
	fprintf(f, "<polyline fill=\"none\" stroke=\"#1f5fbf\" stroke-width=\"2\" points=\"");
	for (i = 0; i < m->npts; i++)
		fprintf(f, "%s%.1f,%.1f", i ? " " : "", ch_x((double)(i + 1), xmax),
			ch_y(m->pts[i].covered, ymax));
	fprintf(f, "\"/>\n");
	if (m->sat_at >= 0) {
		x = ch_x((double)(m->sat_at + 1), xmax);
		fprintf(f,
			"<line class=\"saturation\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
			"stroke=\"#2a2\" stroke-dasharray=\"4 3\"/>\n",
			x, CH_T, x, CH_H - CH_B);
		fprintf(f, "<text x=\"%.1f\" y=\"%d\" fill=\"#2a2\">saturated at run %ld</text>\n",
			x + 4, CH_T + 14, report_metric_sat_run(m));
	}
	fprintf(f, "</svg>\n");
}

static void html_sites(const struct report_site *s, size_t n, FILE *f)
{
	size_t i;

	fprintf(f, "<ul class=\"sites\">");
	for (i = 0; i < n; i++) {
		fprintf(f, "<li><code>");
		html_escape(f, s[i].text);
		fprintf(f, "</code></li>");
	}
	fprintf(f, "</ul>\n");
}

static void html_metric(const struct report *r, const struct report_metric *m, FILE *f)
{
	char spec[48];

	fprintf(f, "<section class=\"metric\"><h3>");
	html_escape(f, m->name);
	fprintf(f, "%s</h3>\n<p>%lld tasks", m->stop ? " (stopping metric)" : "",
		(long long)m->covered);
	if (m->estimated)
		fprintf(f, " of %lld estimated (%.1f%%)", (long long)m->estimated,
			100.0 * (double)m->covered / (double)m->estimated);
	saturation_format(&r->sat, spec, sizeof(spec));
	if (m->sat.saturated)
		fprintf(f, "; saturated at run %ld", report_metric_sat_run(m));
	else if (m->sat.enough)
		fprintf(f, "; not saturated");
	else
		fprintf(f, "; too few runs to judge saturation");
	if (m->sat.enough)
		fprintf(f, " (slope %.3g/%s, r² %.3f)", m->sat.slope, report_sat_unit(r),
			m->sat.r2);
	fprintf(f, "; window %s</p>\n", spec);
	html_chart(r, m, f);
	fprintf(f, "</section>\n");
}

static void html_failures(const struct report *r, FILE *f)
{
	const struct run_beside *b;
	struct sched_view v;
	char cmd[1200];
	size_t i;

	fprintf(f, "<h2>Failures (%zu)</h2>\n", r->nfailures);
	for (i = 0; i < r->nfailures; i++) {
		const struct report_failure *x = &r->failures[i];

		fprintf(f, "<div class=\"failure\"><h3>run %lld: ", (long long)x->run);
		html_escape(f, x->kind);
		fprintf(f, "</h3>\n<p>");
		html_escape(f, x->summary);
		fprintf(f, "</p>\n");
		if (x->arm) {
			fprintf(f, "<p>arm: ");
			html_escape(f, x->arm);
			fprintf(f, " (the portfolio's sub-strategy that ran it)</p>\n");
		}
		if (x->detail && *x->detail) {
			fprintf(f, "<pre>");
			html_escape(f, x->detail);
			fprintf(f, "</pre>\n");
		}
		if (x->nsites)
			html_sites(x->sites, x->nsites, f);
		b = report_model_beside_of(r, x->run);
		if (b && b->n) {
			fprintf(f, "<p>Beside run%s ", b->n == 1 ? "" : "s");
			report_text_beside(b, f);
			fprintf(f, " (-j)</p>\n");
		}
		fprintf(f, "<p>Replay: <code class=\"replay\">");
		html_escape(f, report_replay_cmd(r, x->run, cmd, sizeof(cmd)));
		fprintf(f, "</code>");
		if (x->replays)
			fprintf(f, " (replayed %" PRIu64 "/%" PRIu64 ")", x->reproduced,
				x->replays);
		fprintf(f, "</p>\n");
		/* The schedule of the first failures, as a swimlane. */
		if (i < HTML_SCHEDULES && !schedule_load(r->store, x->run, &v)) {
			fprintf(f,
				"<details open><summary>Schedule: %zu points, %zu threads, %zu "
				"preemptions</summary>\n<div class=\"schedule\">",
				v.nsteps, v.nthreads, v.npreemptions);
			schedule_write_svg(&v, f);
			fprintf(f, "</div></details>\n");
			schedule_free(&v);
		}
		fprintf(f, "</div>\n");
	}
}

/* The strategy's search (its note summaries), when it made any. */
static void html_search(const struct report *r, FILE *f)
{
	size_t i;

	if (!r->nlog)
		return;
	fprintf(f, "<h2>Search</h2>\n<ul>\n");
	for (i = 0; i < r->nlog; i++) {
		fprintf(f, "<li>");
		html_escape(f, r->log[i]);
		fprintf(f, "</li>\n");
	}
	fprintf(f, "</ul>\n");
}

static void html_warnings(const struct report *r, FILE *f)
{
	size_t i;

	fprintf(f, "<h2>Warnings (%zu)</h2>\n", r->nwarnings);
	for (i = 0; i < r->nwarnings; i++) {
		const struct report_warning *w = &r->warnings[i];

		fprintf(f, "<div class=\"warning\"><p>");
		html_escape(f, w->kind);
		fprintf(f, " on <code>");
		html_escape(f, w->variable);
		fprintf(f, "</code> in %zu run%s (first run %lld)", w->runs,
			w->runs == 1 ? "" : "s", (long long)w->first_run);
		if (w->threads) {
			fprintf(f, "; threads ");
			html_escape(f, w->threads);
		}
		if (w->locks) {
			fprintf(f, "; locks ");
			html_escape(f, w->locks);
		}
		fprintf(f, "</p>\n");
		html_sites(w->sites, w->nsites, f);
		fprintf(f, "</div>\n");
	}
}

void report_html_write(const struct report *r, FILE *f)
{
	char when[64];
	size_t i;
	int o;

	report_format_time(r->c.created_ns, when, sizeof(when));
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"
		   "concsched report: ");
	html_escape(f, r->c.program);
	fprintf(f, "</title>\n<style>\n"
		   "body{font-family:sans-serif;max-width:960px;margin:2em auto;color:#222}\n"
		   "code,pre{font-family:monospace;background:#f4f4f4}\n"
		   "pre{padding:.5em;overflow-x:auto}\n"
		   ".failure{border-left:4px solid #c00;padding-left:1em;margin:1em 0}\n"
		   ".warning{border-left:4px solid #d90;padding-left:1em;margin:1em 0}\n"
		   "svg.chart text{font-size:11px;font-family:sans-serif}\n"
		   "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left}\n"
		   "</style></head><body>\n<h1>concsched campaign report</h1>\n<table>\n");
	fprintf(f, "<tr><th>program</th><td><code>");
	html_escape(f, r->c.program);
	fprintf(f, " ");
	html_escape(f, r->c.args_json);
	fprintf(f, "</code></td></tr>\n<tr><th>campaign</th><td><code>");
	html_escape(f, r->dir);
	fprintf(f, "</code></td></tr>\n");
	if (r->ninputs) {
		fprintf(f, "<tr><th>strategy</th><td>merged from %zu campaign%s</td></tr>\n",
			r->ninputs, r->ninputs == 1 ? "" : "s");
		for (i = 0; i < r->ninputs; i++) {
			const struct store_input *in = &r->inputs[i];

			fprintf(f, "<tr><th>input</th><td><code>");
			html_escape(f, in->dir);
			fprintf(f, "</code>: ");
			html_escape(f, in->strategy);
			fprintf(f, ", seed %llu, %lld runs; host ", (unsigned long long)in->seed,
				(long long)in->runs);
			html_escape(f, in->host);
			fprintf(f, ", %s, kernel ", report_where_text(in->where));
			html_escape(f, in->kernel);
			fprintf(f, "</td></tr>\n");
		}
		fprintf(f, "<tr><th>merged</th><td>on host ");
		html_escape(f, r->c.host);
	} else {
		fprintf(f, "<tr><th>strategy</th><td>");
		html_escape(f, r->c.strategy);
		fprintf(f, ", seed %llu</td></tr>\n<tr><th>host</th><td>",
			(unsigned long long)r->c.seed);
		html_escape(f, r->c.host);
		fprintf(f, "</td></tr>\n<tr><th>where</th><td>%s, kernel ",
			report_where_text(r->c.where));
		html_escape(f, r->c.kernel);
		fprintf(f, "</td></tr>\n<tr><th>created</th><td>");
	}
	fprintf(f, "%s%s, concsched ", r->ninputs ? ", " : "", when);
	html_escape(f, r->c.version);
	fprintf(f, "</td></tr>\n<tr><th>runs</th><td>%zu", r->nruns);
	for (o = 0; o <= OUTCOME_COUNT; o++)
		if (r->outcomes[o])
			fprintf(f, "; %s %zu",
				o == OUTCOME_COUNT ? "other" : oracle_outcome_name(o),
				r->outcomes[o]);
	fprintf(f, "; %.1f s</td></tr>\n", r->total_s);
	if (r->jobs > 1 || r->noverlapped)
		fprintf(f,
			"<tr><th>at once</th><td>%zu of %zu runs ran beside another (-j "
			"%lld)</td></tr>\n",
			r->noverlapped, r->nruns, (long long)r->jobs);
	fprintf(f, "</table>\n<h2>Coverage</h2>\n");
	if (!r->nmetrics)
		fprintf(f, "<p>No coverage tasks recorded.</p>\n");
	for (i = 0; i < r->nmetrics; i++)
		html_metric(r, &r->metrics[i], f);
	html_failures(r, f);
	html_search(r, f);
	html_warnings(r, f);
	fprintf(f, "</body></html>\n");
}
