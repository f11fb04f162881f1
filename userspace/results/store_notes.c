// SPDX-License-Identifier: MIT
/*
 * What the store keeps about a run after it ended (store.h): its replays
 * (how often a failure reproduced), a decision log set later, and the
 * strategy's note.
 */

#include "results/store.h"
#include "results/store_db.h"
#include "lib/now.h"

int store_add_replay(struct store *s, int64_t run, uint64_t times, uint64_t reproduced,
		     const char *order)
{
	sqlite3_stmt *st = NULL;
	int err = exec_sql(s, STORE_REPLAYS_DDL);

	if (err)
		return err;
	if (sqlite3_prepare_v2(s->db,
			       "INSERT OR REPLACE INTO replays(run, at_ns, times, reproduced, mode)"
			       " VALUES(?1, ?2, ?3, ?4, ?5)",
			       -1, &st, NULL))
		return -EIO;
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, (int64_t)now_realtime_ns());
	sqlite3_bind_int64(st, 3, (int64_t)times);
	sqlite3_bind_int64(st, 4, (int64_t)reproduced);
	bind_text(st, 5, order);
	err = step_done(st);
	sqlite3_finalize(st);
	return err;
}

int store_set_declog(struct store *s, int64_t run, const void *blob, size_t len)
{
	sqlite3_stmt *st = NULL;
	int err;

	if (sqlite3_prepare_v2(s->db, "UPDATE runs SET declog = ?1 WHERE idx = ?2", -1, &st, NULL))
		return -EIO;
	bind_blob_or_null(st, 1, blob, len);
	sqlite3_bind_int64(st, 2, run);
	err = step_done(st);
	sqlite3_finalize(st);
	if (!err && sqlite3_changes(s->db) != 1)
		err = -ENOENT;
	return err;
}

int store_replayed(struct store *s, int64_t run, uint64_t *times, uint64_t *reproduced)
{
	sqlite3_stmt *st = NULL;
	int err = -ENOENT;

	/* Campaigns nobody replayed have no such table. */
	if (sqlite3_prepare_v2(s->db,
			       "SELECT times, reproduced FROM replays WHERE run = ?1"
			       " ORDER BY at_ns DESC LIMIT 1",
			       -1, &st, NULL) != SQLITE_OK)
		return -ENOENT;
	sqlite3_bind_int64(st, 1, run);
	if (sqlite3_step(st) == SQLITE_ROW) {
		*times = (uint64_t)sqlite3_column_int64(st, 0);
		*reproduced = (uint64_t)sqlite3_column_int64(st, 1);
		err = 0;
	}
	sqlite3_finalize(st);
	return err;
}

int64_t store_replayed_like(struct store *s, int64_t run)
{
	sqlite3_stmt *st = NULL;
	int64_t other = 0;

	/* The same failure: its kind and its sites (a summary names thread
	 * ids and addresses), or its summary when it has no site. */
	if (sqlite3_prepare_v2(
		    s->db,
		    "WITH f AS (SELECT run, kind, summary, (SELECT group_concat(site) FROM"
		    " (SELECT site FROM failure_sites WHERE failure = failures.id ORDER BY site))"
		    " AS sites FROM failures)"
		    " SELECT o.run FROM f me JOIN f o ON o.kind IS me.kind AND o.sites IS me.sites"
		    " AND (me.sites IS NOT NULL OR o.summary IS me.summary) AND o.run != me.run"
		    " JOIN replays p ON p.run = o.run AND p.reproduced > 0 AND p.reproduced = "
		    "p.times"
		    " WHERE me.run = ?1 ORDER BY o.run LIMIT 1",
		    -1, &st, NULL) != SQLITE_OK)
		return 0;
	sqlite3_bind_int64(st, 1, run);
	if (sqlite3_step(st) == SQLITE_ROW)
		other = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return other;
}

int store_add_strategy_note(struct store *s, int64_t run, const char *json)
{
	sqlite3_stmt *st = NULL;
	int err = exec_sql(s, STORE_NOTES_DDL);

	if (err)
		return err;
	if (sqlite3_prepare_v2(s->db,
			       "INSERT OR REPLACE INTO strategy_notes(run, note) VALUES(?1, ?2)",
			       -1, &st, NULL))
		return -EIO;
	sqlite3_bind_int64(st, 1, run);
	bind_text(st, 2, json);
	err = step_done(st);
	sqlite3_finalize(st);
	return err;
}

int store_strategy_notes(struct store *s, int (*fn)(int64_t run, const char *json, void *arg),
			 void *arg)
{
	sqlite3_stmt *st = NULL;
	int err = 0;

	/* Campaigns from before the table have no notes. */
	if (sqlite3_prepare_v2(s->db, "SELECT run, note FROM strategy_notes ORDER BY run", -1, &st,
			       NULL) != SQLITE_OK)
		return 0;
	while (!err && sqlite3_step(st) == SQLITE_ROW)
		err = fn(sqlite3_column_int64(st, 0), (const char *)sqlite3_column_text(st, 1),
			 arg);
	sqlite3_finalize(st);
	return err;
}
