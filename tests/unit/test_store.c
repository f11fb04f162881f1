// SPDX-License-Identifier: MIT
/*
 * Campaign store: create/open errors, one transaction per run (commit,
 * abort, SIGKILL mid-run), task bookkeeping, loaders, merge (union,
 * earliest first run, site remapping, idempotence, different binaries),
 * and replication through the stream records of run --vm (a copy equal
 * to its source table by table, whatever the chunking; broken streams).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "concsched_abi.h"
#include "lib/declog.h"
#include "results/report.h"
#include "results/schedule.h"
#include "results/store.h"
#include "results/stream.h"
#include "tap.h"
#include "lib/file.h"
#include "lib/xalloc.h"

static char tmp[64];

static char *path(const char *name)
{
	static char buf[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", tmp, name);
	return buf[k];
}

static struct store *create(const char *dir, const char *hash)
{
	struct store_campaign c = {
		.program = "/usr/bin/prog",
		.binary_hash = (char *)hash,
		.args_json = "[\"-n\",\"4\"]",
		.strategy = "random",
		.config_json = "{\"p\":0.2}",
		.metric = "sp",
		.saturation = "50,0.1",
		.seed = 42,
	};
	struct store *s = NULL;

	if (store_create(dir, &c, &s))
		return NULL;
	return s;
}

static int64_t site(struct store *s, const char *fn, uint64_t off)
{
	struct store_site st = { .object = "/usr/bin/prog",
				 .offset = off,
				 .function = fn,
				 .file = "prog.c",
				 .line = (int)off };

	return store_add_site(s, &st);
}

/* One committed run covering `keys` of metric sp, started at t seconds. */
static int64_t run_with(struct store *s, int64_t t, const char *const *keys, size_t n,
			const char *outcome)
{
	struct store_run_info ri = { .seed = 7,
				     .strategy_config_json = "{}",
				     .started_ns = t * 1000000000LL };
	struct store_run_result res = { .outcome = outcome,
					.duration_ns = 500000000,
					.out = "out",
					.out_len = 3,
					.err = "err",
					.err_len = 3 };
	int64_t run = 0;
	size_t i;

	if (store_begin_run(s, &ri, &run))
		return -1;
	for (i = 0; i < n; i++)
		store_cover_task(s, "sp", keys[i], 1);
	if (store_end_run(s, &res))
		return -1;
	return run;
}

static int count_cb(const struct store_task *t, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

static uint64_t hits_of(struct store *s, const char *metric, const char *key, int64_t *first)
{
	sqlite3_stmt *st;
	uint64_t h = 0;

	sqlite3_prepare_v2(store_sqlite(s),
			   "SELECT hits, first_run FROM task_totals WHERE metric = ?1 AND key = ?2",
			   -1, &st, NULL);
	sqlite3_bind_text(st, 1, metric, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		h = (uint64_t)sqlite3_column_int64(st, 0);
		if (first)
			*first = sqlite3_column_int64(st, 1);
	}
	sqlite3_finalize(st);
	return h;
}

static void test_open_errors(void)
{
	struct store *s = NULL;
	FILE *f;

	tap_is_int(store_open(path("missing"), false, &s), -ENOENT, "open: missing directory");
	mkdir(path("empty"), 0755);
	tap_is_int(store_open(path("empty"), false, &s), -ENOMSG, "open: not a campaign directory");
	f = fopen(path("file"), "w");
	fclose(f);
	tap_is_int(store_open(path("file"), false, &s), -ENOTDIR, "open: a file, not a directory");
	mkdir(path("junk"), 0755);
	f = fopen(path("junk/campaign.db"), "w");
	fputs("this is not a database, just text that is long enough to look like one\n", f);
	fclose(f);
	tap_is_int(store_open(path("junk"), false, &s), -ENOMSG, "open: garbage campaign.db");
	s = create(path("newer"), "h1");
	sqlite3_exec(store_sqlite(s), "UPDATE schema_version SET version = 99", NULL, NULL, NULL);
	store_close(s);
	s = NULL;
	tap_is_int(store_open(path("newer"), false, &s), -EPROTONOSUPPORT,
		   "open: newer schema refused");
	s = create(path("newer"), "h1");
	tap_ok(s == NULL, "create: refuses a directory that holds a campaign");

	/* A campaign of an older version: sites without the insn column. */
	s = create(path("v1"), "h1");
	tap_is_int(
		sqlite3_exec(store_sqlite(s),
			     "DROP TABLE sites; CREATE TABLE sites(id INTEGER PRIMARY KEY,"
			     " object TEXT NOT NULL, offset INTEGER NOT NULL, function TEXT,"
			     " file TEXT, line INTEGER, UNIQUE(object, offset));"
			     " INSERT INTO sites VALUES(4, '/usr/bin/prog', 16, 'f', 'prog.c', 9)",
			     NULL, NULL, NULL),
		0, "an old campaign's sites table");
	store_close(s);
	s = NULL;
	tap_is_int(store_open(path("v1"), true, &s), 0, "read: opened as it is");
	tap_ok(s && !store_has_column(store_sqlite(s), "sites", "insn"), "... not changed");
	store_close(s);
	s = NULL;
	tap_is_int(store_open(path("v1"), false, &s), 0, "write: opened");
	tap_ok(s && store_has_column(store_sqlite(s), "sites", "insn"),
	       "... the insn column added");
	{
		struct store_site got = { 0 };

		tap_ok(s && !store_get_site(s, 4, &got) && got.line == 9 && got.offset == 16,
		       "... its site kept, with its id");
		tap_is_int(s ? site(s, "g", 16) : -1, 4,
			   "... a call site at its address: that site");
	}
	store_close(s);
}

static void test_runs(void)
{
	struct store *s = create(path("c1"), "h1");
	struct store_run_info ri = { .seed = 99, .strategy_config_json = "{\"noise\":\"yield\"}" };
	struct store_run_result res = { .outcome = "deadlock",
					.summary = "deadlock: cycle",
					.exit_status = -1,
					.signal = 9,
					.duration_ns = 2000000,
					.declog = "\x01\x02\x03",
					.declog_len = 3,
					.out = "hello",
					.out_len = 5,
					.err = "oops",
					.err_len = 4 };
	struct store_campaign c;
	struct store_series_point *pts;
	struct store_run *runs, one;
	struct store_site got;
	char ref[24], key[64], *out, *err;
	int64_t run = 0, a, b, fail, sites[2];
	size_t n, npts;
	void *blob;
	size_t blen;
	int count = 0;
	sqlite3_stmt *st;

	tap_ok(s != NULL, "create campaign");
	sqlite3_prepare_v2(store_sqlite(s), "PRAGMA journal_mode", -1, &st, NULL);
	sqlite3_step(st);
	tap_is_str((const char *)sqlite3_column_text(st, 0), "wal", "journal mode is WAL");
	sqlite3_finalize(st);
	tap_is_int(store_cover_task(s, "sp", "@1>@2", 1), -EINVAL, "cover outside a run refused");

	tap_is_int(store_begin_run(s, &ri, &run), 0, "begin run");
	tap_is_int(run, 1, "first run has index 1");
	a = site(s, "worker", 0x10);
	b = site(s, "main", 0x20);
	tap_ok(a > 0 && b > a, "sites get ids");
	tap_is_int(site(s, "worker-renamed", 0x10), a, "same object+offset, same id");
	{
		/* A return address that is also an access instruction's
		 * address: two sites, each with its own line. */
		struct store_site in = { .object = "/usr/bin/prog",
					 .offset = 0x10,
					 .function = "worker",
					 .file = "prog.c",
					 .line = 17,
					 .insn = true };
		int64_t i1 = store_add_site(s, &in);

		tap_ok(i1 > b, "the instruction at a call site's address is a site of its own");
		tap_is_int(store_add_site(s, &in), i1, "... found again as the instruction");
		tap_ok(!store_get_site(s, i1, &got) && got.line == 17 &&
			       !store_get_site(s, a, &got) && got.line == 0x10,
		       "... each with its own line");
		sqlite3_exec(store_sqlite(s), "DELETE FROM sites WHERE insn = 1", NULL, NULL, NULL);
	}
	snprintf(key, sizeof(key), "%s>", store_site_ref(ref, a));
	strcat(key, store_site_ref(ref, b));
	tap_is_str(key, "@1>@2", "site references in keys");
	tap_is_int(store_cover_task(s, "sp", key, 3), 1, "new task");
	tap_is_int(store_cover_task(s, "sp", key, 2), 0, "known task");
	tap_is_int(store_cover_task(s, "map", key, 1), 1, "same key, other metric: new");
	tap_is_int(store_add_requirement(s, "sp", key, "sp-estimate"), 0, "requirement");
	store_add_requirement(s, "sp", key, "sp-estimate");
	store_add_requirement(s, "sp", "@2>@1", "sp-estimate");
	sites[0] = a;
	sites[1] = b;
	fail = store_record_failure(s, "deadlock", "deadlock: cycle", "thread A holds ...", sites,
				    2);
	tap_ok(fail > 0, "failure recorded");
	tap_is_int(store_record_warning(s, "race", "counter", sites, 2, "t1,t2", "{}"), 0,
		   "warning recorded");
	tap_is_int(store_end_run(s, &res), 0, "end run (commit)");

	tap_is_int(store_begin_run(s, &ri, &run), 0, "second run");
	store_cover_task(s, "sp", "@2>@1", 1);
	store_cover_task(s, "sp", key, 1);
	store_abort_run(s);
	tap_is_int(store_count_tasks(s, "sp"), 1, "aborted run left no tasks");
	res.outcome = "pass";
	tap_is_int(store_begin_run(s, &ri, &run), 0, "third run");
	tap_is_int(run, 2, "aborted run's index is reused");
	tap_is_int(store_cover_task(s, "sp", "@2>@1", 1), 1, "task new in run 2");
	store_end_run(s, &res);

	tap_is_int(store_count_tasks(s, NULL), 3, "three tasks in total");
	tap_is_int(store_count_requirements(s, "sp"), 2, "requirements deduplicated");
	tap_is_int(hits_of(s, "sp", key, NULL), 5, "hits summed over runs");
	store_for_each_task(s, "sp", count_cb, &count);
	tap_is_int(count, 2, "for_each_task by metric");
	store_load_runs(s, &runs, &n);
	tap_is_int(n, 2, "two committed runs");
	tap_is_str(runs[0].outcome, "deadlock", "run 1 outcome");
	tap_is_int(runs[0].signal, 9, "run 1 signal");
	tap_ok(runs[0].uuid && strlen(runs[0].uuid) == 36 && strcmp(runs[0].uuid, runs[1].uuid),
	       "runs have distinct uuids");
	tap_is_int(runs[1].origin_run, 2, "provenance: own index");
	store_runs_free(runs, n);
	tap_is_int(store_load_run(s, 2, &one), 0, "load one run");
	tap_is_int((long long)one.seed, 99, "its seed");
	tap_is_str(one.strategy_config_json, "{\"noise\":\"yield\"}", "its strategy config");
	store_run_clear(&one);
	store_load_run_blobs(s, 1, &blob, &blen, &out, &err);
	tap_ok(blen == 3 && !memcmp(blob, "\x01\x02\x03", 3), "decision log blob round trip");
	tap_ok(out && err && !strcmp(out, "hello") && !strcmp(err, "oops"),
	       "failing run keeps stdout/stderr");
	free(blob);
	free(out);
	free(err);
	store_load_run_blobs(s, 2, &blob, &blen, &out, &err);
	tap_ok(!out && !err, "passing run drops its output");
	free(blob);
	store_coverage_series(s, "sp", &pts, &npts);
	tap_ok(npts == 2 && pts[0].covered == 1 && pts[1].covered == 2 && pts[1].new_tasks == 1,
	       "coverage series per run");
	free(pts);
	tap_is_int(store_get_site(s, b, &got), 0, "get site");
	tap_is_str(got.function, "main", "site function");
	tap_is_int(store_get_campaign(s, &c), 0, "campaign row");
	tap_ok(c.host && c.kernel && c.version && c.created_ns > 0 && c.seed == 42,
	       "campaign host/kernel/version/created filled");
	store_campaign_free(&c);
	store_close(s);
}

/* The controller dies (SIGKILL) with a run's transaction open. */
static void test_killed_mid_run(void)
{
	const char *keys[] = { "@1>@1", "@1>@2" };
	struct store_run *runs;
	struct report_options ro = { .dir = path("killed") };
	struct report *r = NULL;
	struct store *s;
	struct stat sb;
	int status, i;
	size_t n;
	pid_t pid;

	s = create(path("killed"), "h1");
	run_with(s, 1, keys, 1, "pass");
	run_with(s, 2, keys, 2, "pass");
	store_close(s);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		struct store_run_info ri = { .seed = 1 };
		char key[32];
		int64_t run;

		if (store_open(path("killed"), false, &s) || store_begin_run(s, &ri, &run))
			_exit(3);
		/* A tiny page cache makes SQLite spill the uncommitted run
		 * into the WAL: recovery must ignore those frames. */
		sqlite3_exec(store_sqlite(s), "PRAGMA cache_size=8", NULL, NULL, NULL);
		for (i = 0; i < 20000; i++) {
			snprintf(key, sizeof(key), "@%d>@%d", i, i + 1);
			store_cover_task(s, "map", key, 1);
		}
		site(s, "lost", 0x999);
		raise(SIGKILL);
		_exit(4);
	}
	waitpid(pid, &status, 0);
	tap_ok(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL, "writer killed mid-run");
	tap_ok(stat(path("killed/campaign.db-wal"), &sb) == 0 && sb.st_size > 0,
	       "uncommitted pages of the killed run are in the WAL");
	tap_is_int(store_open(path("killed"), false, &s), 0, "reopen after SIGKILL");
	if (!s)
		return;
	store_load_runs(s, &runs, &n);
	tap_is_int(n, 2, "committed runs survive, the run in flight is gone");
	store_runs_free(runs, n);
	tap_is_int(store_count_tasks(s, "map"), 0, "no task of the killed run");
	tap_is_int(store_count_tasks(s, "sp"), 2, "tasks of committed runs kept");
	tap_is_int(report_load(s, &ro, &r), 0, "report loads a killed campaign");
	report_free(r);
	tap_is_int(run_with(s, 3, keys, 1, "pass"), 3, "campaign continues after recovery");
	store_close(s);
}

static void test_merge(void)
{
	const char *ka[] = { "@1>@2", "@2>@2" };
	struct store *a, *b, *c, *x;
	struct store_run *runs;
	int64_t sa1, sa2, sb1, sb2, first = 0, fs[1];
	size_t n;
	int added;
	char key[32];

	a = create(path("ma"), "same");
	b = create(path("mb"), "same");
	x = create(path("mx"), "other");
	/* A sees sites f, g as 1, 2; B sees them in the other order. */
	sa1 = site(a, "f", 0x100);
	sa2 = site(a, "g", 0x200);
	sb2 = site(b, "g", 0x200);
	sb1 = site(b, "f", 0x100);
	tap_ok(sa1 == 1 && sa2 == 2 && sb2 == 1 && sb1 == 2, "site ids differ between campaigns");
	run_with(a, 100, ka, 2, "pass");			  /* A run 1 at t=100: f>g, g>g */
	run_with(a, 300, (const char *[]){ "@1>@1" }, 1, "pass"); /* f>f */
	/* B: g>f new; f>g (written @2>@1 in B) first at t=50, earlier than A. */
	run_with(b, 50, (const char *[]){ "@2>@1" }, 1, "pass");
	{
		struct store_run_info ri = { .seed = 5, .started_ns = 200000000000LL };
		struct store_run_result res = { .outcome = "signal", .signal = 11 };
		int64_t run;

		store_begin_run(b, &ri, &run);
		store_cover_task(b, "sp", "@1>@2", 4);
		fs[0] = sb1;
		store_record_failure(b, "signal", "killed by SIGSEGV", NULL, fs, 1);
		store_record_warning(b, "race", "x", fs, 1, NULL, NULL);
		store_end_run(b, &res);
	}
	tap_is_int(store_merge(x, a), -EXDEV, "merge refuses a different binary");
	c = create(path("mc"), "same");
	tap_is_int(store_merge(c, a), 2, "merge A: 2 runs");
	added = store_merge(c, b);
	tap_is_int(added, 2, "merge B: 2 runs");
	tap_is_int(store_count_tasks(c, "sp"), 4, "tasks unioned (f>g, g>g, f>f, g>f)");
	hits_of(c, "sp", "@1>@2", &first);
	tap_is_int(first, 3, "f>g first covered by B's earlier run (index 3 in C)");
	tap_is_int(hits_of(c, "sp", "@1>@2", NULL), 2, "f>g hits from both campaigns");
	snprintf(key, sizeof(key), "@%lld>@%lld", (long long)sa2, (long long)sa1);
	tap_ok(hits_of(c, "sp", key, &first) == 4 && first == 4,
	       "B's key @1>@2 (g>f) remapped to C's ids");
	store_load_runs(c, &runs, &n);
	tap_ok(n == 4 && runs[2].origin_run == 1 && runs[3].origin_run == 2 &&
		       runs[2].origin_campaign && runs[0].origin_campaign &&
		       strcmp(runs[0].origin_campaign, runs[2].origin_campaign),
	       "runs appended with provenance");
	store_runs_free(runs, n);
	tap_is_int(store_merge(c, a), 0, "merging A again adds no run");
	tap_is_int(store_merge(c, b), 0, "merging B again adds no run");
	tap_is_int(store_merge(c, c), 0, "merging C into itself adds no run");
	tap_is_int(store_count_tasks(c, NULL), 4, "task count unchanged");
	tap_is_int(hits_of(c, "sp", "@1>@2", NULL), 2, "hits not double counted");
	{
		struct report_options ro = { .dir = "mc" };
		struct report *r = NULL;

		report_load(c, &ro, &r);
		tap_ok(r && report_model_failure_count(r) == 1, "merged failure kept with its run");
		report_free(r);
	}
	store_close(a);
	store_close(b);
	store_close(c);
	store_close(x);
}

/* Every row of every table, in order, as text (blobs in hex). */
static char *dump(struct store *s)
{
	static const char *const tables[] = { "campaign",     "schema_version", "runs",
					      "sites",	      "tasks",		"task_hits",
					      "requirements", "failures",	"failure_sites",
					      "warnings",     "warning_sites",	"inputs" };
	char *buf = NULL;
	size_t len = 0, t;
	FILE *f = open_memstream(&buf, &len);

	for (t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
		char *sql = xasprintf("SELECT * FROM %s ORDER BY 1, 2", tables[t]);
		sqlite3_stmt *st = NULL;

		fprintf(f, "[%s]\n", tables[t]);
		if (sqlite3_prepare_v2(store_sqlite(s), sql, -1, &st, NULL) == SQLITE_OK)
			while (sqlite3_step(st) == SQLITE_ROW) {
				int i, n = sqlite3_column_count(st);

				for (i = 0; i < n; i++) {
					const unsigned char *b = sqlite3_column_blob(st, i);
					int k, bl = sqlite3_column_bytes(st, i);

					if (sqlite3_column_type(st, i) == SQLITE_BLOB)
						for (k = 0; k < bl; k++)
							fprintf(f, "%02x", b[k]);
					else if (sqlite3_column_type(st, i) == SQLITE_NULL)
						fputs("NULL", f);
					else
						fputs((const char *)sqlite3_column_text(st, i), f);
					fputc('|', f);
				}
				fputc('\n', f);
			}
		else
			fprintf(f, "cannot read %s\n", tables[t]);
		sqlite3_finalize(st);
		free(sql);
	}
	fclose(f);
	return buf;
}

static int to_file(char kind, const void *data, size_t len, void *arg)
{
	return stream_write(*(int *)arg, kind, data, len);
}

struct replica_rx {
	const char *dir;
	struct store *st;
	int snapshots, changesets, ends, progress;
};

static int apply_record(char kind, const void *data, size_t len, void *arg)
{
	struct replica_rx *rx = arg;

	switch (kind) {
	case STREAM_SNAPSHOT:
		rx->snapshots++;
		return store_replica_create(rx->dir, data, len, &rx->st);
	case STREAM_CHANGESET:
		rx->changesets++;
		return rx->st ? store_replica_apply(rx->st, data, len) : -EPROTO;
	case STREAM_END:
		rx->ends++;
		return 0;
	default:
		rx->progress++;
		return 0;
	}
}

/* Feed the records in fd's file to a replica at dir, chunk bytes at a time. */
static int replay_file(const char *file, const char *dir, size_t chunk, struct replica_rx *rx)
{
	struct stream_reader rd = { 0 };
	size_t len = 0, off;
	char *data = file_read(file, &len);
	int err = data ? 0 : -EIO;

	memset(rx, 0, sizeof(*rx));
	rx->dir = dir;
	for (off = 0; !err && off < len; off += chunk)
		err = stream_feed(&rd, data + off, len - off < chunk ? len - off : chunk,
				  apply_record, rx);
	if (!err && stream_pending(&rd))
		err = -EPIPE;
	stream_reader_free(&rd);
	free(data);
	return err;
}

/* test_store.t --count DIR SQL: open DIR for writing, count, close; the
 * count is the exit status. A process of its own (exec'd, not only forked:
 * a forked child shares SQLite's view of the parent's open files). */
static int count_main(const char *dir, const char *sql)
{
	struct store *s = NULL;
	sqlite3_stmt *st = NULL;
	int n = -1;

	if (store_open(dir, false, &s))
		return 255;
	if (sqlite3_prepare_v2(store_sqlite(s), sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		n = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	store_close(s);
	return n < 0 ? 255 : n;
}

static int child_count(const char *dir, const char *sql)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0) {
		execl("/proc/self/exe", "test_store.t", "--count", dir, sql, (char *)NULL);
		_exit(254);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

static void test_replicate(void)
{
	static const char *const k1[] = { "@1>@2", "@2>@1" }, *const k2[] = { "@1>@2", "@3>@1" };
	struct store_run_info ri = { .seed = 9, .strategy_config_json = "{\"x\":1}" };
	struct store_run_result fail = { .outcome = "assertion",
					 .summary = "boom",
					 .declog = "\x01\x02\x00\x03",
					 .declog_len = 4,
					 .out = "o",
					 .out_len = 1,
					 .err = "e\n",
					 .err_len = 2 };
	struct store *a, *b;
	struct replica_rx rx;
	char *da, *db;
	int64_t run, s1, s2, sites[2];
	int fd, st;

	a = create(path("src"), "00000000000000aa");
	fd = open(path("records"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	tap_ok(a && fd >= 0, "source campaign and a record file");
	tap_is_int(store_replicate(a, to_file, &fd), 0, "replication starts (snapshot sent)");
	/* Outside a run, a run, a failing run with sites and a warning, an
	 * aborted run, and one after it. */
	tap_is_int(store_add_requirement(a, "sp", "@1>@2", "estimate"), 0, "requirement");
	tap_ok(run_with(a, 1, k1, 2, "pass") == 1, "run 1 committed");
	st = store_begin_run(a, &ri, &run);
	s1 = site(a, "main", 10);
	s2 = site(a, "worker", 20);
	sites[0] = s1;
	sites[1] = s2;
	store_cover_task(a, "sp", "@1>@2", 3);
	tap_ok(!st && store_record_failure(a, "assertion", "boom", "detail", sites, 2) > 0 &&
		       store_record_warning(a, "race", "x", sites, 2, "[1,2]", "[]") == 0 &&
		       store_end_run(a, &fail) == 0,
	       "run 2 with a failure, sites and a warning");
	st = store_begin_run(a, &ri, &run);
	store_cover_task(a, "sp", "@9>@9", 1);
	site(a, "gone", 99);
	store_abort_run(a);
	tap_is_int(st, 0, "run 3 begun, then aborted");
	tap_ok(run_with(a, 4, k2, 2, "pass") == 3, "the next run is index 3");
	da = dump(a);
	store_close(a);
	close(fd);

	tap_is_int(replay_file(path("records"), path("dst"), 7, &rx), 0,
		   "the records apply to a copy, 7 bytes at a time");
	tap_ok(rx.snapshots == 1 && rx.changesets >= 3 && rx.ends == 1,
	       "one snapshot, a changeset per commit, one end (%d changesets)", rx.changesets);
	db = rx.st ? dump(rx.st) : NULL;
	tap_ok(da && strstr(da, "[runs]\n1|") && strstr(da, "\n3|") && !strstr(da, "@9>@9"),
	       "the source holds runs 1-3 and nothing of the aborted run");
	tap_is_str(db, da, "the copy equals the source, table by table");
	free(db);
	/* Another process opens the copy and closes it while the copy is
	 * open here (report during run --vm); what is written here next must
	 * be seen by the next reader. */
	tap_is_int(child_count(path("dst"), "SELECT count(*) FROM requirements"), 1,
		   "another process reads the open copy");
	tap_is_int(store_add_requirement(rx.st, "sp", "@5>@6", "late"), 0, "a write after it");
	tap_is_int(child_count(path("dst"), "SELECT count(*) FROM requirements"), 2,
		   "the next reader sees it (the first reader's close kept our WAL)");
	store_close(rx.st);

	tap_is_int(replay_file(path("records"), path("dst2"), 1 << 20, &rx), 0,
		   "the same records in one chunk");
	db = rx.st ? dump(rx.st) : NULL;
	tap_is_str(db, da, "that copy equals the source too");
	free(db);
	store_close(rx.st);
	tap_is_int(replay_file(path("records"), path("dst"), 4096, &rx), -EEXIST,
		   "a copy is never made over an existing campaign");
	store_close(rx.st);

	/* A changeset applied twice conflicts with its own rows. */
	tap_is_int(store_open(path("dst2"), false, &b), 0, "open the copy");
	{
		struct stream_reader rd = { 0 };
		size_t len = 0;
		char *data = file_read(path("records"), &len);
		/* The second record is the first changeset: skip the snapshot. */
		uint32_t slen = (uint8_t)data[3] | (uint8_t)data[4] << 8 |
				(uint32_t)(uint8_t)data[5] << 16 | (uint32_t)(uint8_t)data[6] << 24;
		const char *cs = data + 7 + slen;
		uint32_t clen = (uint8_t)cs[3] | (uint8_t)cs[4] << 8 |
				(uint32_t)(uint8_t)cs[5] << 16 | (uint32_t)(uint8_t)cs[6] << 24;

		tap_ok(cs[2] == STREAM_CHANGESET && store_replica_apply(b, cs + 7, clen) < 0,
		       "a changeset applied twice is refused (a copy that differs stops)");
		tap_is_int(stream_feed(&rd, "CSX\000\000\000\000", 7, apply_record, &rx), 0,
			   "an unknown kind is passed on");
		tap_is_int(stream_feed(&rd, "XY\001\000\000\000\000", 7, apply_record, &rx),
			   -EPROTO, "a record without its magic breaks the stream");
		tap_is_int(stream_feed(&rd, "CS", 2, apply_record, &rx), -EPROTO,
			   "and everything after it is dropped");
		stream_reader_free(&rd);
		free(data);
	}
	db = dump(b);
	tap_is_str(db, da, "a refused changeset left the copy as it was");
	free(db);
	store_close(b);
	free(da);
}

/* A run's schedule names each step by its site; a point that has none (a
 * thread's start or exit, the program's exit) was recorded as -(op + 1)
 * (run/onerun.c) and is named by what it is, not "?". */
static void test_schedule_points(void)
{
	struct store *s = create(path("sched"), "h1");
	struct sched_view v = { 0 };
	struct declog dl;
	uint8_t *blob = NULL;
	size_t len = 0;
	struct store_site anon = { .object = "/usr/lib/x86_64-linux-gnu/libc.so.6",
				   .offset = 0x2a1c9 };
	int64_t run, teller;
	char *text = NULL;
	size_t tlen = 0;
	FILE *f;

	teller = site(s, "teller", 40);
	run = run_with(s, 1, NULL, 0, "assertion");
	declog_init(&dl, 7, "{}");
	declog_name_thread(&dl, 1, "0");
	declog_name_thread(&dl, 2, "0.1");
	declog_add(&dl, 2, 0, 0, DECLOG_PASS, -(int64_t)CS_OP_START - 1);
	declog_add(&dl, 2, 0, 1, DECLOG_PASS, teller);
	declog_add(&dl, 2, 0, 2, DECLOG_PASS, -(int64_t)CS_OP_EXIT - 1);
	declog_add(&dl, 1, 0, 0, DECLOG_PASS, -(int64_t)CS_OP_PROC_EXIT - 1);
	declog_add(&dl, 1, 0, 1, DECLOG_PASS, 0);
	declog_add(&dl, 1, 0, 2, DECLOG_PASS, store_add_site(s, &anon));
	tap_ok(!declog_encode(&dl, &blob, &len) && !store_set_declog(s, run, blob, len),
	       "schedule: a run with six passes stored");
	tap_is_int(schedule_load(s, run, &v), 0, "schedule: loaded");
	tap_is_int((int)v.nsteps, 6, "schedule: six steps");
	if (v.nsteps == 6) {
		tap_is_str(v.steps[0].function, "(thread start)", "a thread's start is named");
		tap_is_str(v.steps[1].function, "teller", "a call site by its function");
		tap_is_int(v.steps[1].line, 40, "... and line");
		tap_is_str(v.steps[2].function, "(thread exit)", "a thread's exit is named");
		tap_is_str(v.steps[3].function, "(program exit)", "the program's exit is named");
		tap_ok(!v.steps[4].function, "a point of an unknown site has no name");
		tap_is_str(v.steps[5].function, "libc.so.6+0x2a1c9",
			   "a site without a function: its object and offset");
	} else {
		for (int i = 0; i < 7; i++)
			tap_skip("no six steps", "a step's name");
	}
	f = open_memstream(&text, &tlen);
	schedule_write_text(&v, f);
	fclose(f);
	tap_ok(strstr(text, "(program exit)") && strstr(text, "teller prog.c:40"),
	       "report --schedule's text names the points");
	free(text);
	free(blob);
	declog_free(&dl);
	schedule_free(&v);
	store_close(s);
}

int main(int argc, char **argv)
{
	char cmd[128];

	if (argc == 4 && !strcmp(argv[1], "--count"))
		return count_main(argv[2], argv[3]);
	snprintf(tmp, sizeof(tmp), "/tmp/cs-store-XXXXXX");
	if (!mkdtemp(tmp))
		return 1;
	tap_plan(113);
	test_open_errors();
	test_runs();
	test_killed_mid_run();
	test_merge();
	test_replicate();
	test_schedule_points();
	snprintf(cmd, sizeof(cmd), "rm -rf %s", tmp);
	if (system(cmd))
		tap_diag("cannot remove %s", tmp);
	return tap_done();
}
