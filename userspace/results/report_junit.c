// SPDX-License-Identifier: MIT
/* JUnit XML of campaign reports (report_junit.h). */
#include "results/report_junit.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/html.h"
#include "lib/xalloc.h"

/* XML 1.0 text or attribute value: markup escaped as for HTML, newlines and
 * tabs as character references (kept in attributes), other control
 * characters (not allowed in XML 1.0, even as references) shown as '?'. */
static void xml_escape(FILE *f, const char *s)
{
	static const char controls[] = "\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r"
				       "\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19"
				       "\x1a\x1b\x1c\x1d\x1e\x1f\x7f";

	while (*s) {
		size_t n = strcspn(s, controls);
		char *run = xasprintf("%.*s", (int)n, s);

		html_escape(f, run);
		free(run);
		s += n;
		if (!*s)
			break;
		if (*s == '\n' || *s == '\t' || *s == '\r')
			fprintf(f, "&#%d;", *s);
		else
			fputc('?', f);
		s++;
	}
}

/* Element text: like attributes, but newlines kept as they are. */
static void xml_text(FILE *f, const char *s)
{
	const char *nl;

	while ((nl = strchr(s, '\n'))) {
		char *line = xasprintf("%.*s", (int)(nl - s), s);

		xml_escape(f, line);
		fputc('\n', f);
		free(line);
		s = nl + 1;
	}
	xml_escape(f, s);
}

static void junit_property(FILE *f, const char *name, const char *value)
{
	fprintf(f, "      <property name=\"%s\" value=\"", name);
	xml_escape(f, value);
	fputs("\"/>\n", f);
}

static void junit_properties(const json_t *c, FILE *f)
{
	fputs("    <properties>\n", f);
	junit_property(f, "program", report_ci_str(c, "program"));
	junit_property(f, "args", report_ci_str(c, "args"));
	junit_property(f, "strategy", report_ci_str(c, "strategy"));
	junit_property(f, "seed", report_ci_str(c, "seed"));
	junit_property(f, "where", report_ci_str(c, "where"));
	junit_property(f, "kernel", report_ci_str(c, "kernel"));
	junit_property(f, "campaign", report_ci_str(c, "dir"));
	junit_property(f, "uuid", report_ci_str(c, "uuid"));
	junit_property(f, "concsched", report_ci_str(c, "version"));
	fputs("    </properties>\n", f);
}

/* "function file:line" per site, one per line, indented. */
static void sites_text(const json_t *sites, FILE *f)
{
	const json_t *site;
	size_t i;

	json_array_foreach(sites, i, site)
	{
		fputs("  ", f);
		xml_text(f, report_ci_str(site, "text"));
		fputc('\n', f);
	}
}

static void junit_failure(const json_t *model, const json_t *fail, FILE *f)
{
	long long run = report_ci_int(fail, "run");
	const char *kind = report_ci_str(fail, "kind"), *summary = report_ci_str(fail, "summary");
	const char *detail = report_ci_str(fail, "detail");
	const json_t *r = report_ci_run(model, run);
	char lost[256];

	fprintf(f, "    <testcase name=\"run %lld: ", run);
	xml_escape(f, kind);
	fputs("\" classname=\"", f);
	xml_escape(f, report_ci_program_name(model));
	fprintf(f, "\" time=\"%.3f\">\n      <failure type=\"", report_ci_real(r, "duration_s"));
	xml_escape(f, kind);
	fputs("\" message=\"", f);
	xml_escape(f, summary);
	fputs("\">kind: ", f);
	xml_text(f, kind);
	fprintf(f, "\nrun: %lld\nsummary: ", run);
	xml_text(f, summary);
	if (detail[0] && strcmp(detail, summary)) {
		fputs("\ndetail:\n", f);
		xml_text(f, detail);
	}
	if (report_ci_steering_lost(fail, lost, sizeof(lost))) {
		fputs("\nsteering: ", f);
		xml_text(f, lost);
		fputs(": the failure may not follow from the schedule, and a replay may pass", f);
	}
	fputs("\nsites:\n", f);
	sites_text(report_ci_array(fail, "sites"), f);
	if (report_ci_int(fail, "replays"))
		fprintf(f, "replayed: failed again in %lld of %lld replays\n",
			report_ci_int(fail, "reproduced"), report_ci_int(fail, "replays"));
	fputs("replay: ", f);
	xml_text(f, report_ci_str(fail, "replay"));
	fputs("\n</failure>\n    </testcase>\n", f);
}

static void junit_pass(const json_t *model, FILE *f)
{
	const json_t *c = json_object_get(model, "campaign"),
		     *runs = json_object_get(model, "runs");

	fputs("    <testcase name=\"", f);
	xml_escape(f, report_ci_program_name(model));
	fputs(" under ", f);
	xml_escape(f, report_ci_str(c, "strategy"));
	fputs("\" classname=\"", f);
	xml_escape(f, report_ci_program_name(model));
	fprintf(f, "\" time=\"%.3f\"/>\n", report_ci_real(runs, "duration_s"));
}

/* The warnings (races, lock-order inversions...) are not failures: they
 * go to the suite's output. */
static void junit_warnings(const json_t *model, FILE *f)
{
	const json_t *w;
	size_t i;

	fprintf(f, "    <system-out>%lld runs, %zu failing\n",
		report_ci_int(json_object_get(model, "runs"), "total"),
		json_array_size(report_ci_array(model, "failures")));
	json_array_foreach(report_ci_array(model, "warnings"), i, w)
	{
		fputs("warning: ", f);
		xml_text(f, report_ci_str(w, "kind"));
		if (report_ci_str(w, "variable")[0]) {
			fputs(" on ", f);
			xml_text(f, report_ci_str(w, "variable"));
		}
		fprintf(f, " (%lld runs, first run %lld)\n", report_ci_int(w, "runs"),
			report_ci_int(w, "first_run"));
		sites_text(report_ci_array(w, "sites"), f);
	}
	fputs("</system-out>\n    <system-err></system-err>\n", f);
}

static size_t junit_suite(const struct report_ci_suite *s, size_t id, FILE *f)
{
	const json_t *c = json_object_get(s->model, "campaign");
	const json_t *runs = json_object_get(s->model, "runs");
	const json_t *fails = report_ci_array(s->model, "failures"), *fail;
	size_t nfail = json_array_size(fails), i;
	long long ns = report_ci_int(c, "created_ns");
	time_t t = (time_t)(ns / 1000000000LL);
	char stamp[32];
	struct tm tm;

	/* Ant's schema: ISO 8601 without a zone, understood as UTC. */
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", gmtime_r(&t, &tm));
	fputs("  <testsuite name=\"", f);
	xml_escape(f, s->name);
	fprintf(f, "\" package=\"concsched\" id=\"%zu\" timestamp=\"%s\" hostname=\"", id, stamp);
	xml_escape(f, report_ci_str(c, "host")[0] ? report_ci_str(c, "host") : "unknown");
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.3f\">\n",
		nfail ? nfail : 1, nfail, report_ci_real(runs, "duration_s"));
	junit_properties(c, f);
	json_array_foreach(fails, i, fail) junit_failure(s->model, fail, f);
	if (!nfail)
		junit_pass(s->model, f);
	junit_warnings(s->model, f);
	fputs("  </testsuite>\n", f);
	return nfail;
}

size_t report_write_junit(const struct report_ci_suite *suites, size_t n, FILE *f)
{
	size_t i, failures = 0;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n", f);
	for (i = 0; i < n; i++)
		failures += junit_suite(&suites[i], i, f);
	fputs("</testsuites>\n", f);
	return failures;
}
