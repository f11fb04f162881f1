/* SPDX-License-Identifier: MIT */
/*
 * Internals of `concsched run` shared by run.c (campaign, one run, event
 * loop, replay) and the strategy glue that needs the run in flight
 * (run_tsa.c). Not an API: see docs/run.md.
 */
#ifndef CONCSCHED_RUN_INT_H
#define CONCSCHED_RUN_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "kernel/access_probes.h"
#include "coverage/coverage.h"
#include "lib/declog.h"
#include "kernel/launcher.h"
#include "strategies/noise.h"
#include "kernel/policy.h"
#include "kernel/probes.h"
#include "lib/rng.h"
#include "campaign/saturation.h"
#include "kernel/site_finder.h"
#include "kernel/target.h"
#include "coverage/thread_model.h"

struct ring_buffer;
struct sched_ctl;
struct store;
struct tsa_run;
struct tsa_campaign;
struct access_run;
struct access_campaign;
struct json;

#define RUN_MAX_ACTIONS	    100000
#define RUN_DEFAULT_CAP	    1000
#define RUN_DEFAULT_TIMEOUT 30.0
#define RUN_OUTPUT_MAX	    (4u << 20) /* captured bytes kept per stream */
#define RUN_MAX_THREADS	    4096
#define RUN_MAX_DELAYS	    4096

enum strategy_kind { STRAT_NONE, STRAT_NOISE, STRAT_RANDOM, STRAT_TSA, STRAT_TSA_H, STRAT_MAP };

struct run_opts {
	const char *strategy;
	enum strategy_kind kind;
	struct noise_config noise; /* STRAT_NOISE */
	uint64_t runs;		   /* 0: until saturation (cap RUN_DEFAULT_CAP) */
	double time_s;
	double run_timeout_s;
	uint64_t seed;
	bool seed_set;
	enum cs_serial_mode serial;
	bool keep_going;
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
	unsigned estimate_runs;	   /* tsa, --access: observed runs before testing */
	bool access;		   /* memory-access sites (--access, map) */
	struct site_filter sites;  /* --sites-include / --sites-exclude */
	const char **site_objects; /* --sites-object */
	size_t nsite_objects;
	char **argv;
	int argc;
};

/* One target thread as the controller sees it while the run goes. */
struct rthread {
	uint32_t tid;
	char path[48];	   /* creation path: "0" main, "0.1" its first child... */
	uint64_t id;	   /* fnv1a64(path): the decision log's abstract thread */
	uint32_t ncreated; /* children created so far (their path suffix) */
	uint64_t points;   /* decision points reached (the log's event index) */
	uint32_t cid;	   /* campaign-wide thread id (run_map.c), 0 unless --access */
};

struct delay {
	uint32_t tid;
	uint64_t due_ns;
};

/* What stays loaded from run to run: the probe object and the scheduler. */
struct run_session {
	struct sync_probes sp;
	bool sp_open;
	struct sched_ctl *ctl;
	struct policy *pol;
	bool kicked;	 /* the fexit kick is on sp's entry program */
	bool want_sched; /* load the scheduler even for observed runs */
	/* access probes: loaded with the whole candidate table aset */
	const struct site_set *aset;
	const char *aprog; /* whose allocator the access probes follow */
	struct access_probes ap;
	bool ap_open;
	bool ap_kicked;
};
void run_session_close(struct run_session *s);

/* Everything about the run in flight. */
struct onerun {
	const struct run_opts *o;
	struct target_info *ti;
	struct sync_runtime *rt;
	bool steer;
	struct run_session *sess;
	struct sched_ctl *ctl; /* sess->ctl when steering */
	struct policy *pol;
	struct sync_probes *sp; /* &sess->sp */
	struct site_resolver res;
	struct thread_model tm;
	struct launch l;
	bool launched;
	uint64_t seed;
	/* steering */
	struct noise_run noise;
	bool noise_on;
	struct declog *replay; /* decisions to re-apply, NULL: decide */
	struct declog log;     /* decisions made */
	struct rthread *threads;
	size_t nthreads;
	struct delay delays[RUN_MAX_DELAYS];
	size_t ndelays;
	uint32_t halted[64];
	size_t nhalted;
	uint64_t *lock_threads; /* obj -> first tid, to tell shared locks */
	size_t nlock_threads;
	uint64_t decisions, injected;
	/* serial mode: the controller picks who runs at every all-parked note */
	bool serial_ctl;
	struct ring_buffer *rb;
	struct cs_rng rng;
	struct {
		struct rthread *t;
		uint64_t k;
	} * waiting;
	size_t nwaiting;
	size_t cursor;	      /* replay: next logged release */
	uint32_t rp_inflight; /* replay of map: tid released last, until it moves on */
	uint64_t last_pick_ns;
	struct tsa_run *tsa;	 /* strategy tsa/tsa-h, NULL otherwise */
	struct access_run *acc;	 /* --access metrics and strategy map (run_map.c) */
	bool access_on;		 /* attach the access probes */
	const bool *access_mask; /* ... on these sites of sess->aset (NULL: all) */
	uint64_t tm_sched, tm_probes, tm_attach, tm_harvest; /* setup costs (ns) */
	/* outcome */
	int out_fd, err_fd;
	bool timed_out;
	uint64_t t0, t1;
	int64_t started_ns;
	struct syncov_run cov;
	char deadlock[4096];
	bool has_deadlock;
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
	struct run_session sess;
	struct tsa_campaign *tsa;    /* strategy tsa/tsa-h */
	struct access_campaign *acc; /* --access, map */
};

/* run.c services for strategies */
struct rthread *run_thread_find(struct onerun *r, uint32_t tid);
/* Store site id of a runtime address of the run's target, 0 if unknown. */
int64_t run_site_id(struct campaign *c, struct onerun *r, uint32_t tgid, uint32_t gen,
		    uint64_t addr);
/* Site id of "OBJECT+0xOFF" in the campaign's store (0: not a site). */
int64_t run_store_site(struct store *st, const char *key);
/* One run of the campaign's target with probes only (no scheduler). The
 * caller reads r->tm / r->cov, then calls onerun_cleanup. */
int run_observe_once(struct campaign *c, struct onerun *r);
/* The same with the access probes on every candidate site and the
 * estimation's access state (run_map.c). */
int run_observe_access(struct campaign *c, struct onerun *r);
void onerun_cleanup(struct onerun *r);
/* Reload the probe's mapping table into r->res (sites resolve after it). */
void run_refresh_vmas(struct onerun *r);
void run_release(struct onerun *r, struct rthread *t, enum declog_action why, int64_t arg);

/* run_tsa.c: strategies tsa and tsa-h (seed 000, ALGORITHMS.md section 1) */
int tsa_strat_campaign_begin(struct campaign *c);
void tsa_strat_campaign_end(struct campaign *c);
void tsa_strat_run_begin(struct campaign *c, struct onerun *r);
void tsa_strat_run_end(struct campaign *c, struct onerun *r);
void tsa_hook_thread(struct onerun *r, struct rthread *t);
void tsa_hook_event(struct onerun *r, const struct cs_event *e, struct rthread *t);
/* A thread parked at a lock request: true when the engine keeps it. */
bool tsa_hook_parked(struct onerun *r, const struct cs_event *e, struct rthread *t);
void tsa_hook_all_parked(struct onerun *r, const struct policy_note *n);

/* run_map.c: --access (sites, estimation, metrics) and strategy map */
int access_campaign_begin(struct campaign *c);
void access_campaign_end(struct campaign *c);
void access_run_begin(struct campaign *c, struct onerun *r, bool estimate);
void access_run_commit(struct campaign *c, struct onerun *r);
void access_run_free(struct onerun *r);
void access_run_config_json(const struct campaign *c, struct json *j);
int access_replay_setup(struct campaign *c, const char *run_config_json);
const bool *access_replay_mask(const struct campaign *c);
void access_hook_launched(struct onerun *r);
void access_hook_tick(struct onerun *r);
/* The event loop's poll timeout while released accesses await confirmation. */
int access_poll_ms(struct onerun *r, int ms);
void access_hook_thread(struct onerun *r, struct rthread *t);
void access_hook_event(struct onerun *r, const struct cs_event *e, struct rthread *t);
/* A thread parked at an access under map: PASS (not a decision: release),
 * PROCEED (release and log) or KEEP (the engine keeps it). */
enum { MAP_HOOK_PASS = 0, MAP_HOOK_PROCEED, MAP_HOOK_KEEP };
int map_hook_parked(struct onerun *r, const struct cs_event *e, struct rthread *t);
/* DECLOG_RELEASE args of map: enum map_release_why (0-2), then these. */
#define MAP_REL_REEVAL	3 /* a kept thread re-evaluated to PROCEED */
#define MAP_REL_PROCEED 4 /* released at once at its point */
void map_replay_parked(struct onerun *r, struct rthread *t, uint64_t k);
void map_replay_advance(struct onerun *r);
void map_hook_all_parked(struct onerun *r, const struct policy_note *n);
/* "0-3,7": indexes of a site mask, and back (-EINVAL). */
char *access_mask_format(const bool *mask, size_t n);
int access_mask_parse(const char *s, bool *mask, size_t n);

#endif
