/* SPDX-License-Identifier: MIT */
/*
 * Access probes (issue 7 items 2-3): load probes/access.bpf.c, give it the
 * site decode table (cookie i = set->sites[i]), attach one uprobe.multi link
 * per object by file offset (KERNEL.md Q5: libbpf 1.4.6 cannot resolve libc
 * symbols for uprobe.multi) filtered to one process, and collect the
 * executed accesses from the ring buffer. Attach before the target execs
 * (launcher gate, launcher.h): uprobes are per inode, so they are live as
 * soon as exec maps the program; the pid filter follows the exec.
 *
 * Then shared-variable discovery: addresses touched by two or more threads,
 * excluding thread stacks, mapped to variables (global symbol; else heap /
 * anonymous memory, named by the site of its first access), with the sites
 * that touched them (placement sharedVar, ALGORITHMS.md §6).
 */
#ifndef CONCSCHED_ACCESS_PROBES_H
#define CONCSCHED_ACCESS_PROBES_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "concsched_abi.h"
#include "kernel/site_finder.h"
#include "kernel/symbolize.h"

struct access_bpf;
struct bpf_link;
struct ring_buffer;

struct access_probes {
	struct access_bpf *skel;
	struct bpf_link **links;
	size_t nlinks;
	struct ring_buffer *rb;
	const struct site_set *set;
	bool *attached_site; /* per site: inside an attached link */
	/* collected events (access_probes_poll) */
	struct cs_access_event *events;
	size_t nevents, cap;
	struct cs_alloc_event *allocs; /* heap allocations (alloc_object) */
	size_t nallocs, alloc_cap;
	bool allocs_tracked; /* allocator probes attached */
	/* report */
	size_t candidates;  /* sites offered */
	size_t attached;    /* sites attached for the run (shed ones too) */
	uint64_t attach_ns; /* wall time of all attach calls */
	int attach_err;	    /* -errno that stopped attaching (not a refusal) */
	char *alloc_object; /* copy of opts->alloc_object */
	pid_t pid;	    /* attached for, 0: none */
	bool run_events;    /* concsched run: access_commit attached too */
	/* concsched run: the site links, for the run's process only (the
	 * kernel puts their breakpoints in its memory alone, not in every
	 * process that maps the file), destroyed at the run's end with its
	 * allocator links (ap->links). */
	struct access_link_group *groups;
	size_t ngroups;
	/* The probe cap (access_probes_shed): the generation of the newest
	 * links (the high half of their cookies), and the sites whose links
	 * were taken away in this run (attached again by the next attach). */
	uint32_t gen;
	bool *shed;
	size_t nshed;
	pthread_t *reapers; /* destroying the links shed let go */
	size_t nreapers;
	/* access_probes_shed_start: the shed on a thread of its own */
	pthread_t shedder;
	bool shedding;
	bool *shed_drop;
	int shed_done; /* atomic: the shedder is done */
	int shed_result;
	uint64_t shed_ns;
};

/* One uprobe_multi link pair on sites of one object (concsched run). */
struct access_link_group {
	struct bpf_link *commit, *hit;
	const char *path; /* the object (the site set's string) */
	size_t *idx;	  /* its sites */
	size_t n;
};

struct bpf_object;

struct access_probes_opts {
	bool record_events;	/* ring buffer on (else counters only) */
	uint32_t ringbuf_bytes; /* 0: 16 MiB */
	/* Object whose malloc/calloc/realloc to follow (access_probes_alloc_object());
	 * NULL: heap blocks are named by their first access only. */
	const char *alloc_object;
	/* concsched run: write struct cs_event into the sync probes' ring
	 * buffer (sync_events_fd, required) and make every access a decision
	 * point of the scheduler (probes/access.bpf.c); record_events is
	 * then ignored. */
	bool run_events;
	int sync_events_fd;
	/* run_events: each site's first steer_cap hits of a run are decision
	 * points, later ones 1 in steer_sample (steer_cap 0: all). */
	uint64_t steer_cap;
	uint32_t steer_sample;
	/* run_events: a site's hits past probe_cap in a run (0: no cap) are not
	 * probed: no event, and access_probes_shed takes its uprobe away. */
	uint64_t probe_cap;
	/* run_events, with probe_cap: the run's budget of hits at its sites
	 * (0: none); once spent, every site hotter than probe_cap / 8 closes
	 * (probes/access.bpf.c). */
	uint64_t probe_budget;
	/* Called between open and load (share the scheduler's maps). */
	int (*before_load)(struct bpf_object *obj, void *arg);
	void *before_load_arg;
};

/* Load, fill the decode table, attach every site of SET for PID (tgid;
 * also the only tgid whose hits count). Sites the kernel refuses (it
 * cannot probe some instructions) are left out by bisection: ap->attached
 * tells how many are live. 0 or -errno (printed, one line). SET must
 * outlive AP. Same as access_probes_load + access_probes_attach. */
int access_probes_open(struct access_probes *ap, const struct site_set *set, pid_t pid,
		       const struct access_probes_opts *opts);
/* The session form (concsched run: loaded once, attached per run): load
 * with the whole decode table of SET (cookie i = set->sites[i]), nothing
 * attached. 0 or -errno (printed). */
int access_probes_load(struct access_probes *ap, const struct site_set *set,
		       const struct access_probes_opts *opts);
/* Attach the sites i with mask[i] (NULL: all) for PID and follow its
 * allocator (opts->alloc_object of the load). Updates attached,
 * attached_site and attach_ns. Every link is PID's own: attach after its
 * exec (a process that still shares the caller's memory would have the
 * breakpoints put in the caller's). 0 or -errno (printed). */
int access_probes_attach(struct access_probes *ap, pid_t pid, const bool *mask);
/* The probe cap: take the uprobes of the sites i with drop[i] away for
 * the rest of the run (a trap costs more than the probe's work), on a
 * thread of its own so that the run's loop goes on (userspace/kernel/
 * access_probes.c, access_probes_shed, says how). Under
 * steering, registering a uprobe can wait for a thread the scheduler keeps
 * parked (up to its watchdog, which would then let it go: a decision no
 * strategy made). 0, or -EBUSY while the last one is not done (the caller
 * must not touch the links meanwhile; every other access_probes_* call
 * waits for it). */
int access_probes_shed_start(struct access_probes *ap, const bool *drop);
/* Has the shed ended (wait: wait for it)? 1 with its result and time, 0
 * still going or none started. */
int access_probes_shed_poll(struct access_probes *ap, bool wait, int *result, uint64_t *ns);
/* Destroy the links only (counters stay readable). */
void access_probes_detach(struct access_probes *ap);
/* The run timeout's grace period: the probes stop for this run's process,
 * their links too (a hit that only returned would still trap, and a
 * single-stepped load costs more than its event), so what is left of the
 * run runs unprobed. The next run attaches them again. 0 or a negative
 * errno (the links are gone either way). */
int access_probes_stop(struct access_probes *ap);
/* Destroy the links, forget the target process and empty the per-run
 * state (pending allocations, hit counters, statistics, collected
 * events); the loaded object serves the next attach. */
void access_probes_reset(struct access_probes *ap);
/* Fd of the allocation ring buffer (struct cs_alloc_event). */
int access_probes_alloc_fd(struct access_probes *ap);
/* The object the program's malloc comes from: PROG itself when it defines
 * malloc (static, or its own allocator), else the libc.so.6 it would load.
 * malloc'd path or NULL. */
char *access_probes_alloc_object(const char *prog);
/* Drain the ring buffers into ap->events and ap->allocs, waiting up to timeout_ms for the
 * first event. Returns events added or -errno. */
int access_probes_poll(struct access_probes *ap, int timeout_ms);
/* Counters summed over CPUs: enum cs_access_stat slot. */
uint64_t access_probes_stat(struct access_probes *ap, enum cs_access_stat slot);
/* Hits of site i (works without events). */
uint64_t access_probes_site_hits(struct access_probes *ap, size_t i);
/* The probe cap at site i in this run: no hit past it, a thread's hits
 * past its cap there (the others' still probed), or the site closed (no
 * hit probed any more; access_probes_shed may take its uprobe away). */
enum access_cap_state { ACCESS_CAP_NONE, ACCESS_CAP_THREAD, ACCESS_CAP_CLOSED };
enum access_cap_state access_probes_site_cap(struct access_probes *ap, size_t i);
/* Detach and free everything (events too). */
void access_probes_close(struct access_probes *ap);

/* ---- shared-variable discovery ---------------------------------------- */

struct shared_var {
	uint64_t addr;	     /* lowest shared address of the variable */
	uint64_t key;	     /* identity: symbol start, allocation call site
			      * (runtime address) or address */
	const char *object;  /* global: object path; NULL heap/anon */
	const char *symbol;  /* global: variable name; NULL unknown */
	uint64_t sym_offset; /* addr - symbol start */
	bool heap;	     /* not in any file mapping */
	size_t first_site;   /* heap: site index of its first access */
	/* heap, when the allocation was seen: its call site (blocks from one
	 * site are one variable, ALGORITHMS.md §8) and requested size */
	bool has_alloc;
	struct sym_site alloc_site;
	uint64_t alloc_size;
	uint32_t nthreads;	/* distinct threads that touched it */
	uint64_t reads, writes; /* accesses (RMW counts as both) */
	size_t *sites;		/* site indexes that touched it, ascending */
	size_t nsites;
};

/* One run's recorded accesses and allocations. */
struct access_trace {
	const struct cs_access_event *events;
	size_t nevents;
	const struct cs_alloc_event *allocs; /* may be NULL */
	size_t nallocs;
	uint64_t stack_top; /* end of "[stack]", access_probes_main_stack_top(); 0 unknown */
};

/* From one run, the variables touched by 2+ threads. Thread stacks are
 * excluded: the main thread's is [stack_top - 8 MiB, stack_top), another
 * thread's is within [min sp - 4 KiB, max sp + 64 KiB] of the stack
 * pointers sampled in its events. A shared address in a global is that
 * variable (all of an array is one); one in a heap block from a recorded
 * allocation is keyed by the allocation's call site (every block from that
 * site is one variable); anything else is a heap address of its own, named
 * by its first access. SZ (may be NULL) resolves addresses; the objects of
 * the sites also resolve them through the load bias seen in the events
 * (probe ip - probe vaddr), so globals resolve even after the process is
 * gone. Returns an array of *nout sorted by address, free with
 * access_probes_shared_vars_free(). If site_shared is not NULL (set->n entries), marks
 * every site that touched a shared variable. */
struct shared_var *access_probes_shared_vars(const struct access_trace *trace,
					     const struct site_set *set, struct symbolizer *sz,
					     size_t *nout, bool *site_shared);
/* End address of PID's "[stack]" mapping, 0 if unknown. Read it while the
 * process is alive (right after exec). */
uint64_t access_probes_main_stack_top(pid_t pid);
void access_probes_shared_vars_free(struct shared_var *v, size_t n);

#endif
