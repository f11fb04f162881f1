/* SPDX-License-Identifier: MIT */
/*
 * --access in a campaign (access.c): candidate sites, estimation runs that
 * find the shared variables, per-run metrics and race warnings, and the
 * accesses as decision points for strategies that steer them.
 */
#ifndef CONCSCHED_ACCESS_H
#define CONCSCHED_ACCESS_H

#include <stdbool.h>
#include <stddef.h>

#include "run/run_types.h"

/* Campaign: the candidate sites (then the estimation runs, each ended
 * with access_estimation_add, then access_campaign_estimated). */
int access_campaign_begin(struct campaign *c);
void access_estimation_add(struct campaign *c, struct onerun *r);
void access_campaign_estimated(struct campaign *c);
void access_campaign_end(struct campaign *c);

/* Exploration runs (access.c explore_due): every ACCESS_EXPLORE_EARLY-th
 * test run up to run ACCESS_EXPLORE_FIRST, then every
 * ACCESS_EXPLORE_LATER-th, probes every candidate site. */
#define ACCESS_EXPLORE_EARLY 4
#define ACCESS_EXPLORE_FIRST 32
#define ACCESS_EXPLORE_LATER 16

/*
 * The probe rotation (access_rotate.c): a test run probes the sites of a
 * shared variable whose accesses in an estimation run were more than
 * share = --probe-budget / ACCESS_ROTATE_SHARE only in one run of every
 * period = ceil(accesses / share) (at most ACCESS_ROTATE_MAX), all its
 * sites together (a racing pair stays probed); which runs, from the
 * campaign seed and the variable. Every variable is probed in one run of
 * every ACCESS_ROTATE_MAX at least; each run's "sites" records its set.
 */
#define ACCESS_ROTATE_SHARE 4
#define ACCESS_ROTATE_MAX   8
/* The period of a variable with so many accesses an estimation run (1:
 * every run; share 0: no rotation). */
unsigned access_rotate_period(uint64_t accesses, uint64_t share);
/* Does test run number run probe variable var of that period? */
bool access_rotate_chosen(uint64_t seed, uint64_t var, uint64_t run, unsigned period);

/* Runs: an estimation run (every candidate) or a test run (shared sites;
 * every candidate in an exploration run). Before the run's configuration
 * is made (access_run_config_json says which sites it probes). */
void access_run_begin(struct campaign *c, struct onerun *r, bool estimate);
uint64_t access_run_probe_key(const struct campaign *c);
void access_run_commit(struct campaign *c, struct onerun *r);
/* The run's WGoldiLockSC and its warnings (0 and 0 without --access). */
void access_run_fitness(const struct onerun *r, double *wgoldilock_sc, uint64_t *warnings);
void access_run_free(struct onerun *r);
void access_run_config_json(const struct campaign *c, const struct onerun *r, struct json *j);
/* The ended run's configuration CFG (a JSON object, taken) with what its
 * access probes counted added as "access_probes": hits (trapped), events,
 * unprobed (past the probe cap), closed (sites), budget_closed (of those,
 * by the probe budget). CFG itself without --access. */
char *access_run_config_counted(const struct onerun *r, char *cfg);

/* The run in flight. */
void access_hook_launched(struct onerun *r);
void access_hook_tick(struct onerun *r);
void access_hook_thread(struct onerun *r, struct strat_thread *t);
void access_hook_event(struct onerun *r, const struct cs_event *e, struct strat_thread *t);
/* A thread parked at an access: the access in campaign ids (false: no
 * variable the campaign follows); it is fed to the metrics by access_pass
 * when the thread goes on. */
/* The site id of an access event's instruction (its candidate site), 0
 * when the campaign probes no accesses. */
uint32_t access_point_site(struct campaign *c, const struct cs_event *e);
bool access_point(struct onerun *r, const struct cs_event *e, struct strat_thread *t,
		  struct cov_event *ev, bool *split, bool *contended, bool *cross);
void access_pass(struct onerun *r, struct strat_thread *t);

/* Replay: the sites the recorded run probed (access_replay_mask: NULL
 * when it probed none, and the replay probes none either). */
int access_replay_setup(struct campaign *c, const char *run_config_json);
const bool *access_replay_mask(const struct campaign *c);

/* "0-3,7": indexes of a site mask (NULL: all n), and back (-EINVAL). */
char *access_mask_format(const bool *mask, size_t n);
int access_mask_parse(const char *s, bool *mask, size_t n);

#endif
