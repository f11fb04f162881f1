// SPDX-License-Identifier: MIT
/*
 * sqlite3 with several threads, for the real-software corpus
 * (tools/bench/real.sh, make bench-real; issue 32): Debian's libsqlite3
 * is the program under test, this file only drives it and checks what it
 * stored.
 *
 *   sqlite_threads DB THREADS ROWS
 *
 * Creates DB (WAL journal) and starts THREADS writers and two readers.
 * Even writers share one connection (SQLite's serialized mode: its own
 * mutexes order them), each row its own statement and transaction; odd
 * writers open a connection each (the file locks and the WAL index order
 * them) and insert in transactions of 50, retrying a busy one (the write
 * lock held past the busy timeout, BUSY_MS). Each writer
 * inserts ROWS rows (thread, seq, value); the
 * readers count and sum the table until the writers are done and check
 * that what they see only grows. At the end the table must hold exactly
 * THREADS * ROWS rows whose values add up to the expected sum: exit 0, or
 * 1 with one line saying what differs (2: usage or an SQLite error).
 */
#include <pthread.h>
#include <sqlite3.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 50
/* a writer's busy transactions tried again, each after its busy timeout */
#define MAX_TRIES 100
/* Every connection's busy timeout: under the access probes a transaction
 * of 50 rows holds the write lock for seconds, and SQLite's busy handler
 * polls (sleeps of up to 100 ms), so a waiter is not served first: 10 s
 * ran out there. */
#define BUSY_MS 60000

static const char *db_path;
static int nthreads, nrows;
static sqlite3 *shared;
static atomic_int writers_left, failed;

static void fail(const char *what, sqlite3 *db)
{
	fprintf(stderr, "sqlite_threads: %s: %s\n", what,
		db ? sqlite3_errmsg(db) : "out of memory");
	atomic_store(&failed, 2);
}

static sqlite3 *open_db(void)
{
	sqlite3 *db = NULL;

	if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_FULLMUTEX, NULL) !=
	    SQLITE_OK) {
		fail("open", db);
		sqlite3_close(db);
		return NULL;
	}
	sqlite3_busy_timeout(db, BUSY_MS);
	sqlite3_exec(db, "PRAGMA synchronous=NORMAL", NULL, NULL, NULL);
	return db;
}

/* Row seq of thread t with statement st: SQLITE_OK or an error code. */
static int insert_row(sqlite3_stmt *st, int t, int seq)
{
	int rc;

	sqlite3_bind_int(st, 1, t);
	sqlite3_bind_int(st, 2, seq);
	sqlite3_bind_int64(st, 3, (sqlite3_int64)t * 1000003 + seq);
	rc = sqlite3_step(st);
	sqlite3_reset(st);
	return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* One transaction of rows [first, first + n) of thread t. */
static int insert_batch(sqlite3 *db, int t, int first, int n)
{
	sqlite3_stmt *st = NULL;
	int i, rc;

	rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return rc;
	rc = sqlite3_prepare_v2(db, "INSERT INTO t(thread, seq, value) VALUES (?, ?, ?)", -1, &st,
				NULL);
	for (i = 0; rc == SQLITE_OK && i < n; i++)
		rc = insert_row(st, t, first + i);
	sqlite3_finalize(st);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* A writer of the shared connection: one autocommit INSERT a row, its
 * own prepared statement (SQLite's serialized mode orders the calls). A
 * busy INSERT is not tried again: on the shared connection that lost
 * other INSERTs that had returned done (natively too, with a 1 ms busy
 * timeout: docs/studies/sqlite-races-2026-11-28.md); the busy timeout
 * (BUSY_MS) outlasts the writers slowed down by the access probes
 * instead. */
static int insert_rows_shared(int t)
{
	sqlite3_stmt *st = NULL;
	int i, rc;

	rc = sqlite3_prepare_v2(shared, "INSERT INTO t(thread, seq, value) VALUES (?, ?, ?)", -1,
				&st, NULL);
	for (i = 0; rc == SQLITE_OK && i < nrows; i++)
		rc = insert_row(st, t, i);
	sqlite3_finalize(st);
	return rc;
}

static void *writer(void *arg)
{
	int t = (int)(long)arg, seq, rc, tries;
	sqlite3 *db;

	if (t % 2 == 0) {
		if (insert_rows_shared(t) != SQLITE_OK)
			fail("insert (shared connection)", shared);
		atomic_fetch_sub(&writers_left, 1);
		return NULL;
	}
	db = open_db();
	for (seq = 0; db && seq < nrows; seq += BATCH) {
		int n = nrows - seq < BATCH ? nrows - seq : BATCH;

		for (tries = 0;
		     (rc = insert_batch(db, t, seq, n)) == SQLITE_BUSY && tries < MAX_TRIES;
		     tries++)
			;
		if (rc != SQLITE_OK) {
			fail("insert", db);
			break;
		}
	}
	sqlite3_close(db);
	atomic_fetch_sub(&writers_left, 1);
	return NULL;
}

/* On a mismatch: the rows of each thread that are not there (the first
 * ten), on stderr. */
static void report_missing(void)
{
	sqlite3_stmt *st = NULL;
	int t, seq, shown = 0;

	if (sqlite3_prepare_v2(shared, "SELECT 1 FROM t WHERE thread = ? AND seq = ?", -1, &st,
			       NULL) != SQLITE_OK)
		return;
	for (t = 0; t < nthreads && shown < 10; t++)
		for (seq = 0; seq < nrows && shown < 10; seq++) {
			sqlite3_bind_int(st, 1, t);
			sqlite3_bind_int(st, 2, seq);
			if (sqlite3_step(st) != SQLITE_ROW) {
				fprintf(stderr, "sqlite_threads: thread %d row %d missing\n", t,
					seq);
				shown++;
			}
			sqlite3_reset(st);
		}
	sqlite3_finalize(st);
}

/* Count and sum the table: 0, or an SQLite error code. */
static int table_stats(sqlite3 *db, sqlite3_int64 *count, sqlite3_int64 *sum)
{
	sqlite3_stmt *st = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db, "SELECT count(*), sum(value) FROM t", -1, &st, NULL);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		*count = sqlite3_column_int64(st, 0);
		*sum = sqlite3_column_int64(st, 1);
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc;
}

static void *reader(void *arg)
{
	sqlite3 *db = open_db();
	sqlite3_int64 count, sum, last = 0;
	int rc;

	(void)arg;
	while (db && atomic_load(&writers_left) > 0) {
		rc = table_stats(db, &count, &sum);
		if (rc == SQLITE_BUSY || rc == SQLITE_LOCKED)
			continue;
		if (rc != SQLITE_OK) {
			fail("select", db);
			break;
		}
		if (count < last) {
			fprintf(stderr, "sqlite_threads: a reader saw %lld rows after %lld\n",
				(long long)count, (long long)last);
			atomic_store(&failed, 1);
			break;
		}
		last = count;
	}
	sqlite3_close(db);
	return NULL;
}

int main(int argc, char **argv)
{
	sqlite3_int64 count = 0, sum = 0, want_sum = 0;
	pthread_t *tids, rd[2];
	int t, i;

	if (argc != 4 || (nthreads = atoi(argv[2])) < 1 || nthreads > 256 ||
	    (nrows = atoi(argv[3])) < 1) {
		fprintf(stderr, "usage: sqlite_threads DB THREADS(1-256) ROWS\n");
		return 2;
	}
	db_path = argv[1];
	remove(db_path);
	if (sqlite3_open_v2(db_path, &shared,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK ||
	    sqlite3_exec(shared,
			 "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
			 "CREATE TABLE t(thread INTEGER, seq INTEGER, value INTEGER,"
			 " PRIMARY KEY (thread, seq))",
			 NULL, NULL, NULL) != SQLITE_OK) {
		fail("create", shared);
		return 2;
	}
	sqlite3_busy_timeout(shared, BUSY_MS);
	tids = calloc(nthreads, sizeof(*tids));
	if (!tids)
		return 2;
	atomic_store(&writers_left, nthreads);
	for (i = 0; i < 2; i++)
		pthread_create(&rd[i], NULL, reader, NULL);
	for (t = 0; t < nthreads; t++)
		pthread_create(&tids[t], NULL, writer, (void *)(long)t);
	for (t = 0; t < nthreads; t++)
		pthread_join(tids[t], NULL);
	for (i = 0; i < 2; i++)
		pthread_join(rd[i], NULL);
	if (atomic_load(&failed)) {
		sqlite3_close(shared);
		return atomic_load(&failed);
	}
	if (table_stats(shared, &count, &sum) != SQLITE_OK) {
		fail("final select", shared);
		return 2;
	}
	for (t = 0; t < nthreads; t++)
		for (i = 0; i < nrows; i++)
			want_sum += (sqlite3_int64)t * 1000003 + i;
	if (count != (sqlite3_int64)nthreads * nrows || sum != want_sum)
		report_missing();
	sqlite3_close(shared);
	free(tids);
	if (count != (sqlite3_int64)nthreads * nrows || sum != want_sum) {
		fprintf(stderr,
			"sqlite_threads: %lld rows summing to %lld, want %lld summing to %lld\n",
			(long long)count, (long long)sum, (long long)nthreads * nrows,
			(long long)want_sum);
		return 1;
	}
	printf("%lld rows from %d threads\n", (long long)count, nthreads);
	return 0;
}
