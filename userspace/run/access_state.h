/* SPDX-License-Identifier: MIT */
/*
 * The state of `run --access` (access.h) shared by the files that implement
 * it: access.c (the campaign tables, each run's events), access_estimate.c
 * (the estimation's outcome: shared variables, the MAP domain),
 * access_commit.c (a run's tasks and warnings into the store, the
 * campaign's summary) and access_replay.c (a stored run's filters read
 * back). Nothing outside them includes it but tests/unit/test_access_mask.c,
 * which builds a campaign by hand.
 */
#ifndef CONCSCHED_ACCESS_STATE_H
#define CONCSCHED_ACCESS_STATE_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "run/run_types.h"
#include "coverage/metrics.h"
#include "kernel/site_finder.h"
#include "lib/suppress.h"

struct ring_buffer;
struct store;
struct symbolizer;

/* Requirements beyond this many are counted, not stored. */
#define ACCESS_MAX_REQUIREMENTS 20000

/* A variable's identity: a store site id (see the header comment). */
struct acc_var {
	int64_t id;
	bool heap;
	bool shared;
	char *name;	       /* "counter", "heap block allocated at main+0x1d (x.c:10)" */
	uint64_t size;	       /* bytes: the symbol's, or the block's when first seen; 0 unknown */
	bool steer;	       /* map: a write may meet another access concurrently */
	bool cross;	       /* written by one thread, read by another, with no lock in
				* common and in no fork/join order (access_estimate.c) */
	uint64_t est_accesses; /* its accesses in the estimation runs */
	/* estimation: read and write sites */
	uint32_t *reads, *writes;
	uint32_t nreads, nwrites;
};

struct access_campaign {
	struct site_set set; /* candidates (cookie i = set.sites[i]) */
	bool *shared_site;   /* the sites later runs probe */
	size_t nshared_sites;
	int64_t *site_id; /* per candidate: store site id, 0 not yet */
	int64_t *func_id; /* per candidate: store site of its function, -1 none */
	struct acc_var *vars;
	size_t nvars;
	struct cov_u64map var_index; /* var id -> index in vars */
	size_t nshared_vars;
	size_t nsteer;		      /* shared variables map steers (acc_var.steer) */
	struct cov_u64map race_pairs; /* site pair -> index + 1 in race_names */
	char **race_names;	      /* a pair's variable as its first warning named it */
	size_t nrace_names;
	struct suppressions *supp;	/* the defaults and --suppressions */
	uint64_t suppressed;		/* race warnings they kept out of the store */
	struct cov_u64map site_threads; /* estimation: site -> first thread | 2+ bit */
	struct cov_u64map site_held;	/* estimation: site -> index in site_locks */
	struct cov_lockset *site_locks; /* the locks held at every access of a site */
	size_t nsite_locks;
	size_t ncross_vars;  /* variables with cross set */
	uint32_t *cross_ids; /* their ids (cov_event.obj), ascending */
	char **paths;	     /* campaign thread id -> creation path */
	uint32_t npaths;
	/* estimation */
	unsigned est_runs;
	uint64_t est_attach_ns;
	size_t est_attached;
	uint64_t est_accesses, est_dropped;
	double est_cut_s;		/* an estimation run reached this run timeout (0: none) */
	uint64_t *est_site_hits;	/* per candidate: its hits in the estimation runs (BPF's
					 * count, every trap: no event lost to a full ring) */
	struct cov_event *order_events; /* first estimation run, for the site order */
	size_t norder, caporder;
	uint64_t domain;     /* formula (no pruning) */
	uint64_t domain_hb;  /* after happens-before pruning */
	size_t requirements; /* stored */
	/* runs */
	uint64_t attach_ns_total;
	size_t attached_last;
	uint64_t accesses, dropped, warnings;
	uint64_t sync_lost;		 /* synchronization events lost (seq gaps), */
	uint64_t sync_events;		 /* of so many (received + lost) */
	uint64_t unsteered;		 /* hits past a site's steering cap (--steer-cap) */
	uint64_t capped;		 /* sites past the probe cap (--probe-cap), */
	uint64_t capped_runs;		 /* in so many runs */
	uint64_t budget_closed;		 /* sites closed by the probe budget, */
	uint64_t budget_runs;		 /* in so many runs */
	unsigned explored, explored_new; /* exploration runs, those that found more */
	/* replay: the filters read back from the run's JSON */
	char **inc, **exc, **objs;
	size_t ninc, nexc, nobjs;
};

struct heap_block {
	uint64_t start, size, caller;
};

/* An allocation not yet told to the race detector: it is, once the
 * event stream reaches its time (hb.h: the block is a new variable from
 * then on; told at once, an older access of the block's previous life
 * still in the stream would look like one of the new block). */
struct alloc_pending {
	uint64_t ts, addr, size;
};

/* An access a thread is kept at: fed once the thread goes on. */
struct acc_pending {
	bool on;
	bool split; /* a plain read-modify-write: R then W */
	struct cov_event ev;
};

struct access_run {
	struct campaign *c;
	struct onerun *r;
	struct access_campaign *ac;
	bool estimate;
	bool explore;	      /* a test run probing every candidate (explore_due) */
	bool *mask;	      /* the sites it probes, when the rotation left some out */
	size_t rotated_out;   /* the shared variables it left out (access_rotate_period) */
	uint64_t capped_seen; /* CS_ASTAT_CAPPED when last looked at (the probe cap) */
	struct cov_metrics *m;
	struct cov_event_conv conv;
	const struct cs_event *cur;
	pid_t pid;
	struct symbolizer *sz;
	uint64_t refreshed_ns;
	struct ring_buffer *alloc_rb;
	struct heap_block *blocks; /* sorted by start */
	size_t nblocks, capblocks;
	struct alloc_pending *allocs; /* by time */
	size_t nallocs, capallocs;
	struct cov_u64map data;	     /* file-backed data address -> var id + 1 (1: none) */
	struct cov_u64map sync_site; /* runtime call site -> store site id */
	struct cov_u64map locks;     /* runtime lock address -> id */
	struct cov_u64map funcs;     /* runtime call site -> function id + 1 */
	struct cov_u64map addr_tid;  /* estimation: address -> first tid | shared bit */
	uint64_t *bias;		     /* per object of the site set: load bias + 1, 0 unknown */
	const char **bias_obj;
	size_t nbias;
	struct acc_pending *pending; /* by thread index */
	size_t npending;
	uint64_t accesses;
	uint64_t sync_lost; /* the thread model's seq_gaps when last looked at */
};

/* access.c */
int64_t access_key_site(struct campaign *c, const char *object, uint64_t offset);
uint32_t access_cand_site(struct access_campaign *ac, struct campaign *c, uint32_t i);
struct acc_var *access_var_find(const struct access_campaign *ac, uint32_t id);
char *access_stable_key(const struct access_campaign *ac, const char *key);
int access_collect_sites(struct campaign *c, struct access_campaign *ac);
void access_add_site(uint32_t **v, uint32_t *n, uint32_t site);
/* The sites run ar probes and records as its "sites" (NULL: every candidate). */
const bool *access_run_mask(const struct access_run *ar);
/* access_estimate.c: after an exploration run, the sites it found shared. */
void access_estimate_explored(struct campaign *c, struct access_campaign *ac);
/* access_rotate.c: the sites test run number run probes (NULL: every
 * shared site, ac->shared_site, or with explore every candidate); *out,
 * the variables left out. */
bool *access_rotate_mask(const struct campaign *c, uint64_t run, bool explore, size_t *out);

#endif
