// SPDX-License-Identifier: MIT
/*
 * Campaign store on SQLite (store.h, docs/store.md). Statements are prepared
 * once per store and reused: a run commits thousands of task rows, and the
 * per-run transaction is what makes a crash lose only the run in flight.
 */
#include "results/store.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "results/store_db.h"
#include "results/stream.h"
#include "lib/log.h"
#include "lib/now.h"
#include "lib/tree.h"
#include "lib/xalloc.h"

/* 'CSCH': tells our databases from any other SQLite file. */
#define STORE_APPLICATION_ID 0x43534348

/* A site is an address in a mapped object, as a call site (a return
 * address: named by the call's line) or as an instruction (an access:
 * named by its own line). The two are different sites: a return address is
 * often the address of an access instruction too. Campaigns of older
 * versions lack the insn column until they are opened for writing
 * (migrate_sites). */
#define STORE_SITES_COLUMNS                                                                        \
	"(id INTEGER PRIMARY KEY, object TEXT NOT NULL,"                                           \
	" offset INTEGER NOT NULL, function TEXT, file TEXT, line INTEGER,"                        \
	" insn INTEGER NOT NULL DEFAULT 0, UNIQUE(object, offset, insn))"

static const char *const store_schema =
	"CREATE TABLE schema_version(version INTEGER NOT NULL);"
	"CREATE TABLE campaign(uuid TEXT NOT NULL, program TEXT, binary_hash TEXT,"
	" args TEXT, strategy TEXT, config TEXT, metric TEXT, saturation TEXT,"
	" seed INTEGER, host TEXT, kernel TEXT, created_ns INTEGER, version TEXT,"
	" where_ran TEXT);"
	"CREATE TABLE runs(idx INTEGER PRIMARY KEY, uuid TEXT NOT NULL UNIQUE,"
	" seed INTEGER, strategy_config TEXT, outcome TEXT, summary TEXT,"
	" exit_status INTEGER, signal INTEGER, started_ns INTEGER, duration_ns INTEGER,"
	" declog BLOB, stdout BLOB, stderr BLOB,"
	" origin_campaign TEXT, origin_run INTEGER, origin_host TEXT);"
	"CREATE TABLE sites" STORE_SITES_COLUMNS ";"
	"CREATE TABLE tasks(id INTEGER PRIMARY KEY, metric TEXT NOT NULL,"
	" key TEXT NOT NULL, first_run INTEGER NOT NULL, UNIQUE(metric, key));"
	"CREATE INDEX tasks_metric_first_run ON tasks(metric, first_run);"
	"CREATE TABLE task_hits(task INTEGER NOT NULL, origin TEXT NOT NULL,"
	" hits INTEGER NOT NULL, PRIMARY KEY(task, origin)) WITHOUT ROWID;"
	"CREATE TABLE requirements(metric TEXT NOT NULL, key TEXT NOT NULL,"
	" source TEXT, run INTEGER, PRIMARY KEY(metric, key)) WITHOUT ROWID;"
	"CREATE TABLE failures(id INTEGER PRIMARY KEY, run INTEGER NOT NULL,"
	" kind TEXT, summary TEXT, detail TEXT);"
	"CREATE TABLE failure_sites(failure INTEGER NOT NULL, pos INTEGER NOT NULL,"
	" site INTEGER NOT NULL, PRIMARY KEY(failure, pos)) WITHOUT ROWID;"
	"CREATE TABLE warnings(id INTEGER PRIMARY KEY, run INTEGER NOT NULL,"
	" kind TEXT, variable TEXT, threads TEXT, locks TEXT);"
	"CREATE TABLE warning_sites(warning INTEGER NOT NULL, pos INTEGER NOT NULL,"
	" site INTEGER NOT NULL, PRIMARY KEY(warning, pos)) WITHOUT ROWID;" STORE_INPUTS_DDL
	";" STORE_NOTES_DDL ";"
	"CREATE VIEW run_new_tasks AS SELECT first_run AS run, metric,"
	" count(*) AS new_tasks FROM tasks GROUP BY first_run, metric;"
	"CREATE VIEW task_totals AS SELECT t.id, t.metric, t.key, t.first_run,"
	" coalesce((SELECT sum(h.hits) FROM task_hits h WHERE h.task = t.id), 0) AS hits"
	" FROM tasks t;";

static const char *const stmt_sql[ST_COUNT] = {
	[ST_SITE_INSERT] = "INSERT OR IGNORE INTO sites(object, offset, function, file, line, insn)"
			   " VALUES(?1, ?2, ?3, ?4, ?5, ?6)",
	[ST_SITE_LOOKUP] = "SELECT id FROM sites WHERE object = ?1 AND offset = ?2 AND insn = ?3",
	[ST_SITE_GET] = "SELECT object, offset, function, file, line FROM sites WHERE id = ?1",
	[ST_TASK_INSERT] = "INSERT INTO tasks(metric, key, first_run) VALUES(?1, ?2, ?3)",
	[ST_TASK_LOOKUP] = "SELECT id FROM tasks WHERE metric = ?1 AND key = ?2",
	[ST_HITS_ADD] = "INSERT INTO task_hits(task, origin, hits) VALUES(?1, ?2, ?3)"
			" ON CONFLICT(task, origin) DO UPDATE SET hits = hits + excluded.hits",
	[ST_REQ_INSERT] = "INSERT OR IGNORE INTO requirements(metric, key, source, run)"
			  " VALUES(?1, ?2, ?3, ?4)",
	[ST_FAIL_INSERT] =
		"INSERT INTO failures(run, kind, summary, detail) VALUES(?1, ?2, ?3, ?4)",
	[ST_FAIL_SITE] =
		"INSERT OR REPLACE INTO failure_sites(failure, pos, site) VALUES(?1, ?2, ?3)",
	[ST_WARN_INSERT] = "INSERT INTO warnings(run, kind, variable, threads, locks)"
			   " VALUES(?1, ?2, ?3, ?4, ?5)",
	[ST_WARN_SITE] =
		"INSERT OR REPLACE INTO warning_sites(warning, pos, site) VALUES(?1, ?2, ?3)",
};

struct sqlite3 *store_sqlite(struct store *s)
{
	return s->db;
}

const char *store_errmsg(struct store *s)
{
	return s && s->db ? sqlite3_errmsg(s->db) : "no database";
}

const char *store_dir(const struct store *s)
{
	return s->dir;
}

int64_t store_current_run(const struct store *s)
{
	return s->run;
}

static sqlite3_stmt *stmt_get(struct store *s, enum store_stmt_id id)
{
	if (!s->stmts[id] && sqlite3_prepare_v2(s->db, stmt_sql[id], -1, &s->stmts[id], NULL))
		return NULL;
	sqlite3_reset(s->stmts[id]);
	sqlite3_clear_bindings(s->stmts[id]);
	return s->stmts[id];
}

static int make_uuid(char out[37])
{
	unsigned char b[16];

	if (getrandom(b, sizeof(b), 0) != sizeof(b))
		return -errno;
	b[6] = (b[6] & 0x0f) | 0x40; /* RFC 4122 version 4 */
	b[8] = (b[8] & 0x3f) | 0x80;
	snprintf(out, 37, "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
		 b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
		 b[13], b[14], b[15]);
	return 0;
}

static void store_free(struct store *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < ST_COUNT; i++)
		sqlite3_finalize(s->stmts[i]);
	if (s->sess)
		sqlite3session_delete(s->sess);
	if (s->db)
		sqlite3_close(s->db);
	free(s->dir);
	free(s->uuid);
	free(s->site_object);
	free(s->site_function);
	free(s->site_file);
	free(s);
}

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->run)
		store_abort_run(s);
	store_db_flush(s);
	if (s->repl)
		s->repl(STREAM_END, NULL, 0, s->repl_arg);
	store_free(s);
}

/* SQLite without its mutexes: one thread at a time uses the store (the
 * workers of `run -j N` only under the campaign's lock, campaign.c;
 * MEMSTATUS off, so SQLite keeps no global counters either). With them,
 * every statement takes pthread mutexes, and under `run` those calls hit
 * the campaign's own pthread uprobes (attached for every process): ~4,700
 * traps a run of examples/bank (docs/perf.md). Before the first open; a
 * later call is refused by SQLite and changes nothing. */
static void store_global_config(void)
{
	static bool done;

	if (done)
		return;
	done = true;
	sqlite3_config(SQLITE_CONFIG_SINGLETHREAD);
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
}

static int configure_connection(struct store *s, bool read_only)
{
	sqlite3_busy_timeout(s->db, 5000);
	if (read_only)
		return 0;
	/* WAL + NORMAL: a commit is durable against a process crash (SIGKILL)
	 * and the database stays consistent across power loss. */
	return exec_sql(s, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
}

static int insert_campaign(struct store *s, const struct store_campaign *c, const char *uuid)
{
	struct utsname u;
	char host[256] = "";
	sqlite3_stmt *st = NULL;
	int err;

	uname(&u);
	gethostname(host, sizeof(host) - 1);
	if (sqlite3_prepare_v2(
		    s->db,
		    "INSERT INTO campaign(uuid, program, binary_hash, args, strategy,"
		    " config, metric, saturation, seed, host, kernel, created_ns, version,"
		    " where_ran)"
		    " VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14)",
		    -1, &st, NULL))
		return -EIO;
	bind_text(st, 1, uuid);
	bind_text(st, 2, c->program);
	bind_text(st, 3, c->binary_hash);
	bind_text(st, 4, c->args_json);
	bind_text(st, 5, c->strategy);
	bind_text(st, 6, c->config_json);
	bind_text(st, 7, c->metric);
	bind_text(st, 8, c->saturation);
	sqlite3_bind_int64(st, 9, (int64_t)c->seed);
	bind_text(st, 10, c->host ? c->host : host);
	bind_text(st, 11, c->kernel ? c->kernel : u.release);
	sqlite3_bind_int64(st, 12, c->created_ns ? c->created_ns : (int64_t)now_realtime_ns());
	bind_text(st, 13, c->version ? c->version : CONCSCHED_VERSION);
	bind_text(st, 14, c->where);
	err = step_done(st);
	sqlite3_finalize(st);
	return err;
}

static int create_schema(struct store *s, const struct store_campaign *info, const char *uuid)
{
	char *sql;
	int err;

	err = exec_sql(s, "BEGIN IMMEDIATE");
	if (err)
		return err;
	/* replays from the start: a campaign checks its failures' replays
	 * (replay.c), and a copy streamed from the VM gets only the rows of
	 * tables it has. */
	sql = xasprintf("PRAGMA application_id=%d; %s %s; INSERT INTO schema_version VALUES(%d);",
			STORE_APPLICATION_ID, store_schema, STORE_REPLAYS_DDL,
			STORE_SCHEMA_VERSION);
	err = exec_sql(s, sql);
	free(sql);
	if (!err)
		err = insert_campaign(s, info, uuid);
	if (err) {
		exec_sql(s, "ROLLBACK");
		return err;
	}
	return exec_sql(s, "COMMIT");
}

int store_create(const char *dir, const struct store_campaign *info, struct store **out)
{
	struct store *s = xcalloc(1, sizeof(*s));
	char uuid[37];
	char *db = NULL;
	struct stat sb;
	bool made_dir;
	int err;

	*out = NULL;
	made_dir = stat(dir, &sb) != 0;
	err = tree_mkdir_p(dir, 0755);
	if (err) {
		log_err("cannot create campaign directory %s: %s", dir, strerror(-err));
		goto cleanup;
	}
	db = xasprintf("%s/%s", dir, STORE_DB_NAME);
	if (stat(db, &sb) == 0) {
		err = -EEXIST;
		log_err("%s already holds a campaign (choose another --out, or remove it)", dir);
		goto cleanup;
	}
	if (access(dir, W_OK)) {
		err = -errno;
		log_err("cannot write campaign directory %s: %s", dir, strerror(errno));
		goto cleanup;
	}
	err = make_uuid(uuid);
	if (err) {
		log_err("cannot get random bytes for the campaign id: %s", strerror(-err));
		goto cleanup;
	}
	s->dir = xstrdup(dir);
	s->uuid = xstrdup(uuid);
	store_global_config();
	err = sql_errno(sqlite3_open_v2(
		db, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
		NULL));
	if (!err)
		err = configure_connection(s, false);
	if (!err)
		err = create_schema(s, info, uuid);
	if (err) {
		log_err("cannot create campaign database %s: %s", db, store_errmsg(s));
		goto cleanup;
	}
	store_db_hand_to_sudo_user(dir, made_dir, db);
	*out = s;
	s = NULL;
cleanup:
	if (s && s->db)
		unlink(db);
	store_free(s);
	free(db);
	return err;
}

/* application_id and schema_version tell a campaign we can read from a
 * foreign file or one written by a newer concsched. */
static int check_schema(struct store *s, const char *dir)
{
	sqlite3_stmt *st = NULL;
	int64_t appid = 0, version = -1;
	int rc;

	rc = sqlite3_prepare_v2(s->db, "PRAGMA application_id", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		appid = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (rc != SQLITE_ROW && rc != SQLITE_NOTADB) {
		log_err("cannot read %s/%s: %s", dir, STORE_DB_NAME, sqlite3_errstr(rc));
		return sql_errno(rc) ?: -EIO;
	}
	if (rc == SQLITE_NOTADB || appid != STORE_APPLICATION_ID) {
		log_err("%s is not a concsched campaign directory (%s/%s is not a campaign "
			"database)",
			dir, dir, STORE_DB_NAME);
		return -ENOMSG;
	}
	st = NULL;
	if (sqlite3_prepare_v2(s->db, "SELECT max(version) FROM schema_version", -1, &st, NULL) ==
		    SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (version < 1) {
		log_err("%s is not a concsched campaign directory (no schema version)", dir);
		return -ENOMSG;
	}
	if (version > STORE_SCHEMA_VERSION) {
		log_err("campaign %s was written by a newer concsched (store schema %lld, this "
			"concsched %s reads up to %d): upgrade concsched",
			dir, (long long)version, CONCSCHED_VERSION, STORE_SCHEMA_VERSION);
		return -EPROTONOSUPPORT;
	}
	return 0;
}

static int load_uuid(struct store *s)
{
	sqlite3_stmt *st = NULL;
	int err = -ENOMSG;

	if (sqlite3_prepare_v2(s->db, "SELECT uuid FROM campaign LIMIT 1", -1, &st, NULL))
		return -EIO;
	if (sqlite3_step(st) == SQLITE_ROW && col_text(st, 0)) {
		s->uuid = col_strdup(st, 0);
		err = 0;
	}
	sqlite3_finalize(st);
	return err;
}

/* A WAL file with content: commits not yet copied into the database. */
static bool wal_pending(const char *db)
{
	char *wal = xasprintf("%s-wal", db);
	struct stat sb;
	bool pending = stat(wal, &sb) == 0 && sb.st_size > 0;

	free(wal);
	return pending;
}

/* "file:PATH?immutable=1" with PATH percent-encoded where URIs need it. */
static char *immutable_uri(const char *path)
{
	static const char hex[] = "0123456789abcdef";
	char *uri = xcalloc(1, strlen(path) * 3 + 32), *o = uri;
	const unsigned char *p;

	o += sprintf(o, "file:");
	for (p = (const unsigned char *)path; *p; p++) {
		if (*p == '%' || *p == '?' || *p == '#' || *p <= ' ' || *p >= 0x7f) {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		} else {
			*o++ = (char)*p;
		}
	}
	strcpy(o, "?immutable=1");
	return uri;
}

bool store_has_column(sqlite3 *db, const char *table, const char *column)
{
	char *sql = xasprintf("SELECT 1 FROM pragma_table_info('%s') WHERE name = ?1", table);
	sqlite3_stmt *st = NULL;
	bool has = false;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		sqlite3_bind_text(st, 1, column, -1, SQLITE_STATIC);
		has = sqlite3_step(st) == SQLITE_ROW;
	}
	sqlite3_finalize(st);
	free(sql);
	return has;
}

/* A campaign of an older version: its sites (all call sites then, or
 * access sites named the same way) get the insn column, 0. */
static int migrate_sites(struct store *s)
{
	int err;

	if (store_has_column(s->db, "sites", "insn"))
		return 0;
	err = exec_sql(s, "BEGIN IMMEDIATE");
	if (err)
		return err;
	err = exec_sql(s, "CREATE TABLE sites_new" STORE_SITES_COLUMNS ";"
			  " INSERT INTO sites_new(id, object, offset, function, file, line, insn)"
			  " SELECT id, object, offset, function, file, line, 0 FROM sites;"
			  " DROP TABLE sites; ALTER TABLE sites_new RENAME TO sites");
	if (err) {
		exec_sql(s, "ROLLBACK");
		return err;
	}
	return exec_sql(s, "COMMIT");
}

int store_open(const char *dir, bool read_only, struct store **out)
{
	struct store *s = NULL;
	struct stat sb;
	char *db = NULL, *uri = NULL;
	int flags, err;

	*out = NULL;
	if (stat(dir, &sb)) {
		err = -errno;
		log_err("campaign directory %s: %s", dir, strerror(errno));
		return err;
	}
	if (!S_ISDIR(sb.st_mode)) {
		log_err("%s is not a directory (expected a campaign directory)", dir);
		return -ENOTDIR;
	}
	db = xasprintf("%s/%s", dir, STORE_DB_NAME);
	if (stat(db, &sb)) {
		log_err("%s is not a concsched campaign directory (no %s in it)", dir,
			STORE_DB_NAME);
		free(db);
		return -ENOMSG;
	}
	s = xcalloc(1, sizeof(*s));
	s->dir = xstrdup(dir);
	flags = (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX;
	if (read_only && !wal_pending(db)) {
		/* Nothing waits in a WAL: read the file as it is, without the
		 * -shm index a reader without write access could not create. */
		uri = immutable_uri(db);
		flags |= SQLITE_OPEN_URI;
	}
	store_global_config();
	err = sql_errno(sqlite3_open_v2(uri ? uri : db, &s->db, flags, NULL));
	free(uri);
	if (err) {
		log_err("cannot open %s: %s", db, store_errmsg(s));
		goto cleanup;
	}
	err = check_schema(s, dir);
	if (err)
		goto cleanup;
	err = configure_connection(s, read_only);
	if (err) {
		log_err("cannot open %s for writing: %s", db, store_errmsg(s));
		goto cleanup;
	}
	err = load_uuid(s);
	if (err) {
		log_err("%s is not a concsched campaign directory (no campaign row)", dir);
		goto cleanup;
	}
	if (!read_only) {
		err = migrate_sites(s);
		if (err) {
			log_err("cannot update %s's sites table: %s", db, store_errmsg(s));
			goto cleanup;
		}
	}
	*out = s;
	s = NULL;
cleanup:
	store_free(s);
	free(db);
	return err;
}

int store_open_best(const char *dir, struct store **s)
{
	char *db = xasprintf("%s/%s", dir, STORE_DB_NAME);
	bool rw = access(dir, W_OK) == 0 && access(db, W_OK) == 0;

	free(db);
	return store_open(dir, !rw, s);
}

/* Campaigns of older versions have no where_ran column: their VM
 * campaigns carry the guest's hostname (tools/vm-init.sh). */
#define VM_GUEST_HOSTNAME "concsched-vm"

int store_get_campaign(struct store *s, struct store_campaign *c)
{
	static const char *const sql[] = {
		"SELECT uuid, program, binary_hash, args, strategy, config, metric,"
		" saturation, seed, host, kernel, created_ns, version, where_ran FROM campaign"
		" LIMIT 1",
		"SELECT uuid, program, binary_hash, args, strategy, config, metric,"
		" saturation, seed, host, kernel, created_ns, version, NULL FROM campaign"
		" LIMIT 1",
	};
	sqlite3_stmt *st = NULL;
	int err = -ENOMSG;
	bool old = false;

	memset(c, 0, sizeof(*c));
	if (sqlite3_prepare_v2(s->db, sql[0], -1, &st, NULL)) {
		old = true;
		if (sqlite3_prepare_v2(s->db, sql[1], -1, &st, NULL))
			return -EIO;
	}
	if (sqlite3_step(st) == SQLITE_ROW) {
		c->uuid = col_strdup(st, 0);
		c->program = col_strdup(st, 1);
		c->binary_hash = col_strdup(st, 2);
		c->args_json = col_strdup(st, 3);
		c->strategy = col_strdup(st, 4);
		c->config_json = col_strdup(st, 5);
		c->metric = col_strdup(st, 6);
		c->saturation = col_strdup(st, 7);
		c->seed = (uint64_t)sqlite3_column_int64(st, 8);
		c->host = col_strdup(st, 9);
		c->kernel = col_strdup(st, 10);
		c->created_ns = sqlite3_column_int64(st, 11);
		c->version = col_strdup(st, 12);
		c->where = col_strdup(st, 13);
		if (old && c->host)
			c->where = xstrdup(strcmp(c->host, VM_GUEST_HOSTNAME) ? "native" : "vm");
		err = 0;
	}
	sqlite3_finalize(st);
	return err;
}

void store_campaign_free(struct store_campaign *c)
{
	free(c->uuid);
	free(c->program);
	free(c->binary_hash);
	free(c->args_json);
	free(c->strategy);
	free(c->config_json);
	free(c->metric);
	free(c->saturation);
	free(c->host);
	free(c->where);
	free(c->kernel);
	free(c->version);
	memset(c, 0, sizeof(*c));
}

int store_begin_run(struct store *s, const struct store_run_info *ri, int64_t *run)
{
	sqlite3_stmt *st = NULL;
	char uuid[37];
	int err;

	if (s->run)
		return -EBUSY;
	err = make_uuid(uuid);
	if (err)
		return err;
	store_db_flush(s); /* what changed outside a run goes first */
	err = exec_sql(s, "BEGIN IMMEDIATE");
	if (err)
		return err;
	if (sqlite3_prepare_v2(s->db,
			       "INSERT INTO runs(uuid, seed, strategy_config, outcome, started_ns,"
			       " origin_campaign, origin_host)"
			       " VALUES(?1, ?2, ?3, 'running', ?4, ?5,"
			       " (SELECT host FROM campaign LIMIT 1))",
			       -1, &st, NULL)) {
		err = -EIO;
		goto fail;
	}
	bind_text(st, 1, uuid);
	sqlite3_bind_int64(st, 2, (int64_t)ri->seed);
	bind_text(st, 3, ri->strategy_config_json);
	sqlite3_bind_int64(st, 4, ri->started_ns ? ri->started_ns : (int64_t)now_realtime_ns());
	bind_text(st, 5, s->uuid);
	err = step_done(st);
	sqlite3_finalize(st);
	if (err)
		goto fail;
	s->run = sqlite3_last_insert_rowid(s->db);
	/* A run's own index is its provenance until a merge copies it. */
	err = exec_sql(s, "UPDATE runs SET origin_run = idx WHERE idx = last_insert_rowid()");
	if (err)
		goto fail;
	*run = s->run;
	return 0;
fail:
	s->run = 0;
	exec_sql(s, "ROLLBACK");
	return err;
}

int store_end_run(struct store *s, const struct store_run_result *res)
{
	bool keep_output = res->outcome && strcmp(res->outcome, "pass");
	sqlite3_stmt *st = NULL;
	int err;

	if (!s->run)
		return -EINVAL;
	if (sqlite3_prepare_v2(s->db,
			       "UPDATE runs SET outcome = ?1, summary = ?2, exit_status = ?3,"
			       " signal = ?4, duration_ns = ?5, declog = ?6, stdout = ?7,"
			       " stderr = ?8 WHERE idx = ?9",
			       -1, &st, NULL)) {
		store_abort_run(s);
		return -EIO;
	}
	bind_text(st, 1, res->outcome ? res->outcome : "pass");
	bind_text(st, 2, res->summary);
	sqlite3_bind_int(st, 3, res->exit_status);
	sqlite3_bind_int(st, 4, res->signal);
	sqlite3_bind_int64(st, 5, res->duration_ns);
	bind_blob_or_null(st, 6, res->declog, res->declog_len);
	bind_blob_or_null(st, 7, keep_output ? res->out : NULL, res->out_len);
	bind_blob_or_null(st, 8, keep_output ? res->err : NULL, res->err_len);
	sqlite3_bind_int64(st, 9, s->run);
	err = step_done(st);
	sqlite3_finalize(st);
	if (!err)
		err = exec_sql(s, "COMMIT");
	if (err) {
		store_abort_run(s);
		return err;
	}
	s->run = 0;
	store_db_flush(s);
	return 0;
}

void store_abort_run(struct store *s)
{
	if (!s->run)
		return;
	exec_sql(s, "ROLLBACK");
	s->run = 0;
	/* The session held only this run's changes (flushed at its begin):
	 * start afresh rather than trust what it kept of a rollback. */
	if (s->repl && store_db_session_new(s))
		s->repl = NULL;
}

char *store_site_ref(char *buf, int64_t id)
{
	snprintf(buf, 24, "@%lld", (long long)id);
	return buf;
}

int64_t store_find_site(struct store *s, const struct store_site *site)
{
	sqlite3_stmt *st;
	int64_t id = 0;

	if (!site->object)
		return -EINVAL;
	st = stmt_get(s, ST_SITE_LOOKUP);
	if (!st)
		return -EIO;
	bind_text(st, 1, site->object);
	sqlite3_bind_int64(st, 2, (int64_t)site->offset);
	sqlite3_bind_int(st, 3, site->insn);
	if (sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	return id;
}

int64_t store_add_site(struct store *s, const struct store_site *site)
{
	sqlite3_stmt *st;
	int64_t id = store_find_site(s, site);
	int err;

	if (id)
		return id;
	st = stmt_get(s, ST_SITE_INSERT);
	if (!st)
		return -EIO;
	bind_text(st, 1, site->object);
	sqlite3_bind_int64(st, 2, (int64_t)site->offset);
	bind_text(st, 3, site->function);
	bind_text(st, 4, site->file);
	sqlite3_bind_int(st, 5, site->line);
	sqlite3_bind_int(st, 6, site->insn);
	err = step_done(st);
	if (err)
		return err;
	return sqlite3_last_insert_rowid(s->db);
}

int store_get_site(struct store *s, int64_t id, struct store_site *out)
{
	sqlite3_stmt *st = stmt_get(s, ST_SITE_GET);

	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, id);
	if (sqlite3_step(st) != SQLITE_ROW)
		return -ENOENT;
	free(s->site_object);
	free(s->site_function);
	free(s->site_file);
	s->site_object = col_strdup(st, 0);
	s->site_function = col_strdup(st, 2);
	s->site_file = col_strdup(st, 3);
	out->id = id;
	out->object = s->site_object;
	out->offset = (uint64_t)sqlite3_column_int64(st, 1);
	out->function = s->site_function;
	out->file = s->site_file;
	out->line = sqlite3_column_int(st, 4);
	sqlite3_reset(st);
	return 0;
}

int store_cover_task(struct store *s, const char *metric, const char *key, uint64_t hits)
{
	sqlite3_stmt *st;
	int64_t task = 0;
	int err, fresh = 0;

	if (!s->run || !metric || !key)
		return -EINVAL;
	/* Most harvested tasks are already known: look up before inserting. */
	st = stmt_get(s, ST_TASK_LOOKUP);
	if (!st)
		return -EIO;
	bind_text(st, 1, metric);
	bind_text(st, 2, key);
	if (sqlite3_step(st) == SQLITE_ROW)
		task = sqlite3_column_int64(st, 0);
	sqlite3_reset(st);
	if (!task) {
		st = stmt_get(s, ST_TASK_INSERT);
		if (!st)
			return -EIO;
		bind_text(st, 1, metric);
		bind_text(st, 2, key);
		sqlite3_bind_int64(st, 3, s->run);
		err = step_done(st);
		if (err)
			return err;
		task = sqlite3_last_insert_rowid(s->db);
		fresh = 1;
	}
	st = stmt_get(s, ST_HITS_ADD);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, task);
	bind_text(st, 2, s->uuid);
	sqlite3_bind_int64(st, 3, (int64_t)hits);
	err = step_done(st);
	return err ? err : fresh;
}

int store_add_requirement(struct store *s, const char *metric, const char *key, const char *source)
{
	sqlite3_stmt *st = stmt_get(s, ST_REQ_INSERT);

	if (!st)
		return -EIO;
	if (!metric || !key)
		return -EINVAL;
	bind_text(st, 1, metric);
	bind_text(st, 2, key);
	bind_text(st, 3, source);
	if (s->run)
		sqlite3_bind_int64(st, 4, s->run);
	else
		sqlite3_bind_int64(st, 4, 0);
	return step_done(st);
}

static int insert_site_list(struct store *s, enum store_stmt_id id, int64_t owner,
			    const int64_t *sites, size_t n)
{
	sqlite3_stmt *st;
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		st = stmt_get(s, id);
		if (!st)
			return -EIO;
		sqlite3_bind_int64(st, 1, owner);
		sqlite3_bind_int64(st, 2, (int64_t)i);
		sqlite3_bind_int64(st, 3, sites[i]);
		err = step_done(st);
		if (err)
			return err;
	}
	return 0;
}

int64_t store_record_failure(struct store *s, const char *kind, const char *summary,
			     const char *detail, const int64_t *sites, size_t nsites)
{
	sqlite3_stmt *st;
	int64_t id;
	int err;

	if (!s->run)
		return -EINVAL;
	st = stmt_get(s, ST_FAIL_INSERT);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, s->run);
	bind_text(st, 2, kind);
	bind_text(st, 3, summary);
	bind_text(st, 4, detail);
	err = step_done(st);
	if (err)
		return err;
	id = sqlite3_last_insert_rowid(s->db);
	err = insert_site_list(s, ST_FAIL_SITE, id, sites, nsites);
	return err ? err : id;
}

int store_record_warning(struct store *s, const char *kind, const char *variable,
			 const int64_t *sites, size_t nsites, const char *threads,
			 const char *locks)
{
	sqlite3_stmt *st;
	int err;

	if (!s->run)
		return -EINVAL;
	st = stmt_get(s, ST_WARN_INSERT);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, s->run);
	bind_text(st, 2, kind);
	bind_text(st, 3, variable);
	bind_text(st, 4, threads);
	bind_text(st, 5, locks);
	err = step_done(st);
	if (err)
		return err;
	return insert_site_list(s, ST_WARN_SITE, sqlite3_last_insert_rowid(s->db), sites, nsites);
}
