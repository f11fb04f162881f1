// SPDX-License-Identifier: MIT
/*
 * Streaming a campaign (store_replicate, results/stream.h): a snapshot,
 * then a changeset per commit, recorded by SQLite's session extension;
 * and the replica's side, which creates the copy and applies them.
 */
#include "results/store.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/store_db.h"
#include "results/stream.h"
#include "lib/file.h"
#include "lib/log.h"
#include "lib/tree.h"
#include "lib/xalloc.h"

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
	err = store_db_session_new(s);
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
	err = tree_mkdir_p(dir, 0755);
	if (err) {
		log_err("cannot create campaign directory %s: %s", dir, strerror(-err));
		goto out;
	}
	if (stat(db, &sb) == 0) {
		err = -EEXIST;
		log_err("%s already holds a campaign (choose another --out, or remove it)", dir);
		goto out;
	}
	/* Whole or absent: written aside, synced, then renamed into place. */
	fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	err = fd < 0 ? -errno : file_write_all(fd, image, len);
	if (!err && fsync(fd))
		err = -errno;
	/* Closed before SQLite opens the file: closing any descriptor of it
	 * later would drop the POSIX locks SQLite holds on it, and a reader's
	 * close would then take this writer's WAL away. */
	if (fd >= 0 && close(fd) && !err)
		err = -errno;
	fd = -1;
	if (err) {
		log_err("cannot write %s: %s", part, strerror(-err));
		unlink(part);
		goto out;
	}
	if (rename(part, db)) {
		err = -errno;
		log_err("cannot create %s: %s", db, strerror(errno));
		unlink(part);
		goto out;
	}
	err = store_open(dir, false, out);
	if (!err)
		store_db_hand_to_sudo_user(dir, made_dir, db);
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
		log_err("campaign %s: cannot apply what the VM committed: %s", s->dir,
			sqlite3_errstr(rc));
		return sql_errno(rc) ?: -EIO;
	}
	return 0;
}
