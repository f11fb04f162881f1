// SPDX-License-Identifier: MIT
/*
 * Campaign reports (report.h): load the campaign once into a small model,
 * render it as text, JSON (docs/report.md) or a self-contained HTML page
 * whose charts are inline SVG (no scripts, fonts or other external assets,
 * so the page can be attached to a CI artifact or a bug report).
 */
#include "results/report.h"
#include "results/schedule.h"
#include "strategies/declog_summary.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/self.h"
#include "lib/shell.h"

/* "native", "VM", or "?" for a campaign that did not record it. */
const char *report_where_text(const char *where)
{
	if (where && !strcmp(where, "vm"))
		return "VM";
	if (where && !strcmp(where, "native"))
		return "native";
	return "?";
}

const char *report_replay_command(const char *dir, long run, char *buf, size_t len)
{
	char q[1024];

	shell_quote(dir, q, sizeof(q));
	snprintf(buf, len, "%s replay %s --run %ld", self_command(true), q, run);
	return buf;
}

/* A campaign `concsched attach -o DIR` stored: one window of a running
 * process, which replay cannot re-make. */
static bool attach_window(const struct report *r)
{
	const char *c = r->c.config_json;

	return c && (strstr(c, "\"attach\":true") || strstr(c, "\"attach\": true"));
}

const char *report_replay_cmd(const struct report *r, long run, char *buf, size_t len)
{
	size_t n;

	report_replay_command(r->dir, run, buf, len);
	n = strlen(buf);
	/* Plain reruns (strategy none) replay natively anywhere. */
	if (r->replay_vm && !(r->c.strategy && !strcmp(r->c.strategy, "none")) && n + 6 < len)
		strcpy(buf + n, " --vm");
	return buf;
}

void report_text_beside(const struct run_beside *b, FILE *f)
{
	size_t i;

	for (i = 0; i < b->n && i < REPORT_BESIDE_MAX; i++)
		fprintf(f, "%s%lld", i ? ", " : "", (long long)b->runs[i]);
	if (b->n > REPORT_BESIDE_MAX)
		fprintf(f, " and %zu more", b->n - REPORT_BESIDE_MAX);
}

/* Run number of a series point index (1-based position when by runs). */
long report_metric_sat_run(const struct report_metric *m)
{
	return m->sat_at >= 0 ? (long)m->pts[m->sat_at].run : -1;
}

const char *report_sat_unit(const struct report *r)
{
	return r->sat.by_time ? "s" : "run";
}

void report_format_time(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void text_saturation(const struct report *r, const struct report_metric *m, FILE *f)
{
	char spec[48];

	saturation_format(&r->sat, spec, sizeof(spec));
	if (!m->npts)
		fprintf(f, "no runs yet");
	else if (!m->sat.enough)
		fprintf(f, "too few runs to judge saturation (window %s)", spec);
	else if (m->sat.saturated)
		fprintf(f, "saturated at run %ld (slope %.3g/%s, r2 %.3f, window %s)",
			report_metric_sat_run(m), m->sat.slope, report_sat_unit(r), m->sat.r2,
			spec);
	else
		fprintf(f, "not saturated (slope %.3g/%s, r2 %.3f, window %s)", m->sat.slope,
			report_sat_unit(r), m->sat.r2, spec);
}

/* Oracle summaries often start with their kind ("deadlock: ..."). */
static bool summary_names_kind(const struct report_failure *x)
{
	return x->kind && x->summary && !strncmp(x->summary, x->kind, strlen(x->kind));
}

static void text_sites(const struct report_site *s, size_t n, FILE *f)
{
	size_t i;

	for (i = 0; i < n; i++)
		fprintf(f, "%s%s", i ? ", " : "", s[i].text);
}

static void text_outcomes(const struct report *r, FILE *f)
{
	bool first = true;
	int o;

	fprintf(f, "runs:      %zu", r->nruns);
	for (o = 0; o <= OUTCOME_COUNT; o++) {
		if (!r->outcomes[o])
			continue;
		fprintf(f, "%s%s %zu", first ? " (" : ", ",
			o == OUTCOME_COUNT ? "other" : oracle_outcome_name(o), r->outcomes[o]);
		first = false;
	}
	fprintf(f, "%s, %.1f s of target time\n", first ? "" : ")", r->total_s);
	if (r->jobs > 1 || r->noverlapped)
		fprintf(f, "at once:   %zu of %zu runs ran beside another (-j %lld)\n",
			r->noverlapped, r->nruns, (long long)r->jobs);
}

/* Failures whose schedule the text report points to. */
#define TEXT_SCHEDULES 5

void report_write_text(const struct report *r, FILE *f)
{
	const struct run_beside *b;
	struct sched_view v;
	char when[64], cmd[1200];
	size_t i;

	report_format_time(r->c.created_ns, when, sizeof(when));
	fprintf(f, "campaign:  %s\n", r->dir);
	fprintf(f, "program:   %s %s\n", r->c.program ?: "?", r->c.args_json ?: "[]");
	if (r->ninputs) {
		/* Merged: each input's own strategy, seed and machine. */
		fprintf(f, "strategy:  merged from %zu campaign%s, binary %s\n", r->ninputs,
			r->ninputs == 1 ? "" : "s", r->c.binary_hash ?: "?");
		for (i = 0; i < r->ninputs; i++) {
			const struct store_input *in = &r->inputs[i];

			fprintf(f,
				"input:     %s: %s, seed %llu, %lld runs; host %s, %s, kernel "
				"%s\n",
				in->dir ?: "?", in->strategy ?: "?", (unsigned long long)in->seed,
				(long long)in->runs, in->host ?: "?", report_where_text(in->where),
				in->kernel ?: "?");
		}
		fprintf(f, "merged:    on host %s, %s, concsched %s\n", r->c.host ?: "?", when,
			r->c.version ?: "?");
	} else {
		fprintf(f, "strategy:  %s, seed %llu, binary %s\n", r->c.strategy ?: "?",
			(unsigned long long)r->c.seed, r->c.binary_hash ?: "?");
		fprintf(f, "host:      %s\n", r->c.host ?: "?");
		fprintf(f, "where:     %s, kernel %s\n", report_where_text(r->c.where),
			r->c.kernel ?: "?");
		fprintf(f, "created:   %s, concsched %s\n", when, r->c.version ?: "?");
	}
	text_outcomes(r, f);
	fprintf(f, "coverage:%s\n", r->nmetrics ? "" : "  no tasks recorded");
	for (i = 0; i < r->nmetrics; i++) {
		const struct report_metric *m = &r->metrics[i];

		fprintf(f, "  %-12s %6lld tasks", m->name, (long long)m->covered);
		if (m->estimated)
			fprintf(f, " of %lld estimated (%.1f%%)", (long long)m->estimated,
				100.0 * (double)m->covered / (double)m->estimated);
		fprintf(f, ", ");
		text_saturation(r, m, f);
		fprintf(f, "%s\n", m->stop ? " [stopping metric]" : "");
		if (m->estimated)
			fprintf(f,
				"  %-12s estimation: %lld estimated, %lld covered of them, %lld "
				"false "
				"positives (never covered), %lld false negatives (not estimated)\n",
				"", (long long)m->estimated, (long long)m->covered_estimated,
				(long long)(m->estimated - m->covered_estimated),
				(long long)(m->covered - m->covered_estimated));
	}
	for (i = 0; i < r->nlog; i++)
		fprintf(f, "%s%s\n", i ? "           " : "search:    ", r->log[i]);
	declog_summary_text(r->logsum, f);
	fprintf(f, "failures:  %zu\n", r->nfailures);
	for (i = 0; i < r->nfailures; i++) {
		const struct report_failure *x = &r->failures[i];

		if (summary_names_kind(x))
			fprintf(f, "  run %lld: %s\n", (long long)x->run, x->summary);
		else
			fprintf(f, "  run %lld: %s: %s\n", (long long)x->run, x->kind ?: "?",
				x->summary ?: "");
		if (x->arm)
			fprintf(f, "    arm:    %s (the portfolio's sub-strategy that ran it)\n",
				x->arm);
		if (!run_steering_kept(&x->steering)) {
			char why[256];

			run_steering_describe(&x->steering, why, sizeof(why));
			fprintf(f,
				"    steering: %s: the failure may not follow from the schedule, "
				"and a replay may pass\n",
				why);
		}
		if (x->nsites) {
			fprintf(f, "    sites:  ");
			text_sites(x->sites, x->nsites, f);
			fputc('\n', f);
		}
		if (x->detail && strstr(x->detail, "confirmed: "))
			fprintf(f, "    %s\n", strstr(x->detail, "confirmed: "));
		b = report_model_beside_of(r, x->run);
		if (b && b->n) {
			fprintf(f, "    beside: run%s ", b->n == 1 ? "" : "s");
			report_text_beside(b, f);
			fputc('\n', f);
		}
		if (attach_window(r))
			fprintf(f, "    (a window of concsched attach on a running process: not "
				   "replayable)");
		else
			fprintf(f, "    replay: %s",
				report_replay_cmd(r, x->run, cmd, sizeof(cmd)));
		if (x->replays)
			fprintf(f, "  (replayed %" PRIu64 "/%" PRIu64 ")", x->reproduced,
				x->replays);
		fputc('\n', f);
		/* How the threads went, for the first failures. */
		if (i < TEXT_SCHEDULES && !schedule_load(r->store, x->run, &v)) {
			char q[PATH_MAX];

			fprintf(f,
				"    schedule: %zu points, %zu threads, %zu preemptions (%s report "
				"%s "
				"--schedule %lld)\n",
				v.nsteps, v.nthreads, v.npreemptions, self_command(false),
				shell_quote(r->dir, q, sizeof(q)), (long long)x->run);
			schedule_free(&v);
		}
	}
	fprintf(f, "warnings:  %zu\n", r->nwarnings);
	for (i = 0; i < r->nwarnings; i++) {
		const struct report_warning *w = &r->warnings[i];

		fprintf(f, "  %s on %s", w->kind ?: "warning", w->variable ?: "?");
		if (w->nsites) {
			fputs(": ", f);
			text_sites(w->sites, w->nsites, f);
		}
		if (w->threads)
			fprintf(f, "; threads %s", w->threads);
		if (w->locks)
			fprintf(f, "; locks %s", w->locks);
		fprintf(f, " (%zu run%s, first run %lld)\n", w->runs, w->runs == 1 ? "" : "s",
			(long long)w->first_run);
	}
}
