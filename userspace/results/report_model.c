// SPDX-License-Identifier: MIT
/*
 * A campaign report's model (report_model.h): the campaign, its runs with
 * the runs beside each (-j N), metrics and their saturation, failures with
 * their sites and replays, warnings grouped across runs, the strategy's notes.
 */
#include "results/report_model.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "strategies/declog_summary.h"
#include "lib/declog.h"
#include "lib/json.h"
#include "lib/xalloc.h"

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

size_t report_model_failure_count(const struct report *r)
{
	return r->nfailures;
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

/* From the failing run's configuration: the arm of a portfolio's run
 * ("arm"), and whether the scheduler kept its steering ("steering":
 * onerun_config_steering). */
static void failure_config(struct store *st, struct report_failure *rf)
{
	struct store_run sr = { 0 };

	if (store_load_run(st, rf->run, &sr))
		return;
	if (sr.strategy_config_json) {
		rf->arm = json_get_string(sr.strategy_config_json, "arm");
		run_steering_read(sr.strategy_config_json, &rf->steering);
	}
	store_run_clear(&sr);
}

static int collect_failure(const struct store_failure *f, void *arg)
{
	struct report *r = arg;
	struct report_failure *rf;

	r->failures = xrealloc(r->failures, (r->nfailures + 1) * sizeof(*r->failures));
	rf = &r->failures[r->nfailures++];
	memset(rf, 0, sizeof(*rf));
	rf->run = f->run;
	rf->kind = dup_or_null(f->kind);
	rf->summary = dup_or_null(f->summary);
	rf->detail = dup_or_null(f->detail);
	rf->nsites = f->nsites;
	rf->sites = sites_load(r->store, f->sites, f->nsites);
	failure_config(r->store, rf);
	if (store_replayed(r->store, f->run, &rf->replays, &rf->reproduced))
		rf->replays = rf->reproduced = 0;
	return 0;
}

/* Warnings repeat run after run: group them by (kind, variable, sites),
 * and a warning without sites (a lock-order pair: its variable names the
 * first lock only) by its locks too. A group counts the runs that had it
 * (the store gives the warnings in run order): one run may record one
 * group's warning more than once. */
static int collect_warning(const struct store_warning *w, void *arg)
{
	struct report *r = arg;
	struct report_warning *rw;
	char *sig = xasprintf("%s\x1f%s\x1f%s\x1f", w->kind ?: "", w->variable ?: "",
			      w->nsites ? "" : w->locks ?: "");
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
		if (r->warnings[i].last_run != w->run)
			r->warnings[i].runs++;
		r->warnings[i].last_run = w->run;
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
	rw->first_run = rw->last_run = w->run;
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

/* Every run's decision log, summed by the strategy (declog_summary.h). */
static void sum_declogs(struct report *r)
{
	size_t i;

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
		declog_summary_add(r->logsum, &dl);
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
	saturation_evaluate(x, y, m->npts, &r->sat, &m->sat);
	m->sat_at = saturation_first_saturated(x, y, m->npts, &r->sat);
	free(x);
	free(y);
	return 0;
}

static void count_outcomes(struct report *r)
{
	size_t i;
	int o;

	for (i = 0; i < r->nruns; i++) {
		o = oracle_outcome_parse(r->runs[i].outcome);
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

const struct run_beside *report_model_beside_of(const struct report *r, int64_t run)
{
	size_t i;

	for (i = 0; i < r->nruns; i++)
		if (r->runs[i].index == run)
			return &r->beside[i];
	return NULL;
}

size_t report_model_run_beside(const struct report *r, int64_t run, int64_t *out, size_t max)
{
	const struct run_beside *b = report_model_beside_of(r, run);
	size_t i;

	if (!b)
		return 0;
	for (i = 0; i < b->n && i < max && i < REPORT_BESIDE_MAX; i++)
		out[i] = b->runs[i];
	return b->n;
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
	else if (!r->c.saturation || saturation_parse(r->c.saturation, &r->sat))
		saturation_config_default(&r->sat);
	err = store_load_runs(s, &r->runs, &r->nruns);
	if (err)
		goto fail;
	count_outcomes(r);
	find_overlaps(r);
	if (!r->c.config_json || json_get_int(r->c.config_json, "jobs", &r->jobs))
		r->jobs = 1;
	r->logsum = declog_summary_new(r->c.strategy);
	if (r->logsum)
		sum_declogs(r);
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
	declog_summary_free(r->logsum);
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
