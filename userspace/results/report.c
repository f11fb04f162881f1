// SPDX-License-Identifier: MIT
/*
 * Campaign reports (report.h): load the campaign once into a small model,
 * render it as text, JSON (docs/report.md) or a self-contained HTML page
 * whose charts are inline SVG (no scripts, fonts or other external assets,
 * so the page can be attached to a CI artifact or a bug report).
 */
#include "results/report.h"
#include "results/schedule.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "lib/declog.h"
#include "lib/json.h"
#include "results/oracle.h"
#include "kernel/symbolize.h"
#include "lib/util.h"

struct report_site {
	int64_t id;
	char *text; /* "function file:line" */
	char *function, *file, *object;
	int line;
	uint64_t offset;
};

struct report_failure {
	int64_t run;
	char *kind, *summary, *detail;
	char *arm; /* the sub-strategy that ran it (a portfolio's "arm"), or NULL */
	uint64_t replays, reproduced; /* the latest `replay --times K` of it (0: none) */
	struct report_site *sites;
	size_t nsites;
};

struct report_warning {
	char *sig; /* grouping key: kind, variable, sites */
	char *kind, *variable, *threads, *locks;
	struct report_site *sites;
	size_t nsites;
	size_t runs;
	int64_t first_run;
};

struct report_metric {
	char *name;
	int64_t covered;
	int64_t estimated;	   /* requirements, 0 when none were estimated */
	int64_t covered_estimated; /* covered tasks that were estimated */
	bool stop;		   /* the campaign's stopping metric */
	struct store_series_point *pts;
	size_t npts;
	struct sat_result sat;
	long sat_at; /* index into pts of the first saturated point, -1 */
};

#define REPORT_BESIDE_MAX 8

struct report {
	struct store *store;
	struct store_campaign c;
	char *dir;
	bool replay_vm;
	struct sat_config sat;
	struct store_run *runs;
	size_t nruns;
	size_t outcomes[OUTCOME_COUNT + 1]; /* last: unknown names */
	double total_s;
	/* -j N: per run, the runs whose targets ran at the same time
	 * (find_overlaps; the first REPORT_BESIDE_MAX of them, and how many) */
	struct run_beside {
		int64_t runs[REPORT_BESIDE_MAX];
		size_t n;
	} * beside;
	size_t noverlapped; /* runs that ran beside another */
	int64_t jobs;	    /* the campaign's -j */
	/* How the runs' logged releases were chosen (tsa: enum tsa_rule). */
	uint64_t rules[5];
	bool has_rules;
	struct report_metric *metrics;
	size_t nmetrics;
	struct report_failure *failures;
	size_t nfailures;
	struct report_warning *warnings;
	size_t nwarnings;
	struct store_input *inputs; /* a merged campaign's inputs, else none */
	size_t ninputs;
	/* The strategy's note summaries (strategy_notes with a "summary"),
	 * e.g. a GA's generations, in run order. */
	char **log;
	size_t nlog;
};

static int collect_note(int64_t run, const char *json, void *arg)
{
	struct report *r = arg;
	char *line = json ? json_get_string(json, "summary") : NULL;

	if (!line)
		return 0;
	r->log = xrealloc(r->log, (r->nlog + 1) * sizeof(*r->log));
	r->log[r->nlog++] = line;
	return 0;
}

/* "native", "VM", or "?" for a campaign that did not record it. */
static const char *where_text(const char *where)
{
	if (where && !strcmp(where, "vm"))
		return "VM";
	if (where && !strcmp(where, "native"))
		return "native";
	return "?";
}

size_t report_failure_count(const struct report *r)
{
	return r->nfailures;
}

const char *report_replay_command(const char *dir, long run, char *buf, size_t len)
{
	char q[1024];

	cs_shell_quote(dir, q, sizeof(q));
	snprintf(buf, len, "%s replay %s --run %ld", cs_self_command(true), q, run);
	return buf;
}

/* A campaign `concsched attach -o DIR` stored: one window of a running
 * process, which replay cannot re-make. */
static bool attach_window(const struct report *r)
{
	const char *c = r->c.config_json;

	return c && (strstr(c, "\"attach\":true") || strstr(c, "\"attach\": true"));
}

static const char *replay_cmd(const struct report *r, long run, char *buf, size_t len)
{
	size_t n;

	report_replay_command(r->dir, run, buf, len);
	n = strlen(buf);
	/* Plain reruns (strategy none) replay natively anywhere. */
	if (r->replay_vm && !(r->c.strategy && !strcmp(r->c.strategy, "none")) && n + 6 < len)
		strcpy(buf + n, " --vm");
	return buf;
}

static void site_load(struct store *s, int64_t id, struct report_site *out)
{
	struct store_site site;

	memset(out, 0, sizeof(*out));
	out->id = id;
	if (store_get_site(s, id, &site)) {
		out->text = xasprintf("site @%lld (unknown)", (long long)id);
		return;
	}
	out->function = site.function ? xstrdup(site.function) : NULL;
	out->file = site.file ? xstrdup(site.file) : NULL;
	out->object = xstrdup(site.object);
	out->line = site.line;
	out->offset = site.offset;
	if (site.function && site.file)
		out->text = xasprintf("%s %s:%d", site.function, site.file, site.line);
	else if (site.function)
		out->text = xasprintf("%s (%s+0x%llx)", site.function, site.object,
				      (unsigned long long)site.offset);
	else
		out->text = xasprintf("%s+0x%llx", site.object, (unsigned long long)site.offset);
}

static struct report_site *sites_load(struct store *s, const int64_t *ids, size_t n)
{
	struct report_site *v = xcalloc(n ? n : 1, sizeof(*v));
	size_t i;

	for (i = 0; i < n; i++)
		site_load(s, ids[i], &v[i]);
	return v;
}

static void sites_free(struct report_site *v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(v[i].text);
		free(v[i].function);
		free(v[i].file);
		free(v[i].object);
	}
	free(v);
}

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

/* The arm of a portfolio's run (its configuration's "arm"), or NULL. */
static char *failure_arm(struct store *st, int64_t run)
{
	struct store_run sr = { 0 };
	char *arm = NULL;

	if (store_load_run(st, run, &sr))
		return NULL;
	if (sr.strategy_config_json)
		arm = json_get_string(sr.strategy_config_json, "arm");
	store_run_clear(&sr);
	return arm;
}

static int collect_failure(const struct store_failure *f, void *arg)
{
	struct report *r = arg;
	struct report_failure *rf;

	r->failures = xrealloc(r->failures, (r->nfailures + 1) * sizeof(*r->failures));
	rf = &r->failures[r->nfailures++];
	rf->run = f->run;
	rf->kind = dup_or_null(f->kind);
	rf->summary = dup_or_null(f->summary);
	rf->detail = dup_or_null(f->detail);
	rf->nsites = f->nsites;
	rf->sites = sites_load(r->store, f->sites, f->nsites);
	rf->arm = failure_arm(r->store, f->run);
	if (store_replayed(r->store, f->run, &rf->replays, &rf->reproduced))
		rf->replays = rf->reproduced = 0;
	return 0;
}

/* Warnings repeat run after run: group them by (kind, variable, sites). */
static int collect_warning(const struct store_warning *w, void *arg)
{
	struct report *r = arg;
	struct report_warning *rw;
	char *sig = xasprintf("%s\x1f%s\x1f", w->kind ?: "", w->variable ?: "");
	size_t i, len = strlen(sig), cap = len + 1;

	for (i = 0; i < w->nsites; i++) {
		if (len + 24 >= cap) {
			cap = cap * 2 + 24;
			sig = xrealloc(sig, cap);
		}
		len += snprintf(sig + len, cap - len, "@%lld,", (long long)w->sites[i]);
	}
	for (i = 0; i < r->nwarnings; i++) {
		if (strcmp(r->warnings[i].sig, sig))
			continue;
		r->warnings[i].runs++;
		free(sig);
		return 0;
	}
	r->warnings = xrealloc(r->warnings, (r->nwarnings + 1) * sizeof(*r->warnings));
	rw = &r->warnings[r->nwarnings++];
	rw->sig = sig;
	rw->kind = dup_or_null(w->kind);
	rw->variable = dup_or_null(w->variable);
	rw->threads = dup_or_null(w->threads);
	rw->locks = dup_or_null(w->locks);
	rw->nsites = w->nsites;
	rw->sites = sites_load(r->store, w->sites, w->nsites);
	rw->runs = 1;
	rw->first_run = w->run;
	return 0;
}

/* Seed 000 Table 4: covered tasks that were also estimated. */
static int64_t count_covered_estimated(struct store *s, const char *metric)
{
	sqlite3_stmt *st;
	int64_t n = 0;

	if (sqlite3_prepare_v2(store_sqlite(s),
			       "SELECT count(*) FROM tasks t JOIN requirements q"
			       " ON t.metric = q.metric AND t.key = q.key WHERE t.metric = ?",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_text(st, 1, metric, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

/* Release rules from every run's decision log (strategies that log
 * DECLOG_RELEASE with the rule in arg: tsa, tsa-h). */
static void count_rules(struct report *r)
{
	size_t i, k;

	for (i = 0; i < r->nruns; i++) {
		void *blob = NULL;
		size_t len = 0;
		char *out = NULL, *err = NULL;
		struct declog dl;

		if (store_load_run_blobs(r->store, r->runs[i].index, &blob, &len, &out, &err) ||
		    !blob || declog_decode(blob, len, &dl)) {
			free(blob);
			free(out);
			free(err);
			continue;
		}
		for (k = 0; k < dl.n; k++) {
			if (dl.entries[k].action != DECLOG_RELEASE || dl.entries[k].arg < 1 ||
			    dl.entries[k].arg > 4)
				continue;
			r->rules[dl.entries[k].arg]++;
			r->has_rules = true;
		}
		declog_free(&dl);
		free(blob);
		free(out);
		free(err);
	}
}

static int load_metric(struct report *r, const char *name, struct report_metric *m)
{
	double *x, *y;
	size_t i;
	int err;

	memset(m, 0, sizeof(*m));
	m->name = xstrdup(name);
	m->sat_at = -1;
	m->covered = store_count_tasks(r->store, name);
	m->estimated = store_count_requirements(r->store, name);
	if (m->covered < 0 || m->estimated < 0)
		return -EIO;
	if (m->estimated)
		m->covered_estimated = count_covered_estimated(r->store, name);
	m->stop = r->c.metric && !strcmp(r->c.metric, name);
	err = store_coverage_series(r->store, name, &m->pts, &m->npts);
	if (err)
		return err;
	x = xcalloc(m->npts + 1, sizeof(*x));
	y = xcalloc(m->npts + 1, sizeof(*y));
	for (i = 0; i < m->npts; i++) {
		x[i] = r->sat.by_time ? m->pts[i].t_s : (double)(i + 1);
		y[i] = m->pts[i].covered;
	}
	sat_evaluate(x, y, m->npts, &r->sat, &m->sat);
	m->sat_at = sat_first_saturated(x, y, m->npts, &r->sat);
	free(x);
	free(y);
	return 0;
}

static void count_outcomes(struct report *r)
{
	size_t i;
	int o;

	for (i = 0; i < r->nruns; i++) {
		o = outcome_parse(r->runs[i].outcome);
		r->outcomes[o < 0 ? OUTCOME_COUNT : o]++;
		r->total_s += (double)r->runs[i].duration_ns / 1e9;
	}
}

struct run_span {
	int64_t start, end;
	size_t i;
};

static int span_cmp(const void *a, const void *b)
{
	const struct run_span *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

static bool same_origin(const struct store_run *a, const struct store_run *b)
{
	if (!a->origin_campaign || !b->origin_campaign)
		return a->origin_campaign == b->origin_campaign;
	return !strcmp(a->origin_campaign, b->origin_campaign);
}

static void beside_add(struct run_beside *b, int64_t run)
{
	if (b->n < REPORT_BESIDE_MAX)
		b->runs[b->n] = run;
	b->n++;
}

/* Runs whose targets ran at the same time (-j N): their spans [started,
 * started + duration] intersect (started is the target's launch). Runs
 * merged from other campaigns are compared only with their own. */
static void find_overlaps(struct report *r)
{
	struct run_span *sp = xcalloc(r->nruns ? r->nruns : 1, sizeof(*sp));
	size_t n = 0, a, b;

	r->beside = xcalloc(r->nruns ? r->nruns : 1, sizeof(*r->beside));
	for (a = 0; a < r->nruns; a++) {
		const struct store_run *x = &r->runs[a];

		if (x->started_ns <= 0)
			continue;
		sp[n].start = x->started_ns;
		sp[n].end = x->started_ns + x->duration_ns;
		sp[n++].i = a;
	}
	qsort(sp, n, sizeof(*sp), span_cmp);
	for (a = 0; a < n; a++)
		for (b = a + 1; b < n && sp[b].start < sp[a].end; b++) {
			const struct store_run *x = &r->runs[sp[a].i], *y = &r->runs[sp[b].i];

			if (!same_origin(x, y))
				continue;
			beside_add(&r->beside[sp[a].i], y->index);
			beside_add(&r->beside[sp[b].i], x->index);
		}
	for (a = 0; a < r->nruns; a++)
		if (r->beside[a].n)
			r->noverlapped++;
	free(sp);
}

static const struct run_beside *beside_of(const struct report *r, int64_t run)
{
	size_t i;

	for (i = 0; i < r->nruns; i++)
		if (r->runs[i].index == run)
			return &r->beside[i];
	return NULL;
}

size_t report_run_beside(const struct report *r, int64_t run, int64_t *out, size_t max)
{
	const struct run_beside *b = beside_of(r, run);
	size_t i;

	if (!b)
		return 0;
	for (i = 0; i < b->n && i < max && i < REPORT_BESIDE_MAX; i++)
		out[i] = b->runs[i];
	return b->n;
}

static void text_beside(const struct run_beside *b, FILE *f)
{
	size_t i;

	for (i = 0; i < b->n && i < REPORT_BESIDE_MAX; i++)
		fprintf(f, "%s%lld", i ? ", " : "", (long long)b->runs[i]);
	if (b->n > REPORT_BESIDE_MAX)
		fprintf(f, " and %zu more", b->n - REPORT_BESIDE_MAX);
}

int report_load(struct store *s, const struct report_options *opt, struct report **out)
{
	struct report *r = xcalloc(1, sizeof(*r));
	char **names = NULL;
	size_t n = 0, i;
	int err;

	*out = NULL;
	r->store = s;
	r->dir = xstrdup(opt->dir ? opt->dir : store_dir(s));
	r->replay_vm = opt->replay_vm;
	err = store_get_campaign(s, &r->c);
	if (err)
		goto fail;
	if (opt->sat)
		r->sat = *opt->sat;
	else if (!r->c.saturation || sat_parse(r->c.saturation, &r->sat))
		sat_config_default(&r->sat);
	err = store_load_runs(s, &r->runs, &r->nruns);
	if (err)
		goto fail;
	count_outcomes(r);
	find_overlaps(r);
	if (!r->c.config_json || json_get_int(r->c.config_json, "jobs", &r->jobs))
		r->jobs = 1;
	if (r->c.strategy && !strncmp(r->c.strategy, "tsa", 3))
		count_rules(r);
	err = store_metrics(s, &names, &n);
	if (err)
		goto fail;
	r->metrics = xcalloc(n ? n : 1, sizeof(*r->metrics));
	for (i = 0; i < n && !err; i++, r->nmetrics++)
		err = load_metric(r, names[i], &r->metrics[i]);
	store_strings_free(names, n);
	if (!err)
		err = store_for_each_failure(s, collect_failure, r);
	if (!err)
		err = store_for_each_warning(s, collect_warning, r);
	if (!err)
		err = store_list_inputs(s, &r->inputs, &r->ninputs);
	if (!err)
		err = store_strategy_notes(s, collect_note, r);
	if (err)
		goto fail;
	*out = r;
	return 0;
fail:
	report_free(r);
	return err < 0 ? err : -EIO;
}

void report_free(struct report *r)
{
	size_t i;

	if (!r)
		return;
	store_campaign_free(&r->c);
	store_inputs_free(r->inputs, r->ninputs);
	free(r->dir);
	store_runs_free(r->runs, r->nruns);
	free(r->beside);
	for (i = 0; i < r->nmetrics; i++) {
		free(r->metrics[i].name);
		free(r->metrics[i].pts);
	}
	free(r->metrics);
	for (i = 0; i < r->nfailures; i++) {
		free(r->failures[i].kind);
		free(r->failures[i].summary);
		free(r->failures[i].arm);
		free(r->failures[i].detail);
		sites_free(r->failures[i].sites, r->failures[i].nsites);
	}
	free(r->failures);
	for (i = 0; i < r->nwarnings; i++) {
		free(r->warnings[i].sig);
		free(r->warnings[i].kind);
		free(r->warnings[i].variable);
		free(r->warnings[i].threads);
		free(r->warnings[i].locks);
		sites_free(r->warnings[i].sites, r->warnings[i].nsites);
	}
	free(r->warnings);
	for (i = 0; i < r->nlog; i++)
		free(r->log[i]);
	free(r->log);
	free(r);
}

/* Run number of a series point index (1-based position when by runs). */
static long metric_sat_run(const struct report_metric *m)
{
	return m->sat_at >= 0 ? (long)m->pts[m->sat_at].run : -1;
}

static const char *sat_unit(const struct report *r)
{
	return r->sat.by_time ? "s" : "run";
}

static void format_time(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S UTC", &tm);
}

static void text_saturation(const struct report *r, const struct report_metric *m, FILE *f)
{
	char spec[48];

	sat_format(&r->sat, spec, sizeof(spec));
	if (!m->npts)
		fprintf(f, "no runs yet");
	else if (!m->sat.enough)
		fprintf(f, "too few runs to judge saturation (window %s)", spec);
	else if (m->sat.saturated)
		fprintf(f, "saturated at run %ld (slope %.3g/%s, r2 %.3f, window %s)",
			metric_sat_run(m), m->sat.slope, sat_unit(r), m->sat.r2, spec);
	else
		fprintf(f, "not saturated (slope %.3g/%s, r2 %.3f, window %s)", m->sat.slope,
			sat_unit(r), m->sat.r2, spec);
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
			o == OUTCOME_COUNT ? "other" : outcome_name(o), r->outcomes[o]);
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

	format_time(r->c.created_ns, when, sizeof(when));
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
				(long long)in->runs, in->host ?: "?", where_text(in->where),
				in->kernel ?: "?");
		}
		fprintf(f, "merged:    on host %s, %s, concsched %s\n", r->c.host ?: "?", when,
			r->c.version ?: "?");
	} else {
		fprintf(f, "strategy:  %s, seed %llu, binary %s\n", r->c.strategy ?: "?",
			(unsigned long long)r->c.seed, r->c.binary_hash ?: "?");
		fprintf(f, "host:      %s\n", r->c.host ?: "?");
		fprintf(f, "where:     %s, kernel %s\n", where_text(r->c.where),
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
	if (r->has_rules)
		fprintf(f, "releases:  rule 1 %llu, rule 2 %llu, rule 3 %llu, random %llu\n",
			(unsigned long long)r->rules[1], (unsigned long long)r->rules[2],
			(unsigned long long)r->rules[3], (unsigned long long)r->rules[4]);
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
		if (x->nsites) {
			fprintf(f, "    sites:  ");
			text_sites(x->sites, x->nsites, f);
			fputc('\n', f);
		}
		if (x->detail && strstr(x->detail, "confirmed: "))
			fprintf(f, "    %s\n", strstr(x->detail, "confirmed: "));
		b = beside_of(r, x->run);
		if (b && b->n) {
			fprintf(f, "    beside: run%s ", b->n == 1 ? "" : "s");
			text_beside(b, f);
			fputc('\n', f);
		}
		if (attach_window(r))
			fprintf(f, "    (a window of concsched attach on a running process: not "
				   "replayable)");
		else
			fprintf(f, "    replay: %s", replay_cmd(r, x->run, cmd, sizeof(cmd)));
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
				v.nsteps, v.nthreads, v.npreemptions, cs_self_command(false),
				cs_shell_quote(r->dir, q, sizeof(q)), (long long)x->run);
			schedule_free(&v);
		}
	}
	fprintf(f, "warnings:  %zu\n", r->nwarnings);
	for (i = 0; i < r->nwarnings; i++) {
		const struct report_warning *w = &r->warnings[i];

		fprintf(f, "  %s on %s: ", w->kind ?: "warning", w->variable ?: "?");
		text_sites(w->sites, w->nsites, f);
		if (w->threads)
			fprintf(f, "; threads %s", w->threads);
		if (w->locks)
			fprintf(f, "; locks %s", w->locks);
		fprintf(f, " (%zu run%s, first run %lld)\n", w->runs, w->runs == 1 ? "" : "s",
			(long long)w->first_run);
	}
}

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
	json_kv_str(j, "saturation", sat_format(&r->sat, spec, sizeof(spec)));
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
		json_kv_uint(j, outcome_name(o), r->outcomes[o]);
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
		json_kv_int(j, "saturated_at_run", metric_sat_run(m));
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
	if (r->has_rules) {
		json_obj_begin(&j, "releases");
		json_kv_uint(&j, "rule1", r->rules[1]);
		json_kv_uint(&j, "rule2", r->rules[2]);
		json_kv_uint(&j, "rule3", r->rules[3]);
		json_kv_uint(&j, "random", r->rules[4]);
		json_obj_end(&j);
	} else {
		json_kv_null(&j, "releases");
	}
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
		json_sites(&j, x->sites, x->nsites);
		json_kv_str(&j, "replay", replay_cmd(r, x->run, cmd, sizeof(cmd)));
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

/* Chart geometry (SVG user units). */
#define CH_W 640
#define CH_H 240
#define CH_L 56
#define CH_R 16
#define CH_T 16
#define CH_B 36

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
	cs_html_escape(f, m->name);
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
			x + 4, CH_T + 14, metric_sat_run(m));
	}
	fprintf(f, "</svg>\n");
}

static void html_sites(const struct report_site *s, size_t n, FILE *f)
{
	size_t i;

	fprintf(f, "<ul class=\"sites\">");
	for (i = 0; i < n; i++) {
		fprintf(f, "<li><code>");
		cs_html_escape(f, s[i].text);
		fprintf(f, "</code></li>");
	}
	fprintf(f, "</ul>\n");
}

static void html_metric(const struct report *r, const struct report_metric *m, FILE *f)
{
	char spec[48];

	fprintf(f, "<section class=\"metric\"><h3>");
	cs_html_escape(f, m->name);
	fprintf(f, "%s</h3>\n<p>%lld tasks", m->stop ? " (stopping metric)" : "",
		(long long)m->covered);
	if (m->estimated)
		fprintf(f, " of %lld estimated (%.1f%%)", (long long)m->estimated,
			100.0 * (double)m->covered / (double)m->estimated);
	sat_format(&r->sat, spec, sizeof(spec));
	if (m->sat.saturated)
		fprintf(f, "; saturated at run %ld", metric_sat_run(m));
	else if (m->sat.enough)
		fprintf(f, "; not saturated");
	else
		fprintf(f, "; too few runs to judge saturation");
	if (m->sat.enough)
		fprintf(f, " (slope %.3g/%s, r² %.3f)", m->sat.slope, sat_unit(r), m->sat.r2);
	fprintf(f, "; window %s</p>\n", spec);
	html_chart(r, m, f);
	fprintf(f, "</section>\n");
}

/* Failures whose schedule the HTML page draws. */
#define HTML_SCHEDULES 5

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
		cs_html_escape(f, x->kind);
		fprintf(f, "</h3>\n<p>");
		cs_html_escape(f, x->summary);
		fprintf(f, "</p>\n");
		if (x->arm) {
			fprintf(f, "<p>arm: ");
			cs_html_escape(f, x->arm);
			fprintf(f, " (the portfolio's sub-strategy that ran it)</p>\n");
		}
		if (x->detail && *x->detail) {
			fprintf(f, "<pre>");
			cs_html_escape(f, x->detail);
			fprintf(f, "</pre>\n");
		}
		if (x->nsites)
			html_sites(x->sites, x->nsites, f);
		b = beside_of(r, x->run);
		if (b && b->n) {
			fprintf(f, "<p>Beside run%s ", b->n == 1 ? "" : "s");
			text_beside(b, f);
			fprintf(f, " (-j)</p>\n");
		}
		fprintf(f, "<p>Replay: <code class=\"replay\">");
		cs_html_escape(f, replay_cmd(r, x->run, cmd, sizeof(cmd)));
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
		cs_html_escape(f, r->log[i]);
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
		cs_html_escape(f, w->kind);
		fprintf(f, " on <code>");
		cs_html_escape(f, w->variable);
		fprintf(f, "</code> in %zu run%s (first run %lld)", w->runs,
			w->runs == 1 ? "" : "s", (long long)w->first_run);
		if (w->threads) {
			fprintf(f, "; threads ");
			cs_html_escape(f, w->threads);
		}
		if (w->locks) {
			fprintf(f, "; locks ");
			cs_html_escape(f, w->locks);
		}
		fprintf(f, "</p>\n");
		html_sites(w->sites, w->nsites, f);
		fprintf(f, "</div>\n");
	}
}

void report_write_html(const struct report *r, FILE *f)
{
	char when[64];
	size_t i;
	int o;

	format_time(r->c.created_ns, when, sizeof(when));
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>"
		   "concsched report: ");
	cs_html_escape(f, r->c.program);
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
	cs_html_escape(f, r->c.program);
	fprintf(f, " ");
	cs_html_escape(f, r->c.args_json);
	fprintf(f, "</code></td></tr>\n<tr><th>campaign</th><td><code>");
	cs_html_escape(f, r->dir);
	fprintf(f, "</code></td></tr>\n");
	if (r->ninputs) {
		fprintf(f, "<tr><th>strategy</th><td>merged from %zu campaign%s</td></tr>\n",
			r->ninputs, r->ninputs == 1 ? "" : "s");
		for (i = 0; i < r->ninputs; i++) {
			const struct store_input *in = &r->inputs[i];

			fprintf(f, "<tr><th>input</th><td><code>");
			cs_html_escape(f, in->dir);
			fprintf(f, "</code>: ");
			cs_html_escape(f, in->strategy);
			fprintf(f, ", seed %llu, %lld runs; host ", (unsigned long long)in->seed,
				(long long)in->runs);
			cs_html_escape(f, in->host);
			fprintf(f, ", %s, kernel ", where_text(in->where));
			cs_html_escape(f, in->kernel);
			fprintf(f, "</td></tr>\n");
		}
		fprintf(f, "<tr><th>merged</th><td>on host ");
		cs_html_escape(f, r->c.host);
	} else {
		fprintf(f, "<tr><th>strategy</th><td>");
		cs_html_escape(f, r->c.strategy);
		fprintf(f, ", seed %llu</td></tr>\n<tr><th>host</th><td>",
			(unsigned long long)r->c.seed);
		cs_html_escape(f, r->c.host);
		fprintf(f, "</td></tr>\n<tr><th>where</th><td>%s, kernel ", where_text(r->c.where));
		cs_html_escape(f, r->c.kernel);
		fprintf(f, "</td></tr>\n<tr><th>created</th><td>");
	}
	fprintf(f, "%s%s, concsched ", r->ninputs ? ", " : "", when);
	cs_html_escape(f, r->c.version);
	fprintf(f, "</td></tr>\n<tr><th>runs</th><td>%zu", r->nruns);
	for (o = 0; o <= OUTCOME_COUNT; o++)
		if (r->outcomes[o])
			fprintf(f, "; %s %zu", o == OUTCOME_COUNT ? "other" : outcome_name(o),
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

/* ---- report --tasks: the covered tasks of one metric, sites resolved ---- */

/* Append store site id as text: an instruction as "function+0xoff
 * (file:line)" from the object when it is still there, else as stored
 * ("function (file:line)" or "object+0xoff"); a named entity (prefix 'v'
 * variable, 'f' function, ...: "v@N") by its stored name. */
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
	} else if (!named && !sym_resolve_offset(site.object, site.offset, &ss) && ss.symbol &&
		   ss.is_func) {
		sym_site_format(&ss, buf, sizeof(buf));
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
char *report_task_text(struct store *s, const char *key)
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

struct tasks_ctx {
	struct store *s;
	struct json *j; /* NULL: text */
	FILE *f;
	size_t n;
};

static int tasks_one(const struct store_task *t, void *arg)
{
	struct tasks_ctx *x = arg;
	char *text = report_task_text(x->s, t->key);

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

int report_write_tasks(struct store *s, const char *metric, bool json, FILE *f)
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
			cs_err("no metric '%s' in this campaign (it has: %s)", metric,
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
