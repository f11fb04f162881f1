// SPDX-License-Identifier: MIT
/*
 * The campaign store's database files and handle (store_db.h): who owns
 * them when root made them through sudo, and the recording of committed
 * changes that replication (store_replica.c) sends.
 */
#include "results/store_db.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/stream.h"
#include "lib/log.h"
#include "lib/parse.h"
#include "lib/xalloc.h"

/* When root runs a campaign through sudo, the results belong to the user.
 * The directory changes hands only when store_create made it: `-o /tmp`
 * must not give /tmp away. */
void store_db_hand_to_sudo_user(const char *dir, bool made_dir, const char *db)
{
	const char *u = getenv("SUDO_UID"), *g = getenv("SUDO_GID");
	uint64_t uid, gid;
	char *p;

	if (geteuid() != 0 || !u || !g || parse_u64(u, &uid) || parse_u64(g, &gid))
		return;
	if ((made_dir && chown(dir, uid, gid)) || chown(db, uid, gid))
		log_warn("cannot give %s to uid %llu: %s", dir, (unsigned long long)uid,
			 strerror(errno));
	p = xasprintf("%s-wal", db);
	if (chown(p, uid, gid) && errno != ENOENT)
		log_debug("chown %s: %s", p, strerror(errno));
	free(p);
	p = xasprintf("%s-shm", db);
	if (chown(p, uid, gid) && errno != ENOENT)
		log_debug("chown %s: %s", p, strerror(errno));
	free(p);
}

int store_db_session_new(struct store *s)
{
	int rc;

	if (s->sess)
		sqlite3session_delete(s->sess);
	s->sess = NULL;
	rc = sqlite3session_create(s->db, "main", &s->sess);
	if (rc == SQLITE_OK)
		rc = sqlite3session_attach(s->sess, NULL);
	if (rc != SQLITE_OK) {
		log_warn("campaign %s: cannot record changes to stream them: %s", s->dir,
			 sqlite3_errstr(rc));
		return sql_errno(rc) ?: -EIO;
	}
	return 0;
}

static void repl_stop(struct store *s, const char *what, int err)
{
	log_warn("campaign %s: streaming stopped (%s: %s); the campaign stays whole where it "
		 "is written",
		 s->dir, what, strerror(-err));
	s->repl = NULL;
	if (s->sess)
		sqlite3session_delete(s->sess);
	s->sess = NULL;
}

/* Send what committed since the last record, and record afresh. */
void store_db_flush(struct store *s)
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
	else if (store_db_session_new(s))
		s->repl = NULL;
}
