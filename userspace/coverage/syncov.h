/* SPDX-License-Identifier: MIT */
/*
 * Synchronization coverage of one run in a run-comparable form: the tasks
 * the sync probes aggregated in their BPF maps — SP pairs <loc_last, loc>
 * (ALGORITHMS.md §1), GoodLock*, HBPair* and Sync (§4) — with every raw
 * address turned into a site "OBJECT+0xOFFSET" and every lock and thread
 * into an abstract identity (§8), so the same task in two runs has the
 * same key string.
 *
 * Sites: the probe records each mapping a site lives in (cs_sync_vmas:
 * start, end, file offset, dev/inode), so an address becomes
 * object+offset even after the process exited. The object's path comes
 * from an inode table filled from paths we know (the target, its libc,
 * /proc/PID/maps while it lives); an object never seen by path keeps the
 * basename the kernel gave.
 *
 * Abstract locks: a lock in a file-backed data mapping (a global) is its
 * object+offset; any other (heap, stack) is "KIND@first-use-site".
 * Abstract threads: "main" for a main thread, else a hash of (creation
 * site, start routine, sites of its first CS_THREAD_SIG_N actions).
 */
#ifndef CONCSCHED_SYNCOV_H
#define CONCSCHED_SYNCOV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "concsched_abi.h"

enum syncov_metric {
	SYNCOV_SP = 0,
	SYNCOV_GOODLOCK,
	SYNCOV_HBPAIR,
	SYNCOV_SYNC,
	SYNCOV__COUNT,
};
const char *syncov_metric_name(unsigned metric); /* "sp", "goodlock", ... */

/* ---- sites ------------------------------------------------------------ */

struct site_vma {
	uint32_t tgid, gen;
	uint64_t start, end, pgoff, ino;
	uint32_t dev;
	bool file;
	char name[CS_VMA_NAME_LEN];
};

struct site_inode {
	uint64_t ino;
	uint32_t dev;
	char *path;
};

struct sync_probes;

struct site_resolver {
	struct site_vma *vmas;
	size_t nvmas, capvmas;
	struct site_inode *inodes;
	size_t ninodes, capinodes;
	struct site_inode *misses; /* searched for, not found (path NULL) */
	size_t nmisses, capmisses;
};

/* A resolved address: object (path, or kernel basename) + file offset. */
struct site_ref {
	const char *object; /* NULL: not in a file mapping                 */
	uint64_t offset;    /* file offset; the raw address if no object   */
};

void syncov_resolver_init(struct site_resolver *r);
void syncov_resolver_free(struct site_resolver *r);
/* Teach it a path (stat: dev/inode). Silently ignores missing files. */
void syncov_resolver_add_path(struct site_resolver *r, const char *path);
/* Each path of a list of NUL-terminated names ended by an empty one
 * (struct sync_runtime libs). */
void syncov_resolver_add_paths(struct site_resolver *r, const char *list);
/* Every path from knows (syncov_resolver_add_path's, without its stat). */
void syncov_resolver_copy_paths(struct site_resolver *r, const struct site_resolver *from);
/* Every file mapped by pid right now. 0 or -errno (process gone). */
int syncov_resolver_scan_pid(struct site_resolver *r, pid_t pid);
/* Tell sp's probes the files r has paths for, those from *told on (then
 * *told = all of them): their mappings stop flagging CS_EV_NEWFILE. */
void syncov_resolver_tell(const struct site_resolver *r, struct sync_probes *sp, size_t *told);
/* Load the probe's mapping table (cs_sync_vmas fd), then name the files
 * no maps read named (syncov_resolver_learn_exec for each entry of the
 * cs_sync_execs fd, if >= 0; syncov_resolver_search with $PATH). 0 or
 * -errno. */
int syncov_resolver_load_vmas(struct site_resolver *r, int vmas_fd, int execs_fd);
/* dev/ino was exec'd by name (absolute, or relative to the working
 * directory): its path, if the file there is still dev/ino. */
void syncov_resolver_learn_exec(struct site_resolver *r, uint32_t dev, uint64_t ino,
				const char *name);
/* Each file mapping whose file has no path yet: the file of its basename
 * in the directory of a file with a path, or in one of search_path's
 * (":"-separated, may be NULL), if it is the same dev/ino. What a run's
 * sites are named by so depends on the files, not on whether the
 * controller read a short-lived process's maps in time. */
void syncov_resolver_search(struct site_resolver *r, const char *search_path);
void syncov_resolver_add_vma(struct site_resolver *r, const struct site_vma *v);
/* Resolve; returns 0, or -ENOENT (out->object NULL, offset = addr). */
int syncov_resolve(const struct site_resolver *r, uint32_t tgid, uint32_t gen, uint64_t addr,
		   struct site_ref *out);
/* "OBJECT+0xOFF", or "0xADDR" when unresolved. Returns buf. */
char *syncov_site_key(const struct site_ref *s, char *buf, size_t len);

/* ---- abstract identities ---------------------------------------------- */

const char *syncov_obj_kind_name(unsigned kind); /* "mutex", ... */
/* "T" + 12 hex digits over the site keys (pure: same inputs, same id). */
void syncov_thread_id(const char *create_key, const char *start_key, const char *const *first_keys,
		      size_t nfirst, char out[16]);
/* Lock identity: object+offset of a global, else KIND@first-use-site. */
void syncov_lock_id(const char *data_key, unsigned kind, const char *first_site_key, char *out,
		    size_t len);

/* ---- task sets ---------------------------------------------------------- */

#define SYNCOV_MAX_SITES 2

struct syncov_task {
	unsigned metric;
	char *key; /* the run-comparable identity     */
	uint64_t hits;
	char *sites[SYNCOV_MAX_SITES]; /* site keys the task mentions      */
	unsigned nsites;
	char *detail; /* kind/mode, lock and thread ids   */
};

struct syncov_set {
	struct syncov_task *tasks;
	size_t n, cap;
};

void syncov_set_init(struct syncov_set *s);
void syncov_set_free(struct syncov_set *s);
/* Add hits to the task with this key, creating it. */
struct syncov_task *syncov_set_add(struct syncov_set *s, unsigned metric, const char *key,
				   uint64_t hits);
struct syncov_task *syncov_set_find(const struct syncov_set *s, const char *key);
size_t syncov_set_count(const struct syncov_set *s, unsigned metric);
/* Sort by metric, then key (stable output). */
void syncov_set_sort(struct syncov_set *s);

/* Task keys (pure). Site arguments are site keys; ids abstract ids. */
char *syncov_key_sp(const char *site_last, const char *site);
char *syncov_key_goodlock(const char *held_site, const char *req_site, const char *held_lock,
			  const char *req_lock, const char *thread);
char *syncov_key_hb(unsigned kind, const char *site1, const char *site2, const char *obj,
		    const char *t1, const char *t2);
char *syncov_key_sync(unsigned mode, const char *site);
const char *syncov_hb_kind_name(unsigned kind);
const char *syncov_sync_mode_name(unsigned mode);

/* ---- one run's harvest ---------------------------------------------------- */

/* Abstract id of each thread the probe saw (cs_sync_threads). */
struct syncov_thread {
	uint32_t tgid, gen, tid, parent_tid;
	bool main, created, exited;
	uint64_t create_site, start_routine;
	char id[16];
};

struct syncov_run {
	struct syncov_set tasks;
	struct syncov_thread *threads;
	size_t nthreads;
	uint64_t internal_dropped; /* map entries from libc-internal sites */
};

/* A static target has no object boundary between the program and its
 * libc: there a call made from a function in glibc's reserved namespace
 * (name starting with '_', e.g. _dl_allocate_tls_init) is libc-internal.
 * s is a return-address site. False for any other object. */
bool syncov_static_internal(const char *static_object, const struct site_ref *s);

/* Read every coverage map of the probes into run-comparable tasks.
 * static_object: the static target (internal-call filter above), or NULL.
 * take: empty the per-run maps as they are read (one walk instead of the
 * read and the next run's reset; sp->harvest_emptied tells the reset). */
int syncov_harvest(struct sync_probes *sp, const struct site_resolver *r, const char *static_object,
		   bool take, struct syncov_run *out);
void syncov_run_free(struct syncov_run *run);
const struct syncov_thread *syncov_run_thread(const struct syncov_run *run, uint32_t tid);

/* Symbolize a site key "OBJECT+0xOFF": ss gets function, file:line (for a
 * call site, the call's line: the return address minus one) and text the
 * printable form "function+0xOFF (file:line)", or the key itself when the
 * object cannot be read. ss->object is NULL when nothing resolved. */
struct sym_site;
void syncov_site_describe(const char *key, struct sym_site *ss, char *text, size_t len);
/* The same for an instruction's own address (an access site): its line as
 * it is, not the byte before's. */
void syncov_insn_describe(const char *key, struct sym_site *ss, char *text, size_t len);

#endif
