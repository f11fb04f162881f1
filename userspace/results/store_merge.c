// SPDX-License-Identifier: MIT
/*
 * `concsched merge A B -o C`: combine campaigns of the same program (same
 * binary hash) run on different machines, which is how a fleet shares work
 * (DESIGN.md, Campaign store). store_merge() copies one campaign into
 * another inside one transaction:
 *   - sites are matched on (object, offset) and get the destination's ids;
 *     "@N" site references inside task and requirement keys are rewritten;
 *   - runs are identified by their uuid: a run already present is skipped,
 *     so merging the same campaign twice adds nothing; new runs are appended
 *     with their provenance (campaign uuid, index and host they ran on),
 *     with their failures and warnings;
 *   - tasks are unioned; a task known to both keeps the first run that
 *     started earliest; hit counts are kept per originating campaign and
 *     merged with max, which stays exact when the same origin arrives twice.
 */
#include <errno.h>
#include <getopt.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/store.h"
#include "lib/xalloc.h"

/* Dense map from source ids to destination ids (ids are small integers). */
struct id_map {
	int64_t *to;
	int64_t n;
};

static int64_t id_map_get(const struct id_map *m, int64_t id)
{
	return id > 0 && id < m->n ? m->to[id] : 0;
}

static void id_map_set(struct id_map *m, int64_t id, int64_t to)
{
	int64_t n;

	if (id <= 0)
		return;
	if (id >= m->n) {
		n = id * 2 + 16;
		m->to = xrealloc(m->to, n * sizeof(*m->to));
		memset(m->to + m->n, 0, (n - m->n) * sizeof(*m->to));
		m->n = n;
	}
	m->to[id] = to;
}

struct merge_ctx {
	struct store *dst, *src;
	sqlite3 *ddb, *sdb;
	struct id_map sites, runs;
	int added;
};

static int sql_ok(int rc)
{
	return rc == SQLITE_OK || rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : -EIO;
}

static int merge_sites(struct merge_ctx *m)
{
	sqlite3_stmt *st = NULL;
	struct store_site site;
	int64_t id;
	int rc;

	/* Campaigns of older versions have no insn column: call sites. */
	if (sqlite3_prepare_v2(
		    m->sdb,
		    store_has_column(m->sdb, "sites", "insn")
			    ? "SELECT id, object, offset, function, file, line, insn FROM sites"
			    : "SELECT id, object, offset, function, file, line, 0 FROM sites",
		    -1, &st, NULL))
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		site.object = (const char *)sqlite3_column_text(st, 1);
		site.offset = (uint64_t)sqlite3_column_int64(st, 2);
		site.function = (const char *)sqlite3_column_text(st, 3);
		site.file = (const char *)sqlite3_column_text(st, 4);
		site.line = sqlite3_column_int(st, 5);
		site.insn = sqlite3_column_int(st, 6) != 0;
		id = store_add_site(m->dst, &site);
		if (id < 0) {
			sqlite3_finalize(st);
			return (int)id;
		}
		id_map_set(&m->sites, sqlite3_column_int64(st, 0), id);
	}
	sqlite3_finalize(st);
	return sql_ok(rc);
}

/* Rewrites every "@N" site reference of a key through the site map. */
static char *remap_key(const struct merge_ctx *m, const char *key)
{
	size_t cap = strlen(key) * 2 + 32, len = 0;
	char *out = xcalloc(1, cap);
	const char *p = key;
	char *end;
	int64_t id;

	while (*p) {
		if (len + 32 >= cap) {
			cap *= 2;
			out = xrealloc(out, cap);
		}
		if (*p == '@' && p[1] >= '0' && p[1] <= '9') {
			id = strtoll(p + 1, &end, 10);
			len += snprintf(out + len, cap - len, "@%lld",
					(long long)(id_map_get(&m->sites, id) ?: id));
			p = end;
			continue;
		}
		out[len++] = *p++;
	}
	out[len] = '\0';
	return out;
}

static int64_t dst_run_by_uuid(struct merge_ctx *m, const char *uuid)
{
	sqlite3_stmt *st = NULL;
	int64_t idx = 0;

	if (sqlite3_prepare_v2(m->ddb, "SELECT idx FROM runs WHERE uuid = ?1", -1, &st, NULL))
		return -EIO;
	sqlite3_bind_text(st, 1, uuid, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		idx = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return idx;
}

/* Copies a list of (owner, pos, site) rows for one failure or warning. */
static int copy_site_list(struct merge_ctx *m, const char *select, const char *insert,
			  int64_t src_owner, int64_t dst_owner)
{
	sqlite3_stmt *q = NULL, *ins = NULL;
	int rc, err = 0;

	if (sqlite3_prepare_v2(m->sdb, select, -1, &q, NULL) ||
	    sqlite3_prepare_v2(m->ddb, insert, -1, &ins, NULL)) {
		err = -EIO;
		goto cleanup;
	}
	sqlite3_bind_int64(q, 1, src_owner);
	while ((rc = sqlite3_step(q)) == SQLITE_ROW && !err) {
		sqlite3_reset(ins);
		sqlite3_bind_int64(ins, 1, dst_owner);
		sqlite3_bind_int64(ins, 2, sqlite3_column_int64(q, 0));
		sqlite3_bind_int64(ins, 3, id_map_get(&m->sites, sqlite3_column_int64(q, 1)));
		err = sql_ok(sqlite3_step(ins));
	}
cleanup:
	sqlite3_finalize(q);
	sqlite3_finalize(ins);
	return err;
}

/* A run's failures or warnings: the rows of the source run (SELECT id and
 * ncols columns, bound to ?1 = run) go in with the destination run as ?1
 * and the columns as ?2.., each followed by its site list. */
struct row_copy {
	const char *select, *insert; /* the rows */
	int ncols;		     /* columns after id */
	const char *site_select, *site_insert;
};

static int copy_rows_with_sites(struct merge_ctx *m, const struct row_copy *rc, int64_t src_run,
				int64_t dst_run)
{
	sqlite3_stmt *q = NULL, *ins = NULL;
	int64_t id;
	int err = 0;

	if (sqlite3_prepare_v2(m->sdb, rc->select, -1, &q, NULL) ||
	    sqlite3_prepare_v2(m->ddb, rc->insert, -1, &ins, NULL)) {
		err = -EIO;
		goto cleanup;
	}
	sqlite3_bind_int64(q, 1, src_run);
	while (!err && sqlite3_step(q) == SQLITE_ROW) {
		sqlite3_reset(ins);
		sqlite3_bind_int64(ins, 1, dst_run);
		for (int c = 1; c <= rc->ncols; c++)
			sqlite3_bind_value(ins, c + 1, sqlite3_column_value(q, c));
		err = sql_ok(sqlite3_step(ins));
		if (err)
			break;
		id = sqlite3_last_insert_rowid(m->ddb);
		err = copy_site_list(m, rc->site_select, rc->site_insert,
				     sqlite3_column_int64(q, 0), id);
	}
cleanup:
	sqlite3_finalize(q);
	sqlite3_finalize(ins);
	return err;
}

static const struct row_copy copy_failures = {
	.select = "SELECT id, kind, summary, detail FROM failures WHERE run = ?1",
	.insert = "INSERT INTO failures(run, kind, summary, detail) VALUES(?1,?2,?3,?4)",
	.ncols = 3,
	.site_select = "SELECT pos, site FROM failure_sites WHERE failure = ?1",
	.site_insert = "INSERT INTO failure_sites(failure, pos, site) VALUES(?1,?2,?3)",
};

static const struct row_copy copy_warnings = {
	.select = "SELECT id, kind, variable, threads, locks FROM warnings WHERE run = ?1",
	.insert =
		"INSERT INTO warnings(run, kind, variable, threads, locks) VALUES(?1,?2,?3,?4,?5)",
	.ncols = 4,
	.site_select = "SELECT pos, site FROM warning_sites WHERE warning = ?1",
	.site_insert = "INSERT INTO warning_sites(warning, pos, site) VALUES(?1,?2,?3)",
};

static int insert_run(struct merge_ctx *m, sqlite3_stmt *row, int64_t *dst_idx)
{
	sqlite3_stmt *ins = NULL;
	int i, err;

	/* Columns 1..15 of the SELECT in merge_runs, in the same order. */
	if (sqlite3_prepare_v2(
		    m->ddb,
		    "INSERT INTO runs(uuid, seed, strategy_config, outcome, summary,"
		    " exit_status, signal, started_ns, duration_ns, declog, stdout, stderr,"
		    " origin_campaign, origin_run, origin_host)"
		    " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)",
		    -1, &ins, NULL))
		return -EIO;
	for (i = 1; i <= 15; i++)
		sqlite3_bind_value(ins, i, sqlite3_column_value(row, i));
	err = sql_ok(sqlite3_step(ins));
	sqlite3_finalize(ins);
	*dst_idx = sqlite3_last_insert_rowid(m->ddb);
	return err;
}

static int merge_runs(struct merge_ctx *m)
{
	sqlite3_stmt *st = NULL;
	int64_t src_idx, dst_idx;
	int rc, err = 0;

	if (sqlite3_prepare_v2(
		    m->sdb,
		    "SELECT r.idx, r.uuid, r.seed, r.strategy_config, r.outcome, r.summary,"
		    " r.exit_status, r.signal, r.started_ns, r.duration_ns, r.declog,"
		    " r.stdout, r.stderr, coalesce(r.origin_campaign, c.uuid),"
		    " coalesce(r.origin_run, r.idx), coalesce(r.origin_host, c.host)"
		    " FROM runs r, (SELECT uuid, host FROM campaign LIMIT 1) c"
		    " WHERE r.outcome != 'running' ORDER BY r.idx",
		    -1, &st, NULL))
		return -EIO;
	while (!err && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		src_idx = sqlite3_column_int64(st, 0);
		dst_idx = dst_run_by_uuid(m, (const char *)sqlite3_column_text(st, 1));
		if (dst_idx < 0) {
			err = (int)dst_idx;
			break;
		}
		if (dst_idx) {
			id_map_set(&m->runs, src_idx, dst_idx);
			continue;
		}
		err = insert_run(m, st, &dst_idx);
		if (!err)
			err = copy_rows_with_sites(m, &copy_failures, src_idx, dst_idx);
		if (!err)
			err = copy_rows_with_sites(m, &copy_warnings, src_idx, dst_idx);
		id_map_set(&m->runs, src_idx, dst_idx);
		m->added++;
	}
	sqlite3_finalize(st);
	return err;
}

/* Who the merged runs come from (store_list_inputs): the destination
 * itself when it has runs of its own, then the source's inputs when it is
 * a merge itself, else the source. */
static int merge_inputs(struct merge_ctx *m)
{
	struct store_campaign c;
	struct store_input *in = NULL;
	sqlite3_stmt *st = NULL;
	bool own = false;
	size_t n = 0, i;
	int err = 0;

	if (sqlite3_prepare_v2(m->ddb,
			       "SELECT 1 FROM runs, (SELECT uuid FROM campaign LIMIT 1) c WHERE"
			       " coalesce(origin_campaign, c.uuid) = c.uuid AND"
			       " outcome != 'running' LIMIT 1",
			       -1, &st, NULL))
		return -EIO;
	own = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	if (own && !store_get_campaign(m->dst, &c)) {
		err = store_add_input(m->dst, &c, store_dir(m->dst));
		store_campaign_free(&c);
	}
	if (!err)
		err = store_list_inputs(m->src, &in, &n);
	for (i = 0; !err && i < n; i++) {
		struct store_campaign ic = { .uuid = in[i].uuid,
					     .strategy = in[i].strategy,
					     .seed = in[i].seed,
					     .host = in[i].host,
					     .where = in[i].where,
					     .kernel = in[i].kernel,
					     .version = in[i].version };

		err = store_add_input(m->dst, &ic, in[i].dir);
	}
	store_inputs_free(in, n);
	if (!err && !n) {
		err = store_get_campaign(m->src, &c);
		if (!err)
			err = store_add_input(m->dst, &c, store_dir(m->src));
		store_campaign_free(&c);
	}
	return err;
}

/* The earlier-started of two destination runs (ties: lower index). */
static int64_t earlier_run(struct merge_ctx *m, int64_t a, int64_t b)
{
	sqlite3_stmt *st = NULL;
	int64_t ta = 0, tb = 0;

	if (!a || !b)
		return a ?: b;
	if (sqlite3_prepare_v2(m->ddb, "SELECT started_ns FROM runs WHERE idx = ?1", -1, &st, NULL))
		return a;
	sqlite3_bind_int64(st, 1, a);
	if (sqlite3_step(st) == SQLITE_ROW)
		ta = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	sqlite3_bind_int64(st, 1, b);
	if (sqlite3_step(st) == SQLITE_ROW)
		tb = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (ta != tb)
		return ta < tb ? a : b;
	return a < b ? a : b;
}

static int merge_one_task(struct merge_ctx *m, sqlite3_stmt *look, sqlite3_stmt *ins,
			  sqlite3_stmt *upd, const char *metric, const char *key, int64_t first,
			  int64_t *dst_task)
{
	int64_t cur, best;

	sqlite3_reset(look);
	sqlite3_bind_text(look, 1, metric, -1, SQLITE_STATIC);
	sqlite3_bind_text(look, 2, key, -1, SQLITE_STATIC);
	if (sqlite3_step(look) != SQLITE_ROW) {
		sqlite3_reset(ins);
		sqlite3_bind_text(ins, 1, metric, -1, SQLITE_STATIC);
		sqlite3_bind_text(ins, 2, key, -1, SQLITE_STATIC);
		sqlite3_bind_int64(ins, 3, first);
		*dst_task = 0;
		if (sql_ok(sqlite3_step(ins)))
			return -EIO;
		*dst_task = sqlite3_last_insert_rowid(m->ddb);
		return 0;
	}
	*dst_task = sqlite3_column_int64(look, 0);
	cur = sqlite3_column_int64(look, 1);
	sqlite3_reset(look);
	best = earlier_run(m, cur, first);
	if (best == cur)
		return 0;
	sqlite3_reset(upd);
	sqlite3_bind_int64(upd, 1, best);
	sqlite3_bind_int64(upd, 2, *dst_task);
	return sql_ok(sqlite3_step(upd));
}

static int merge_task_hits(struct merge_ctx *m, int64_t src_task, int64_t dst_task)
{
	sqlite3_stmt *q = NULL, *ins = NULL;
	int err = 0;

	if (sqlite3_prepare_v2(m->sdb, "SELECT origin, hits FROM task_hits WHERE task = ?1", -1, &q,
			       NULL) ||
	    sqlite3_prepare_v2(m->ddb,
			       "INSERT INTO task_hits(task, origin, hits) VALUES(?1, ?2, ?3)"
			       " ON CONFLICT(task, origin) DO UPDATE SET"
			       " hits = max(hits, excluded.hits)",
			       -1, &ins, NULL)) {
		err = -EIO;
		goto cleanup;
	}
	sqlite3_bind_int64(q, 1, src_task);
	while (!err && sqlite3_step(q) == SQLITE_ROW) {
		sqlite3_reset(ins);
		sqlite3_bind_int64(ins, 1, dst_task);
		sqlite3_bind_value(ins, 2, sqlite3_column_value(q, 0));
		sqlite3_bind_value(ins, 3, sqlite3_column_value(q, 1));
		err = sql_ok(sqlite3_step(ins));
	}
cleanup:
	sqlite3_finalize(q);
	sqlite3_finalize(ins);
	return err;
}

static int merge_tasks(struct merge_ctx *m)
{
	sqlite3_stmt *st = NULL, *look = NULL, *ins = NULL, *upd = NULL;
	int64_t dst_task, first;
	char *key;
	int err = 0;

	if (sqlite3_prepare_v2(m->sdb, "SELECT id, metric, key, first_run FROM tasks", -1, &st,
			       NULL) ||
	    sqlite3_prepare_v2(m->ddb,
			       "SELECT id, first_run FROM tasks WHERE metric = ?1 AND key = ?2", -1,
			       &look, NULL) ||
	    sqlite3_prepare_v2(m->ddb, "INSERT INTO tasks(metric, key, first_run) VALUES(?1,?2,?3)",
			       -1, &ins, NULL) ||
	    sqlite3_prepare_v2(m->ddb, "UPDATE tasks SET first_run = ?1 WHERE id = ?2", -1, &upd,
			       NULL)) {
		err = -EIO;
		goto cleanup;
	}
	while (!err && sqlite3_step(st) == SQLITE_ROW) {
		key = remap_key(m, (const char *)sqlite3_column_text(st, 2));
		first = id_map_get(&m->runs, sqlite3_column_int64(st, 3));
		if (!first) {
			/* A task whose first run is missing (uncommitted in
			 * the source) cannot be attributed: skip it. */
			free(key);
			continue;
		}
		err = merge_one_task(m, look, ins, upd, (const char *)sqlite3_column_text(st, 1),
				     key, first, &dst_task);
		if (!err)
			err = merge_task_hits(m, sqlite3_column_int64(st, 0), dst_task);
		free(key);
	}
cleanup:
	sqlite3_finalize(st);
	sqlite3_finalize(look);
	sqlite3_finalize(ins);
	sqlite3_finalize(upd);
	return err;
}

static int merge_requirements(struct merge_ctx *m)
{
	sqlite3_stmt *st = NULL, *ins = NULL;
	char *key;
	int err = 0;

	if (sqlite3_prepare_v2(m->sdb, "SELECT metric, key, source, run FROM requirements", -1, &st,
			       NULL) ||
	    sqlite3_prepare_v2(m->ddb,
			       "INSERT OR IGNORE INTO requirements(metric, key, source, run)"
			       " VALUES(?1,?2,?3,?4)",
			       -1, &ins, NULL)) {
		err = -EIO;
		goto cleanup;
	}
	while (!err && sqlite3_step(st) == SQLITE_ROW) {
		key = remap_key(m, (const char *)sqlite3_column_text(st, 1));
		sqlite3_reset(ins);
		sqlite3_bind_value(ins, 1, sqlite3_column_value(st, 0));
		sqlite3_bind_text(ins, 2, key, -1, SQLITE_TRANSIENT);
		sqlite3_bind_value(ins, 3, sqlite3_column_value(st, 2));
		sqlite3_bind_int64(ins, 4, id_map_get(&m->runs, sqlite3_column_int64(st, 3)));
		err = sql_ok(sqlite3_step(ins));
		free(key);
	}
cleanup:
	sqlite3_finalize(st);
	sqlite3_finalize(ins);
	return err;
}

bool store_same_binary(struct store *a, struct store *b, char **ha, char **hb)
{
	struct store_campaign ca, cb;
	bool same;

	store_get_campaign(a, &ca);
	store_get_campaign(b, &cb);
	same = ca.binary_hash && cb.binary_hash && !strcmp(ca.binary_hash, cb.binary_hash);
	*ha = ca.binary_hash ? xstrdup(ca.binary_hash) : xstrdup("unknown");
	*hb = cb.binary_hash ? xstrdup(cb.binary_hash) : xstrdup("unknown");
	store_campaign_free(&ca);
	store_campaign_free(&cb);
	return same;
}

/* The same database file (merge A B -o A opens A twice): nothing is new,
 * and the file cannot be read and written in two transactions at once. */
static bool same_database(struct store *a, struct store *b)
{
	char *pa = xasprintf("%s/%s", store_dir(a), STORE_DB_NAME);
	char *pb = xasprintf("%s/%s", store_dir(b), STORE_DB_NAME);
	struct stat sa, sb;
	bool same;

	same = a == b || (!stat(pa, &sa) && !stat(pb, &sb) && sa.st_dev == sb.st_dev &&
			  sa.st_ino == sb.st_ino);
	free(pa);
	free(pb);
	return same;
}

int store_merge(struct store *dst, struct store *src)
{
	struct merge_ctx m = { .dst = dst, .src = src };
	char *ha, *hb;
	bool same;
	int err;

	same = store_same_binary(dst, src, &ha, &hb);
	free(ha);
	free(hb);
	if (!same)
		return -EXDEV;
	if (same_database(dst, src))
		return 0;
	if (store_current_run(dst))
		return -EBUSY;
	m.ddb = store_sqlite(dst);
	m.sdb = store_sqlite(src);
	if (sqlite3_exec(m.ddb, "BEGIN IMMEDIATE", NULL, NULL, NULL))
		return -EBUSY;
	/* Read the source as one snapshot even if it is still being written. */
	if (sqlite3_exec(m.sdb, "BEGIN", NULL, NULL, NULL)) {
		sqlite3_exec(m.ddb, "ROLLBACK", NULL, NULL, NULL);
		return -EBUSY;
	}
	err = merge_inputs(&m);
	if (!err)
		err = merge_sites(&m);
	if (!err)
		err = merge_runs(&m);
	if (!err)
		err = merge_tasks(&m);
	if (!err)
		err = merge_requirements(&m);
	sqlite3_exec(m.sdb, "COMMIT", NULL, NULL, NULL);
	if (!err && sqlite3_exec(m.ddb, "COMMIT", NULL, NULL, NULL))
		err = -EIO;
	if (err)
		sqlite3_exec(m.ddb, "ROLLBACK", NULL, NULL, NULL);
	free(m.sites.to);
	free(m.runs.to);
	return err ? err : m.added;
}
