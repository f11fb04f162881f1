// SPDX-License-Identifier: MIT
/* Experiment index (exp_index.h): DIR/experiment.db. */
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiment/exp_index.h"
#include "lib/log.h"
#include "lib/tree.h"
#include "lib/xalloc.h"

struct exp_index {
	sqlite3 *db;
};

static const char schema[] =
	"CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE IF NOT EXISTS cells(idx INTEGER PRIMARY KEY, program TEXT NOT NULL,"
	" strategy TEXT NOT NULL, seed INTEGER NOT NULL, shard TEXT, status TEXT NOT NULL,"
	" runs INTEGER, first_failure_run INTEGER, first_failure_s REAL, seconds REAL,"
	" saturated_at_run INTEGER, coverage TEXT, dir TEXT);";

static int open_db(const char *dir, int flags, struct exp_index **out)
{
	char *path = xasprintf("%s/%s", dir, EXP_DB_NAME);
	struct exp_index *x = xcalloc(1, sizeof(*x));
	int rc = sqlite3_open_v2(path, &x->db, flags, NULL);

	if (rc == SQLITE_OK)
		sqlite3_busy_timeout(x->db, 10000);
	if (rc == SQLITE_OK && !(flags & SQLITE_OPEN_READONLY))
		rc = sqlite3_exec(x->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
				  NULL, NULL, NULL);
	if (rc == SQLITE_OK && !(flags & SQLITE_OPEN_READONLY))
		rc = sqlite3_exec(x->db, schema, NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		log_err("experiment index %s: %s", path, sqlite3_errmsg(x->db));
		free(path);
		exp_index_close(x);
		return -EIO;
	}
	free(path);
	*out = x;
	return 0;
}

static int set_meta(struct exp_index *x, const char *key, const char *value)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(x->db, "INSERT OR REPLACE INTO meta VALUES(?, ?)", -1, &st, NULL))
		return -EIO;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, value, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? 0 : -EIO;
}

char *exp_index_meta(struct exp_index *x, const char *key)
{
	sqlite3_stmt *st;
	char *v = NULL;

	if (sqlite3_prepare_v2(x->db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL))
		return NULL;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = xstrdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

int exp_index_open(const char *dir, const char *spec_hash, const char *spec_json,
		   struct exp_index **out)
{
	struct exp_index *x;
	char *have;
	int err;

	if (tree_mkdir_p(dir, 0755)) {
		err = -errno;
		log_err("experiment directory %s: %s", dir, strerror(errno));
		return err;
	}
	if ((err = open_db(dir, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, &x)))
		return err;
	have = exp_index_meta(x, "spec_hash");
	if (have && strcmp(have, spec_hash)) {
		log_err("%s holds an experiment of another spec (hash %s, this spec %s): use "
			"another "
			"-o DIR",
			dir, have, spec_hash);
		free(have);
		exp_index_close(x);
		return -EEXIST;
	}
	if (!have && (set_meta(x, "spec_hash", spec_hash) || set_meta(x, "spec", spec_json) ||
		      set_meta(x, "version", CONCSCHED_VERSION))) {
		log_err("experiment index %s: %s", dir, sqlite3_errmsg(x->db));
		exp_index_close(x);
		return -EIO;
	}
	free(have);
	*out = x;
	return 0;
}

int exp_index_open_existing(const char *dir, bool read_only, struct exp_index **out)
{
	char *path = xasprintf("%s/%s", dir, EXP_DB_NAME);
	int ok = access(path, F_OK) == 0;

	free(path);
	if (!ok) {
		log_err("%s is not an experiment directory (no %s in it)", dir, EXP_DB_NAME);
		return -ENOENT;
	}
	return open_db(dir, read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE, out);
}

void exp_index_close(struct exp_index *x)
{
	if (!x)
		return;
	sqlite3_close(x->db);
	free(x);
}

bool exp_index_cell_done(struct exp_index *x, int64_t idx)
{
	sqlite3_stmt *st;
	bool done = false;

	if (sqlite3_prepare_v2(x->db, "SELECT 1 FROM cells WHERE idx = ? AND status = 'done'", -1,
			       &st, NULL))
		return false;
	sqlite3_bind_int64(st, 1, idx);
	done = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return done;
}

static void bind_opt_int(sqlite3_stmt *st, int col, int64_t v)
{
	if (v < 0)
		sqlite3_bind_null(st, col);
	else
		sqlite3_bind_int64(st, col, v);
}

int exp_index_put(struct exp_index *x, const struct exp_cell_row *r)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(x->db,
			       "INSERT OR REPLACE INTO cells VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?)", -1,
			       &st, NULL))
		return -EIO;
	sqlite3_bind_int64(st, 1, r->idx);
	sqlite3_bind_text(st, 2, r->program, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, r->strategy, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (int64_t)r->seed);
	sqlite3_bind_text(st, 5, r->shard, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 6, r->status, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 7, r->runs);
	bind_opt_int(st, 8, r->first_failure_run);
	if (r->first_failure_s < 0)
		sqlite3_bind_null(st, 9);
	else
		sqlite3_bind_double(st, 9, r->first_failure_s);
	sqlite3_bind_double(st, 10, r->seconds);
	bind_opt_int(st, 11, r->saturated_at_run);
	sqlite3_bind_text(st, 12, r->coverage, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 13, r->dir, -1, SQLITE_STATIC);
	rc = sqlite3_step(st);
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		log_err("experiment index: %s", sqlite3_errmsg(x->db));
		return -EIO;
	}
	return 0;
}

static char *col_str(sqlite3_stmt *st, int col)
{
	const unsigned char *s = sqlite3_column_text(st, col);

	return s ? xstrdup((const char *)s) : NULL;
}

static int64_t col_opt_int(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, col);
}

int exp_index_cells(struct exp_index *x, struct exp_cell_row **rows, size_t *n)
{
	struct exp_cell_row *r, *v = NULL;
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc;

	*rows = NULL;
	*n = 0;
	if (sqlite3_prepare_v2(x->db, "SELECT * FROM cells ORDER BY idx", -1, &st, NULL))
		return -EIO;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (*n == cap)
			v = xrealloc(v, (cap = cap ? 2 * cap : 16) * sizeof(*v));
		r = &v[(*n)++];
		r->idx = sqlite3_column_int64(st, 0);
		r->program = col_str(st, 1);
		r->strategy = col_str(st, 2);
		r->seed = (uint64_t)sqlite3_column_int64(st, 3);
		r->shard = col_str(st, 4);
		r->status = col_str(st, 5);
		r->runs = sqlite3_column_int64(st, 6);
		r->first_failure_run = col_opt_int(st, 7);
		r->first_failure_s = sqlite3_column_type(st, 8) == SQLITE_NULL
					     ? -1
					     : sqlite3_column_double(st, 8);
		r->seconds = sqlite3_column_double(st, 9);
		r->saturated_at_run = col_opt_int(st, 10);
		r->coverage = col_str(st, 11);
		r->dir = col_str(st, 12);
	}
	sqlite3_finalize(st);
	*rows = v;
	return rc == SQLITE_DONE ? 0 : -EIO;
}

void exp_index_cell_rows_free(struct exp_cell_row *rows, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(rows[i].program);
		free(rows[i].strategy);
		free(rows[i].shard);
		free(rows[i].status);
		free(rows[i].coverage);
		free(rows[i].dir);
	}
	free(rows);
}
