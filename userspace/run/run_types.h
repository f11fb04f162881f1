/* SPDX-License-Identifier: MIT */
/*
 * The types of a campaign and of the run in flight, shared by the files of
 * campaign/: campaign.c (the loop), onerun.c (one run and its event loop),
 * access.c (--access), run_sites.c and replay.c. Types only: no function
 * is declared here, so no file depends on another through it.
 */
#ifndef CONCSCHED_RUN_TYPES_H
#define CONCSCHED_RUN_TYPES_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel/access_probes.h"
#include "coverage/syncov.h"
#include "lib/declog.h"
#include "kernel/launcher.h"
#include "kernel/policy.h"
#include "kernel/sync.h"
#include "lib/rng.h"
#include "lib/futex_lock.h"
#include "run/strat_host.h"
#include "strategies/strategy.h"
#include "results/saturation.h"
#include "kernel/site_finder.h"
#include "kernel/target.h"
#include "coverage/thread_model.h"

struct ring_buffer;
struct sched_ctl;
struct store;
struct access_run;
struct access_campaign;
struct run_cpu_mark;
struct json;

#define RUN_MAX_ACTIONS	    100000
#define RUN_DEFAULT_CAP	    1000
#define RUN_MAX_JOBS	    64 /* -j */
#define RUN_DEFAULT_TIMEOUT 30.0
/* --strategy when none is given (strategies/strategy_registry.c); the fallback
 * when the default does not combine with the other options (--serial:
 * the portfolio picks who runs itself). */
#define RUN_DEFAULT_STRATEGY	"portfolio"
#define RUN_FALLBACK_STRATEGY	"random"
#define RUN_MAX_GRACE		30.0	   /* s of grace after the run timeout, at most ... */
#define RUN_GRACE_FACTOR	2.0	   /* ... or twice the longest unsteered run */
#define RUN_MAX_GRACE_UNSTEERED 300.0	   /* ... up to this */
#define RUN_MIN_TIMEOUT		2.0	   /* the adaptive run timeout, at least */
#define RUN_TIMEOUT_FACTOR	20.0	   /* ... times the slowest clean run */
#define RUN_OUTPUT_MAX		(4u << 20) /* captured bytes kept per stream */
#define RUN_MAX_THREADS		4096
/* --slice-us: the scheduler's default, and the bounds (the longest stays
 * well under the 5 s stall timeout a queued thread may wait) */
#define RUN_SLICE_DFL_US  5000u
#define RUN_SLICE_MIN_US  100u
#define RUN_SLICE_MAX_US  2000000u
#define RUN_MAX_DELAYS	  4096
#define STEER_DEFAULT_CAP 500  /* steered hits per access site and run ... */
#define STEER_SAMPLE	  64   /* ... then 1 in this many */
#define PROBE_DEFAULT_CAP 2000 /* probed hits per access site and run */
#define PROBE_BUDGET_FACTOR                                                                        \
	10 /* hits at access sites a run, then the hot                                             \
	    * sites close: this times the probe cap */

struct run_opts {
	const char *strategy;
	bool strategy_set;	/* -s given: no fallback from a refused default */
	struct strategy *strat; /* the strategy (with --serial: wrapped) */
	uint64_t runs;		/* 0: until saturation (cap RUN_DEFAULT_CAP) */
	double time_s;
	double run_timeout_s;
	/* the scheduler's park watchdog and starvation rescue (0: the
	 * defaults, 1 s and 3.75 s; its ops.timeout_ms is always the
	 * default, 30 s); a replay waits longer before it lets a parked
	 * thread go on its own, or moves a waiting one (replay.c) */
	unsigned sched_watchdog_ms, sched_rescue_ms;
	/* --slice-us: the target threads' time slice (0: the scheduler's
	 * 5000 us); recorded, so a replay runs on the same slices */
	unsigned sched_slice_us;
	uint64_t seed;
	bool seed_set;
	bool run_timeout_set; /* --run-timeout given: no adaptive timeout */
	enum cs_serial_mode serial;
	bool keep_going;
	unsigned max_failures; /* --max-failures: stop at this many (0: none) */
	bool no_follow_forks;  /* --no-follow-forks: only the target's own process */
	const char *out;
	bool json;
	const char *metric;
	struct sat_config sat;
	const char *sat_spec;
	bool expect_exit_set;
	int expect_exit;
	const char *check;
	const char *user;
	bool vm;
	unsigned vm_cpus;
	unsigned estimate_runs;	  /* estimating strategies, --access: observed runs */
	bool access;		  /* memory-access sites (--access, or the strategy needs them) */
	bool access_asked;	  /* --access (or an access option) given: kept on */
	struct site_filter sites; /* --sites-include / --sites-exclude */
	uint64_t steer_cap;	  /* --steer-cap: steered hits per access site and
				   * run, then 1 in STEER_SAMPLE (0: no cap) */
	bool steer_cap_set;
	uint64_t probe_cap; /* --probe-cap: probed hits per access site and run,
			     * then its uprobe goes (0: no cap) */
	bool probe_cap_set;
	uint64_t probe_budget; /* --probe-budget: hits at access sites a run,
				* then every hot site closes (0: none) */
	bool probe_budget_set;
	const char **site_objects; /* --sites-object */
	size_t nsite_objects;
	const char **suppressions; /* --suppressions: race warnings not reported */
	size_t nsuppressions;
	unsigned jobs; /* -j: runs at once (0, 1: one at a time) */
	/* --replay-check: replays of a failing steered run in its recorded
	 * order before the campaign goes on (replay.c; 0: none) */
	unsigned replay_check;
	char **argv;
	int argc;
};

/* What stays loaded from run to run: the probe object and the scheduler. */
struct run_session {
	struct sync_probes sp;
	bool sp_open;
	struct sched_ctl *ctl;
	struct policy *pol;
	bool kicked;	  /* the fexit kick is on sp's entry program */
	bool want_sched;  /* load the scheduler even for observed runs */
	bool rescue_told; /* a run's starved thread was rescued: said once */
	/* ctl is one more target of the campaign's scheduler (a -j worker's
	 * session, run_session_target): never loaded here, never reloaded */
	bool sched_target;
	/* access probes: loaded with the whole candidate table aset */
	const struct site_set *aset;
	const char *aprog; /* whose allocator the access probes follow */
	struct access_probes ap;
	uint64_t steer_cap;    /* of ap's load (run_opts.steer_cap) */
	uint64_t probe_cap;    /* of ap's load (run_opts.probe_cap) */
	uint64_t probe_budget; /* of ap's load (run_opts.probe_budget) */
	bool ap_open;
	bool ap_kicked;
	/* The sync probes' event ring buffer, mapped once for the session
	 * (its 8 MiB data area costs ~1.5 ms to map and unmap per run);
	 * its records go to the run in flight, cur. */
	struct ring_buffer *rb;
	struct onerun *cur;
	/* Its BPF map mappings are marked MADV_DONTFORK (launcher.h); false
	 * again whenever it maps more */
	bool dontfork;
	/* What a run's loop waits on: rb's epoll set and the target's pidfd
	 * (readable at its exit), so a run ends when its target does. */
	int ep;
	/* A run's loop reads with a time budget (run_consume): past
	 * consume_until (0: none) the callback stops the read. */
	uint64_t consume_until;
	unsigned consume_n;
	/* The cgroup the session's targets run in, kept while runs leave
	 * nothing in it (else replaced) and removed when the session closes
	 * (cgroup.h): a mkdir and an rmdir a run took the kernel's global
	 * cgroup mutex, which -j workers share. */
	struct run_cgroup cg;
	/* The paths of the files the session's runs start knowing (the
	 * target, libc, ld.so and every library ld.so lists), stat'ed and
	 * resolved by its first run; each run copies them (no system call). */
	struct site_resolver paths;
	bool paths_ready;
	/* -j N: the worker's thread keeps to one CPU (campaign.c
	 * worker_cpu); what it launches takes back cpus, the campaign's. */
	bool pinned;
	cpu_set_t cpus;
};
void run_session_close(struct run_session *s);
/* The campaign's scheduler in s, loaded if it is not (serial mode and
 * seed until a run sets its own): -j's targets are its. 0 or -errno. */
int run_session_sched(struct run_session *s, const struct run_opts *o, enum cs_serial_mode serial,
		      uint64_t seed);
/* w steers its runs' targets as one more target of the scheduler in
 * owner (run_session_sched): 0 or -errno. */
int run_session_target(struct run_session *w, struct run_session *owner);

/* Everything about the run in flight. */
struct onerun {
	const struct run_opts *o;
	struct target_info *ti;
	struct sync_runtime *rt;
	bool steer;
	struct run_session *sess;
	struct store *st;      /* the campaign's (site ids) */
	struct campaign *camp; /* its campaign (or the replay's) */
	struct sched_ctl *ctl; /* sess->ctl when steering */
	struct policy *pol;
	struct sync_probes *sp; /* &sess->sp */
	struct site_resolver res;
	struct thread_model tm;
	struct launch l;
	int pidfd;	      /* the target's (-1: kernel before 5.3) */
	unsigned consume_cut; /* reads cut short by run_consume's budget */
	bool launched;
	uint64_t seed;
	/* steering: the strategy and what it sees of the run */
	struct strategy *strat;
	struct strat_run sr; /* seed, policy, log, thread table, services */
	struct declog log;   /* decisions made, and the observed schedule */
	/* the observed schedule while the run goes: each pass dated by when
	 * its thread ran again; into the log in that order at the end */
	struct pass_rec {
		uint64_t ts, park_ts, seq, thread, event;
		int64_t site;
		bool provisional; /* dated by its next event: a resume note
				   * may come later and date it better */
	} * passes;
	size_t npasses, passes_cap;
	uint64_t last_ev_ts; /* the last event's timestamp */
	/* the store site id of each thread's last point (the schedule's
	 * passes carry it), and a cache of event address -> site id */
	struct point_site {
		uint64_t key;
		int64_t id;
	} point_sites[256];
	struct strat_host host; /* the strategy's thread table, verdicts, delays */
	uint64_t decisions;
	struct ring_buffer *rb;
	struct access_run *acc;	 /* --access: the run's accesses and metrics (access.c) */
	bool access_on;		 /* attach the access probes */
	const bool *access_mask; /* ... on these sites of sess->aset (NULL: all) */
	uint64_t tm_sched, tm_probes, tm_attach, tm_harvest; /* setup costs (ns) */
	/* the run timeout (issue 13): at timeout_s under steering every thread
	 * is let go and steering stops, and the access probes stop acting for
	 * the target (steered or not: an access is an event, a trap and a
	 * ring buffer record, and millions of them can slow a run past any
	 * timeout); a run still going grace_s later is a hang, one that ends
	 * in it was only slow under steering or the probes */
	double timeout_s;
	double grace_s;
	bool slow;		      /* ended in the grace period: not a failure */
	bool graced;		      /* the grace period began */
	bool steer_stopped;	      /* ... and it stopped steering */
	bool probes_stopped;	      /* ... and the access probes */
	uint64_t accesses_at_timeout; /* the run's accesses seen until then */
	double grace_used_s;	      /* how long it ran in the grace period */
	uint64_t parks_at_timeout, watchdog_at_timeout, delays_at_timeout;
	uint64_t parks_at_start, watchdog_at_start; /* the session's counters */
	struct cs_sched_stats sched_at_start;	    /* all of them (its target's) */
	uint64_t watchdog_run;			    /* parked threads the scheduler let go itself */
	uint64_t rescued_run;			    /* starved threads that left the scheduler */
	uint64_t serial_preempts_run;		    /* serial mode: a token taken back, a thread
						     * that ran without it (order not kept) */
	/* outcome */
	int out_fd, err_fd;
	bool timed_out;
	bool interrupted; /* ^C stopped it before its target ended */
	uint64_t t0, t1;
	int64_t started_ns;
	struct syncov_run cov;
	char deadlock[4096];
	bool has_deadlock;
	/* A lock cycle seen while the run goes on (onerun.c lock_cycle_watch):
	 * its signature, since when, and the time into the run it was found
	 * when it ended the run as a confirmed deadlock (0: it did not). */
	uint64_t dl_sig, dl_first_ns, dl_since_ns, dl_next_ns;
	double dl_found_s, dl_confirm_s;
	/* The threads' scheduling counters DL_CHECK_NS after steering or the
	 * access probes stopped (run_timeout_cpu_mark): a thread of a lock
	 * cycle that ran after them and after its request is not blocked. */
	struct run_cpu_mark *cpu_mark;
	size_t ncpu_mark;
	uint64_t cpu_mark_ns; /* when they were read (0: not yet) */
	uint64_t forks;	      /* processes the target forked (not followed) */
	bool *forks_noted;    /* the campaign said so already */
	/* The run has probes for its target's process only (the access
	 * probes; the sync probes with --no-follow-forks): they are attached
	 * at its exec. */
	bool attach_at_exec;
	int at_exec_err; /* the attach at the exec failed: -errno */
	bool tty;	 /* a progress line is on stderr */
	/* the processes whose events came already (seen_pid) */
	uint32_t seen[64];
	size_t nseen;
	/* res's files the probes were told of (sync_probes_know_file) */
	size_t nknown;
	/* -j N: the campaign's lock, taken around each access hook while the
	 * run goes (campaign.c run_worker_main); NULL: one run at a time */
	struct futex_lock *camp_lock;
};

struct campaign {
	struct run_opts *o;
	struct target_info ti;
	struct sync_runtime rt;
	struct store *st;
	uid_t uid;
	gid_t gid;
	bool drop;
	bool steer;
	uint64_t t0;
	int64_t nruns;
	size_t failures;
	double *x[SYNCOV__COUNT + 1], *y[SYNCOV__COUNT + 1]; /* + --metric of --access */
	size_t npts;
	bool saturated;
	struct sat_result sat;
	int metric;
	bool tty;
	int stream_fd;		/* run --vm: the port cs.stream (stream.h), else -1 */
	double slowest_clean_s; /* the adaptive run timeout's measure */
	double unsteered_s;	/* the longest estimation run that ended by
				 * itself (unsteered): the grace period's */
	size_t slow;		/* runs slow under steering (not failures) */
	bool forks_noted;	/* "PROG forked; ..." was said */
	char last_arm[64];	/* the sub-strategy of the last run ("arm"), or "" */
	struct run_session sess;
	struct strat_campaign sc;    /* what the strategy sees of it */
	struct access_campaign *acc; /* --access, map */
	/* -j N (campaign.c campaign_jobs): runs started (their seeds are
	 * derived from this count), the lock the workers share, and the
	 * first error that stops them */
	int64_t nstarted;
	struct futex_lock lock;
	int jobs_err;
	/* steered failing runs whose replay check waits for the workers to
	 * end (it unloads the scheduler they share) */
	int64_t *recheck;
	size_t nrecheck;
};

#endif
