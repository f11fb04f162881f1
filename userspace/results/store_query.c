// SPDX-License-Identifier: MIT
/*
 * The campaign store's read side (store.h): tasks, requirements, failures
 * and warnings in recorded order, counts, the committed runs and their
 * blobs, the metrics and their coverage series, the merged inputs.
 */
#include "results/store.h"

#include <stdlib.h>
#include <string.h>

#include "results/store_db.h"
#include "lib/xalloc.h"

/* Query helper: prepare, bind an optional metric as ?1. */
static sqlite3_stmt *prepare_metric_query(struct store *s, const char *sql, const char *metric)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL))
		return NULL;
	bind_text(st, 1, metric);
	return st;
}

int store_for_each_task(struct store *s, const char *metric, store_task_fn fn, void *arg)
{
	sqlite3_stmt *st;
	struct store_task t;
	int rc, ret = 0;

	st = prepare_metric_query(s,
				  "SELECT metric, key, first_run, hits FROM task_totals"
				  " WHERE ?1 IS NULL OR metric = ?1 ORDER BY metric, id",
				  metric);
	if (!st)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		t.metric = col_text(st, 0);
		t.key = col_text(st, 1);
		t.first_run = sqlite3_column_int64(st, 2);
		t.hits = (uint64_t)sqlite3_column_int64(st, 3);
		ret = fn(&t, arg);
		if (ret)
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sql_errno(rc);
	sqlite3_finalize(st);
	return ret;
}

int store_for_each_requirement(struct store *s, const char *metric, store_requirement_fn fn,
			       void *arg)
{
	struct store_requirement r;
	sqlite3_stmt *st;
	int rc, ret = 0;

	st = prepare_metric_query(s,
				  "SELECT metric, key, source, run FROM requirements"
				  " WHERE ?1 IS NULL OR metric = ?1 ORDER BY metric, key",
				  metric);
	if (!st)
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r.metric = col_text(st, 0);
		r.key = col_text(st, 1);
		r.source = col_text(st, 2);
		r.run = sqlite3_column_int64(st, 3);
		ret = fn(&r, arg);
		if (ret)
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sql_errno(rc);
	sqlite3_finalize(st);
	return ret;
}

/* Site ids of a failure or warning, in recorded order (malloc'd). */
static int load_site_list(struct store *s, const char *sql, int64_t owner, int64_t **out, size_t *n)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;

	*out = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db, sql, -1, &st, NULL))
		return -EIO;
	sqlite3_bind_int64(st, 1, owner);
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 4;
			*out = xrealloc(*out, cap * sizeof(**out));
		}
		(*out)[(*n)++] = sqlite3_column_int64(st, 0);
	}
	sqlite3_finalize(st);
	return 0;
}

int store_for_each_failure(struct store *s, store_failure_fn fn, void *arg)
{
	struct store_failure f;
	sqlite3_stmt *st = NULL;
	int64_t *sites;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(s->db,
			       "SELECT f.id, f.run, f.kind, f.summary, f.detail FROM failures f"
			       " JOIN runs r ON r.idx = f.run ORDER BY f.run, f.id",
			       -1, &st, NULL))
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		f.id = sqlite3_column_int64(st, 0);
		f.run = sqlite3_column_int64(st, 1);
		f.kind = col_text(st, 2);
		f.summary = col_text(st, 3);
		f.detail = col_text(st, 4);
		load_site_list(s, "SELECT site FROM failure_sites WHERE failure = ?1 ORDER BY pos",
			       f.id, &sites, &f.nsites);
		f.sites = sites;
		ret = fn(&f, arg);
		free(sites);
		if (ret)
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sql_errno(rc);
	sqlite3_finalize(st);
	return ret;
}

int store_for_each_warning(struct store *s, store_warning_fn fn, void *arg)
{
	struct store_warning w;
	sqlite3_stmt *st = NULL;
	int64_t *sites, id;
	int rc, ret = 0;

	if (sqlite3_prepare_v2(s->db,
			       "SELECT w.id, w.run, w.kind, w.variable, w.threads, w.locks"
			       " FROM warnings w JOIN runs r ON r.idx = w.run ORDER BY w.run, w.id",
			       -1, &st, NULL))
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		id = sqlite3_column_int64(st, 0);
		w.run = sqlite3_column_int64(st, 1);
		w.kind = col_text(st, 2);
		w.variable = col_text(st, 3);
		w.threads = col_text(st, 4);
		w.locks = col_text(st, 5);
		load_site_list(s, "SELECT site FROM warning_sites WHERE warning = ?1 ORDER BY pos",
			       id, &sites, &w.nsites);
		w.sites = sites;
		ret = fn(&w, arg);
		free(sites);
		if (ret)
			break;
	}
	if (!ret && rc != SQLITE_DONE)
		ret = sql_errno(rc);
	sqlite3_finalize(st);
	return ret;
}

static int64_t count_query(struct store *s, const char *sql, const char *metric)
{
	sqlite3_stmt *st = prepare_metric_query(s, sql, metric);
	int64_t n = -EIO;

	if (!st)
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}

int64_t store_count_tasks(struct store *s, const char *metric)
{
	return count_query(s, "SELECT count(*) FROM tasks WHERE ?1 IS NULL OR metric = ?1", metric);
}

int64_t store_count_requirements(struct store *s, const char *metric)
{
	return count_query(s, "SELECT count(*) FROM requirements WHERE ?1 IS NULL OR metric = ?1",
			   metric);
}

#define RUN_COLUMNS                                                                                \
	"idx, uuid, seed, strategy_config, outcome, summary, exit_status, signal, started_ns,"     \
	" duration_ns, origin_campaign, origin_run, origin_host"

static void run_from_row(sqlite3_stmt *st, struct store_run *r)
{
	r->index = sqlite3_column_int64(st, 0);
	r->uuid = col_strdup(st, 1);
	r->seed = (uint64_t)sqlite3_column_int64(st, 2);
	r->strategy_config_json = col_strdup(st, 3);
	r->outcome = col_strdup(st, 4);
	r->summary = col_strdup(st, 5);
	r->exit_status = sqlite3_column_int(st, 6);
	r->signal = sqlite3_column_int(st, 7);
	r->started_ns = sqlite3_column_int64(st, 8);
	r->duration_ns = sqlite3_column_int64(st, 9);
	r->origin_campaign = col_strdup(st, 10);
	r->origin_run = sqlite3_column_int64(st, 11);
	r->origin_host = col_strdup(st, 12);
}

void store_run_clear(struct store_run *r)
{
	free(r->uuid);
	free(r->strategy_config_json);
	free(r->outcome);
	free(r->summary);
	free(r->origin_campaign);
	free(r->origin_host);
	memset(r, 0, sizeof(*r));
}

/* Committed runs only: the run in flight (this connection's open
 * transaction) still says 'running'. */
int store_load_runs(struct store *s, struct store_run **runs, size_t *n)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;
	int rc;

	*runs = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db,
			       "SELECT " RUN_COLUMNS " FROM runs WHERE outcome != 'running'"
			       " ORDER BY idx",
			       -1, &st, NULL))
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			*runs = xrealloc(*runs, cap * sizeof(**runs));
		}
		run_from_row(st, &(*runs)[(*n)++]);
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_errno(rc);
}

void store_runs_free(struct store_run *runs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		store_run_clear(&runs[i]);
	free(runs);
}

int store_load_run(struct store *s, int64_t index, struct store_run *out)
{
	sqlite3_stmt *st = NULL;
	int err = -ENOENT;

	memset(out, 0, sizeof(*out));
	if (sqlite3_prepare_v2(s->db,
			       "SELECT " RUN_COLUMNS " FROM runs WHERE idx = ?1"
			       " AND outcome != 'running'",
			       -1, &st, NULL))
		return -EIO;
	sqlite3_bind_int64(st, 1, index);
	if (sqlite3_step(st) == SQLITE_ROW) {
		run_from_row(st, out);
		err = 0;
	}
	sqlite3_finalize(st);
	return err;
}

static void *col_blob_dup(sqlite3_stmt *st, int i, size_t *len, bool nul)
{
	const void *p = sqlite3_column_blob(st, i);
	size_t n = (size_t)sqlite3_column_bytes(st, i);
	char *c;

	if (len)
		*len = 0;
	if (sqlite3_column_type(st, i) == SQLITE_NULL)
		return NULL;
	c = xcalloc(1, n + (nul ? 1 : 0));
	if (n)
		memcpy(c, p, n);
	if (len)
		*len = n;
	return c;
}

int store_load_run_blobs(struct store *s, int64_t index, void **declog, size_t *declog_len,
			 char **out, char **err_out)
{
	sqlite3_stmt *st = NULL;
	int err = -ENOENT;

	if (declog)
		*declog = NULL;
	if (declog_len)
		*declog_len = 0;
	if (out)
		*out = NULL;
	if (err_out)
		*err_out = NULL;
	if (sqlite3_prepare_v2(s->db,
			       "SELECT declog, stdout, stderr FROM runs WHERE idx = ?1"
			       " AND outcome != 'running'",
			       -1, &st, NULL))
		return -EIO;
	sqlite3_bind_int64(st, 1, index);
	if (sqlite3_step(st) == SQLITE_ROW) {
		if (declog)
			*declog = col_blob_dup(st, 0, declog_len, false);
		if (out)
			*out = col_blob_dup(st, 1, NULL, true);
		if (err_out)
			*err_out = col_blob_dup(st, 2, NULL, true);
		err = 0;
	}
	sqlite3_finalize(st);
	return err;
}

int store_metrics(struct store *s, char ***names, size_t *n)
{
	sqlite3_stmt *st = NULL;
	size_t cap = 0;

	*names = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(s->db,
			       "SELECT metric FROM tasks UNION SELECT metric FROM requirements"
			       " ORDER BY 1",
			       -1, &st, NULL))
		return -EIO;
	while (sqlite3_step(st) == SQLITE_ROW) {
		if (*n == cap) {
			cap = cap ? cap * 2 : 8;
			*names = xrealloc(*names, cap * sizeof(**names));
		}
		(*names)[(*n)++] = col_strdup(st, 0);
	}
	sqlite3_finalize(st);
	return 0;
}

void store_strings_free(char **v, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

int store_coverage_series(struct store *s, const char *metric, struct store_series_point **pts,
			  size_t *n)
{
	sqlite3_stmt *st = NULL;
	double total = 0;
	size_t cap = 0;
	int rc;

	*pts = NULL;
	*n = 0;
	/* Time is measured from the earliest start: after a merge, runs of
	 * another machine may have started before this campaign's first. */
	if (sqlite3_prepare_v2(s->db,
			       "SELECT r.idx, r.started_ns + r.duration_ns -"
			       " (SELECT min(started_ns) FROM runs WHERE outcome != 'running'),"
			       " coalesce(n.c, 0) FROM runs r LEFT JOIN"
			       " (SELECT first_run, count(*) AS c FROM tasks WHERE metric = ?1"
			       "  GROUP BY first_run) n ON n.first_run = r.idx"
			       " WHERE r.outcome != 'running' ORDER BY r.idx",
			       -1, &st, NULL))
		return -EIO;
	bind_text(st, 1, metric);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_series_point *p;

		if (*n == cap) {
			cap = cap ? cap * 2 : 64;
			*pts = xrealloc(*pts, cap * sizeof(**pts));
		}
		p = &(*pts)[(*n)++];
		p->run = sqlite3_column_int64(st, 0);
		p->t_s = (double)sqlite3_column_int64(st, 1) / 1e9;
		p->new_tasks = (uint64_t)sqlite3_column_int64(st, 2);
		total += (double)p->new_tasks;
		p->covered = total;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : sql_errno(rc);
}

int store_add_input(struct store *s, const struct store_campaign *c, const char *dir)
{
	sqlite3_stmt *st = NULL;
	int err = exec_sql(s, STORE_INPUTS_DDL);

	if (err)
		return err;
	if (sqlite3_prepare_v2(s->db,
			       "INSERT OR IGNORE INTO inputs(uuid, dir, strategy, seed, host,"
			       " where_ran, kernel, version) VALUES(?1,?2,?3,?4,?5,?6,?7,?8)",
			       -1, &st, NULL))
		return -EIO;
	bind_text(st, 1, c->uuid);
	bind_text(st, 2, dir);
	bind_text(st, 3, c->strategy);
	sqlite3_bind_int64(st, 4, (int64_t)c->seed);
	bind_text(st, 5, c->host);
	bind_text(st, 6, c->where);
	bind_text(st, 7, c->kernel);
	bind_text(st, 8, c->version);
	err = step_done(st);
	sqlite3_finalize(st);
	return err;
}

int store_list_inputs(struct store *s, struct store_input **inputs, size_t *n)
{
	sqlite3_stmt *st = NULL;
	struct store_input *v = NULL;
	size_t k = 0;
	int rc;

	*inputs = NULL;
	*n = 0;
	/* No table: a campaign of an older version that was never merged into. */
	if (sqlite3_prepare_v2(
		    s->db,
		    "SELECT i.uuid, i.dir, i.strategy, i.seed, i.host, i.where_ran, i.kernel,"
		    " i.version, (SELECT count(*) FROM runs r WHERE r.outcome != 'running'"
		    " AND coalesce(r.origin_campaign, (SELECT uuid FROM campaign LIMIT 1))"
		    " = i.uuid) FROM inputs i ORDER BY i.id",
		    -1, &st, NULL))
		return 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		v = xrealloc(v, (k + 1) * sizeof(*v));
		v[k].uuid = col_strdup(st, 0);
		v[k].dir = col_strdup(st, 1);
		v[k].strategy = col_strdup(st, 2);
		v[k].seed = (uint64_t)sqlite3_column_int64(st, 3);
		v[k].host = col_strdup(st, 4);
		v[k].where = col_strdup(st, 5);
		v[k].kernel = col_strdup(st, 6);
		v[k].version = col_strdup(st, 7);
		v[k].runs = sqlite3_column_int64(st, 8);
		k++;
	}
	sqlite3_finalize(st);
	*inputs = v;
	*n = k;
	return rc == SQLITE_DONE ? 0 : sql_errno(rc);
}

void store_inputs_free(struct store_input *inputs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(inputs[i].uuid);
		free(inputs[i].dir);
		free(inputs[i].strategy);
		free(inputs[i].host);
		free(inputs[i].where);
		free(inputs[i].kernel);
		free(inputs[i].version);
	}
	free(inputs);
}

int64_t store_count_runs(struct store *s)
{
	sqlite3_stmt *st = NULL;
	int64_t n = -EIO;

	if (sqlite3_prepare_v2(s->db, "SELECT count(*) FROM runs", -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return n;
}
