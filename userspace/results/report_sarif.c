// SPDX-License-Identifier: MIT
/* SARIF 2.1.0 of campaign reports (report_sarif.h). */
#include "results/report_sarif.h"

#include <errno.h>
#include <string.h>

#include "results/schedule.h"
#include "lib/array_size.h"
#include "lib/xalloc.h"

#define SARIF_SCHEMA                                                                               \
	"https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-"         \
	"2.1.0.json"
/* Relative source paths (as the debug info names them) are relative to the
 * directory the program was built in: for a build from the repository's
 * top, the repository (what code-scanning views resolve them against). */
#define SARIF_SRCROOT "SRCROOT"

struct sarif_rule {
	const char *kind; /* the report's outcome or warning kind */
	const char *id, *name, *level, *text, *help;
};

/* One rule per finding kind; the failures first, then the warnings. */
static const struct sarif_rule sarif_rules[] = {
	{ "assertion", "assertion", "AssertionFailed", "error", "An assertion failed",
	  "A run under a concsched schedule failed an assertion of the program." },
	{ "signal", "crash", "Crash", "error", "The program crashed (fatal signal)",
	  "A run was killed by a fatal signal (SIGSEGV, SIGABRT...)." },
	{ "deadlock", "deadlock", "Deadlock", "error", "Deadlock: a lock cycle",
	  "Threads blocked on locks form a cycle that was still there after steering stopped." },
	{ "timeout", "hang", "Hang", "error", "The program hung (run timeout)",
	  "A run was still going at the run timeout and after every thread was let go." },
	{ "sanitizer", "sanitizer", "SanitizerReport", "error", "A sanitizer reported an error",
	  "ASan, TSan, UBSan, LSan or MSan reported an error in the run's output." },
	{ "exit-code", "exit-status", "UnexpectedExitStatus", "error",
	  "The program exited with an unexpected status",
	  "A run exited with a status other than the expected one (--expect-exit)." },
	{ "check-failed", "check-failed", "CheckFailed", "error", "The --check command failed",
	  "The campaign's --check oracle failed after a run." },
	{ "race", "data-race", "DataRace", "warning", "Data race",
	  "Two threads accessed a variable, one writing, with no common lock and no "
	  "happens-before order (--access)." },
	{ "lock-order", "lock-order-inversion", "LockOrderInversion", "warning",
	  "Lock-order inversion (potential deadlock)",
	  "Two locks were taken in both orders by different threads (--access)." },
	{ "slow", "slow-under-steering", "SlowUnderSteering", "note",
	  "A run ended only once steering stopped",
	  "A run went past the run timeout while steered and ended after steering stopped." },
	{ "unsteered", "unsteered-site", "UnsteeredSite", "note",
	  "An access site went past the steering cap",
	  "Later hits of the site were steered only 1 in 64 (--steer-cap)." },
	{ "unprobed", "unprobed-site", "UnprobedSite", "note",
	  "An access site went past the probe cap",
	  "Later hits of the site were not seen (--probe-cap)." },
	{ NULL, "other", "Other", "warning", "Another finding",
	  "A finding of a kind this version of concsched has no rule for." },
};

static size_t sarif_rule_index(const char *kind)
{
	size_t i;

	for (i = 0; sarif_rules[i].kind; i++)
		if (!strcmp(sarif_rules[i].kind, kind))
			return i;
	return i;
}

static json_t *sarif_text(const char *text)
{
	return json_pack("{s:s}", "text", text);
}

static json_t *sarif_rules_json(void)
{
	json_t *a = json_array();
	size_t i;

	for (i = 0; i < ARRAY_SIZE(sarif_rules); i++) {
		const struct sarif_rule *r = &sarif_rules[i];

		json_array_append_new(a, json_pack("{s:s, s:s, s:o, s:o, s:o, s:{s:s}}", "id",
						   r->id, "name", r->name, "shortDescription",
						   sarif_text(r->text), "fullDescription",
						   sarif_text(r->help), "help", sarif_text(r->help),
						   "defaultConfiguration", "level", r->level));
	}
	return a;
}

/* A path as a URI reference: unreserved characters and '/' as they are,
 * everything else percent-encoded; absolute paths as file:// URIs. */
static char *sarif_uri(const char *path)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t len = strlen(path), n = 0;
	char *out = xcalloc(3 * len + 8, 1);
	const unsigned char *p = (const unsigned char *)path;

	if (path[0] == '/')
		n = strlen(strcpy(out, "file://"));
	for (; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~/", *p)) {
			out[n++] = *p;
		} else {
			out[n++] = '%';
			out[n++] = hex[*p >> 4];
			out[n++] = hex[*p & 15];
		}
	}
	return out;
}

/* A physical location at file:line; NULL without a file or a line. */
static json_t *sarif_physical(const char *file, long long line)
{
	json_t *loc;
	char *uri;

	if (!file || !file[0] || line < 1)
		return NULL;
	uri = sarif_uri(file);
	loc = json_pack("{s:{s:s}, s:{s:I}}", "artifactLocation", "uri", uri, "region", "startLine",
			(json_int_t)line);
	if (file[0] != '/')
		json_object_set_new(json_object_get(loc, "artifactLocation"), "uriBaseId",
				    json_string(SARIF_SRCROOT));
	free(uri);
	return loc;
}

/* A site of the report: file and line when it has them, else its function
 * (and object+offset) as a logical location. */
static json_t *sarif_site(const json_t *site, size_t id)
{
	const char *fn = report_ci_str(site, "function");
	json_t *phys = sarif_physical(report_ci_str(site, "file"), report_ci_int(site, "line"));
	json_t *loc = json_pack("{s:I, s:o}", "id", (json_int_t)id, "message",
				sarif_text(report_ci_str(site, "text")));

	if (phys)
		json_object_set_new(loc, "physicalLocation", phys);
	if (fn[0] || !phys) {
		char *full =
			xasprintf("%s (%s+0x%llx)", fn[0] ? fn : "?", report_ci_str(site, "object"),
				  (unsigned long long)report_ci_int(site, "offset"));

		json_object_set_new(loc, "logicalLocations",
				    json_pack("[{s:s, s:s, s:s}]", "name", fn[0] ? fn : "?",
					      "fullyQualifiedName", full, "kind", "function"));
		free(full);
	}
	return loc;
}

static json_t *sarif_sites(const json_t *sites)
{
	json_t *a = json_array(), *site;
	size_t i;

	json_array_foreach(sites, i, site) json_array_append_new(a, sarif_site(site, i));
	return a;
}

/* One threadFlowLocation: the step's point and its place in the run. */
static json_t *sarif_step(const struct sched_view *v, size_t i)
{
	const struct sched_step *st = &v->steps[i];
	json_t *phys = sarif_physical(st->file, st->line);
	char *text = xasprintf("step %zu: thread %s at %s%s", i + 1, v->threads[st->thread],
			       st->function ? st->function : "?",
			       st->preemption ? " (preempts the thread before)" : "");
	json_t *loc = json_pack("{s:o}", "message", sarif_text(text));
	json_t *tfl =
		json_pack("{s:I, s:o}", "executionOrder", (json_int_t)(i + 1), "location", loc);

	if (phys)
		json_object_set_new(loc, "physicalLocation", phys);
	if (st->preemption)
		json_object_set_new(tfl, "kinds", json_pack("[s]", "preemption"));
	free(text);
	return tfl;
}

/* The run's schedule as one code flow, a thread flow per thread whose
 * locations carry their global order; NULL when the run has none. */
static json_t *sarif_code_flows(struct store *s, long long run)
{
	struct sched_view v;
	json_t *flows, *flow;
	char *text;
	size_t t, i;

	if (!s || schedule_load(s, run, &v))
		return NULL;
	if (!v.nsteps) {
		schedule_free(&v);
		return NULL;
	}
	flows = json_array();
	for (t = 0; t < v.nthreads; t++) {
		json_t *locs = json_array();

		for (i = 0; i < v.nsteps; i++)
			if (v.steps[i].thread == t)
				json_array_append_new(locs, sarif_step(&v, i));
		if (!json_array_size(locs)) {
			json_decref(locs);
			continue;
		}
		text = xasprintf("thread %s", v.threads[t]);
		json_array_append_new(flows,
				      json_pack("{s:s, s:o, s:o}", "id", v.threads[t], "message",
						sarif_text(text), "locations", locs));
		free(text);
	}
	text = xasprintf("schedule of run %lld: %zu points, %zu threads, %zu switches, %zu "
			 "preemptions",
			 run, v.nsteps, v.nthreads, v.nswitches, v.npreemptions);
	flow = json_pack("[{s:o, s:o}]", "message", sarif_text(text), "threadFlows", flows);
	free(text);
	schedule_free(&v);
	return flow;
}

static json_t *sarif_result(const char *kind, const char *text, const json_t *sites)
{
	size_t rule = sarif_rule_index(kind);

	return json_pack("{s:s, s:I, s:s, s:o, s:o}", "ruleId", sarif_rules[rule].id, "ruleIndex",
			 (json_int_t)rule, "level", sarif_rules[rule].level, "message",
			 sarif_text(text), "locations", sarif_sites(sites));
}

/* Where the oracle says the program stopped ("... failed in main at
 * examples/bank.c:57", the end of an assertion's summary): a location ahead
 * of the sites. */
static void sarif_stop_location(const char *summary, json_t *locs)
{
	const char *at = strstr(summary, " at "), *next, *colon;
	json_t *phys, *loc;
	char *file;

	while (at && (next = strstr(at + 4, " at ")))
		at = next;
	colon = at ? strrchr(at, ':') : NULL;
	if (!colon || !colon[1] || strspn(colon + 1, "0123456789") != strlen(colon + 1))
		return;
	file = xasprintf("%.*s", (int)(colon - at - 4), at + 4);
	phys = sarif_physical(file, atoll(colon + 1));
	if (phys) {
		loc = json_pack("{s:I, s:o, s:o}", "id", (json_int_t)json_array_size(locs),
				"message", sarif_text("where the program stopped"),
				"physicalLocation", phys);
		json_array_insert_new(locs, 0, loc);
	}
	free(file);
}

static json_t *sarif_failure(const struct report_ci_suite *s, const json_t *fail)
{
	long long run = report_ci_int(fail, "run");
	const char *replay = report_ci_str(fail, "replay");
	char lost[256];
	bool steered = !report_ci_steering_lost(fail, lost, sizeof(lost));
	char *text = xasprintf(
		"%s (run %lld of campaign %s). %s%s%sReplay: %s", report_ci_str(fail, "summary"),
		run, s->name, steered ? "" : "Steering ", steered ? "" : lost,
		steered ? "" : ": the failure may not follow from the schedule. ", replay);
	json_t *res =
		sarif_result(report_ci_str(fail, "kind"), text, report_ci_array(fail, "sites"));
	json_t *flows = sarif_code_flows(s->store, run);

	sarif_stop_location(report_ci_str(fail, "summary"), json_object_get(res, "locations"));

	if (flows)
		json_object_set_new(res, "codeFlows", flows);
	json_object_set_new(res, "properties",
			    json_pack("{s:I, s:s, s:s, s:b}", "run", (json_int_t)run, "replay",
				      replay, "detail", report_ci_str(fail, "detail"),
				      "steered_throughout", steered));
	free(text);
	return res;
}

static json_t *sarif_warning(const json_t *w)
{
	const char *var = report_ci_str(w, "variable"), *locks = report_ci_str(w, "locks");
	char *text = xasprintf("%s%s%s%s%s (%lld runs, first run %lld)", report_ci_str(w, "kind"),
			       var[0] ? " on " : "", var, locks[0] ? "; locks " : "", locks,
			       report_ci_int(w, "runs"), report_ci_int(w, "first_run"));
	json_t *res = sarif_result(report_ci_str(w, "kind"), text, report_ci_array(w, "sites"));

	free(text);
	return res;
}

static json_t *sarif_run(const struct report_ci_suite *s)
{
	const json_t *c = json_object_get(s->model, "campaign"), *x;
	json_t *results = json_array();
	char *id = xasprintf("concsched/%s/", s->name);
	json_t *run;
	size_t i;

	json_array_foreach(report_ci_array(s->model, "failures"), i, x)
		json_array_append_new(results, sarif_failure(s, x));
	json_array_foreach(report_ci_array(s->model, "warnings"), i, x)
		json_array_append_new(results, sarif_warning(x));
	run = json_pack(
		"{s:{s:{s:s, s:s, s:o}}, s:{s:s}, s:{s:{s:o}}, s:o, s:{s:s, s:s, s:s, "
		"s:s, s:s, s:I}}",
		"tool", "driver", "name", "concsched", "version", report_ci_str(c, "version"),
		"rules", sarif_rules_json(), "automationDetails", "id", id, "originalUriBaseIds",
		SARIF_SRCROOT, "description",
		sarif_text("the directory the program was built in (relative source "
			   "paths of its debug info start there)"),
		"results", results, "properties", "campaign", s->name, "program",
		report_ci_str(c, "program"), "strategy", report_ci_str(c, "strategy"), "where",
		report_ci_str(c, "where"), "kernel", report_ci_str(c, "kernel"), "runs",
		(json_int_t)report_ci_int(json_object_get(s->model, "runs"), "total"));
	free(id);
	return run;
}

int report_write_sarif(const struct report_ci_suite *suites, size_t n, FILE *f)
{
	json_t *runs = json_array(), *log;
	size_t i;
	int err;

	for (i = 0; i < n; i++)
		json_array_append_new(runs, sarif_run(&suites[i]));
	log = json_pack("{s:s, s:s, s:o}", "$schema", SARIF_SCHEMA, "version", "2.1.0", "runs",
			runs);
	err = json_dumpf(log, f, JSON_INDENT(2) | JSON_PRESERVE_ORDER) ? -EIO : 0;
	fputc('\n', f);
	json_decref(log);
	return err;
}
