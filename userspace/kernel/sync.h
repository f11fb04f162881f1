/* SPDX-License-Identifier: MIT */
/*
 * Synchronization probes (probes/sync.bpf.c) from userspace: find the
 * pthread implementation the target really uses (its libc, or the target
 * itself when static), turn function names into file offsets from the ELF
 * symbol tables (KERNEL.md Q5: libbpf 1.4.6 cannot resolve uprobe_multi
 * symbols in libc.so.6), attach one uprobe.multi entry program and one
 * uretprobe.multi program for a pid (before exec, through the launcher's
 * gate) or system-wide, and detach so that nothing stays registered.
 *
 *   sync_probes_open() -> [sync_probes_track(pid)] -> sync_probes_attach()
 *   -> ring buffer / maps -> sync_probes_detach() -> sync_probes_close()
 *
 * The entry program is named SYNC_ENTRY_PROG: the scheduler attaches its
 * fexit kick to it (bpf/sched_point.bpf.h).
 */
#ifndef CONCSCHED_SYNC_H
#define CONCSCHED_SYNC_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "concsched_abi.h"
#include "kernel/links.h"

#define SYNC_ENTRY_PROG	 "cs_sync_enter"
#define SYNC_RETURN_PROG "cs_sync_return"

struct target_info;
struct sync_bpf;
struct bpf_object;

/* One probed pthread function. */
struct sync_fn_desc {
	enum cs_sync_fn fn;
	const char *name;
	bool ret;      /* also needs the uretprobe (outcome)         */
	bool required; /* every libc with pthread has it            */
};
extern const struct sync_fn_desc sync_fns[];
extern const size_t sync_nfns;
const char *sync_fn_name(unsigned fn);

/* The pthread implementation of a target. */
struct sync_runtime {
	char object[PATH_MAX]; /* file the probes attach to (libc or the
				* static target itself)                    */
	char ldso[PATH_MAX];   /* dynamic linker, "" for static            */
	bool is_static;
	/* Every library the dynamic linker named (ld.so --list: libc and
	 * the program's own among them), each NUL-terminated, an empty name
	 * last; those past its size are left out. The probes' mapping table
	 * knows inodes, not paths: these give the paths of the libraries of
	 * a process that ends before its maps are read. */
	char libs[8192];
};

/* The libc a program will map, as its dynamic linker resolves it (runs
 * "INTERP --list PROG" as the target's user), or the program itself when
 * static. 0 or -errno (printed). */
int sync_runtime_for_exec(const struct target_info *ti, struct sync_runtime *rt);
/* The libc a running process maps (/proc/PID/maps), or its executable
 * when static. 0 or -errno (printed). */
int sync_runtime_for_pid(pid_t pid, struct sync_runtime *rt);

/* Probe offsets of the probed functions in object (sync_probe_point:
 * at or just after each entry); fills fns/offsets (capacity CS_FN__COUNT),
 * returns how many were found or -errno. Functions sharing one address are
 * probed once (the first name wins). */
int sync_find_offsets(const char *object, enum cs_sync_fn *fns, unsigned long *offsets);

/* An ELF file's executable segment (the first PT_LOAD with PF_X): its
 * file offsets [off_lo, off_hi) and its addresses [va_lo, va_hi) from the
 * load base (the first PT_LOAD's page). */
struct sync_text {
	uint64_t off_lo, off_hi, va_lo, va_hi;
};
/* 0, -ENOENT (no executable segment) or -errno. */
int sync_exec_segment(const char *path, struct sync_text *out);

/* fn is a stdio output function (CS_OP_STDIO): a decision point for the
 * strategies only, no coverage event. */
bool sync_fn_is_stdio(enum cs_sync_fn fn);
/* Drop the stdio output functions from fns/offsets (n of them), keeping
 * the others' order; how many are left. sync_probes_attach does so
 * without the park program (opts.commit): nothing steers there, and every
 * process's printf and fwrite would trap for nothing while the links are
 * attached for every process. */
int sync_drop_stdio(enum cs_sync_fn *fns, unsigned long *offsets, int n);

/* Where fn's entry probe sits, the function at file offset off (size
 * bytes) of object: the first instruction the kernel emulates in the trap
 * (a branch or a push: no single-step) when the instructions before it
 * change nothing the entry program reads (stack pointer, argument
 * registers) and write no memory, and no branch of the body lands between;
 * else off itself. sync_probe_point.c. */
uint64_t sync_probe_point(const char *object, uint64_t off, uint64_t size, enum cs_sync_fn fn);

/* Helpers of the above, exposed for tests. */
/* Path of the first "NAME => /path (0x...)" line of `ld.so --list`
 * output whose name starts with libname. 0 or -ENOENT. */
int sync_parse_ldso_list(const char *out, const char *libname, char *path, size_t len);
/* Every "=> /path" of `ld.so --list` output into libs (rt->libs's form);
 * how many. */
size_t sync_parse_ldso_libs(const char *out, char *libs, size_t len);
/* The function at file offset off starts with a lock-prefixed instruction
 * (x86 uprobes refuse those). */
bool sync_starts_with_lock_prefix(const char *object, uint64_t off);
/* glibc's pthread_spin_lock shape at off: move *off to its success return
 * ("xor %eax,%eax; ret") and return true. */
bool sync_spin_lock_success_return(const char *object, uint64_t *off);

struct sync_probe_opts {
	enum cs_sync_scope scope;
	bool follow_forks;
	const char *comm;   /* CS_SCOPE_ALL filter, NULL: any          */
	uint64_t cgroup_id; /* CS_SCOPE_ALL filter, 0: any             */
	uint32_t cgroup_level;
	size_t ringbuf_bytes; /* 0: default (8 MiB)                      */
	/* Also attach cs_sync_commit, the program that parks a thread its
	 * point marked (needed when the scheduler steers; a cost otherwise). */
	bool commit;
	/* Called between open and load, e.g. to share the scheduler's maps
	 * (bpf_map__reuse_fd on cs_thread_ctl, cs_sched_cfg_map, ...). */
	int (*before_load)(struct bpf_object *obj, void *arg);
	void *before_load_arg;
};

#define SYNC_MAX_LINKS 16

struct sync_probes {
	struct sync_bpf *skel;
	struct bpf_link *links[SYNC_MAX_LINKS];
	int nlinks;
	struct links_reaper reaper;	       /* destroying a run's process's links */
	int nprobes;			       /* functions attached                      */
	enum cs_sync_fn skipped[CS_FN__COUNT]; /* found but not probeable   */
	int nskipped;
	struct sync_probe_opts opts;
	/* Attached for every process (pid -1) on this object: the links
	 * serve every run of a campaign (sync_probes_end_run). */
	bool attached_all;
	char attached_object[PATH_MAX];
	/* The last harvest emptied the per-run coverage maps (syncov_harvest
	 * with take): sync_probes_reset need not walk them again. */
	bool harvest_emptied;
	/* Per counting map (enum cs_keylog_slot): the count of its key log
	 * the harvest took by key (-1: it walked the map). A count grown
	 * since (a process left behind still ran) makes the reset walk it. */
	long long keylog_taken[CS_KEYLOG__COUNT];
};

/* Open and load the BPF object. 0 or -errno (printed). */
int sync_probes_open(struct sync_probes *sp, const struct sync_probe_opts *o);
/* Record tgid as a target (CS_SCOPE_TRACKED). 0 or -errno. */
int sync_probes_track(struct sync_probes *sp, pid_t tgid);
/* The file (dev as the kernel encodes it, inode) has a path the caller
 * knows: a mapping of it no longer flags its event CS_EV_NEWFILE (nor
 * wakes the reader for it). Forgotten at sync_probes_reset. 0 or -errno. */
int sync_probes_know_file(struct sync_probes *sp, uint32_t dev, uint64_t ino);
/* Attach the fork/exit/exec tracepoints and the uprobes on rt's object for
 * pid (-1: every process). Calls from rt's libc and ld.so are marked as
 * internal. 0 or -errno (printed). */
int sync_probes_attach(struct sync_probes *sp, const struct sync_runtime *rt, pid_t pid);
/* Destroy every link (uprobes unregistered). Safe to call twice. */
void sync_probes_detach(struct sync_probes *sp);
/* A run's processes are done: no more events from them. Links attached
 * for every process stay for the next run (sync_probes_attach on the same
 * object keeps them: unregistering uprobes costs ~30 ms a link); links
 * attached for one pid are destroyed on a thread of their own (the caller
 * does not wait; sync_probes_detach and _close wait for them). */
void sync_probes_end_run(struct sync_probes *sp);
void sync_probes_close(struct sync_probes *sp);
/* Empty every per-run map (threads, locks, coverage, mappings,
 * counters) so the loaded object serves the next run. 0 or -errno. */
int sync_probes_reset(struct sync_probes *sp);
/* Sum of the per-CPU counters, indexed by enum cs_sync_stat. */
int sync_probes_stats(struct sync_probes *sp, uint64_t out[CS_SSTAT__COUNT]);
/* Map fds for consumers (ring buffer, coverage maps). */
int sync_probes_map_fd(struct sync_probes *sp, const char *name);

#endif
