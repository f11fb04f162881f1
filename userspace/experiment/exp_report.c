// SPDX-License-Identifier: MIT
/* Experiment report (exp_report.h). */
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "results/store.h"
#include "experiment/exp_report.h"
#include "experiment/stats.h"
#include "lib/json.h"
#include "lib/array_size.h"
#include "lib/html.h"
#include "lib/xalloc.h"

struct metric_mean {
	char *name;
	double mean; /* covered tasks at the end of the campaign, mean over cells */
};

/* Coverage curve of one metric of a group: after run r = 1..budget, index
 * r - 1 (docs/experiment.md "Coverage curves"). */
struct cov_curve {
	double *q1, *median, *q3; /* NAN: no campaign of the group was readable */
};

/* The coverage metrics of a program's cells: the campaigns' stopping
 * metrics first, then every other metric they recorded. */
struct prog_metrics {
	const char *program;
	char **metric;
	size_t n;
	bool has_stop; /* metric[0] is the cells' stopping metric */
};

/* Per-run new tasks of each metric of one cell (its campaign.db). */
struct cell_series {
	char *metric;
	uint64_t *new_tasks; /* run i + 1 at index i */
	size_t n;
};

struct cell_cov {
	bool ok; /* campaign.db was read */
	char *stop_metric;
	struct cell_series *s;
	size_t ns;
};

/* One program x strategy. */
struct exp_group {
	const char *program, *strategy;
	size_t n, found;
	double *runs;	 /* runs to the first failure; censored: budget+1 */
	double *secs;	 /* seconds to it; censored: INFINITY */
	uint64_t *seeds; /* for pairing */
	double runs_q[3], secs_q[3];
	double sat_median; /* NAN: no cell saturated */
	size_t saturated;
	struct metric_mean *cov;
	size_t ncov;
	struct cov_curve *curves; /* one per metric of its program (prog_metrics) */
	size_t ncurves;
	/* Coverage of the stopping metric at the budget, per readable cell. */
	double *cov_final;
	uint64_t *cov_seeds; /* for pairing */
	size_t ncov_final;
	double cov_final_median;
};

struct exp_compare {
	const struct exp_group *a, *b;
	struct stats_mwu mwu;
	bool paired;
	struct stats_wilcoxon wsr;
};

/* Coverage at the budget of the stopping metric: more is better, A12 is
 * P(a covers more) (docs/experiment.md "Coverage comparisons"). */
struct exp_cov_compare {
	const struct exp_group *a, *b;
	const char *metric;
	struct stats_mwu mwu;
	bool paired;
	struct stats_wilcoxon wsr;
};

struct exp_report {
	struct exp_cell_row *rows;
	size_t nrows;
	char *spec_hash;
	uint64_t budget;   /* runs; the censoring value is budget + 1 */
	bool budget_given; /* false: seconds only, budget = most runs seen */
	double budget_s;
	struct exp_group *groups;
	size_t ngroups;
	struct exp_compare *cmp;
	size_t ncmp;
	struct prog_metrics *progs;
	size_t nprogs;
	struct exp_cov_compare *ccmp;
	size_t nccmp;
};

static void read_budget(struct exp_report *r, const char *spec)
{
	json_t *root = spec ? json_loads(spec, 0, NULL) : NULL;
	json_t *b = json_object_get(root, "budget");
	size_t i;

	r->budget = (uint64_t)json_number_value(json_object_get(b, "runs"));
	r->budget_s = json_number_value(json_object_get(b, "seconds"));
	r->budget_given = r->budget > 0;
	json_decref(root);
	if (r->budget_given)
		return;
	for (i = 0; i < r->nrows; i++)
		if ((uint64_t)r->rows[i].runs > r->budget)
			r->budget = r->rows[i].runs;
}

static struct exp_group *group_of(struct exp_report *r, const struct exp_cell_row *c)
{
	size_t i;

	for (i = 0; i < r->ngroups; i++)
		if (!strcmp(r->groups[i].program, c->program) &&
		    !strcmp(r->groups[i].strategy, c->strategy))
			return &r->groups[i];
	r->groups = xrealloc(r->groups, (r->ngroups + 1) * sizeof(*r->groups));
	memset(&r->groups[r->ngroups], 0, sizeof(*r->groups));
	r->groups[r->ngroups].program = c->program;
	r->groups[r->ngroups].strategy = c->strategy;
	r->groups[r->ngroups].runs = xcalloc(r->nrows, sizeof(double));
	r->groups[r->ngroups].secs = xcalloc(r->nrows, sizeof(double));
	r->groups[r->ngroups].seeds = xcalloc(r->nrows, sizeof(uint64_t));
	return &r->groups[r->ngroups++];
}

static void add_coverage(struct exp_group *g, const char *cov)
{
	json_t *o = cov ? json_loads(cov, 0, NULL) : NULL, *v;
	const char *key;
	size_t i;

	json_object_foreach(o, key, v)
	{
		for (i = 0; i < g->ncov && strcmp(g->cov[i].name, key); i++)
			;
		if (i == g->ncov) {
			g->cov = xrealloc(g->cov, (g->ncov + 1) * sizeof(*g->cov));
			g->cov[g->ncov++] = (struct metric_mean){ xstrdup(key), 0 };
		}
		g->cov[i].mean += json_number_value(v);
	}
	json_decref(o);
}

static void summarise(struct exp_group *g, size_t ncells_sat, double *sat)
{
	size_t i;

	for (i = 0; i < 3; i++) {
		g->runs_q[i] = stats_quantile(g->runs, g->n, 0.25 * (i + 1));
		g->secs_q[i] = stats_quantile(g->secs, g->n, 0.25 * (i + 1));
	}
	for (i = 0; i < g->ncov; i++)
		g->cov[i].mean /= g->n;
	g->saturated = ncells_sat;
	g->sat_median = stats_quantile(sat, ncells_sat, 0.5);
}

static void build_groups(struct exp_report *r)
{
	double *sat = xcalloc(r->nrows ? r->nrows : 1, sizeof(*sat));
	struct exp_group *g;
	size_t i, j, nsat;

	for (i = 0; i < r->nrows; i++) {
		const struct exp_cell_row *c = &r->rows[i];

		if (strcmp(c->status, "done"))
			continue;
		g = group_of(r, c);
		g->seeds[g->n] = c->seed;
		g->runs[g->n] = c->first_failure_run > 0 ? (double)c->first_failure_run
							 : (double)r->budget + 1;
		g->secs[g->n] = c->first_failure_run > 0 ? c->first_failure_s : INFINITY;
		g->found += c->first_failure_run > 0;
		g->n++;
		add_coverage(g, c->coverage);
	}
	for (i = 0; i < r->ngroups; i++) {
		g = &r->groups[i];
		nsat = 0;
		for (j = 0; j < r->nrows; j++)
			if (!strcmp(r->rows[j].status, "done") &&
			    !strcmp(r->rows[j].program, g->program) &&
			    !strcmp(r->rows[j].strategy, g->strategy) &&
			    r->rows[j].saturated_at_run > 0)
				sat[nsat++] = (double)r->rows[j].saturated_at_run;
		summarise(g, nsat, sat);
	}
	free(sat);
}

/* The seeds pair when both groups ran the same seeds in the same order. */
static bool same_seeds(const uint64_t *a, size_t na, const uint64_t *b, size_t nb)
{
	return na == nb && !memcmp(a, b, na * sizeof(*a));
}

static bool seeds_pair(const struct exp_group *a, const struct exp_group *b)
{
	return same_seeds(a->seeds, a->n, b->seeds, b->n);
}

static void build_comparisons(struct exp_report *r)
{
	struct exp_compare *c;
	size_t i, j;

	for (i = 0; i < r->ngroups; i++)
		for (j = i + 1; j < r->ngroups; j++) {
			if (strcmp(r->groups[i].program, r->groups[j].program))
				continue;
			r->cmp = xrealloc(r->cmp, (r->ncmp + 1) * sizeof(*r->cmp));
			c = &r->cmp[r->ncmp++];
			memset(c, 0, sizeof(*c));
			c->a = &r->groups[i];
			c->b = &r->groups[j];
			stats_mann_whitney(c->a->runs, c->a->n, c->b->runs, c->b->n, &c->mwu);
			c->paired = seeds_pair(c->a, c->b);
			if (c->paired)
				stats_wilcoxon(c->a->runs, c->b->runs, c->a->n, &c->wsr);
		}
}

static bool has_str(char *const *v, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return true;
	return false;
}

/* Read one cell's per-run new tasks of every metric (read-only). */
static void load_cell_cov(const char *path, struct cell_cov *cc)
{
	struct store_campaign c = { 0 };
	struct store_series_point *pts;
	char **names = NULL;
	struct store *st;
	size_t n = 0, i, k, npts;

	if (store_open(path, true, &st))
		return;
	if (!store_get_campaign(st, &c) && c.metric)
		cc->stop_metric = xstrdup(c.metric);
	store_metrics(st, &names, &n);
	cc->s = xcalloc(n + 1, sizeof(*cc->s));
	for (i = 0; i <= n; i++) {
		const char *m = i < n ? names[i] : cc->stop_metric;

		/* The stopping metric even when it covered nothing yet. */
		if (i == n && (!m || has_str(names, n, m)))
			break;
		pts = NULL;
		npts = 0;
		if (store_coverage_series(st, m, &pts, &npts)) {
			free(pts);
			continue;
		}
		cc->s[cc->ns].metric = xstrdup(m);
		cc->s[cc->ns].new_tasks = xcalloc(npts ? npts : 1, sizeof(uint64_t));
		for (k = 0; k < npts; k++)
			cc->s[cc->ns].new_tasks[k] = pts[k].new_tasks;
		cc->s[cc->ns++].n = npts;
		free(pts);
	}
	cc->ok = true;
	store_strings_free(names, n);
	store_campaign_free(&c);
	store_close(st);
}

static void add_metric(struct prog_metrics *p, const char *m)
{
	size_t i;

	for (i = 0; i < p->n; i++)
		if (!strcmp(p->metric[i], m))
			return;
	p->metric = xrealloc(p->metric, (p->n + 1) * sizeof(*p->metric));
	p->metric[p->n++] = xstrdup(m);
}

static struct prog_metrics *prog_of(struct exp_report *r, const char *program)
{
	size_t i;

	for (i = 0; i < r->nprogs; i++)
		if (!strcmp(r->progs[i].program, program))
			return &r->progs[i];
	r->progs = xrealloc(r->progs, (r->nprogs + 1) * sizeof(*r->progs));
	r->progs[r->nprogs] = (struct prog_metrics){ program, NULL, 0 };
	return &r->progs[r->nprogs++];
}

static bool in_group(const struct exp_cell_row *c, const struct exp_group *g)
{
	return !strcmp(c->status, "done") && !strcmp(c->program, g->program) &&
	       !strcmp(c->strategy, g->strategy);
}

/* A group's curve of metric m over its readable cells. */
static void group_curve(const struct exp_report *r, const struct cell_cov *cells,
			struct exp_group *g, const char *m, bool cov_final, struct cov_curve *cv)
{
	const uint64_t **seeds = xcalloc(r->nrows ? r->nrows : 1, sizeof(*seeds));
	size_t *len = xcalloc(r->nrows ? r->nrows : 1, sizeof(*len)), n = 0, i, k;
	size_t B = r->budget ? r->budget : 1;

	for (i = 0; i < r->nrows; i++) {
		if (!in_group(&r->rows[i], g) || !cells[i].ok)
			continue;
		seeds[n] = NULL;
		len[n] = 0; /* a metric the campaign never recorded: 0 throughout */
		for (k = 0; k < cells[i].ns; k++)
			if (!strcmp(cells[i].s[k].metric, m)) {
				seeds[n] = cells[i].s[k].new_tasks;
				len[n] = cells[i].s[k].n;
			}
		n++;
	}
	if (cov_final) { /* the stopping metric: each seed's coverage at the budget */
		g->cov_final = xcalloc(n ? n : 1, sizeof(double));
		g->cov_seeds = xcalloc(n ? n : 1, sizeof(uint64_t));
		for (i = 0, k = 0; i < r->nrows; i++)
			if (in_group(&r->rows[i], g) && cells[i].ok)
				g->cov_seeds[k++] = r->rows[i].seed;
		for (k = 0; k < n; k++)
			g->cov_final[k] = stats_coverage_at(seeds[k], len[k], r->budget);
		g->ncov_final = n;
		g->cov_final_median = stats_quantile(g->cov_final, n, 0.5);
	}
	cv->q1 = xcalloc(B, sizeof(double));
	cv->median = xcalloc(B, sizeof(double));
	cv->q3 = xcalloc(B, sizeof(double));
	stats_coverage_band(seeds, len, n, r->budget, cv->q1, cv->median, cv->q3);
	free(seeds);
	free(len);
}

/* Coverage curves from each done cell's campaign.db under dir. */
static void build_curves(struct exp_report *r, const char *dir)
{
	struct cell_cov *cells = xcalloc(r->nrows ? r->nrows : 1, sizeof(*cells));
	struct prog_metrics *p;
	size_t i, k, pass;
	char *path;

	for (i = 0; i < r->nrows; i++) {
		if (strcmp(r->rows[i].status, "done") || !r->rows[i].dir)
			continue;
		path = xasprintf("%s/%s", dir, r->rows[i].dir);
		load_cell_cov(path, &cells[i]);
		free(path);
	}
	/* Stopping metrics first, then the others in the order met. */
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < r->nrows; i++) {
			if (!cells[i].ok)
				continue;
			p = prog_of(r, r->rows[i].program);
			if (!pass && cells[i].stop_metric) {
				add_metric(p, cells[i].stop_metric);
				p->has_stop = true;
			}
			for (k = 0; pass && k < cells[i].ns; k++)
				add_metric(p, cells[i].s[k].metric);
		}
	for (i = 0; i < r->ngroups; i++) {
		struct exp_group *g = &r->groups[i];

		p = prog_of(r, g->program);
		g->ncurves = p->n;
		g->curves = xcalloc(p->n ? p->n : 1, sizeof(*g->curves));
		for (k = 0; k < p->n; k++)
			group_curve(r, cells, g, p->metric[k], !k && p->has_stop, &g->curves[k]);
	}
	for (i = 0; i < r->nrows; i++) {
		for (k = 0; k < cells[i].ns; k++) {
			free(cells[i].s[k].metric);
			free(cells[i].s[k].new_tasks);
		}
		free(cells[i].s);
		free(cells[i].stop_metric);
	}
	free(cells);
}

/* Per program, each pair of strategies: coverage of the stopping metric at
 * the budget. */
static void build_cov_comparisons(struct exp_report *r)
{
	struct exp_cov_compare *c;
	struct exp_group *a, *b;
	struct prog_metrics *p;
	size_t i, j;

	for (i = 0; i < r->ngroups; i++)
		for (j = i + 1; j < r->ngroups; j++) {
			a = &r->groups[i];
			b = &r->groups[j];
			if (strcmp(a->program, b->program) || !a->ncov_final || !b->ncov_final)
				continue;
			p = prog_of(r, a->program);
			r->ccmp = xrealloc(r->ccmp, (r->nccmp + 1) * sizeof(*r->ccmp));
			c = &r->ccmp[r->nccmp++];
			memset(c, 0, sizeof(*c));
			c->a = a;
			c->b = b;
			c->metric = p->metric[0];
			stats_mann_whitney(a->cov_final, a->ncov_final, b->cov_final, b->ncov_final,
					   &c->mwu);
			c->paired = same_seeds(a->cov_seeds, a->ncov_final, b->cov_seeds,
					       b->ncov_final);
			if (c->paired)
				stats_wilcoxon(a->cov_final, b->cov_final, a->ncov_final, &c->wsr);
		}
}

int exp_report_load(struct exp_index *x, const char *dir, struct exp_report **out)
{
	struct exp_report *r = xcalloc(1, sizeof(*r));
	char *spec;
	int err;

	if ((err = exp_index_cells(x, &r->rows, &r->nrows))) {
		free(r);
		return err;
	}
	r->spec_hash = exp_index_meta(x, "spec_hash");
	spec = exp_index_meta(x, "spec");
	read_budget(r, spec);
	free(spec);
	build_groups(r);
	build_comparisons(r);
	build_curves(r, dir);
	build_cov_comparisons(r);
	*out = r;
	return 0;
}

void exp_report_free(struct exp_report *r)
{
	size_t i, j;

	if (!r)
		return;
	for (i = 0; i < r->ngroups; i++) {
		for (j = 0; j < r->groups[i].ncov; j++)
			free(r->groups[i].cov[j].name);
		free(r->groups[i].cov);
		for (j = 0; j < r->groups[i].ncurves; j++) {
			free(r->groups[i].curves[j].q1);
			free(r->groups[i].curves[j].median);
			free(r->groups[i].curves[j].q3);
		}
		free(r->groups[i].curves);
		free(r->groups[i].cov_final);
		free(r->groups[i].cov_seeds);
		free(r->groups[i].runs);
		free(r->groups[i].secs);
		free(r->groups[i].seeds);
	}
	free(r->groups);
	free(r->cmp);
	free(r->ccmp);
	for (i = 0; i < r->nprogs; i++) {
		for (j = 0; j < r->progs[i].n; j++)
			free(r->progs[i].metric[j]);
		free(r->progs[i].metric);
	}
	free(r->progs);
	exp_index_cell_rows_free(r->rows, r->nrows);
	free(r->spec_hash);
	free(r);
}

/* A runs quantile: censored ones (past the budget) print as ">B". */
static const char *fmt_runs(const struct exp_report *r, double v, char *buf, size_t len)
{
	if (v > (double)r->budget)
		snprintf(buf, len, ">%llu", (unsigned long long)r->budget);
	else
		snprintf(buf, len, "%g", v);
	return buf;
}

static const char *fmt_secs(double v, char *buf, size_t len)
{
	if (isinf(v))
		snprintf(buf, len, "censored");
	else
		snprintf(buf, len, "%.3f", v);
	return buf;
}

static void text_group(const struct exp_report *r, const struct exp_group *g, FILE *f)
{
	char a[32], b[32], c[32];
	size_t i;

	fprintf(f, "%s / %s: %zu campaign%s, failure found in %zu (%.0f%% by %llu runs)\n",
		g->program, g->strategy, g->n, g->n == 1 ? "" : "s", g->found,
		100.0 * g->found / g->n, (unsigned long long)r->budget);
	fprintf(f, "  runs to first failure:    median %s, IQR %s..%s\n",
		fmt_runs(r, g->runs_q[1], a, sizeof(a)), fmt_runs(r, g->runs_q[0], b, sizeof(b)),
		fmt_runs(r, g->runs_q[2], c, sizeof(c)));
	fprintf(f, "  seconds to first failure: median %s, IQR %s..%s\n",
		fmt_secs(g->secs_q[1], a, sizeof(a)), fmt_secs(g->secs_q[0], b, sizeof(b)),
		fmt_secs(g->secs_q[2], c, sizeof(c)));
	fprintf(f, "  coverage at the budget:  ");
	for (i = 0; i < g->ncov; i++)
		fprintf(f, " %s %.1f", g->cov[i].name, g->cov[i].mean);
	fprintf(f, "%s\n", g->ncov ? "" : " none");
	if (g->saturated)
		fprintf(f, "  saturation point:         median run %g (%zu of %zu saturated)\n",
			g->sat_median, g->saturated, g->n);
	else
		fprintf(f, "  saturation point:         none saturated\n");
}

void exp_report_text(const struct exp_report *r, FILE *f)
{
	size_t i, done = 0;

	for (i = 0; i < r->nrows; i++)
		done += !strcmp(r->rows[i].status, "done");
	fprintf(f, "experiment: spec %s, %zu cells done of %zu recorded, budget %llu runs%s\n",
		r->spec_hash ? r->spec_hash : "?", done, r->nrows, (unsigned long long)r->budget,
		r->budget_given ? "" : " (the most any campaign ran: the spec gives seconds)");
	fprintf(f, "censored (no failure within the budget) counts as %llu runs in the tests\n\n",
		(unsigned long long)r->budget + 1);
	for (i = 0; i < r->ngroups; i++)
		text_group(r, &r->groups[i], f);
	if (r->ncmp)
		fprintf(f, "\ncomparisons of runs to first failure (fewer is better; A12 = P(the "
			   "first needs more runs), so A12 < 0.5: the first finds it sooner):\n");
	for (i = 0; i < r->ncmp; i++) {
		const struct exp_compare *c = &r->cmp[i];

		fprintf(f, "  %s: %s vs %s: Mann-Whitney U %g, p %.4g; A12 %.3f", c->a->program,
			c->a->strategy, c->b->strategy, c->mwu.u, c->mwu.p, c->mwu.a12);
		if (c->paired)
			fprintf(f, "; Wilcoxon W+ %g (n %zu), p %.4g", c->wsr.w_plus, c->wsr.n,
				c->wsr.p);
		fputc('\n', f);
	}
	if (r->nccmp)
		fprintf(f,
			"\ncomparisons of coverage at the budget (tasks of the stopping metric "
			"covered by run %llu; more is better; A12 = P(the first covers more), so "
			"A12 > 0.5: the first covers more):\n",
			(unsigned long long)r->budget);
	for (i = 0; i < r->nccmp; i++) {
		const struct exp_cov_compare *c = &r->ccmp[i];

		fprintf(f,
			"  %s (%s): %s vs %s: median %g vs %g; Mann-Whitney U %g, p %.4g; A12 "
			"%.3f",
			c->a->program, c->metric, c->a->strategy, c->b->strategy,
			c->a->cov_final_median, c->b->cov_final_median, c->mwu.u, c->mwu.p,
			c->mwu.a12);
		if (c->paired)
			fprintf(f, "; Wilcoxon W+ %g (n %zu), p %.4g", c->wsr.w_plus, c->wsr.n,
				c->wsr.p);
		fputc('\n', f);
	}
}

static void csv_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, ",%g", v);
	else
		fputs(",", f);
}

/* One row per group; censored quantiles are empty (runs: > budget). */
void exp_report_csv(const struct exp_report *r, FILE *f)
{
	size_t i, k;

	fprintf(f, "program,strategy,campaigns,found,found_fraction,budget_runs,"
		   "runs_q1,runs_median,runs_q3,seconds_q1,seconds_median,seconds_q3,"
		   "saturated,saturation_median_run,coverage\n");
	for (i = 0; i < r->ngroups; i++) {
		const struct exp_group *g = &r->groups[i];

		fprintf(f, "%s,%s,%zu,%zu,%g,%llu", g->program, g->strategy, g->n, g->found,
			(double)g->found / g->n, (unsigned long long)r->budget);
		for (k = 0; k < 3; k++)
			csv_num(f, g->runs_q[k] > (double)r->budget ? NAN : g->runs_q[k]);
		for (k = 0; k < 3; k++)
			csv_num(f, g->secs_q[k]);
		fprintf(f, ",%zu", g->saturated);
		csv_num(f, g->sat_median);
		fputs(",", f);
		for (k = 0; k < g->ncov; k++)
			fprintf(f, "%s%s=%g", k ? ";" : "", g->cov[k].name, g->cov[k].mean);
		fputc('\n', f);
	}
}

/* One row per comparison: runs to first failure (fewer is better) and
 * coverage of the stopping metric at the budget (more is better). */
void exp_report_comparisons_csv(const struct exp_report *r, FILE *f)
{
	size_t i;

	fprintf(f, "program,measure,metric,better,a,b,campaigns_a,campaigns_b,median_a,median_b,"
		   "mann_whitney_u,mann_whitney_p,a12,a12_means,paired,wilcoxon_w_plus,"
		   "wilcoxon_n,wilcoxon_p\n");
	for (i = 0; i < r->ncmp; i++) {
		const struct exp_compare *c = &r->cmp[i];

		fprintf(f, "%s,runs_to_failure,,fewer,%s,%s,%zu,%zu", c->a->program, c->a->strategy,
			c->b->strategy, c->a->n, c->b->n);
		csv_num(f, c->a->runs_q[1] > (double)r->budget ? NAN : c->a->runs_q[1]);
		csv_num(f, c->b->runs_q[1] > (double)r->budget ? NAN : c->b->runs_q[1]);
		fprintf(f, ",%g,%g,%g,P(a needs more runs),%d", c->mwu.u, c->mwu.p, c->mwu.a12,
			c->paired);
		if (c->paired)
			fprintf(f, ",%g,%zu,%g\n", c->wsr.w_plus, c->wsr.n, c->wsr.p);
		else
			fputs(",,,\n", f);
	}
	for (i = 0; i < r->nccmp; i++) {
		const struct exp_cov_compare *c = &r->ccmp[i];

		fprintf(f, "%s,coverage_at_budget,%s,more,%s,%s,%zu,%zu", c->a->program, c->metric,
			c->a->strategy, c->b->strategy, c->a->ncov_final, c->b->ncov_final);
		csv_num(f, c->a->cov_final_median);
		csv_num(f, c->b->cov_final_median);
		fprintf(f, ",%g,%g,%g,P(a covers more),%d", c->mwu.u, c->mwu.p, c->mwu.a12,
			c->paired);
		if (c->paired)
			fprintf(f, ",%g,%zu,%g\n", c->wsr.w_plus, c->wsr.n, c->wsr.p);
		else
			fputs(",,,\n", f);
	}
}

static void json_quartiles(struct json *j, const char *key, const double *q, double censor)
{
	json_obj_begin(j, key);
	json_kv_dbl(j, "q1", q[0] > censor ? NAN : q[0]);
	json_kv_dbl(j, "median", q[1] > censor ? NAN : q[1]);
	json_kv_dbl(j, "q3", q[2] > censor ? NAN : q[2]);
	json_obj_end(j);
}

static void json_group(const struct exp_report *r, const struct exp_group *g, struct json *j)
{
	uint64_t b;
	size_t k;

	json_obj_begin(j, NULL);
	json_kv_str(j, "program", g->program);
	json_kv_str(j, "strategy", g->strategy);
	json_kv_uint(j, "campaigns", g->n);
	json_kv_uint(j, "found", g->found);
	json_quartiles(j, "runs_to_failure", g->runs_q, (double)r->budget);
	json_quartiles(j, "seconds_to_failure", g->secs_q, INFINITY);
	json_obj_begin(j, "coverage");
	for (k = 0; k < g->ncov; k++)
		json_kv_dbl(j, g->cov[k].name, g->cov[k].mean);
	json_obj_end(j);
	json_kv_uint(j, "saturated", g->saturated);
	json_kv_dbl(j, "saturation_median_run", g->sat_median);
	/* found_by[b] for b = 0..budget */
	json_arr_begin(j, "found_by");
	for (b = 0; b <= r->budget; b++)
		json_kv_dbl(j, NULL, stats_fraction_le(g->runs, g->n, (double)b));
	json_arr_end(j);
	json_obj_end(j);
}

static void json_cells(const struct exp_report *r, struct json *j)
{
	size_t i;

	json_arr_begin(j, "cells");
	for (i = 0; i < r->nrows; i++) {
		const struct exp_cell_row *c = &r->rows[i];

		json_obj_begin(j, NULL);
		json_kv_int(j, "index", c->idx);
		json_kv_str(j, "program", c->program);
		json_kv_str(j, "strategy", c->strategy);
		json_kv_uint(j, "seed", c->seed);
		json_kv_str(j, "status", c->status);
		json_kv_int(j, "runs", c->runs);
		if (c->first_failure_run > 0)
			json_kv_int(j, "first_failure_run", c->first_failure_run);
		else
			json_kv_null(j, "first_failure_run");
		json_kv_dbl(j, "first_failure_s",
			    c->first_failure_s < 0 ? NAN : c->first_failure_s);
		json_kv_dbl(j, "seconds", c->seconds);
		json_kv_str(j, "shard", c->shard);
		json_kv_str(j, "dir", c->dir);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* Per program x metric x strategy: covered tasks after run r = 1..budget. */
static void json_curves(const struct exp_report *r, struct json *j)
{
	size_t p, k, i, b;

	json_arr_begin(j, "coverage_curves");
	for (p = 0; p < r->nprogs; p++)
		for (k = 0; k < r->progs[p].n; k++)
			for (i = 0; i < r->ngroups; i++) {
				const struct exp_group *g = &r->groups[i];

				if (strcmp(g->program, r->progs[p].program) || k >= g->ncurves)
					continue;
				json_obj_begin(j, NULL);
				json_kv_str(j, "program", g->program);
				json_kv_str(j, "metric", r->progs[p].metric[k]);
				json_kv_str(j, "strategy", g->strategy);
				json_kv_uint(j, "campaigns", g->n);
				json_arr_begin(j, "run");
				for (b = 1; b <= r->budget; b++)
					json_kv_uint(j, NULL, b);
				json_arr_end(j);
				json_arr_begin(j, "median");
				for (b = 0; b < r->budget; b++)
					json_kv_dbl(j, NULL, g->curves[k].median[b]);
				json_arr_end(j);
				json_arr_begin(j, "q1");
				for (b = 0; b < r->budget; b++)
					json_kv_dbl(j, NULL, g->curves[k].q1[b]);
				json_arr_end(j);
				json_arr_begin(j, "q3");
				for (b = 0; b < r->budget; b++)
					json_kv_dbl(j, NULL, g->curves[k].q3[b]);
				json_arr_end(j);
				json_obj_end(j);
			}
	json_arr_end(j);
}

/* A comparison's tests: Mann-Whitney U, its p and A12, the Wilcoxon
 * signed-rank W+ and p (NaN unless paired), and how to read them. */
static void json_tests(struct json *j, const struct stats_mwu *mwu, bool paired,
		       const struct stats_wilcoxon *wsr, const char *better, const char *a12_means)
{
	json_kv_dbl(j, "mann_whitney_u", mwu->u);
	json_kv_dbl(j, "mann_whitney_p", mwu->p);
	json_kv_dbl(j, "a12", mwu->a12);
	json_kv_bool(j, "paired", paired);
	json_kv_dbl(j, "wilcoxon_w_plus", paired ? wsr->w_plus : NAN);
	json_kv_dbl(j, "wilcoxon_p", paired ? wsr->p : NAN);
	json_kv_str(j, "better", better);
	json_kv_str(j, "a12_means", a12_means);
}

void exp_report_json(const struct exp_report *r, FILE *f)
{
	struct json j;
	size_t i;

	json_init(&j, f, true);
	json_obj_begin(&j, NULL);
	json_kv_str(&j, "schema", "concsched-experiment/1");
	json_kv_str(&j, "spec_hash", r->spec_hash);
	json_kv_uint(&j, "budget_runs", r->budget);
	json_kv_uint(&j, "censored_as", r->budget + 1);
	json_cells(r, &j);
	json_arr_begin(&j, "groups");
	for (i = 0; i < r->ngroups; i++)
		json_group(r, &r->groups[i], &j);
	json_arr_end(&j);
	json_arr_begin(&j, "comparisons");
	for (i = 0; i < r->ncmp; i++) {
		const struct exp_compare *c = &r->cmp[i];

		json_obj_begin(&j, NULL);
		json_kv_str(&j, "program", c->a->program);
		json_kv_str(&j, "a", c->a->strategy);
		json_kv_str(&j, "b", c->b->strategy);
		json_tests(&j, &c->mwu, c->paired, &c->wsr, "fewer",
			   "P(a needs more runs to the first failure)");
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_arr_begin(&j, "coverage_comparisons");
	for (i = 0; i < r->nccmp; i++) {
		const struct exp_cov_compare *c = &r->ccmp[i];

		json_obj_begin(&j, NULL);
		json_kv_str(&j, "program", c->a->program);
		json_kv_str(&j, "metric", c->metric);
		json_kv_str(&j, "a", c->a->strategy);
		json_kv_str(&j, "b", c->b->strategy);
		json_kv_uint(&j, "campaigns_a", c->a->ncov_final);
		json_kv_uint(&j, "campaigns_b", c->b->ncov_final);
		json_kv_dbl(&j, "median_a", c->a->cov_final_median);
		json_kv_dbl(&j, "median_b", c->b->cov_final_median);
		json_tests(&j, &c->mwu, c->paired, &c->wsr, "more",
			   "P(a covers more at the budget)");
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_curves(r, &j);
	json_obj_end(&j);
	json_end(&j);
}

static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
				       "#ff7f0e", "#8c564b", "#e377c2", "#17becf" };

/* One step curve per strategy of `program`: fraction found by budget b. */
static void html_curves(const struct exp_report *r, const char *program, FILE *f)
{
	const int w = 560, h = 240, l = 50, t = 10, pw = 480, ph = 190;
	double B = (double)(r->budget ? r->budget : 1), x0, x1, y;
	size_t i, k = 0, lines = 0;
	uint64_t b;

	for (i = 0; i < r->ngroups; i++)
		lines += !strcmp(r->groups[i].program, program);
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\">\n", w,
		h + 20 * (int)lines);
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		"stroke=\"#888\"/>\n",
		l, t, pw, ph);
	fprintf(f,
		"<text x=\"%d\" y=\"%d\" font-size=\"11\">1</text><text x=\"%d\" y=\"%d\" "
		"font-size=\"11\">0</text>\n",
		l - 14, t + 10, l - 14, t + ph);
	fprintf(f,
		"<text x=\"%d\" y=\"%d\" font-size=\"11\">0</text><text x=\"%d\" y=\"%d\" "
		"font-size=\"11\">%g</text>\n",
		l, t + ph + 16, l + pw - 10, t + ph + 16, B);
	fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"11\">runs (budget %g)</text>\n",
		l + pw / 2 - 40, t + ph + 16, B);
	for (i = 0; i < r->ngroups; i++) {
		const struct exp_group *g = &r->groups[i];
		const char *col = palette[k % ARRAY_SIZE(palette)];

		if (strcmp(g->program, program))
			continue;
		fprintf(f,
			"<polyline class=\"found-by\" fill=\"none\" stroke=\"%s\" "
			"stroke-width=\"2\" points=\"",
			col);
		for (b = 0; b <= r->budget; b++) {
			y = t + ph - ph * stats_fraction_le(g->runs, g->n, (double)b);
			x0 = l + pw * (double)b / B;
			x1 = l + pw * (double)(b + 1 > r->budget ? b : b + 1) / B;
			fprintf(f, "%.1f,%.1f %.1f,%.1f ", x0, y, x1, y);
		}
		fprintf(f, "\"/>\n<text x=\"%d\" y=\"%d\" fill=\"%s\" font-size=\"12\">", l,
			h + 14 + 20 * (int)k, col);
		html_escape(f, g->strategy);
		fprintf(f, " (%zu/%zu found)</text>\n", g->found, g->n);
		k++;
	}
	fputs("</svg>\n", f);
}

/* Runs drawn on a coverage curve: 0 (nothing covered yet), every step-th,
 * and the budget; step keeps a curve to about 400 points. */
static size_t curve_step(uint64_t budget)
{
	return budget > 400 ? (size_t)((budget + 399) / 400) : 1;
}

static double curve_at(const double *v, size_t run)
{
	return run ? v[run - 1] : 0;
}

/* One small SVG: metric k of `p`, per strategy the median over the seeds
 * (line) and Q1..Q3 (translucent band). */
static void html_coverage(const struct exp_report *r, const struct prog_metrics *p, size_t k,
			  FILE *f)
{
	const int w = 460, l = 60, t = 30, pw = 380, ph = 150;
	const double B = (double)(r->budget ? r->budget : 1);
	size_t i, c = 0, lines = 0, step = curve_step(r->budget), run;
	const char *metric = p->metric[k];
	double ymax = 0, x, y;
	int h;

	for (i = 0; i < r->ngroups; i++)
		if (!strcmp(r->groups[i].program, p->program) && k < r->groups[i].ncurves) {
			lines++;
			if (r->budget)
				ymax = fmax(ymax, r->groups[i].curves[k].q3[r->budget - 1]);
		}
	ymax = ymax > 0 ? ymax : 1;
	h = t + ph + 40 + 18 * (int)lines;
	fprintf(f,
		"<svg class=\"coverage\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" "
		"height=\"%d\" data-program=\"",
		w, h);
	html_escape(f, p->program);
	fputs("\" data-metric=\"", f);
	html_escape(f, metric);
	fputs("\">\n<title>", f);
	html_escape(f, p->program);
	fputs(": coverage of ", f);
	html_escape(f, metric);
	fprintf(f, "</title>\n<text x=\"%d\" y=\"16\" font-size=\"13\" font-weight=\"bold\">", l);
	html_escape(f, p->program);
	fputs(": ", f);
	html_escape(f, metric);
	fputs(" coverage</text>\n", f);
	fprintf(f,
		"<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
		"stroke=\"#888\"/>\n",
		l, t, pw, ph);
	fprintf(f,
		"<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">%g</text>"
		"<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"end\">0</text>\n",
		l - 4, t + 10, ymax, l - 4, t + ph);
	fprintf(f,
		"<text transform=\"translate(%d,%d) rotate(-90)\" font-size=\"11\" "
		"text-anchor=\"middle\">covered tasks</text>\n",
		l - 36, t + ph / 2);
	fprintf(f,
		"<text x=\"%d\" y=\"%d\" font-size=\"11\">0</text><text x=\"%d\" y=\"%d\" "
		"font-size=\"11\" text-anchor=\"end\">%g</text>\n",
		l, t + ph + 16, l + pw, t + ph + 16, B);
	fprintf(f,
		"<text x=\"%d\" y=\"%d\" font-size=\"11\" text-anchor=\"middle\">run (budget "
		"%g)</text>\n",
		l + pw / 2, t + ph + 16, B);
	for (i = 0; i < r->ngroups; i++) {
		const struct exp_group *g = &r->groups[i];
		const char *col = palette[c % ARRAY_SIZE(palette)];
		const struct cov_curve *cv;

		if (strcmp(g->program, p->program) || k >= g->ncurves)
			continue;
		cv = &g->curves[k];
		c++;
		if (!r->budget || isnan(cv->median[0]))
			continue;
		/* Band: Q3 left to right, then Q1 back. */
		fprintf(f,
			"<polygon class=\"iqr\" fill=\"%s\" fill-opacity=\"0.25\" stroke=\"none\" "
			"data-strategy=\"",
			col);
		html_escape(f, g->strategy);
		fputs("\" points=\"", f);
		for (run = 0;; run = run + step > r->budget ? r->budget : run + step) {
			x = l + pw * (double)run / B;
			y = t + ph - ph * curve_at(cv->q3, run) / ymax;
			fprintf(f, "%.1f,%.1f ", x, y);
			if (run == r->budget)
				break;
		}
		for (run = r->budget;; run = run > step ? run - step : 0) {
			x = l + pw * (double)run / B;
			y = t + ph - ph * curve_at(cv->q1, run) / ymax;
			fprintf(f, "%.1f,%.1f ", x, y);
			if (!run)
				break;
		}
		fprintf(f,
			"\"/>\n<polyline class=\"median\" fill=\"none\" stroke=\"%s\" "
			"stroke-width=\"2\" points=\"",
			col);
		for (run = 0;; run = run + step > r->budget ? r->budget : run + step) {
			x = l + pw * (double)run / B;
			y = t + ph - ph * curve_at(cv->median, run) / ymax;
			fprintf(f, "%.1f,%.1f ", x, y);
			if (run == r->budget)
				break;
		}
		fputs("\"/>\n", f);
	}
	for (i = 0, c = 0; i < r->ngroups; i++) {
		const struct exp_group *g = &r->groups[i];
		const char *col = palette[c % ARRAY_SIZE(palette)];
		int ly = t + ph + 36 + 18 * (int)c;

		if (strcmp(g->program, p->program) || k >= g->ncurves)
			continue;
		fprintf(f,
			"<rect x=\"%d\" y=\"%d\" width=\"18\" height=\"10\" fill=\"%s\" "
			"fill-opacity=\"0.25\"/><line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
			"stroke=\"%s\" stroke-width=\"2\"/>\n",
			l, ly - 9, col, l, ly - 4, l + 18, ly - 4, col);
		fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"%s\" font-size=\"12\">", l + 24, ly,
			col);
		html_escape(f, g->strategy);
		fprintf(f, ": median of %zu seed%s, band Q1..Q3", g->n, g->n == 1 ? "" : "s");
		if (r->budget && !isnan(g->curves[k].median[0]))
			fprintf(f, " (%g at the budget)", g->curves[k].median[r->budget - 1]);
		fputs("</text>\n", f);
		c++;
	}
	fputs("</svg>\n", f);
}

static void html_cell(FILE *f, const char *s)
{
	fputs("<td>", f);
	html_escape(f, s);
	fputs("</td>", f);
}

/* The coverage comparisons as a table. */
static void html_cov_table(const struct exp_report *r, FILE *f)
{
	size_t i;

	if (!r->nccmp)
		return;
	fprintf(f,
		"<h2>Coverage at the budget: comparisons</h2>\n<p>Per program and pair of "
		"strategies, the tasks of the campaigns' stopping metric covered by run %llu "
		"(a campaign that stopped earlier keeps its last value). More is better: "
		"&Acirc;12 is the probability that A covers more than B (&gt; 0.5: A covers "
		"more); Mann-Whitney U two-sided p, and the Wilcoxon signed-rank test when the "
		"seeds pair.</p>\n<table class=\"coverage-comparisons\" border=\"1\" "
		"cellpadding=\"3\">\n<tr><th>program</th><th>metric</th><th>A</th><th>B</th>"
		"<th>median A</th><th>median B</th><th>U</th><th>p</th><th>&Acirc;12</th>"
		"<th>Wilcoxon W+</th><th>Wilcoxon p</th></tr>\n",
		(unsigned long long)r->budget);
	for (i = 0; i < r->nccmp; i++) {
		const struct exp_cov_compare *c = &r->ccmp[i];

		fputs("<tr>", f);
		html_cell(f, c->a->program);
		html_cell(f, c->metric);
		html_cell(f, c->a->strategy);
		html_cell(f, c->b->strategy);
		fprintf(f, "<td>%g</td><td>%g</td><td>%g</td><td>%.4g</td><td>%.3f</td>",
			c->a->cov_final_median, c->b->cov_final_median, c->mwu.u, c->mwu.p,
			c->mwu.a12);
		if (c->paired)
			fprintf(f, "<td>%g (n %zu)</td><td>%.4g</td>", c->wsr.w_plus, c->wsr.n,
				c->wsr.p);
		else
			fputs("<td>unpaired</td><td></td>", f);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

void exp_report_html(const struct exp_report *r, FILE *f)
{
	size_t i, j;

	char *text = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&text, &len);

	/* The text summary heads the page, so both say the same. */
	exp_report_text(r, m);
	fclose(m);
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
	      "<title>concsched experiment</title>\n<style>body{font-family:sans-serif}"
	      "pre{background:#f6f6f6;padding:8px}</style></head><body>\n"
	      "<h1>concsched experiment</h1>\n<pre>",
	      f);
	html_escape(f, text);
	free(text);
	fputs("</pre>\n", f);
	for (i = 0; i < r->ngroups; i++) {
		for (j = 0; j < i && strcmp(r->groups[j].program, r->groups[i].program); j++)
			;
		if (j < i)
			continue;
		fputs("<h2>Found by budget: ", f);
		html_escape(f, r->groups[i].program);
		fputs("</h2>\n<p>Fraction of the campaigns (seeds) that found a failure within b "
		      "runs.</p>\n",
		      f);
		html_curves(r, r->groups[i].program, f);
	}
	html_cov_table(r, f);
	for (i = 0; i < r->nprogs; i++) {
		fputs("<h2>Coverage: ", f);
		html_escape(f, r->progs[i].program);
		fputs("</h2>\n<p>Covered tasks of each metric after run r, r = 1..budget: per "
		      "strategy the median over its seeds (line) and the interquartile range, "
		      "25th to 75th percentile (band; type 7 quantiles as above). A campaign "
		      "that stopped before the budget (it failed at run k, or saturated) keeps "
		      "its last value for the later runs.</p>\n<div>\n",
		      f);
		for (j = 0; j < r->progs[i].n; j++)
			html_coverage(r, &r->progs[i], j, f);
		fputs("</div>\n", f);
	}
	fputs("</body></html>\n", f);
}
