// SPDX-License-Identifier: MIT
/*
 * Campaign store on SQLite (store.h, docs/store.md). Statements are prepared
 * once per store and reused: a run commits thousands of task rows, and the
 * per-run transaction is what makes a crash lose only the run in flight.
 */
#include "results/store.h"

#include <errno.h>
#include <fcntl.h>
/* The session extension (replication, store_replicate): Debian's libsqlite3
 * is built with it; the header declares it only when asked. */
#define SQLITE_ENABLE_SESSION
#define SQLITE_ENABLE_PREUPDATE_HOOK
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "results/stream.h"
#include "lib/util.h"

/* 'CSCH': tells our databases from any other SQLite file. */
#define STORE_APPLICATION_ID 0x43534348

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
	store_repl_fn repl;
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

/* SQLite result code -> -errno, so callers see one error convention. */
static int sql_errno(int rc)
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

static int exec_sql(struct store *s, const char *sql)
{
	return sql_errno(sqlite3_exec(s->db, sql, NULL, NULL, NULL));
}

static sqlite3_stmt *stmt_get(struct store *s, enum store_stmt_id id)
{
	if (!s->stmts[id] && sqlite3_prepare_v2(s->db, stmt_sql[id], -1, &s->stmts[id], NULL))
		return NULL;
	sqlite3_reset(s->stmts[id]);
	sqlite3_clear_bindings(s->stmts[id]);
	return s->stmts[id];
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static char *col_strdup(sqlite3_stmt *st, int i)
{
	const unsigned char *v = sqlite3_column_text(st, i);

	return v ? xstrdup((const char *)v) : NULL;
}

static const char *col_text(sqlite3_stmt *st, int i)
{
	return (const char *)sqlite3_column_text(st, i);
}

/* Runs one prepared statement to completion; returns 0 or -errno. */
static int step_done(sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : sql_errno(rc);
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

static void repl_flush(struct store *s);

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->run)
		store_abort_run(s);
	repl_flush(s);
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

/* When root runs a campaign through sudo, the results belong to the user.
 * The directory changes hands only when store_create made it: `-o /tmp`
 * must not give /tmp away. */
static void hand_to_sudo_user(const char *dir, bool made_dir, const char *db)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	uint64_t uid, gid;
	char *p;

	if (geteuid() != 0 || !u || !g || parse_u64(u, &uid) || parse_u64(g, &gid))
		return;
	if ((made_dir && chown(dir, uid, gid)) || chown(db, uid, gid))
		cs_warn("cannot give %s to uid %llu: %s", dir, (unsigned long long)uid,
			strerror(errno));
	p = xasprintf("%s-wal", db);
	if (chown(p, uid, gid) && errno != ENOENT)
		cs_debug("chown %s: %s", p, strerror(errno));
	free(p);
	p = xasprintf("%s-shm", db);
	if (chown(p, uid, gid) && errno != ENOENT)
		cs_debug("chown %s: %s", p, strerror(errno));
	free(p);
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

#define STORE_REPLAYS_DDL                                                                          \
	"CREATE TABLE IF NOT EXISTS replays(run INTEGER NOT NULL, at_ns INTEGER NOT NULL,"         \
	" times INTEGER NOT NULL, reproduced INTEGER NOT NULL, mode TEXT,"                         \
	" PRIMARY KEY(run, at_ns)) WITHOUT ROWID"

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
	err = mkdir_p(dir, 0755);
	if (err) {
		cs_err("cannot create campaign directory %s: %s", dir, strerror(-err));
		goto cleanup;
	}
	db = xasprintf("%s/%s", dir, STORE_DB_NAME);
	if (stat(db, &sb) == 0) {
		err = -EEXIST;
		cs_err("%s already holds a campaign (choose another --out, or remove it)", dir);
		goto cleanup;
	}
	if (access(dir, W_OK)) {
		err = -errno;
		cs_err("cannot write campaign directory %s: %s", dir, strerror(errno));
		goto cleanup;
	}
	err = make_uuid(uuid);
	if (err) {
		cs_err("cannot get random bytes for the campaign id: %s", strerror(-err));
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
		cs_err("cannot create campaign database %s: %s", db, store_errmsg(s));
		goto cleanup;
	}
	hand_to_sudo_user(dir, made_dir, db);
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
		cs_err("cannot read %s/%s: %s", dir, STORE_DB_NAME, sqlite3_errstr(rc));
		return sql_errno(rc) ?: -EIO;
	}
	if (rc == SQLITE_NOTADB || appid != STORE_APPLICATION_ID) {
		cs_err("%s is not a concsched campaign directory (%s/%s is not a campaign "
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
		cs_err("%s is not a concsched campaign directory (no schema version)", dir);
		return -ENOMSG;
	}
	if (version > STORE_SCHEMA_VERSION) {
		cs_err("campaign %s was written by a newer concsched (store schema %lld, this "
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
		cs_err("campaign directory %s: %s", dir, strerror(errno));
		return err;
	}
	if (!S_ISDIR(sb.st_mode)) {
		cs_err("%s is not a directory (expected a campaign directory)", dir);
		return -ENOTDIR;
	}
	db = xasprintf("%s/%s", dir, STORE_DB_NAME);
	if (stat(db, &sb)) {
		cs_err("%s is not a concsched campaign directory (no %s in it)", dir,
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
		cs_err("cannot open %s: %s", db, store_errmsg(s));
		goto cleanup;
	}
	err = check_schema(s, dir);
	if (err)
		goto cleanup;
	err = configure_connection(s, read_only);
	if (err) {
		cs_err("cannot open %s for writing: %s", db, store_errmsg(s));
		goto cleanup;
	}
	err = load_uuid(s);
	if (err) {
		cs_err("%s is not a concsched campaign directory (no campaign row)", dir);
		goto cleanup;
	}
	if (!read_only) {
		err = migrate_sites(s);
		if (err) {
			cs_err("cannot update %s's sites table: %s", db, store_errmsg(s));
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
	repl_flush(s); /* what changed outside a run goes first */
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

static void bind_blob_or_null(sqlite3_stmt *st, int i, const void *p, size_t len)
{
	if (p)
		sqlite3_bind_blob64(st, i, p, len, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
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
	repl_flush(s);
	return 0;
}

static int repl_session_new(struct store *s);

void store_abort_run(struct store *s)
{
	if (!s->run)
		return;
	exec_sql(s, "ROLLBACK");
	s->run = 0;
	/* The session held only this run's changes (flushed at its begin):
	 * start afresh rather than trust what it kept of a rollback. */
	if (s->repl && repl_session_new(s))
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

/* Replication (store_replicate, results/stream.h). */

static int repl_session_new(struct store *s)
{
	int rc;

	if (s->sess)
		sqlite3session_delete(s->sess);
	s->sess = NULL;
	rc = sqlite3session_create(s->db, "main", &s->sess);
	if (rc == SQLITE_OK)
		rc = sqlite3session_attach(s->sess, NULL);
	if (rc != SQLITE_OK) {
		cs_warn("campaign %s: cannot record changes to stream them: %s", s->dir,
			sqlite3_errstr(rc));
		return sql_errno(rc) ?: -EIO;
	}
	return 0;
}

static void repl_stop(struct store *s, const char *what, int err)
{
	cs_warn("campaign %s: streaming stopped (%s: %s); the campaign stays whole where it "
		"is written",
		s->dir, what, strerror(-err));
	s->repl = NULL;
	if (s->sess)
		sqlite3session_delete(s->sess);
	s->sess = NULL;
}

/* Send what committed since the last record, and record afresh. */
static void repl_flush(struct store *s)
{
	void *cs = NULL;
	int n = 0, rc, err;

	if (!s->repl || !s->sess || sqlite3session_isempty(s->sess))
		return;
	rc = sqlite3session_changeset(s->sess, &n, &cs);
	if (rc != SQLITE_OK) {
		repl_stop(s, "changeset", sql_errno(rc) ?: -EIO);
		return;
	}
	err = s->repl(STREAM_CHANGESET, cs, (size_t)n, s->repl_arg);
	sqlite3_free(cs);
	if (err)
		repl_stop(s, "send", err);
	else if (repl_session_new(s))
		s->repl = NULL;
}

int store_replicate(struct store *s, store_repl_fn fn, void *arg)
{
	sqlite3_int64 n = 0;
	unsigned char *db;
	int err;

	if (s->run)
		return -EBUSY;
	db = sqlite3_serialize(s->db, "main", &n, 0);
	if (!db)
		return -ENOMEM;
	err = fn(STREAM_SNAPSHOT, db, (size_t)n, arg);
	sqlite3_free(db);
	if (err)
		return err;
	s->repl = fn;
	s->repl_arg = arg;
	err = repl_session_new(s);
	if (err)
		s->repl = NULL;
	return err;
}

int store_replica_create(const char *dir, const void *image, size_t len, struct store **out)
{
	char *db = xasprintf("%s/%s", dir, STORE_DB_NAME), *part = xasprintf("%s.part", db);
	struct stat sb;
	bool made_dir = stat(dir, &sb) != 0;
	int fd = -1, err;

	*out = NULL;
	err = mkdir_p(dir, 0755);
	if (err) {
		cs_err("cannot create campaign directory %s: %s", dir, strerror(-err));
		goto out;
	}
	if (stat(db, &sb) == 0) {
		err = -EEXIST;
		cs_err("%s already holds a campaign (choose another --out, or remove it)", dir);
		goto out;
	}
	/* Whole or absent: written aside, synced, then renamed into place. */
	fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	err = fd < 0 ? -errno : write_all(fd, image, len);
	if (!err && fsync(fd))
		err = -errno;
	/* Closed before SQLite opens the file: closing any descriptor of it
	 * later would drop the POSIX locks SQLite holds on it, and a reader's
	 * close would then take this writer's WAL away. */
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	fd = -1;
	if (err) {
		cs_err("cannot write %s: %s", part, strerror(-err));
		unlink(part);
		goto out;
	}
	if (rename(part, db)) {
		err = -errno;
		cs_err("cannot create %s: %s", db, strerror(errno));
		unlink(part);
		goto out;
	}
	err = store_open(dir, false, out);
	if (!err)
		hand_to_sudo_user(dir, made_dir, db);
out:
	if (fd >= 0)
		close(fd);
	free(part);
	free(db);
	return err;
}

/* A replica only ever receives what its source committed on top of the
 * same rows: a conflict means the two differ, and the apply stops. */
static int replica_conflict(void *arg, int why, sqlite3_changeset_iter *it)
{
	(void)arg;
	(void)why;
	(void)it;
	return SQLITE_CHANGESET_ABORT;
}

int store_replica_apply(struct store *s, const void *changeset, size_t len)
{
	int rc;

	if (len > INT32_MAX)
		return -EMSGSIZE;
	rc = sqlite3changeset_apply(s->db, (int)len, (void *)changeset, NULL, replica_conflict,
				    NULL);
	if (rc != SQLITE_OK) {
		cs_err("campaign %s: cannot apply what the VM committed: %s", s->dir,
		       sqlite3_errstr(rc));
		return sql_errno(rc) ?: -EIO;
	}
	return 0;
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
