/* SPDX-License-Identifier: MIT */
/*
 * The campaign store's database handle, shared by the files that implement
 * store.h: store.c (open, create, the run's writes), store_query.c (the read
 * side), store_replica.c (streaming a campaign, store_replicate) and
 * store_notes.c (what is added to a run after it ended). Nothing outside
 * them includes it. store_db.c: the change recording they share.
 */
#ifndef CONCSCHED_STORE_DB_H
#define CONCSCHED_STORE_DB_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
/* The session extension (replication, store_replicate): Debian's libsqlite3
 * is built with it; the header declares it only when asked. */
#define SQLITE_ENABLE_SESSION
#define SQLITE_ENABLE_PREUPDATE_HOOK
#include <sqlite3.h>

#include "lib/xalloc.h"

enum store_stmt_id {
	ST_SITE_INSERT,
	ST_SITE_LOOKUP,
	ST_SITE_GET,
	ST_TASK_INSERT,
	ST_TASK_LOOKUP,
	ST_HITS_ADD,
	ST_REQ_INSERT,
	ST_FAIL_INSERT,
	ST_FAIL_SITE,
	ST_WARN_INSERT,
	ST_WARN_SITE,
	ST_COUNT
};

struct store {
	sqlite3 *db;
	char *dir;
	char *uuid; /* campaign uuid: origin of this store's own task hits */
	int64_t run;
	sqlite3_stmt *stmts[ST_COUNT];
	char *site_object, *site_function, *site_file; /* store_get_site */
	/* store_replicate: where committed changes go, and the session
	 * recording what changed since the last record sent */
	int (*repl)(char kind, const void *data, size_t len, void *arg); /* store_repl_fn */
	void *repl_arg;
	sqlite3_session *sess;
};

/* The campaigns merged into this one; campaigns of older versions lack
 * it until a merge writes into them. */
#define STORE_INPUTS_DDL                                                                           \
	"CREATE TABLE IF NOT EXISTS inputs(id INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE,"     \
	" dir TEXT, strategy TEXT, seed INTEGER, host TEXT, where_ran TEXT, kernel TEXT,"          \
	" version TEXT)"

/* What a strategy notes about a run once it has ended (strat_campaign.note):
 * a JSON object per run, e.g. a GA's fitness and generation summaries. */
#define STORE_NOTES_DDL                                                                            \
	"CREATE TABLE IF NOT EXISTS strategy_notes(run INTEGER PRIMARY KEY, note TEXT NOT NULL)"

#define STORE_REPLAYS_DDL                                                                          \
	"CREATE TABLE IF NOT EXISTS replays(run INTEGER NOT NULL, at_ns INTEGER NOT NULL,"         \
	" times INTEGER NOT NULL, reproduced INTEGER NOT NULL, mode TEXT,"                         \
	" PRIMARY KEY(run, at_ns)) WITHOUT ROWID"

/* SQLite result code -> -errno, so callers see one error convention. */
static inline int sql_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_OK:
	case SQLITE_DONE:
	case SQLITE_ROW:
		return 0;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return -ENOMSG;
	case SQLITE_CONSTRAINT:
		return -EEXIST;
	default:
		return -EIO;
	}
}

static inline int exec_sql(struct store *s, const char *sql)
{
	return sql_errno(sqlite3_exec(s->db, sql, NULL, NULL, NULL));
}

static inline void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static inline char *col_strdup(sqlite3_stmt *st, int i)
{
	const unsigned char *v = sqlite3_column_text(st, i);

	return v ? xstrdup((const char *)v) : NULL;
}

static inline const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* Runs one prepared statement to completion; returns 0 or -errno. */
static inline int step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : sql_errno(rc);
}

static inline void bind_blob_or_null(sqlite3_stmt *st, int i, const void *p, size_t len)
{
	if (p)
		sqlite3_bind_blob64(st, i, p, len, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

/* Start recording the database's changes afresh (replication). */
int store_db_session_new(struct store *s);
/* Send what committed since the last record, and record afresh. */
void store_db_flush(struct store *s);
/* A campaign made through sudo belongs to the user. */
void store_db_hand_to_sudo_user(const char *dir, bool made_dir, const char *db);

#endif
