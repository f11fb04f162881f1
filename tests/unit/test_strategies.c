// SPDX-License-Identifier: MIT
/*
 * The strategy contract (strategies/strategy.h) on the fake policy backend:
 * the registry's names and static facts, and each strategy's decisions on
 * hand-checked inputs through the same calls the campaign loop makes: noise
 * and random, the --serial wrapper, tsa, map (two runs at once too, and
 * two threads each driving runs over one map), pct, and the three replay
 * modes.
 * The "loop" here is a few lines: a thread table, and a release service
 * that logs and releases through the fake policy like onerun.c does.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "coverage/thread_model.h"
#include "kernel/policy.h"
#include "lib/declog.h"
#include "lib/json.h"
#include "lib/rng.h"
#include "lib/array_size.h"
#include "lib/fnv1a64.h"
#include "lib/futex_lock.h"
#include "lib/now.h"
#include "lib/xalloc.h"
#include "strategies/ga.h"
#include "strategies/noise.h"
#include "strategies/pct.h"
#include "strategies/strategy_registry.h"
#include "strategies/strategy_replay.h"
#include "strategies/serial.h"
#include "strategies/strat_noise.h"
#include "strategies/strategy.h"
#include "tap.h"

/* ---- a minimal loop around one strategy ------------------------------------------ */

struct fake_loop {
	struct strategy *s;
	struct strat_run r;
	struct strat_campaign c;
	struct declog log;
	struct strat_thread th[8];
	uint64_t note_ts;
	size_t releases;
	int64_t last_arg;
};

static void fl_release(struct strat_run *r, struct strat_thread *t, int64_t arg)
{
	struct fake_loop *fl = r->ctx;

	declog_add(r->log, t->id, 0, t->points ? t->points - 1 : 0, DECLOG_RELEASE, arg);
	policy_release(r->pol, t->tid);
	fl->releases++;
	fl->last_arg = arg;
}

static void fl_drain(struct strat_run *r)
{
}

static uint32_t fl_site_id(struct strat_run *r, const struct cs_event *e)
{
	return (uint32_t)(e->site & 0xffff);
}

static int64_t fl_site_of(void *ctx, const char *key)
{
	return 0;
}

static int fl_add_req(void *ctx, const char *metric, const char *key, const char *source)
{
	return 0;
}

static int fl_tasks(void *ctx, const char *metric, int (*fn)(const char *, void *), void *arg)
{
	return 0;
}

/* Notes the strategy made on the runs (strat_campaign.note), in order. */
static char *fl_notes[64];
static size_t fl_nnotes;

static int fl_note(void *ctx, const char *json)
{
	if (fl_nnotes < ARRAY_SIZE(fl_notes))
		fl_notes[fl_nnotes++] = xstrdup(json);
	return 0;
}

static void fl_notes_free(void)
{
	while (fl_nnotes)
		free(fl_notes[--fl_nnotes]);
}

/* The next thread appears: "0", "0.1", "0.2"... with tids 100, 101, ... */
static void fl_thread(struct fake_loop *fl)
{
	size_t i = fl->r.nthreads;
	struct strat_thread *t = &fl->th[fl->r.nthreads++];

	t->tid = 100 + (uint32_t)i;
	if (i == 0)
		snprintf(t->path, sizeof(t->path), "0");
	else
		snprintf(t->path, sizeof(t->path), "0.%zu", i);
	t->id = fnv1a64(t->path, strlen(t->path), FNV1A64_INIT);
	t->cid = (uint32_t)i;
	policy_fake_thread(fl->r.pol, t->tid);
	if (fl->s->ops->thread_start)
		fl->s->ops->thread_start(fl->s, &fl->r, t);
}

static bool fl_access; /* the next fl_begin's run has access points (--access) */
/* fl_begin/fl_end are runs of one campaign the test began itself: no
 * campaign_begin/campaign_end around each */
static bool fl_keep_campaign;
static uint64_t fl_probe_set;	     /* the next fl_begin's run's probe set */
static uint64_t fl_est_accesses;     /* the campaign's accesses per estimation run */
static size_t fl_cross_vars;	     /* its variables written by one thread, read by another */
static uint64_t fl_est_cross;	     /* their accesses per estimation run */
static const uint32_t *fl_cross_ids; /* their ids, ascending */

static void fl_begin(struct fake_loop *fl, struct strategy *s, uint64_t seed, size_t nthreads)
{
	size_t i;

	memset(fl, 0, sizeof(*fl));
	fl->r.access_points = fl_access;
	fl->r.probe_set = fl_probe_set;
	fl->s = s;
	fl->c.quiet = true;
	fl->c.est_accesses = fl_est_accesses;
	fl->c.cross_vars = fl_cross_vars;
	fl->c.est_cross_accesses = fl_est_cross;
	fl->c.cross_var_ids = fl_cross_ids;
	fl->c.site_of = fl_site_of;
	fl->c.add_requirement = fl_add_req;
	fl->c.for_each_task = fl_tasks;
	fl->c.note = fl_note;
	declog_init(&fl->log, seed, NULL);
	fl->r.seed = seed;
	fl->r.pol = policy_new_fake();
	fl->r.log = &fl->log;
	fl->r.threads = fl->th;
	fl->r.ctx = fl;
	fl->r.release = fl_release;
	fl->r.drain = fl_drain;
	fl->r.site_id = fl_site_id;
	if (s->ops->campaign_begin && !fl_keep_campaign)
		s->ops->campaign_begin(s, &fl->c);
	if (s->ops->run_begin)
		s->ops->run_begin(s, &fl->r);
	for (i = 0; i < nthreads; i++)
		fl_thread(fl);
}

static void fl_end_with(struct fake_loop *fl, const struct strat_outcome *o)
{
	if (fl->s->ops->run_end)
		fl->s->ops->run_end(fl->s, &fl->r, &fl->c, o);
	if (fl->s->ops->campaign_end && !fl_keep_campaign)
		fl->s->ops->campaign_end(fl->s, &fl->c);
	policy_free(fl->r.pol);
	declog_free(&fl->log);
}

static void fl_end(struct fake_loop *fl)
{
	struct strat_outcome o = { .ran = true };

	fl_end_with(fl, &o);
}

/* Thread i reaches a decision point of op (its next point index); cross:
 * the access's variable is written by one thread and read by another. */
static struct strat_decision fl_point_cross(struct fake_loop *fl, size_t i, uint16_t op,
					    uint64_t site, uint64_t obj,
					    const struct cov_event *access, bool contended,
					    bool cross)
{
	struct strat_decision d = { .v = STRAT_PROCEED };
	struct cs_event e = { 0 };
	struct strat_point p = { 0 };

	e.op = op;
	e.tid = fl->th[i].tid;
	e.pid = fl->th[0].tid;
	e.site = site;
	e.obj = obj;
	p.t = &fl->th[i];
	p.t->site = (int64_t)site; /* the loop's store site id; here the address */
	p.k = fl->th[i].points++;
	p.e = &e;
	p.access = access;
	p.contended = contended;
	p.cross = cross;
	if (fl->s->ops->event)
		fl->s->ops->event(fl->s, &fl->r, &e, p.t);
	fl->s->ops->point(fl->s, &fl->r, &p, &d);
	return d;
}

static struct strat_decision fl_point(struct fake_loop *fl, size_t i, uint16_t op, uint64_t site,
				      uint64_t obj, const struct cov_event *access, bool contended)
{
	return fl_point_cross(fl, i, op, site, obj, access, contended, false);
}

static void fl_all_parked(struct fake_loop *fl)
{
	struct policy_note n = { .ts_ns = now_ns() + (++fl->note_ts) };

	if (fl->s->ops->all_parked)
		fl->s->ops->all_parked(fl->s, &fl->r, &n);
}

static const struct declog_entry *last_entry(struct fake_loop *fl)
{
	return fl->log.n ? &fl->log.entries[fl->log.n - 1] : NULL;
}

/* The thread the last logged decision released (SIZE_MAX: none). */
static size_t released_thread(struct fake_loop *fl)
{
	const struct declog_entry *e = last_entry(fl);
	size_t i;

	for (i = 0; e && i < fl->r.nthreads; i++)
		if (fl->th[i].id == e->thread)
			return i;
	return SIZE_MAX;
}

static struct strategy *make(const char *spec)
{
	struct strategy *s = NULL;
	char err[200];

	if (strategy_new(spec, &s, err, sizeof(err)))
		tap_diag("strategy_new(%s): %s", spec, err);
	return s;
}

/* ---- registry ------------------------------------------------------------------------ */

/* run --help's list: a line per registered name, 80 columns at most, the
 * default marked, the option texts at column 24. */
static void test_registry_list(void)
{
	const struct strategy_ops *const *all;
	size_t n = strategy_list(&all), i, named = 0, longest = 0;
	char *text = NULL, *line, *save = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	fputc('\n', f); /* each entry then starts "\n  " */
	strategy_list_print(f, "random");
	fclose(f);
	tap_ok(strstr(text, "  random (default)      a random noise configuration") != NULL,
	       "the default is marked, its text at column 24");
	tap_ok(strstr(text, "\n  pct[:DEPTH]           PCT") != NULL, "pct by its synopsis");
	tap_ok(strstr(text, "\n  PLACEMENT@FREQ/SEEDING\n                        one noise") !=
		       NULL,
	       "a synopsis too long for its column gets a line of its own");
	for (i = 0; i < n; i++) {
		char head[64];

		snprintf(head, sizeof(head), "\n  %s", all[i]->synopsis ?: all[i]->name);
		named += strstr(text, head) != NULL;
	}
	tap_is_int(named, n, "every registered strategy is listed");
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		longest = strlen(line) > longest ? strlen(line) : longest;
	tap_ok(longest <= 80, "no line is longer than 80 columns (%zu)", longest);
	free(text);
}

static void test_registry(void)
{
	const struct strategy_ops *const *all;
	struct strategy *s;
	char err[200] = "";

	tap_is_int(strategy_list(&all), 10, "ten strategies are registered");
	tap_is_str(strategy_lookup("none")->name, "none", "none by name");
	tap_is_str(strategy_lookup("tsa")->name, "tsa", "tsa by name");
	tap_is_str(strategy_lookup("tsa-h")->name, "tsa-h", "tsa-h is not tsa");
	tap_is_str(strategy_lookup("map")->name, "map", "map by name");
	tap_is_str(strategy_lookup("random")->name, "random", "random by name");
	tap_is_str(strategy_lookup("rnd-y:0.3")->name, "noise", "rnd-y:P goes to the catch-all");
	tap_is_str(strategy_lookup("random-all@150/sleep:2000")->name, "noise",
		   "a noise string goes to the catch-all");
	tap_ok(!(strategy_lookup("none")->flags & STRAT_F_STEERS), "none does not steer");
	tap_is_int(strategy_lookup("random")->flags,
		   STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ACCESS_POINTS | STRAT_F_JOBS,
		   "random steers synchronization points, and accesses with --access; runs at "
		   "once");
	tap_ok(strategy_lookup("ga")->flags & STRAT_F_JOBS,
	       "ga runs at once (-j): each run credited to the individual it evaluated");
	tap_ok(strategy_lookup("fpair")->flags & STRAT_F_JOBS,
	       "fpair runs at once (-j): each run's profile added at its end");
	tap_ok(strategy_lookup("map")->flags & STRAT_F_JOBS,
	       "map: each run its own engine state, the coverage shared under a lock: steered "
	       "at once (-j)");
	tap_ok(strategy_lookup("tsa")->flags & STRAT_F_JOBS,
	       "tsa: each run its own engine, the coverage under a lock: steered at once (-j)");
	tap_ok(strategy_lookup("tsa-h")->flags & STRAT_F_JOBS,
	       "tsa-h: each run its own engine, the coverage under a lock: steered at once (-j)");
	tap_is_int(strategy_lookup("map")->flags & (STRAT_F_ACCESS_POINTS | STRAT_F_ACCESS |
						    STRAT_F_PICKS | STRAT_F_SYNC_POINTS),
		   STRAT_F_ACCESS_POINTS | STRAT_F_ACCESS | STRAT_F_PICKS | STRAT_F_SYNC_POINTS,
		   "map: access points, and synchronization points for the observed schedule; "
		   "implies --access, picks who runs");
	tap_ok(strategy_lookup("tsa")->flags & STRAT_F_ESTIMATE, "tsa asks for estimation runs");
	tap_is_int(strategy_lookup("tsa")->replay, STRAT_REPLAY_ORDER, "tsa replays in order");
	tap_is_int(strategy_lookup("map")->replay, STRAT_REPLAY_PACED, "map replays paced");
	tap_ok(strategy_new("bogus", &s, err, sizeof(err)) == -EINVAL && !s &&
		       !strcmp(err, "no such strategy; one of none, random, tsa, tsa-h, map, pct, "
				    "ga, fpair, portfolio, or a noise configuration "
				    "PLACEMENT@FREQ/SEEDING"),
	       "an unknown name is refused with the registry's names (%s)", err);
	tap_ok(strategy_new("random-all@x/sleep:2", &s, err, sizeof(err)) == -EINVAL &&
		       strstr(err, "frequency 'x'"),
	       "a malformed noise configuration keeps the parser's reason (%s)", err);
	tap_ok(strategy_new("rnd-q:0.3", &s, err, sizeof(err)) == -EINVAL &&
		       strstr(err, "unknown baseline 'rnd-q'"),
	       "so does a malformed baseline (%s)", err);
	err[0] = 0;
	tap_ok(strategy_new("sharedVar-all@150/sleep:2000", &s, err, sizeof(err)) == 0 &&
		       strategy_has(s, STRAT_F_NEEDS_ACCESS) &&
		       strategy_has(s, STRAT_F_ACCESS_POINTS),
	       "a noise configuration over accesses needs --access (run checks the flag)");
	strategy_free(s);
	s = NULL;
	tap_ok(strategy_new("random-all@150/inverseNoise:2", &s, err, sizeof(err)) == -EINVAL &&
		       strstr(err, "not available in run"),
	       "a seeding run cannot apply is refused with a reason (%s)", err);
	tap_is_str(strategy_lookup("pct")->name, "pct", "pct by name");
	tap_is_str(strategy_lookup("pct:2")->name, "pct", "pct:DEPTH by name");
	tap_is_int(strategy_lookup("pct")->flags,
		   STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ACCESS_POINTS | STRAT_F_ESTIMATE |
			   STRAT_F_SERIAL | STRAT_F_PICKS | STRAT_F_JOBS,
		   "pct: serial at synchronization points (and accesses with --access), estimates "
		   "k, picks who runs; runs at once");
	tap_is_int(strategy_lookup("pct")->replay, STRAT_REPLAY_ORDER, "pct replays in order");
	s = make("pct");
	tap_ok(s && s->sched_serial == CS_SERIAL_PRIO,
	       "pct runs the scheduler's priority serial mode");
	strategy_free(s);
	err[0] = 0;
	tap_ok(strategy_new("pct:0", &s, err, sizeof(err)) == -EINVAL && !s &&
		       !strcmp(err, "pct:DEPTH: depth 1-64"),
	       "pct:0 is refused (%s)", err);
	tap_ok(strategy_new("pct:x", &s, err, sizeof(err)) == -EINVAL && !s, "pct:x is refused");
	tap_ok(strategy_new("pct:65", &s, err, sizeof(err)) == -EINVAL && !s,
	       "pct:65 is refused (deeper than PCT_MAX_DEPTH)");
	tap_ok(strategy_new("pct:", &s, err, sizeof(err)) == -EINVAL && !s,
	       "pct: with no depth is refused");
	s = make("pct:2");
	tap_ok(s != NULL, "pct:2 is accepted");
	strategy_free(s);
	tap_ok(strategy_new("map:3", &s, err, sizeof(err)) == -EINVAL, "map takes no options");
	tap_ok(strategy_new("none:x", &s, err, sizeof(err)) == -EINVAL, "none takes no options");
	s = make("rnd-y:0.3");
	tap_ok(s && !strcmp(s->spec, "rnd-y:0.3") && s->flags == s->ops->flags,
	       "an instance keeps its string and its flags");
	strategy_free(s);
	test_registry_list();
}

/* ---- noise and random ------------------------------------------------------------------ */

static void test_noise(void)
{
	struct fake_loop fl;
	struct strat_decision d;
	struct strategy *s = make("rnd-y:1");
	int i, yields = 0, delays = 0, bad = 0;

	fl_begin(&fl, s, 7, 2);
	for (i = 0; i < 20; i++) {
		d = fl_point(&fl, (size_t)(i % 2), CS_OP_LOCK_REQ, 0x1000 + (uint64_t)i, 0x4000,
			     NULL, false);
		yields += d.v == STRAT_YIELD && d.arg == 1;
	}
	tap_is_int(yields, 20, "rnd-y:1 yields once at every point");
	fl_end(&fl);
	strategy_free(s);

	s = make("rnd-s10:1");
	fl_begin(&fl, s, 7, 2);
	for (i = 0; i < 20; i++) {
		d = fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x1000, 0x4000, NULL, false);
		delays += d.v == STRAT_DELAY;
		bad += d.v == STRAT_DELAY && (d.us > 10000 || (int64_t)d.us != d.arg);
	}
	tap_is_int(delays, 20, "rnd-s10:1 delays at every point");
	tap_is_int(bad, 0, "each delay is at most 10 ms and logged as its length");
	fl_end(&fl);
	strategy_free(s);

	s = make("rnd-y:0.5");
	fl_begin(&fl, s, 7, 1);
	for (i = 0, yields = 0; i < 200; i++)
		yields += fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x1000, 0x4000, NULL, false).v ==
			  STRAT_YIELD;
	tap_ok(yields > 60 && yields < 140, "rnd-y:0.5 yields at about half the points (%d/200)",
	       yields);
	fl_end(&fl);
	strategy_free(s);
}

/* exit() while other threads live is a synchronization point of the noise
 * configurations like any other: rnd-y:1 yields at it, rnd-s10:1 delays. */
static void test_noise_exit(void)
{
	struct fake_loop fl;
	struct strat_decision d;
	struct strategy *s = make("rnd-y:1");

	fl_begin(&fl, s, 7, 2);
	d = fl_point(&fl, 0, CS_OP_PROC_EXIT, 0x50, 100, NULL, false);
	tap_ok(d.v == STRAT_YIELD && d.arg == 1, "rnd-y:1 yields once at exit()");
	fl_end(&fl);
	strategy_free(s);
	s = make("rnd-s10:1");
	fl_begin(&fl, s, 7, 2);
	d = fl_point(&fl, 0, CS_OP_PROC_EXIT, 0x50, 100, NULL, false);
	tap_ok(d.v == STRAT_DELAY && d.us <= 10000 && (int64_t)d.us == d.arg,
	       "rnd-s10:1 delays exit() by at most 10 ms, logged as its length");
	fl_end(&fl);
	strategy_free(s);

	/* ,xh: the exit halts until every other thread is parked. */
	s = make("random-all@0/yield:1,xh");
	fl_begin(&fl, s, 7, 2);
	d = fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x1000, 0x4000, NULL, false);
	tap_ok(d.v == STRAT_PROCEED, "random-all@0/yield:1,xh: a lock request goes on");
	d = fl_point(&fl, 0, CS_OP_PROC_EXIT, 0x50, 100, NULL, false);
	tap_ok(d.v == STRAT_HALT, "and exit() halts");
	fl_end(&fl);
	strategy_free(s);

	/* random: a coin per run, recorded in the configuration (",xh"). */
	int held = 0, xh = 0, bad = 0;

	s = make("random");
	for (uint64_t seed = 1; seed <= 200; seed++) {
		struct json_mem m;
		char *cfg;
		bool halt, has_xh;

		fl_begin(&fl, s, seed, 2);
		json_mem_open(&m);
		json_obj_begin(&m.j, NULL);
		s->ops->config_json(s, &fl.r, &m.j);
		json_obj_end(&m.j);
		cfg = json_mem_close(&m);
		halt = fl_point(&fl, 0, CS_OP_PROC_EXIT, 0x50, 100, NULL, false).v == STRAT_HALT;
		has_xh = cfg && strstr(cfg, ",xh\"") != NULL;
		held += halt;
		xh += has_xh;
		bad += has_xh && !halt;
		free(cfg);
		fl_end(&fl);
	}
	/* Without xh a haltOneThread seeding (or ,ht) can halt the exit too. */
	tap_ok(xh > 70 && xh < 130 && held >= xh,
	       "random draws ,xh in about half its runs (%d of 200; %d halted at the exit)", xh,
	       held);
	tap_is_int(bad, 0, "every run with ,xh in its configuration halted at the exit");
	strategy_free(s);
}

/* random: one configuration per run, drawn from the run's seed. */
static char *random_config(struct strategy *s, uint64_t seed)
{
	struct fake_loop fl;
	struct json_mem m;

	fl_begin(&fl, s, seed, 1);
	json_mem_open(&m);
	json_obj_begin(&m.j, NULL);
	s->ops->config_json(s, &fl.r, &m.j);
	json_obj_end(&m.j);
	fl_end(&fl);
	return json_mem_close(&m);
}

static void test_random(void)
{
	struct strategy *s = make("random");
	char *a = random_config(s, 11), *b = random_config(s, 11), *c;
	int differ = 0;
	uint64_t seed;

	tap_ok(a && strstr(a, "\"noise\":"), "random records its run's noise configuration (%s)",
	       a ? a : "");
	tap_is_str(a, b, "the same run seed draws the same configuration");
	for (seed = 12; seed < 22; seed++) {
		c = random_config(s, seed);
		differ += strcmp(a, c) != 0;
		free(c);
	}
	tap_ok(differ >= 5, "other seeds draw other configurations (%d of 10 differ)", differ);
	free(a);
	free(b);
	strategy_free(s);
}

/* random --access: the synchronization points' decisions of one run, with
 * or without accesses between them. */
static void random_sync_decisions(struct strategy *s, uint64_t seed, bool access, bool between,
				  struct strat_decision *d, size_t n, int *at_access)
{
	struct cov_event wr = { .obj = 7, .site = 12, .func = 5, .op = CS_OP_WRITE };
	struct fake_loop fl;
	size_t i;

	fl_access = access;
	fl_begin(&fl, s, seed, 2);
	for (i = 0; i < n; i++) {
		d[i] = fl_point(&fl, i % 2, CS_OP_LOCK_REQ, 0x1000 + 16 * (i % 3), 0x4000, NULL,
				false);
		if (between &&
		    fl_point(&fl, (i + 1) % 2, CS_OP_WRITE, 0x2000, 0x9000, &wr, false).v !=
			    STRAT_PROCEED)
			++*at_access;
	}
	fl_end(&fl);
	fl_access = false;
}

/* A run's "noise" (or another key) as a string. */
static char *random_config_key(struct strategy *s, uint64_t seed, bool access, const char *key)
{
	char *cfg, *v = NULL, *at, *end, pat[64];

	fl_access = access;
	cfg = random_config(s, seed);
	fl_access = false;
	snprintf(pat, sizeof(pat), "\"%s\":\"", key);
	if (cfg && (at = strstr(cfg, pat)) && (end = strchr(at + strlen(pat), '"')))
		v = strndup(at + strlen(pat), (size_t)(end - at - strlen(pat)));
	free(cfg);
	return v;
}

/* random --access keeps random's configuration at the synchronization
 * points and adds a second one at the accesses. */
static void test_random_access(void)
{
	struct strategy *s = make("random");
	struct strat_decision plain[24], acc[24], mixed[24];
	int same_cfg = 0, same_plain = 0, same_mixed = 0, has_acc = 0, at_access = 0, noisy = 0,
	    access_only = 0, fixed_k = 0;
	uint64_t seed;

	for (seed = 1; seed <= 40; seed++) {
		char *a = random_config_key(s, seed, false, "noise");
		char *b = random_config_key(s, seed, true, "noise");
		char *c = random_config_key(s, seed, true, "noise_access");
		char *d = random_config_key(s, seed, false, "noise_access");
		size_t i;
		bool eq = true, eqm = true;

		same_cfg += a && b && !strcmp(a, b);
		has_acc += c && !d;
		access_only += c && (!strncmp(c, "sharedVar", 9) || !strncmp(c, "pattern", 7));
		random_sync_decisions(s, seed, false, false, plain, 24, &at_access);
		random_sync_decisions(s, seed, true, false, acc, 24, &at_access);
		random_sync_decisions(s, seed, true, true, mixed, 24, &at_access);
		for (i = 0; i < 24; i++) {
			eq = eq && plain[i].v == acc[i].v && plain[i].us == acc[i].us;
			eqm = eqm && plain[i].v == mixed[i].v && plain[i].us == mixed[i].us;
			noisy += plain[i].v != STRAT_PROCEED;
		}
		same_plain += eq;
		/* coverage's frequency falls with the thread's point index,
		 * which the accesses between raise */
		if (a && strncmp(a, "coverage", 8)) {
			fixed_k++;
			same_mixed += eqm;
		}
		free(a);
		free(b);
		free(c);
		free(d);
	}
	tap_is_int(same_cfg, 40,
		   "random --access: the synchronization points' configuration is random's for "
		   "the same seed (40 seeds)");
	tap_is_int(has_acc, 40,
		   "... and \"noise_access\" records the accesses' own (only with --access)");
	tap_ok(access_only >= 5,
	       "... drawn among all placements, access-only ones too (%d of 40: sharedVar, "
	       "pattern)",
	       access_only);
	tap_ok(same_plain == 40 && noisy > 0,
	       "the synchronization points decide as random's run of the same seed (%d of 40; %d "
	       "noisy decisions)",
	       same_plain, noisy);
	tap_ok(fixed_k >= 20 && same_mixed == fixed_k,
	       "... with writes between them too, where the placement is not coverage's (%d of "
	       "%d): the accesses draw from their own stream",
	       same_mixed, fixed_k);
	tap_ok(at_access > 0, "the writes between them get noise of their own (%d)", at_access);
	strategy_free(s);
}

/* ---- --serial ------------------------------------------------------------------------ */

static void test_serial(void)
{
	struct fake_loop fl;
	struct strat_decision d;
	struct strategy *s = serial_wrap(make("none"), CS_SERIAL_FIFO);
	const struct declog_entry *e;

	tap_ok(strategy_has(s, STRAT_F_STEERS) && strategy_has(s, STRAT_F_SERIAL) &&
		       strategy_has(s, STRAT_F_SYNC_POINTS) && strategy_has(s, STRAT_F_JOBS),
	       "none --serial steers, serially, at synchronization points; runs at once");
	fl_begin(&fl, s, 3, 3);
	d = fl_point(&fl, 2, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_is_int(d.v, STRAT_PARK, "every point waits for its turn");
	fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_point(&fl, 0, CS_OP_COND_SIGNAL, 0x20, 0x4008, NULL, false);
	fl_all_parked(&fl);
	e = last_entry(&fl);
	tap_ok(fl.releases == 1 && e && e->thread == fl.th[0].id && e->action == DECLOG_RELEASE,
	       "fifo releases the oldest thread (\"0\") first, logged");
	fl_all_parked(&fl);
	e = last_entry(&fl);
	tap_ok(fl.releases == 2 && e && e->thread == fl.th[1].id, "then \"0.1\"");
	fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_all_parked(&fl);
	e = last_entry(&fl);
	tap_ok(e && e->thread == fl.th[0].id, "\"0\" again once it waits again");
	tap_ok(strstr(policy_fake_log(fl.r.pol), "release 100") != NULL,
	       "the release reached the policy backend");
	fl_end(&fl);
	strategy_free(s);
}

static void serial_random_order(uint64_t seed, uint64_t *ids, size_t n)
{
	struct fake_loop fl;
	struct strategy *s = serial_wrap(make("none"), CS_SERIAL_RANDOM);
	size_t i;

	fl_begin(&fl, s, seed, 4);
	for (i = 0; i < 4; i++)
		fl_point(&fl, i, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	for (i = 0; i < n; i++) {
		fl_all_parked(&fl);
		ids[i] = last_entry(&fl) ? last_entry(&fl)->thread : 0;
	}
	fl_end(&fl);
	strategy_free(s);
}

/* A seeded release order: the same seed gives it again, another seed
 * (among the next ten) another one. Two tests. */
static void check_seeded_order(void (*order)(uint64_t seed, uint64_t *ids, size_t n),
			       const char *what)
{
	uint64_t a[4], b[4], c[4];
	bool other = false;
	uint64_t seed;

	order(5, a, 4);
	order(5, b, 4);
	tap_ok(!memcmp(a, b, sizeof(a)), "%s: the same seed gives the same release order", what);
	for (seed = 6; seed < 16 && !other; seed++) {
		order(seed, c, 4);
		other = memcmp(a, c, sizeof(a)) != 0;
	}
	tap_ok(other, "%s: another seed gives another order", what);
}

static void test_serial_random(void)
{
	check_seeded_order(serial_random_order, "serial random");
}

/* ---- tsa ------------------------------------------------------------------------------- */

static void test_tsa(void)
{
	struct fake_loop fl;
	struct strat_decision d;
	struct strategy *s = make("tsa");

	fl_begin(&fl, s, 1, 2);
	d = fl_point(&fl, 0, CS_OP_COND_SIGNAL, 0x20, 0x4008, NULL, false);
	tap_is_int(d.v, STRAT_PROCEED, "tsa: a point that is not a lock request proceeds");
	d = fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x30, 0x4000, NULL, false);
	tap_is_int(d.v, STRAT_PROCEED,
		   "tsa: with nothing estimated a lock request is never paused");
	fl_end(&fl);
	strategy_free(s);
}

/* exit() while other threads live: tsa keeps it until every other thread
 * is parked or gone and no paused request is left, then lets it go. */
static void test_tsa_exit(void)
{
	struct fake_loop fl;
	struct strat_decision d;
	struct strategy *s = make("tsa");
	struct cs_event e = { .op = CS_OP_EXIT };

	fl_begin(&fl, s, 1, 2);
	d = fl_point(&fl, 0, CS_OP_PROC_EXIT, 0x50, 100, NULL, false);
	tap_is_int(d.v, STRAT_PARK, "tsa: exit() is kept");
	d = fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x30, 0x4000, NULL, false);
	tap_is_int(d.v, STRAT_PROCEED, "tsa: the other thread's lock request goes on");
	tap_is_int(fl.releases, 0, "tsa: nothing released before the all-parked note");
	fl_all_parked(&fl);
	tap_ok(fl.releases == 1 && released_thread(&fl) == 0,
	       "tsa: with no paused request the note lets the exit go");
	fl_all_parked(&fl);
	tap_is_int(fl.releases, 1, "tsa: once only");
	fl_end(&fl);

	fl_begin(&fl, s, 1, 2);
	fl_point(&fl, 0, CS_OP_PROC_EXIT, 0x50, 100, NULL, false);
	e.tid = fl.th[0].tid;
	e.pid = fl.th[0].tid;
	s->ops->event(s, &fl.r, &e, &fl.th[0]);
	fl_all_parked(&fl);
	tap_is_int(fl.releases, 0, "tsa: an exit let go by someone else is not released again");
	fl_end(&fl);
	strategy_free(s);
}

/* ---- map ------------------------------------------------------------------------------- */

static void test_map(void)
{
	struct fake_loop fl;
	struct strat_decision d;
	struct strategy *s = make("map");
	struct cov_event w = { .thread = 0, .op = CS_OP_WRITE, .site = 5, .obj = 9 };
	struct cov_event r = { .thread = 1, .op = CS_OP_READ, .site = 6, .obj = 9 };

	fl_begin(&fl, s, 1, 3); /* thread 2: synchronization only */
	d = fl_point(&fl, 0, CS_OP_WRITE, 0x50, 0x9000, NULL, false);
	tap_is_int(d.v, STRAT_PROCEED, "map: an access to no followed variable proceeds");
	d = fl_point(&fl, 0, CS_OP_WRITE, 0x50, 0x9000, &w, false);
	tap_is_int(d.v, STRAT_PROCEED, "map: an access to an uncontended variable proceeds");
	d = fl_point(&fl, 0, CS_OP_WRITE, 0x50, 0x9000, &w, true);
	tap_ok(d.v == STRAT_RELEASE || d.v == STRAT_PARK,
	       "map: a contended access is the engine's decision (%d)", d.v);
	if (d.v == STRAT_RELEASE)
		tap_is_int(d.arg, 4, "released at once: logged as MAP_REL_PROCEED");
	else
		tap_ok(1, "kept: released later by the engine");
	d = fl_point(&fl, 1, CS_OP_READ, 0x60, 0x9000, &r, true);
	tap_ok(d.v == STRAT_PARK || d.v == STRAT_PROCEED || d.v == STRAT_RELEASE,
	       "map: the other thread's access to it is decided too (%d)", d.v);
	if (d.v == STRAT_PARK) {
		size_t before = fl.releases;
		struct policy_note old = { .ts_ns = now_ns() };

		d = fl_point(&fl, 2, CS_OP_LOCK_REQ, 0x70, 0xa000, NULL, false);
		tap_is_int(d.v, STRAT_PROCEED,
			   "map: a synchronization point goes on (it parks for the schedule only)");
		s->ops->all_parked(s, &fl.r, &old);
		tap_is_int(fl.releases, before,
			   "map: a note from before a point that went on is stale: the read stays "
			   "kept");
		/* Its write has not been confirmed as executed: after 2 ms
		 * and an all-parked note the kept read may go. */
		fl_all_parked(&fl);
		tap_ok(fl.releases >= before, "map: an all-parked note is handled");
	} else {
		tap_ok(0, "map: seed 1 keeps the read (the test's premise)");
		tap_ok(0, "map: seed 1 keeps the read (the test's premise)");
		tap_ok(0, "map: seed 1 keeps the read (the test's premise)");
	}
	fl_end(&fl);
	strategy_free(s);
}

/* ---- map, runs at once ------------------------------------------------------------------ */

/* Thread i reaches an access to a contended variable (its campaign thread
 * id is i, as for the first run's threads); an access released at once is
 * fed back as executed, as onerun.c's go_on does. */
static struct strat_decision map_access(struct fake_loop *fl, size_t i, uint16_t op, uint32_t var,
					uint32_t site)
{
	struct cov_event ev = { .thread = (uint32_t)i, .op = op, .site = site, .obj = var };
	struct strat_decision d = fl_point(fl, i, op, 0x1000 + site, 0x9000 + var, &ev, true);

	if (d.v == STRAT_RELEASE)
		fl->s->ops->executed(fl->s, &fl->r, &ev);
	return d;
}

/* The run executed thread i's access: what the campaign feeds. */
static void map_ran(struct fake_loop *fl, size_t i, uint16_t op, uint32_t var, uint32_t site)
{
	struct cov_event ev = { .thread = (uint32_t)i, .op = op, .site = site, .obj = var };

	fl->s->ops->executed(fl->s, &fl->r, &ev);
}

/* map's campaign summary line (campaign_end, on stderr), in numbers. */
struct map_totals {
	size_t covered;
	uint64_t started, completed, abandoned, pauses, waits;
	uint64_t at_once, eager, random, no_target, reeval, forced;
};

static int map_totals(struct strategy *s, struct strat_campaign *c, struct map_totals *t)
{
	FILE *tmp = tmpfile();
	char text[1024] = "";
	int saved, n;

	memset(t, 0, sizeof(*t));
	if (!tmp)
		return -1;
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fileno(tmp), STDERR_FILENO);
	c->quiet = false;
	s->ops->campaign_end(s, c);
	c->quiet = true;
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	lseek(fileno(tmp), 0, SEEK_SET);
	n = (int)read(fileno(tmp), text, sizeof(text) - 1);
	fclose(tmp);
	text[n > 0 ? n : 0] = '\0';
	n = sscanf(text,
		   "concsched: map: %zu covered patterns; targets %" SCNu64 " started, %" SCNu64
		   " completed, %" SCNu64 " abandoned; %" SCNu64 " pauses, %" SCNu64
		   " waits for an access in flight; releases: at once %" SCNu64 ", eager %" SCNu64
		   ", random %" SCNu64 ", no target %" SCNu64 ", re-evaluated %" SCNu64 ", %" SCNu64
		   " forced",
		   &t->covered, &t->started, &t->completed, &t->abandoned, &t->pauses, &t->waits,
		   &t->at_once, &t->eager, &t->random, &t->no_target, &t->reeval, &t->forced);
	if (n != 12)
		tap_diag("map summary: %s", text);
	return n == 12 ? 0 : -1;
}

static void map_totals_diag(const struct map_totals *t)
{
	tap_diag("  covered %zu; targets %" PRIu64 "/%" PRIu64 "/%" PRIu64 "; pauses %" PRIu64
		 ", waits %" PRIu64 "; at once %" PRIu64 ", eager %" PRIu64 ", random %" PRIu64
		 ", no target %" PRIu64 ", re-evaluated %" PRIu64 ", forced %" PRIu64,
		 t->covered, t->started, t->completed, t->abandoned, t->pauses, t->waits,
		 t->at_once, t->eager, t->random, t->no_target, t->reeval, t->forced);
}

/* One test: map's campaign summary line says exactly *want. */
static void map_totals_is(struct strategy *s, struct strat_campaign *c,
			  const struct map_totals *want, const char *what)
{
	struct map_totals t;
	bool ok = map_totals(s, c, &t) == 0 && !memcmp(&t, want, sizeof(t));

	tap_ok(ok, "%s", what);
	if (!ok)
		map_totals_diag(&t);
}

/* Two runs of one campaign in flight at once (-j 2), hand-checked, one
 * variable v9. Run A: thread 0 writes at s5 (no target yet: at once),
 * which makes pattern 3 (a:W x, b:W x) A's target; thread 1's read at s6
 * is kept (p3 wants a write). Run B begins. A's all-parked note: the read
 * is still paused for A's p3, so it goes at random (1); had B's start
 * wiped A's state, it would be re-evaluated (3) for want of a target. A's
 * read runs: A covers p2 v9 s5 s6. Run B: thread 0 writes at s5 (at
 * once): B's own target p3 (A's target is A's; p2 at s5 is covered);
 * thread 1's write at s7 is p3's next step but waits for thread 0's write
 * to be seen (a wait); thread 0's next point proves it: thread 1 goes
 * (re-evaluated), thread 0's read at s9 is kept (p3's write has not run:
 * a pause). The write runs (p3 v9 s5 s7 covered, target completed); the
 * note lets the read go (re-evaluated) and it runs (p2 v9 s7 s9 and
 * p5 v9 s5 s7 s9 covered; a second target of B, at s9). Totals: B's at
 * its run_end (ended first), then A's added at A's. */
static void test_map_at_once(void)
{
	struct strategy *s = make("map");
	struct strat_campaign c = { .quiet = true };
	struct fake_loop a, b;
	struct strat_decision d;

	s->ops->campaign_begin(s, &c);
	fl_keep_campaign = true;
	fl_begin(&a, s, 1, 2);
	d = map_access(&a, 0, CS_OP_WRITE, 9, 5);
	tap_ok(d.v == STRAT_RELEASE && d.arg == 4, "map -j: A's first write goes at once (%d)",
	       d.v);
	d = map_access(&a, 1, CS_OP_READ, 9, 6);
	tap_is_int(d.v, STRAT_PARK, "map -j: A's read is kept (A's target p3 wants a write)");
	fl_begin(&b, s, 2, 2);
	fl_all_parked(&a);
	tap_ok(a.releases == 1 && a.last_arg == 1,
	       "map -j: B's run_begin left A's thread paused for A's target: released at random "
	       "(%zu release, arg %lld; 3 would be a lost target)",
	       a.releases, (long long)a.last_arg);
	map_ran(&a, 1, CS_OP_READ, 9, 6);

	d = map_access(&b, 0, CS_OP_WRITE, 9, 5);
	tap_ok(d.v == STRAT_RELEASE && d.arg == 4,
	       "map -j: B's first write goes at once: B has no target (A's is A's)");
	d = map_access(&b, 1, CS_OP_WRITE, 9, 7);
	tap_is_int(d.v, STRAT_PARK, "map -j: B's second write waits for the first to be seen");
	d = map_access(&b, 0, CS_OP_READ, 9, 9);
	tap_ok(b.releases == 1 && b.last_arg == 3 && d.v == STRAT_PARK,
	       "map -j: B's thread 0 shows its write ran: thread 1 goes (p3's step, re-evaluated), "
	       "its read is kept (%zu release, arg %lld, %d)",
	       b.releases, (long long)b.last_arg, d.v);
	map_ran(&b, 1, CS_OP_WRITE, 9, 7);
	fl_all_parked(&b);
	tap_ok(b.releases == 2 && b.last_arg == 3,
	       "map -j: p3 done, B's read re-evaluated goes (%zu releases)", b.releases);
	map_ran(&b, 0, CS_OP_READ, 9, 9);

	fl_end(&b);
	c.nruns = 1;
	map_totals_is(s, &c,
		      &(struct map_totals){ .covered = 4,
					    .started = 2,
					    .completed = 1,
					    .pauses = 1,
					    .waits = 1,
					    .at_once = 1,
					    .reeval = 2 },
		      "map -j: B ended first: the totals are B's counts (A's come at its end), the "
		      "coverage both runs' (4)");
	fl_end(&a);
	c.nruns = 2;
	map_totals_is(
		s, &c,
		&(struct map_totals){ .covered = 4,
				      .started = 3,
				      .completed = 1,
				      .pauses = 2,
				      .waits = 1,
				      .at_once = 2,
				      .random = 1,
				      .reeval = 2 },
		"map -j: A ended: its counts added (3 targets, 2 pauses, 2 at once, 1 random, "
		"2 re-evaluated)");
	fl_keep_campaign = false;
	strategy_free(s);
}

/* Coverage is the campaign's at once. Run A executes, on v9: 0 W s5,
 * 1 W s7, 0 R s6, then (after run B began) 1 R s8, 0 W s5. Its window
 * matches p3 v9 s5 s7, p5 v9 s5 s7 s6, p2 v9 s5 s8, p6 v9 s5 s8 s5 and
 * p8 v9 s5 s7 s5: every one-variable pattern that starts with a write at
 * (v9, s5). So B's write there starts no target, and B's thread 0 writes
 * there again at once; at s4, which nobody covered, p3 becomes B's target
 * and the same thread's second write is kept (it waits for a partner). */
static void test_map_at_once_coverage(void)
{
	struct strategy *s = make("map");
	struct strat_campaign c = { .quiet = true };
	struct fake_loop a, b;
	struct strat_decision d1, d2;

	s->ops->campaign_begin(s, &c);
	fl_keep_campaign = true;
	fl_begin(&a, s, 1, 2);
	map_ran(&a, 0, CS_OP_WRITE, 9, 5);
	map_ran(&a, 1, CS_OP_WRITE, 9, 7);
	map_ran(&a, 0, CS_OP_READ, 9, 6);
	fl_begin(&b, s, 2, 2);
	map_ran(&a, 1, CS_OP_READ, 9, 8);
	map_ran(&a, 0, CS_OP_WRITE, 9, 5);
	d1 = map_access(&b, 0, CS_OP_WRITE, 9, 5);
	d2 = map_access(&b, 0, CS_OP_WRITE, 9, 5);
	tap_ok(d1.v == STRAT_RELEASE && d2.v == STRAT_RELEASE && d2.arg == 4,
	       "map -j: what A covered is covered for B at once: no target at (v9, s5), B's "
	       "second write there goes at once (%d, %d)",
	       d1.v, d2.v);
	d1 = map_access(&b, 0, CS_OP_WRITE, 9, 4);
	d2 = map_access(&b, 0, CS_OP_WRITE, 9, 4);
	tap_ok(d1.v == STRAT_RELEASE && d2.v == STRAT_PARK,
	       "map -j: at (v9, s4), uncovered, B targets p3: its second write there is kept (%d, "
	       "%d)",
	       d1.v, d2.v);
	fl_end(&a);
	fl_end(&b);
	fl_keep_campaign = false;
	strategy_free(s);
}

/* Two workers, each its own run after run over one map strategy, as
 * run -j 2 drives it: run_begin and run_end under the campaign's lock,
 * everything else at once. A worker's fake loop lets kept threads go and
 * feeds their accesses as executed from inside the release (as go_on). */
struct map_worker {
	struct fake_loop fl; /* first: r.ctx is the worker too */
	struct futex_lock *camp;
	int *go; /* both start together */
	uint64_t seed;
	unsigned runs, steps;
	bool held[8], exited[8];
	struct cov_event pending[8];
	uint64_t points, at_once, parks, rel[5];
};

static void mw_release(struct strat_run *r, struct strat_thread *t, int64_t arg)
{
	struct map_worker *w = r->ctx;
	size_t i = (size_t)(t - r->threads);

	fl_release(r, t, arg);
	if (arg >= 0 && arg < (int64_t)ARRAY_SIZE(w->rel))
		w->rel[arg]++;
	w->held[i] = false;
	w->fl.s->ops->executed(w->fl.s, r, &w->pending[i]);
}

static void *mw_main(void *arg)
{
	static const uint16_t ops[] = { CS_OP_READ, CS_OP_WRITE, CS_OP_RW };
	struct map_worker *w = arg;
	struct strategy *s = w->fl.s;
	struct cs_rng g;

	rng_seed(&g, w->seed);
	while (!__atomic_load_n(w->go, __ATOMIC_ACQUIRE))
		;
	for (unsigned run = 0; run < w->runs; run++) {
		size_t nt = 3;

		futex_lock_acquire(w->camp);
		fl_begin(&w->fl, s, w->seed * 1000 + run, nt);
		futex_lock_release(w->camp);
		w->fl.r.release = mw_release;
		memset(w->held, 0, sizeof(w->held));
		memset(w->exited, 0, sizeof(w->exited));
		for (unsigned step = 0; step < w->steps; step++) {
			size_t i = rng_below(&g, nt), k = rng_below(&g, 16), j;
			struct cov_event *ev = &w->pending[i];
			struct strat_decision d;
			bool all = true;

			if (w->exited[i])
				continue;
			if (w->held[i]) {
				for (j = 0; j < nt; j++)
					all = all && (w->exited[j] || w->held[j]);
				if (all || k < 2)
					fl_all_parked(&w->fl);
				else if (k == 2)
					s->ops->tick(s, &w->fl.r);
				continue;
			}
			if (k == 0 && step > w->steps / 2) {
				struct cs_event e = { .op = CS_OP_EXIT, .tid = w->fl.th[i].tid };

				s->ops->event(s, &w->fl.r, &e, &w->fl.th[i]);
				w->exited[i] = true;
				continue;
			}
			*ev = (struct cov_event){ .thread = (uint32_t)i,
						  .op = ops[rng_below(&g, ARRAY_SIZE(ops))],
						  .site = 1 + (uint32_t)rng_below(&g, 4),
						  .obj = 1 + (uint32_t)rng_below(&g, 2) };
			d = fl_point(&w->fl, i, ev->op, 0x1000 + ev->site, 0x9000 + ev->obj, ev,
				     true);
			w->points++;
			if (d.v == STRAT_PARK) {
				w->parks++;
				w->held[i] = true;
			} else {
				w->at_once += d.v == STRAT_RELEASE;
				s->ops->executed(s, &w->fl.r, ev);
			}
		}
		futex_lock_acquire(w->camp);
		fl_end(&w->fl);
		futex_lock_release(w->camp);
	}
	return NULL;
}

static void test_map_at_once_stress(void)
{
	struct strategy *s = make("map");
	struct strat_campaign c = { .quiet = true };
	struct futex_lock camp = { 0 };
	struct map_worker w[2];
	pthread_t th[2];
	struct map_totals t;
	uint64_t points = 0, at_once = 0, parks = 0, rel[5] = { 0 };
	bool made[2] = { false, false };
	int go = 0;

	s->ops->campaign_begin(s, &c);
	fl_keep_campaign = true;
	for (size_t i = 0; i < ARRAY_SIZE(w); i++) {
		memset(&w[i], 0, sizeof(w[i]));
		w[i].fl.s = s;
		w[i].camp = &camp;
		w[i].go = &go;
		w[i].seed = 11 + i;
		w[i].runs = 12;
		w[i].steps = 600;
	}
	for (size_t i = 0; i < ARRAY_SIZE(w); i++)
		made[i] = pthread_create(&th[i], NULL, mw_main, &w[i]) == 0;
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	for (size_t i = 0; i < ARRAY_SIZE(w); i++) {
		if (made[i])
			pthread_join(th[i], NULL);
		points += w[i].points;
		at_once += w[i].at_once;
		parks += w[i].parks;
		for (size_t k = 0; k < ARRAY_SIZE(rel); k++)
			rel[k] += w[i].rel[k];
	}
	tap_ok(made[0] && made[1] && w[0].points > 2000 && w[1].points > 2000,
	       "map -j stress: two workers drove 12 runs each at once (%" PRIu64 " and %" PRIu64
	       " points)",
	       w[0].points, w[1].points);
	c.nruns = 24;
	if (map_totals(s, &c, &t) == 0) {
		tap_ok(t.at_once == at_once && t.eager == rel[0] && t.random == rel[1] &&
			       t.no_target == rel[2] && t.reeval == rel[3],
		       "map -j stress: the totals of the releases are the workers' sums (%" PRIu64
		       " at once, %" PRIu64 " kept and let go)",
		       at_once, rel[0] + rel[1] + rel[2] + rel[3]);
		tap_ok(t.pauses + t.waits >= parks && t.started >= t.completed + t.abandoned &&
			       t.forced == 0 && t.covered > 0,
		       "map -j stress: every kept thread was a pause or a wait (%" PRIu64
		       " kept), targets consistent, nothing forced",
		       parks);
		if (t.at_once != at_once || t.pauses + t.waits < parks)
			map_totals_diag(&t);
	} else {
		tap_ok(0, "map -j stress: the summary line");
		tap_ok(0, "map -j stress: the summary line");
	}
	fl_keep_campaign = false;
	strategy_free(s);
}

/* ---- pct ------------------------------------------------------------------------------- */

/* The strategy's run configuration as a string. */
static char *run_config(struct fake_loop *fl)
{
	struct json_mem m;

	json_mem_open(&m);
	json_obj_begin(&m.j, NULL);
	fl->s->ops->config_json(fl->s, &fl->r, &m.j);
	json_obj_end(&m.j);
	return json_mem_close(&m);
}

/* Priorities as the fake policy backend has them equal the engine's. */
static bool prios_match(struct fake_loop *fl, const struct pct *p)
{
	size_t i;

	for (i = 0; i < fl->r.nthreads; i++)
		if (policy_fake_prio(fl->r.pol, fl->th[i].tid) != pct_priority(p, (uint32_t)i))
			return false;
	return true;
}

/* Depth 1, no estimate (k = 1): the engine seeded with the run's seed gives
 * thread index i its priority in order of appearance; a hand-made engine
 * with the same seed says which thread goes first. */
static void test_pct_depth1(void)
{
	struct fake_loop fl;
	struct strat_decision d;
	struct strategy *s = make("pct:1");
	struct policy_note old = { .ts_ns = 1 };
	struct pct p;
	uint32_t best = 0, second = 0, i, parks = 0;
	const struct declog_entry *e;
	char *cfg, want[64];

	pct_init(&p, 1, 1, 5);
	for (i = 0; i < 3; i++)
		pct_thread_add(&p, i);
	for (i = 1; i < 3; i++)
		if (pct_priority(&p, i) > pct_priority(&p, best))
			best = i;
	second = best == 0 ? 1 : 0;
	for (i = 0; i < 3; i++)
		if (i != best && pct_priority(&p, i) > pct_priority(&p, second))
			second = i;
	fl_begin(&fl, s, 5, 3);
	cfg = run_config(&fl);
	tap_is_str(cfg, "{\"pct\":{\"depth\":1,\"k\":1,\"focus\":\"every step\"}}",
		   "pct:1 with nothing observed records depth 1, k 1");
	free(cfg);
	tap_ok(prios_match(&fl, &p),
	       "each thread's policy priority is its engine priority (%u %u %u)",
	       policy_fake_prio(fl.r.pol, 100), policy_fake_prio(fl.r.pol, 101),
	       policy_fake_prio(fl.r.pol, 102));
	for (i = 0; i < 3; i++) {
		d = fl_point(&fl, i, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
		parks += d.v == STRAT_PARK;
	}
	tap_is_int(parks, 3, "every synchronization point parks");
	tap_is_int(fl.releases, 0, "nobody goes before the all-parked note");
	fl_all_parked(&fl);
	e = last_entry(&fl);
	tap_ok(fl.releases == 1 && released_thread(&fl) == best && e->action == DECLOG_RELEASE &&
		       e->arg == (int64_t)pct_priority(&p, best),
	       "the note releases the highest-priority thread (%u), logged with its priority",
	       best);
	snprintf(want, sizeof(want), "release %u", 100 + best);
	tap_ok(strstr(policy_fake_log(fl.r.pol), want) != NULL,
	       "the release reached the policy backend");
	s->ops->all_parked(s, &fl.r, &old);
	tap_is_int(fl.releases, 1, "a note from before the last release is ignored");
	fl_all_parked(&fl);
	tap_ok(fl.releases == 2 && released_thread(&fl) == second,
	       "the next note releases the next priority (%u)", second);
	fl_point(&fl, best, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_all_parked(&fl);
	tap_ok(released_thread(&fl) == best, "the top thread again once it waits again");
	fl_thread(&fl);
	pct_thread_add(&p, 3);
	tap_ok(prios_match(&fl, &p) && policy_fake_prio(fl.r.pol, 103) >= 1,
	       "a new thread gets its priority and the others their new ranks");
	fl_end(&fl);
	pct_free(&p);
	strategy_free(s);
}

/* The first release of a depth-1 run. */
static uint64_t pct_first(uint64_t seed)
{
	struct fake_loop fl;
	struct strategy *s = make("pct:1");
	uint64_t id;
	size_t i;

	fl_begin(&fl, s, seed, 4);
	for (i = 0; i < 4; i++)
		fl_point(&fl, i, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_all_parked(&fl);
	id = last_entry(&fl) ? last_entry(&fl)->thread : 0;
	fl_end(&fl);
	strategy_free(s);
	return id;
}

/* An observed run with n lock acquisitions (and their unlocks) by two
 * threads, as the estimation gives it to the strategy. */
static void pct_observe(struct strategy *s, int n)
{
	struct strat_campaign c = { .quiet = true };
	struct strat_observation obs = { 0 };
	struct thread_model tm;
	struct cs_event e = { 0 };
	int i;

	thread_model_init(&tm, 0);
	e.pid = 100;
	for (i = 0; i < n; i++) {
		e.tid = 100 + (uint32_t)(i % 2);
		e.obj = 0x4000;
		e.site = 0x10;
		e.op = CS_OP_LOCK;
		e.seq = (uint32_t)(2 * (i / 2));
		thread_model_add_event(&tm, &e);
		e.op = CS_OP_UNLOCK;
		e.seq++;
		thread_model_add_event(&tm, &e);
	}
	obs.tm = &tm;
	s->ops->estimate(s, &c, &obs);
	thread_model_free(&tm);
}

/* Depth 2 over k = 2 steps (estimated): the change point demotes the
 * thread that would run at its step, and its priority drops to 1 in the
 * policy. A hand-made engine with the same seed, depth and k makes the
 * same picks. */
static void test_pct_change_point(void)
{
	const uint32_t both[2] = { 0, 1 };
	struct fake_loop fl;
	struct strategy *s = make("pct:2");
	struct pct p;
	int step, same = 0, demoted = 0;
	char *cfg;

	pct_observe(s, 2);
	fl_begin(&fl, s, 9, 2);
	cfg = run_config(&fl);
	tap_is_str(cfg, "{\"pct\":{\"depth\":2,\"k\":2,\"focus\":\"every step\"}}",
		   "k comes from the observed run: its 2 lock acquisitions");
	free(cfg);
	pct_init(&p, 2, 2, 9);
	pct_thread_add(&p, 0);
	pct_thread_add(&p, 1);
	fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	for (step = 1; step <= 3; step++) {
		int64_t want = pct_pick(&p, both, 2);
		size_t got;

		pct_step(&p);
		fl_all_parked(&fl);
		got = released_thread(&fl);
		same += got == (size_t)want;
		if (got < 2)
			fl_point(&fl, got, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	}
	tap_is_int(same, 3, "each release is the engine's pick (change point at step %llu)",
		   (unsigned long long)p.change[0]);
	demoted += policy_fake_prio(fl.r.pol, 100) == 1;
	demoted += policy_fake_prio(fl.r.pol, 101) == 1;
	tap_ok(demoted == 1 && prios_match(&fl, &p),
	       "the demoted thread's policy priority is 1, each the engine's (%u %u)",
	       policy_fake_prio(fl.r.pol, 100), policy_fake_prio(fl.r.pol, 101));
	fl_end(&fl);
	/* The run reached 5 decision points: the next run's k. */
	fl_begin(&fl, s, 10, 2);
	cfg = run_config(&fl);
	tap_is_str(cfg, "{\"pct\":{\"depth\":2,\"k\":5,\"focus\":\"every step\"}}",
		   "the next run's k is the previous run's 5 decision points");
	free(cfg);
	fl_end(&fl);
	pct_free(&p);
	strategy_free(s);
}

/* pct --access: an access to a shared variable is a step (the thread waits
 * for its turn before it), one to a variable the campaign does not follow
 * goes on; the first run's k adds the estimation run's accesses, the next
 * run's counts the access steps. With depth 2 over k = 2 steps the single
 * change point falls on step 1: the thread the engine picks at the first
 * all-parked note is demoted between two of its stores. */
static void test_pct_access(void)
{
	const uint32_t both[2] = { 0, 1 };
	struct cov_event acc = { .obj = 7, .site = 11, .func = 5 };
	struct fake_loop fl;
	struct strat_decision d;
	struct strategy *s = make("pct:2");
	struct pct p;
	int64_t first, second;
	char *cfg;

	pct_observe(s, 2);
	fl_access = true;
	fl_est_accesses = 4;
	fl_begin(&fl, s, 9, 2);
	fl_est_accesses = 0;
	cfg = run_config(&fl);
	tap_is_str(cfg, "{\"pct\":{\"depth\":2,\"k\":6,\"focus\":\"every step\"}}",
		   "with --access the first k adds the estimation run's 4 accesses to its 2 "
		   "acquisitions");
	free(cfg);
	d = fl_point(&fl, 0, CS_OP_WRITE, 0x50, 0x9000, NULL, false);
	tap_is_int(d.v, STRAT_PROCEED, "pct: an access to no followed variable goes on");
	d = fl_point(&fl, 0, CS_OP_WRITE, 0x50, 0x9000, &acc, false);
	tap_is_int(d.v, STRAT_PARK, "pct: an access to a shared variable waits for its turn");
	d = fl_point(&fl, 1, CS_OP_READ, 0x60, 0x9000, &acc, false);
	tap_is_int(d.v, STRAT_PARK, "... the other thread's read too");
	pct_init(&p, 2, 6, 9);
	pct_thread_add(&p, 0);
	pct_thread_add(&p, 1);
	first = pct_pick(&p, both, 2);
	pct_step(&p);
	fl_all_parked(&fl);
	tap_ok(first >= 0 && released_thread(&fl) == (size_t)first,
	       "the first release at an access is the engine's pick (thread %lld)",
	       (long long)first);
	/* the released thread's next store is a step again */
	fl_point(&fl, (size_t)first, CS_OP_WRITE, 0x54, 0x9008, &acc, false);
	second = pct_pick(&p, both, 2);
	pct_step(&p);
	fl_all_parked(&fl);
	tap_ok(second >= 0 && released_thread(&fl) == (size_t)second,
	       "the second release is the engine's pick too (thread %lld, change point at step "
	       "%llu)",
	       (long long)second, (unsigned long long)p.change[0]);
	fl_end(&fl);
	fl_access = false;
	fl_begin(&fl, s, 10, 2);
	cfg = run_config(&fl);
	tap_is_str(cfg, "{\"pct\":{\"depth\":2,\"k\":3,\"focus\":\"every step\"}}",
		   "the next run's k is the previous run's 3 access steps (the unfollowed access "
		   "is none)");
	free(cfg);
	fl_end(&fl);
	pct_free(&p);
	strategy_free(s);
}

/* The first seed whose split draw (depth over ksync synchronization
 * points and kcross cross-thread accesses) has its synchronization change
 * point at at[PCT_POOL_SYNC] and its cross one at at[PCT_POOL_CROSS] (0:
 * none in that pool); p is that engine with threads 0..n-1 added, as the
 * strategy's engine for the run gets them. */
static uint64_t split_seed(struct pct *p, uint32_t depth, uint64_t ksync, uint64_t kcross,
			   const uint64_t *at, uint32_t n)
{
	uint64_t seed;

	for (seed = 1;; seed++) {
		uint64_t got[PCT_POOLS] = { 0, 0 };

		pct_init_split(p, depth, ksync, kcross, seed);
		for (uint32_t i = 0; i < p->nchange; i++)
			got[p->change_pool[i]] = p->change[i];
		if (got[PCT_POOL_SYNC] == at[PCT_POOL_SYNC] &&
		    got[PCT_POOL_CROSS] == at[PCT_POOL_CROSS])
			break;
		pct_free(p);
	}
	for (uint32_t t = 0; t < n; t++)
		pct_thread_add(p, t);
	return seed;
}

/* The threads 0..n-1 of p from the highest initial priority down. */
static void prio_order(struct pct *p, size_t n, size_t *order)
{
	for (size_t t = 0; t < n; t++) {
		size_t above = 0;

		for (size_t u = 0; u < n; u++)
			above += pct_priority(p, (uint32_t)u) > pct_priority(p, (uint32_t)t);
		order[above] = t;
	}
}

/* The next fl_begin's campaign: --access, est accesses per estimation
 * run, cross of them to one cross-thread variable (all 0: back to none). */
static void fl_focus_campaign(bool access, uint64_t est, uint64_t cross)
{
	fl_access = access;
	fl_est_accesses = est;
	fl_cross_vars = cross ? 1 : 0;
	fl_est_cross = cross;
}

/* A split campaign's first run on fl of strategy s (depth d): ksync
 * observed synchronization points, kcross estimated accesses to one
 * cross-thread variable, n threads, on the seed split_seed finds for the
 * change points at; p is its engine, order its threads by priority. */
static uint64_t split_run(struct fake_loop *fl, struct strategy *s, struct pct *p, uint32_t d,
			  uint64_t ksync, uint64_t kcross, const uint64_t *at, size_t n,
			  size_t *order)
{
	uint64_t seed = split_seed(p, d, ksync, kcross, at, (uint32_t)n);

	prio_order(p, n, order);
	pct_observe(s, (int)ksync);
	fl_focus_campaign(true, kcross + 3, kcross);
	fl_begin(fl, s, seed, n);
	return seed;
}

/* pct --access with variables written by one thread and read by another
 * (the campaign's cross_vars): the change points are split, k_sync the
 * synchronization points, k_cross the accesses to those variables, the
 * other accesses in neither. Depth 2 over 2 observed synchronization points
 * and the estimation run's 3 cross-thread accesses, a seed whose coin puts
 * the change point in the cross pool at 2: the top thread runs its lock
 * request (sync step 1), an access to a shared variable that is not
 * cross-thread (no pool), its first cross-thread access (cross step 1),
 * and drops at its second (cross step 2): the other thread goes. Had the
 * other access or the lock request counted, it would drop at its first
 * cross-thread access. The next run's pools are the previous run's: 2
 * lock requests, 2 cross-thread accesses. */
static void test_pct_focus(void)
{
	struct cov_event acc = { .obj = 7, .site = 11, .func = 5 };
	struct cov_event served = { .obj = 8, .site = 12, .func = 5 };
	const uint64_t at[PCT_POOLS] = { 0, 2 };
	struct fake_loop fl;
	struct strategy *s = make("pct:2");
	struct pct p;
	uint64_t seed;
	size_t order[2], top, other;
	int wrong = 0;
	char *cfg;

	seed = split_run(&fl, s, &p, 2, 2, 3, at, 2, order);
	top = order[0];
	other = order[1];
	cfg = run_config(&fl);
	tap_is_str(cfg,
		   "{\"pct\":{\"depth\":2,\"k\":5,\"focus\":\"split: sync points, cross-thread "
		   "accesses\",\"k_sync\":2,\"k_cross\":3}}",
		   "with cross-thread variables the pools are the observed run's 2 synchronization "
		   "points and the estimation run's 3 accesses to them");
	free(cfg);
	fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_all_parked(&fl);
	wrong += released_thread(&fl) != top;
	tap_is_int(fl_point(&fl, top, CS_OP_WRITE, 0x60, 0x9100, &served, true).v, STRAT_PARK,
		   "focus: an access to a shared variable that is not cross-thread still waits");
	fl_all_parked(&fl);
	wrong += released_thread(&fl) != top;
	fl_point_cross(&fl, top, CS_OP_WRITE, 0x50, 0x9000, &acc, true, true);
	fl_all_parked(&fl);
	wrong += released_thread(&fl) != top;
	tap_is_int(wrong, 0,
		   "the top thread (%zu) runs its lock (sync step 1), its other access (none) and "
		   "its first cross-thread access (cross step 1)",
		   top);
	fl_point_cross(&fl, top, CS_OP_WRITE, 0x54, 0x9008, &acc, true, true);
	fl_all_parked(&fl);
	tap_ok(released_thread(&fl) == other && policy_fake_prio(fl.r.pol, fl.th[top].tid) == 1,
	       "at its second cross-thread access (cross step 2, the change point) it drops to "
	       "priority 1 and the other thread (%zu) goes",
	       other);
	fl_end(&fl);
	fl_keep_campaign = true; /* the same campaign's next run */
	fl_begin(&fl, s, seed + 1, 2);
	cfg = run_config(&fl);
	tap_is_str(cfg,
		   "{\"pct\":{\"depth\":2,\"k\":4,\"focus\":\"split: sync points, cross-thread "
		   "accesses\",\"k_sync\":2,\"k_cross\":2}}",
		   "the next run's pools are the previous run's 2 lock requests and 2 cross-thread "
		   "accesses");
	free(cfg);
	fl_end(&fl);
	fl_keep_campaign = false;
	fl_focus_campaign(false, 0, 0);
	pct_free(&p);
	strategy_free(s);
}

/* One run of a split pct:2 campaign with probe set key that reaches n
 * cross-thread accesses (all by thread 0): the k_cross it was drawn over. */
static uint64_t rotation_run(struct fake_loop *fl, struct strategy *s, uint64_t key, unsigned n)
{
	struct cov_event acc = { .obj = 7, .site = 11, .func = 5 };
	int64_t k = -1;
	char *cfg;

	fl_probe_set = key;
	fl_begin(fl, s, 99, 2);
	cfg = run_config(fl);
	json_get_int(strstr(cfg, "{\"depth\"") ? strstr(cfg, "{\"depth\"") : cfg, "k_cross", &k);
	free(cfg);
	for (unsigned i = 0; i < n; i++) {
		fl_point_cross(fl, 0, CS_OP_WRITE, 0x50, 0x9000, &acc, true, true);
		fl_all_parked(fl);
		released_thread(fl);
	}
	fl_end(fl);
	fl_probe_set = 0;
	return (uint64_t)k;
}

/* pct --access under the probe rotation: a hot variable probed in one run
 * of several makes those runs count many more accesses. Each run's pools
 * are those of the last run with its probe set, the last run's when its
 * set is new: run A (4 accesses), run B (new set: A's 4; counts 40), A
 * again (4, not B's 40), B again (40, not A's 4). One count for all would
 * give 40 and 4. */
static void test_pct_probe_sets(void)
{
	struct fake_loop fl;
	struct strategy *s = make("pct:2");
	uint64_t a = 0, b = 0x1234567 | 2, k[4];

	pct_observe(s, 2);
	fl_focus_campaign(true, 8, 3);
	fl_begin(&fl, s, 98, 2); /* the campaign's begin; a run reaching nothing */
	fl_end_with(&fl, &(struct strat_outcome){ .ran = false });
	fl_keep_campaign = true;
	k[0] = rotation_run(&fl, s, a, 4);
	k[1] = rotation_run(&fl, s, b, 40);
	k[2] = rotation_run(&fl, s, a, 4);
	k[3] = rotation_run(&fl, s, b, 40);
	fl_keep_campaign = false;
	tap_is_int((int)k[0], 3, "probe sets: the first run's cross pool is the estimation's 3");
	tap_is_int((int)k[1], 4, "a new probe set starts from the last run's count (4)");
	tap_is_int((int)k[2], 4, "a run with the first set again: that set's 4, not the last 40");
	tap_is_int((int)k[3], 40, "and one with the second set: its 40, not the last 4");
	fl_focus_campaign(false, 0, 0);
	strategy_free(s);
}

/* pct:2 --access, split: a seed whose coin puts the one change point in
 * the synchronization pool at 1 (1 observed synchronization point, 2
 * estimated cross-thread accesses): the top thread drops at its lock
 * request and the other thread goes. */
static void test_pct_focus_sync(void)
{
	const uint64_t at[PCT_POOLS] = { 1, 0 };
	struct fake_loop fl;
	struct strategy *s = make("pct:2");
	struct pct p;
	size_t order[2];

	split_run(&fl, s, &p, 2, 1, 2, at, 2, order);
	fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_all_parked(&fl);
	tap_ok(released_thread(&fl) == order[1] &&
		       policy_fake_prio(fl.r.pol, fl.th[order[0]].tid) == 1,
	       "split, depth 2: the change point at sync step 1, a lock request, demotes the "
	       "top thread (%zu) and the other goes",
	       order[0]);
	fl_end(&fl);
	fl_focus_campaign(false, 0, 0);
	pct_free(&p);
	strategy_free(s);
}

/* pct:3 --access, split, three threads at lock requests, a seed with the
 * synchronization change point at 1 and the cross one at 2 (2 observed
 * synchronization points, 3 estimated cross-thread accesses). Hand-checked:
 * the top thread drops to 1 at sync step 1, its lock request; the middle
 * one's lock request is sync step 2, no change point: it goes, makes
 * cross step 1 and goes on, and drops to 2 at cross step 2; the bottom
 * thread goes and blocks (no point of its own); the middle one (2) runs
 * before the top one (1). */
static void test_pct_split(void)
{
	struct cov_event acc = { .obj = 7, .site = 11, .func = 5 };
	const uint64_t at[PCT_POOLS] = { 1, 2 };
	struct fake_loop fl;
	struct strategy *s = make("pct:3");
	struct pct p;
	size_t order[3], rel[4];
	char *cfg;

	split_run(&fl, s, &p, 3, 2, 3, at, 3, order);
	cfg = run_config(&fl);
	tap_is_str(cfg,
		   "{\"pct\":{\"depth\":3,\"k\":5,\"focus\":\"split: sync points, cross-thread "
		   "accesses\",\"k_sync\":2,\"k_cross\":3}}",
		   "pct:3 split: 1 change point over 2 synchronization points, 1 over 3 accesses");
	free(cfg);
	for (size_t t = 0; t < 3; t++)
		fl_point(&fl, t, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_all_parked(&fl);
	rel[0] = released_thread(&fl);
	fl_point_cross(&fl, order[1], CS_OP_READ, 0x50, 0x9000, &acc, true, true);
	fl_all_parked(&fl);
	rel[1] = released_thread(&fl);
	fl_point_cross(&fl, order[1], CS_OP_READ, 0x54, 0x9008, &acc, true, true);
	fl_all_parked(&fl);
	rel[2] = released_thread(&fl);
	fl_all_parked(&fl);
	rel[3] = released_thread(&fl);
	tap_ok(rel[0] == order[1] && rel[1] == order[1] && rel[2] == order[2] &&
		       rel[3] == order[1] && policy_fake_prio(fl.r.pol, fl.th[order[0]].tid) == 1 &&
		       policy_fake_prio(fl.r.pol, fl.th[order[1]].tid) == 2,
	       "split: the top thread (%zu) drops to 1 at sync step 1, the middle one (%zu) to 2 "
	       "at cross step 2, the bottom one (%zu) goes, then the middle one (released %zu %zu "
	       "%zu %zu)",
	       order[0], order[1], order[2], rel[0], rel[1], rel[2], rel[3]);
	fl_end(&fl);
	fl_focus_campaign(false, 0, 0);
	pct_free(&p);
	strategy_free(s);
}

/* Which of the fake loop's two threads the scheduler runs first. */
static size_t pct_top(struct fake_loop *fl)
{
	return policy_fake_prio(fl->r.pol, fl->th[0].tid) >
			       policy_fake_prio(fl->r.pol, fl->th[1].tid)
		       ? 0
		       : 1;
}

/* pct --access and a spinning thread (depth 1: no change point). The top
 * thread, released again and again with nobody else run, reads what it
 * read before with no write between: it spins, yields (the lowest
 * priority) and the other thread runs. A write between the two reads, or
 * another thread run between them, is no spin; two spinners take turns. */
static void test_pct_spin(void)
{
	struct cov_event rd = { .obj = 7, .site = 11, .func = 5, .op = CS_OP_READ };
	struct cov_event wr = { .obj = 7, .site = 12, .func = 5, .op = CS_OP_WRITE };
	struct fake_loop fl;
	struct strategy *s = make("pct:1");
	size_t top, other;
	int still = 0;

	fl_access = true;
	fl_begin(&fl, s, 4, 2);
	top = pct_top(&fl);
	other = 1 - top;
	fl_point(&fl, other, CS_OP_READ, 0x80, 0x9200, &rd, false);
	fl_point(&fl, top, CS_OP_READ, 0x70, 0x9100, &rd, false);
	fl_all_parked(&fl);
	tap_is_int(released_thread(&fl), top, "pct spin: the top thread runs first");
	fl_point(&fl, top, CS_OP_READ, 0x74, 0x9108, &rd, false);
	fl_all_parked(&fl);
	tap_is_int(released_thread(&fl), top, "... a read of another address is no spin");
	fl_point(&fl, top, CS_OP_READ, 0x70, 0x9100, &rd, false);
	fl_all_parked(&fl);
	tap_ok(released_thread(&fl) == other && policy_fake_prio(fl.r.pol, fl.th[top].tid) == 1 &&
		       policy_fake_prio(fl.r.pol, fl.th[other].tid) > 1,
	       "the same read again with nothing written: it spins, yields (priority %u) and "
	       "the other thread runs",
	       policy_fake_prio(fl.r.pol, fl.th[top].tid));
	fl_end(&fl);

	fl_begin(&fl, s, 4, 2);
	fl_point(&fl, other, CS_OP_READ, 0x80, 0x9200, &rd, false);
	fl_point(&fl, top, CS_OP_READ, 0x70, 0x9100, &rd, false);
	fl_all_parked(&fl);
	fl_point(&fl, top, CS_OP_WRITE, 0x78, 0x9100, &wr, false);
	fl_all_parked(&fl);
	still += released_thread(&fl) == top;
	fl_point(&fl, top, CS_OP_READ, 0x70, 0x9100, &rd, false);
	fl_all_parked(&fl);
	still += released_thread(&fl) == top;
	tap_is_int(still, 2, "a write between the two reads: no spin, the top thread goes on");
	fl_point(&fl, top, CS_OP_READ, 0x70, 0x9100, &rd, false);
	fl_all_parked(&fl);
	tap_is_int(released_thread(&fl), other, "... the next read of it with no write between is");
	fl_point(&fl, other, CS_OP_READ, 0x84, 0x9208, &rd, false);
	fl_all_parked(&fl);
	tap_is_int(released_thread(&fl), other, "the other thread reads elsewhere: it goes on");
	fl_point(&fl, other, CS_OP_READ, 0x80, 0x9200, &rd, false);
	fl_all_parked(&fl);
	tap_is_int(released_thread(&fl), top,
		   "it reads again what it read when released: it spins too, and the thread that "
		   "yielded first runs");
	fl_point(&fl, top, CS_OP_READ, 0x70, 0x9100, &rd, false);
	fl_all_parked(&fl);
	tap_is_int(released_thread(&fl), top,
		   "that thread's read of its spin address again, the other run since: no spin");
	fl_end(&fl);
	fl_access = false;
	strategy_free(s);
}

/* The release order of a run: four threads at a point, four notes. */
static void pct_order(uint64_t seed, uint64_t *ids, size_t n)
{
	struct fake_loop fl;
	struct strategy *s = make("pct");
	size_t i;

	pct_observe(s, 8);
	fl_begin(&fl, s, seed, 4);
	for (i = 0; i < 4; i++)
		fl_point(&fl, i, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	for (i = 0; i < n; i++) {
		fl_all_parked(&fl);
		ids[i] = last_entry(&fl) ? last_entry(&fl)->thread : 0;
	}
	fl_end(&fl);
	strategy_free(s);
}

/* exit() while other threads live is a step whose thread yields: with
 * pct:1 and a seed that gives thread "0" the highest priority, "0" kept at
 * exit goes after both others, its policy priority the lowest (1). */
static void test_pct_exit(void)
{
	struct fake_loop fl;
	struct strat_decision d;
	struct strategy *s = make("pct:1");
	struct pct p;
	uint64_t seed;
	uint32_t i;
	bool top = false;
	size_t first, second;

	for (seed = 1; seed < 100 && !top; seed++) {
		pct_init(&p, 1, 1, seed);
		for (i = 0; i < 3; i++)
			pct_thread_add(&p, i);
		top = pct_priority(&p, 0) > pct_priority(&p, 1) &&
		      pct_priority(&p, 0) > pct_priority(&p, 2);
		pct_free(&p);
	}
	seed--;
	tap_ok(top, "seed %llu gives thread \"0\" the highest priority", (unsigned long long)seed);
	fl_begin(&fl, s, seed, 3);
	tap_is_int(policy_fake_prio(fl.r.pol, 100), 3, "pct: \"0\" starts on top");
	d = fl_point(&fl, 0, CS_OP_PROC_EXIT, 0x50, 100, NULL, false);
	tap_is_int(d.v, STRAT_PARK, "pct: exit() waits for its turn");
	tap_is_int(policy_fake_prio(fl.r.pol, 100), 1,
		   "pct: the exiting thread drops to the bottom");
	fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_point(&fl, 2, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_all_parked(&fl);
	first = released_thread(&fl);
	fl_all_parked(&fl);
	second = released_thread(&fl);
	tap_ok(first != 0 && second != 0 && first != second && first != SIZE_MAX &&
		       second != SIZE_MAX,
	       "pct: the two other threads go first (%zu, then %zu)", first, second);
	fl_all_parked(&fl);
	tap_ok(fl.releases == 3 && released_thread(&fl) == 0,
	       "pct: the exit goes last, once nobody else waits");
	fl_end(&fl);
	strategy_free(s);
}

/* The decision point op (obj1, obj2: the objects of threads "0.1" and
 * "0.2" there) under the strategies other than pct: rnd-y:1 yields and
 * rnd-s10:1 delays at it; tsa, map and fpair let it go; --serial keeps it
 * for the pick; an order replay keeps the logged points and lets them go
 * in the logged order. 7 tests. */
static void point_beyond_pct(uint16_t op, uint64_t obj1, uint64_t obj2, const char *what)
{
	static const char *const goes_on[] = { "tsa", "map", "fpair" };
	uint64_t id1 = fnv1a64("0.1", 3, FNV1A64_INIT), id2 = fnv1a64("0.2", 3, FNV1A64_INIT);
	const struct declog_entry *e;
	struct strat_decision d;
	struct fake_loop fl;
	struct declog rec;
	struct strategy *s;
	size_t i, j;

	s = make("rnd-y:1");
	fl_begin(&fl, s, 7, 2);
	d = fl_point(&fl, 1, op, 0x70, obj1, NULL, false);
	tap_ok(d.v == STRAT_YIELD && d.arg == 1, "rnd-y:1 yields once at %s", what);
	fl_end(&fl);
	strategy_free(s);
	s = make("rnd-s10:1");
	fl_begin(&fl, s, 7, 2);
	d = fl_point(&fl, 1, op, 0x70, obj1, NULL, false);
	tap_ok(d.v == STRAT_DELAY && d.us <= 10000 && (int64_t)d.us == d.arg,
	       "rnd-s10:1 delays %s by at most 10 ms, logged as its length", what);
	fl_end(&fl);
	strategy_free(s);

	for (i = 0, j = 0; i < ARRAY_SIZE(goes_on); i++) {
		s = make(goes_on[i]);
		fl_begin(&fl, s, 1, 2);
		d = fl_point(&fl, 1, op, 0x70, obj1, NULL, false);
		j += d.v == STRAT_PROCEED;
		fl_end(&fl);
		strategy_free(s);
	}
	tap_is_int((int)j, (int)ARRAY_SIZE(goes_on), "tsa, map and fpair let %s go", what);

	s = serial_wrap(make("none"), CS_SERIAL_FIFO);
	fl_begin(&fl, s, 1, 2);
	d = fl_point(&fl, 1, op, 0x70, obj1, NULL, false);
	tap_is_int(d.v, STRAT_PARK, "--serial: %s waits for the pick", what);
	fl_end(&fl);
	strategy_free(s);

	/* pct released 0.2 at its point, then 0.1 at its point (each the
	 * thread's first): the replay keeps both and lets them go in that
	 * order. */
	declog_init(&rec, 3, NULL);
	declog_add(&rec, id2, 0, 0, DECLOG_RELEASE, 5);
	declog_add(&rec, id1, 0, 0, DECLOG_RELEASE, 4);
	s = strategy_replay_new(strategy_lookup("pct"), CS_SERIAL_PRIO, &rec, false);
	fl_begin(&fl, s, 3, 3);
	fl_point(&fl, 1, op, 0x70, obj1, NULL, false);
	d = fl_point(&fl, 2, op, 0x78, obj2, NULL, false);
	tap_is_int(d.v, STRAT_PARK, "replay: %s, logged, waits", what);
	fl_all_parked(&fl);
	e = last_entry(&fl);
	tap_ok(e && e->thread == id2 && e->event == 0, "replay: 0.2 goes on first, as logged");
	fl_all_parked(&fl);
	e = last_entry(&fl);
	tap_ok(e && e->thread == id1 && e->event == 0, "replay: then 0.1");
	fl_end(&fl);
	strategy_free(s);
	declog_free(&rec);
}

/* A new thread's start (CS_OP_START, before its first instruction) is a
 * decision point of every steering strategy: pct makes it a step, so the
 * started threads begin in the order of their priorities; rnd-y:1 yields
 * and rnd-s10:1 delays at it; tsa, map and fpair let it go; --serial and
 * an order replay keep it for their pick. */
static void test_start_point(void)
{
	uint32_t prio[3], order[3];
	struct strat_decision d;
	struct fake_loop fl;
	struct strategy *s;
	size_t i;
	bool sorted;
	char *cfg;

	s = make("pct:1");
	fl_begin(&fl, s, 11, 3);
	for (i = 0; i < 3; i++)
		prio[i] = (uint32_t)policy_fake_prio(fl.r.pol, 100 + (uint32_t)i);
	d = fl_point(&fl, 1, CS_OP_START, 0x70, 101, NULL, false);
	tap_is_int(d.v, STRAT_PARK, "pct: a new thread waits at its start for its turn");
	fl_point(&fl, 2, CS_OP_START, 0x70, 102, NULL, false);
	fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	for (i = 0; i < 3; i++) {
		fl_all_parked(&fl);
		order[i] = (uint32_t)released_thread(&fl);
	}
	for (i = 1, sorted = fl.releases == 3; i < 3 && sorted; i++)
		sorted = order[i] < 3 && order[i - 1] < 3 && prio[order[i - 1]] > prio[order[i]];
	tap_ok(sorted, "pct: the starts and the lock request go by priority (%u, %u, %u)", order[0],
	       order[1], order[2]);
	fl_end(&fl);
	strategy_free(s);

	/* A start is no step: the next run's k counts the 3 lock requests
	 * of this one, not its 2 starts. */
	s = make("pct:3");
	fl_begin(&fl, s, 12, 3);
	for (i = 1; i < 3; i++)
		fl_point(&fl, i, CS_OP_START, 0x70, 100 + i, NULL, false);
	for (i = 0; i < 3; i++)
		fl_point(&fl, i, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_end(&fl);
	fl_begin(&fl, s, 13, 1);
	cfg = run_config(&fl);
	tap_is_str(cfg, "{\"pct\":{\"depth\":3,\"k\":3,\"focus\":\"every step\"}}",
		   "pct: k counts the steps of the run before, its starts left out");
	free(cfg);
	fl_end(&fl);
	strategy_free(s);

	point_beyond_pct(CS_OP_START, 101, 102, "a thread's start");
}

/* A stdio output call while another thread lives (CS_OP_STDIO: glibc
 * locks the stream inside, no pthread probe sees it) is a decision point of
 * every steering strategy. pct: an ordinary step, so a change point may
 * land there and hold the thread inside a window that has no other point:
 * with depth 2 over k = 1 the only change point is the first pick, and
 * thread "0", on top and parked at its printf, drops below "1". */
static void test_stdio_point(void)
{
	struct strat_decision d;
	struct fake_loop fl;
	struct strategy *s;
	struct pct p;
	uint64_t seed;
	bool top = false;
	char *cfg;

	for (seed = 1; seed < 100 && !top; seed++) {
		pct_init(&p, 2, 1, seed);
		pct_thread_add(&p, 0);
		pct_thread_add(&p, 1);
		top = pct_priority(&p, 0) > pct_priority(&p, 1);
		pct_free(&p);
	}
	seed--;
	tap_ok(top, "seed %llu gives thread \"0\" the higher priority", (unsigned long long)seed);
	s = make("pct:2");
	pct_observe(s, 1);
	fl_begin(&fl, s, seed, 2);
	d = fl_point(&fl, 0, CS_OP_STDIO, 0x90, 0, NULL, false);
	tap_is_int(d.v, STRAT_PARK, "pct: a printf waits for its turn");
	fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_all_parked(&fl);
	tap_ok(fl.releases == 1 && released_thread(&fl) == 1 &&
		       policy_fake_prio(fl.r.pol, 100) == 1,
	       "pct: the change point at the printf step holds \"0\" there (priority 1), "
	       "\"1\" goes");
	fl_end(&fl);
	fl_begin(&fl, s, seed + 1, 2);
	cfg = run_config(&fl);
	tap_ok(strstr(cfg, "\"k\":2") != NULL, "pct: the printf counts in the next run's k (%s)",
	       cfg);
	free(cfg);
	fl_end(&fl);
	strategy_free(s);

	point_beyond_pct(CS_OP_STDIO, 0, 0x6000, "a stdio call");
}

static void test_pct_seeds(void)
{
	uint64_t first = pct_first(21), seed;
	bool again = true;

	for (seed = 0; seed < 5; seed++)
		again &= pct_first(21) == first;
	tap_ok(first && again, "depth 1: the same seed releases the same thread first every time");
	check_seeded_order(pct_order, "pct");
}

/* The run's configuration as config_json writes it. */
static const char *fl_config(struct fake_loop *fl, char *buf, size_t len)
{
	struct json_mem m;
	char *text;

	json_mem_open(&m);
	json_obj_begin(&m.j, NULL);
	if (fl->s->ops->config_json)
		fl->s->ops->config_json(fl->s, &fl->r, &m.j);
	json_obj_end(&m.j);
	text = json_mem_close(&m);
	snprintf(buf, len, "%s", text ? text : "");
	free(text);
	return buf;
}

/* Noise at access points (--access): the placements over accesses. */
static void like_config(struct fake_loop *fl, char *buf, size_t len, const char *want,
			const char *what)
{
	fl_config(fl, buf, len);
	tap_ok(strstr(buf, want) != NULL, "%s (%s)", what, buf);
}

static void test_noise_access(void)
{
	struct cov_event acc = { 0 };
	struct fake_loop fl;
	struct strat_decision d;
	struct strategy *s = make("sharedVar-all@1000/sleep:300");
	int i, at_access = 0, at_sync = 0, first = 0, again = 0, drawn_access = 0;

	fl_access = true;
	fl_begin(&fl, s, 3, 2);
	acc.obj = 7;
	acc.site = 11;
	acc.func = 5;
	for (i = 0; i < 10; i++) {
		d = fl_point(&fl, (size_t)(i % 2), CS_OP_WRITE, 0x50, 0x9000, &acc, true);
		at_access += d.v == STRAT_DELAY && d.us == 300;
		d = fl_point(&fl, (size_t)(i % 2), CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
		at_sync += d.v != STRAT_PROCEED;
	}
	tap_is_int(at_access, 10,
		   "sharedVar-all@1000/sleep:300: a 300 us delay at every shared access");
	tap_is_int(at_sync, 0, "... and nothing at a lock call no second thread has used");
	fl_end(&fl);
	strategy_free(s);

	s = make("pattern@1000/yield:2");
	fl_begin(&fl, s, 3, 1);
	d = fl_point(&fl, 0, CS_OP_READ, 0x50, 0x9000, &acc, false);
	first = d.v == STRAT_PROCEED;
	d = fl_point(&fl, 0, CS_OP_WRITE, 0x54, 0x9000, &acc, false);
	again = d.v == STRAT_YIELD && d.arg == 2;
	tap_ok(first && again,
	       "pattern: the first access to x in a function goes, the second yields twice");
	acc.func = 6;
	d = fl_point(&fl, 0, CS_OP_READ, 0x60, 0x9000, &acc, false);
	tap_is_int(d.v, STRAT_PROCEED, "pattern: in another function, x is new again");
	fl_end(&fl);
	strategy_free(s);

	/* random --access draws placements over accesses too. */
	s = make("random");
	for (i = 0; i < 40; i++) {
		char buf[64] = "";
		const char *p;

		fl_begin(&fl, s, (uint64_t)i, 1);
		p = strstr(fl_config(&fl, buf, sizeof(buf)), "sharedVar");
		drawn_access += p != NULL || strstr(buf, "pattern") != NULL;
		fl_end(&fl);
	}
	fl_access = false;
	tap_ok(drawn_access > 0, "random --access draws access placements (%d of 40 runs)",
	       drawn_access);
	for (i = 0, drawn_access = 0; i < 40; i++) {
		char buf[64] = "";

		fl_begin(&fl, s, (uint64_t)i, 1);
		fl_config(&fl, buf, sizeof(buf));
		drawn_access += strstr(buf, "sharedVar") || strstr(buf, "pattern");
		fl_end(&fl);
	}
	tap_is_int(drawn_access, 0, "random without --access never does");
	strategy_free(s);
}

/* The next fl_begin's campaign: its cross-thread variables. */
static void fl_cross(const uint32_t *ids, size_t n)
{
	fl_cross_ids = ids;
	fl_cross_vars = n;
}

/* Noise with --access focused on the cross-thread variables (issue 30):
 * the campaign's are 5 and 7; 9 is shared but no two threads meet at it. */
static void test_noise_focus(void)
{
	static const uint32_t cross[] = { 5, 7 };
	struct cov_event at9 = { .obj = 9, .site = 11, .func = 1 };
	struct cov_event at5 = { .obj = 5, .site = 12, .func = 1 };
	struct cov_event at7 = { .obj = 7, .site = 13, .func = 1 };
	struct fake_loop fl;
	struct strat_decision d9, d5;
	struct strategy *s = make("sharedVar-all@1000/yield:1");
	char buf[256];
	int one = 0, bad = 0, same = 0, chose5 = 0, chose7 = 0;

	/* sharedVar-all: every shared access, cross-thread or not, as on a
	 * campaign without them (race_torn_pair needs the noise elsewhere). */
	fl_access = true;
	fl_cross(cross, 2);
	fl_begin(&fl, s, 3, 2);
	d9 = fl_point_cross(&fl, 0, CS_OP_WRITE, 0x50, 0x9000, &at9, true, false);
	d5 = fl_point_cross(&fl, 1, CS_OP_READ, 0x54, 0x9008, &at5, true, true);
	tap_ok(d9.v == STRAT_YIELD && d5.v == STRAT_YIELD,
	       "sharedVar-all --access with cross-thread variables: noise at every shared access "
	       "still");
	tap_ok(!strstr(fl_config(&fl, buf, sizeof(buf)), "focus"),
	       "... and the run records no focus (%s)", buf);
	fl_end(&fl);
	strategy_free(s);

	/* sharedVar-one: the first shared variable reached (9) is not taken;
	 * the run's variable is 5 or 7, by the seed, and noise is there only. */
	s = make("sharedVar-one@1000/yield:1");
	for (uint64_t seed = 0; seed < 40; seed++) {
		const char *v;
		bool is5;

		fl_begin(&fl, s, seed, 2);
		v = strstr(fl_config(&fl, buf, sizeof(buf)), "\"var\":");
		is5 = v && !strncmp(v, "\"var\":5", 7);
		chose5 += is5;
		chose7 += v && !strncmp(v, "\"var\":7", 7);
		bad += !strstr(buf, "\"focus\":\"cross-thread variable\"");
		bad += fl_point_cross(&fl, 0, CS_OP_WRITE, 0x50, 0x9000, &at9, true, false).v !=
		       STRAT_PROCEED;
		bad += fl_point_cross(&fl, 1, CS_OP_READ, 0x54, 0x9008, is5 ? &at5 : &at7, true,
				      true)
			       .v != STRAT_YIELD;
		bad += fl_point_cross(&fl, 0, CS_OP_READ, 0x58, 0x9010, is5 ? &at7 : &at5, true,
				      true)
			       .v != STRAT_PROCEED;
		fl_end(&fl);
	}
	tap_ok(chose5 + chose7 == 40 && chose5 && chose7 && !bad,
	       "sharedVar-one with cross-thread variables: its variable is one of them by the seed "
	       "(5 in %d, 7 in %d of 40), recorded, noise there only (%d wrong)",
	       chose5, chose7, bad);
	fl_cross(NULL, 0);
	fl_begin(&fl, s, 3, 2);
	d9 = fl_point_cross(&fl, 0, CS_OP_WRITE, 0x50, 0x9000, &at9, true, false);
	d5 = fl_point_cross(&fl, 1, CS_OP_READ, 0x54, 0x9008, &at5, true, false);
	tap_ok(d9.v == STRAT_YIELD && d5.v == STRAT_PROCEED,
	       "with none, the first shared variable reached, as before");
	like_config(&fl, buf, sizeof(buf), "\"focus\":\"first shared variable\"",
		    "... and the run records that");
	fl_end(&fl);
	strategy_free(s);
	bad = 0;

	/* random: a sharedVar-one run's variable is 5 or 7, from the seed. */
	s = make("random");
	fl_cross(cross, 2);
	for (uint64_t seed = 0; seed < 60; seed++) {
		char again[256];

		fl_begin(&fl, s, seed, 1);
		fl_config(&fl, buf, sizeof(buf));
		fl_end(&fl);
		fl_begin(&fl, s, seed, 1);
		same += !strcmp(fl_config(&fl, again, sizeof(again)), buf);
		fl_end(&fl);
		if (!strstr(buf, "sharedVar-one"))
			continue;
		one++;
		bad += !strstr(buf, "\"var\":5") && !strstr(buf, "\"var\":7");
	}
	tap_ok(one && !bad && same == 60,
	       "random --access: sharedVar-one runs (%d of 60) pick 5 or 7, the same for the "
	       "same seed",
	       one);
	fl_cross(NULL, 0);
	fl_access = false;
	strategy_free(s);

	/* map: its runs record what their targets were drawn over. */
	s = make("map");
	fl_cross(cross, 2);
	fl_begin(&fl, s, 1, 2);
	like_config(&fl, buf, sizeof(buf), "\"map\":{\"focus\":\"cross-thread variables\"}",
		    "map with cross-thread variables: targets on them first");
	fl_end(&fl);
	fl_cross(NULL, 0);
	fl_begin(&fl, s, 1, 2);
	like_config(&fl, buf, sizeof(buf), "\"map\":{\"focus\":\"every variable\"}",
		    "map with none: every variable, as before");
	fl_end(&fl);
	strategy_free(s);
}

/* ---- replay --------------------------------------------------------------------------- */

static void test_replay_decisions(void)
{
	struct fake_loop fl;
	struct strat_decision d;
	struct declog rec;
	struct strategy *s;
	uint64_t id1 = fnv1a64("0.1", 3, FNV1A64_INIT);

	declog_init(&rec, 9, NULL);
	declog_add(&rec, id1, 0, 1, DECLOG_DELAY_US, 1500);
	declog_add(&rec, id1, 0, 2, DECLOG_PARK, 0);
	declog_add(&rec, id1, 0, 3, DECLOG_YIELD, 2);
	s = strategy_replay_new(strategy_lookup("rnd-s10:0.3"), CS_SERIAL_OFF, &rec, false);
	tap_ok(strategy_has(s, STRAT_F_STEERS) && !strategy_has(s, STRAT_F_SERIAL),
	       "replay of a noise run steers in parallel");
	fl_begin(&fl, s, 9, 2);
	d = fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_is_int(d.v, STRAT_PROCEED, "a point with no logged decision proceeds");
	d = fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_ok(d.v == STRAT_DELAY && d.us == 1500 && d.arg == 1500,
	       "the logged delay at the logged point");
	d = fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_is_int(d.v, STRAT_HALT, "the logged halt");
	d = fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_ok(d.v == STRAT_YIELD && d.arg == 2, "the logged yield");
	d = fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_is_int(d.v, STRAT_PROCEED, "another thread at the same index: nothing logged");
	fl_end(&fl);
	strategy_free(s);
	declog_free(&rec);
}

static void test_replay_order(void)
{
	struct fake_loop fl;
	struct strat_decision d;
	struct declog rec;
	struct strategy *s;
	uint64_t id0 = fnv1a64("0", 1, FNV1A64_INIT), id1 = fnv1a64("0.1", 3, FNV1A64_INIT);
	const struct declog_entry *e;

	/* tsa paused 0.1 at its point 0 and 0 at its point 1, and released
	 * 0.1 first. */
	declog_init(&rec, 4, NULL);
	declog_add(&rec, id1, 0, 0, DECLOG_RELEASE, 1);
	declog_add(&rec, id0, 0, 1, DECLOG_RELEASE, 3);
	s = strategy_replay_new(strategy_lookup("tsa"), CS_SERIAL_OFF, &rec, false);
	fl_begin(&fl, s, 4, 2);
	d = fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_is_int(d.v, STRAT_PROCEED, "order: an unlogged point proceeds");
	d = fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_is_int(d.v, STRAT_PARK, "order: a logged point waits");
	d = fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_is_int(d.v, STRAT_PARK, "order: the other logged point waits");
	fl_all_parked(&fl);
	e = last_entry(&fl);
	tap_ok(e && e->thread == id1 && e->event == 0, "order: 0.1 goes first, as logged");
	fl_all_parked(&fl);
	e = last_entry(&fl);
	tap_ok(e && e->thread == id0 && e->event == 1, "order: then 0 at its point 1");
	fl_end(&fl);
	strategy_free(s);
	declog_free(&rec);

	/* A run recorded with --serial: every point waits. */
	declog_init(&rec, 4, NULL);
	s = strategy_replay_new(strategy_lookup("none"), CS_SERIAL_FIFO, &rec, false);
	tap_ok(strategy_has(s, STRAT_F_SERIAL) && strategy_has(s, STRAT_F_STEERS),
	       "replay of a --serial run is serial");
	fl_begin(&fl, s, 4, 2);
	d = fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_is_int(d.v, STRAT_PARK, "serial replay: an unlogged point waits too");
	fl_all_parked(&fl);
	tap_is_int(fl.releases, 1, "serial replay: off the log, the recorded rule picks");
	fl_end(&fl);
	strategy_free(s);
	declog_free(&rec);
}

/* A random run whose exit was halted (,xh) until the others were done:
 * its observed schedule has the exit's pass before the flusher's last
 * one (race_exit_unjoined, a VM campaign, 2026-11-30). The replay keeps
 * the exit until the other threads' passes are followed; and a thread at
 * the schedule's next pass goes after a second without a note. 4 tests. */
static void test_replay_exit_held(void)
{
	uint64_t id0 = fnv1a64("0", 1, FNV1A64_INIT), id1 = fnv1a64("0.1", 3, FNV1A64_INIT);
	struct fake_loop fl;
	struct declog rec;
	struct strategy *s;
	size_t first, second;

	declog_init(&rec, 5, NULL);
	declog_add(&rec, id0, 0, 0, DECLOG_PARK, 0); /* the halt at the exit */
	declog_add(&rec, id1, 0, 0, DECLOG_PASS, 0x10);
	declog_add(&rec, id0, 0, 0, DECLOG_PASS, -(int64_t)CS_OP_PROC_EXIT - 1);
	declog_add(&rec, id1, 0, 1, DECLOG_PASS, 0x20);
	s = strategy_replay_new(strategy_lookup("random"), CS_SERIAL_OFF, &rec, false);
	tap_ok(strategy_replay_enforced(s) == 3, "a random run with its schedule: enforced order");
	fl_begin(&fl, s, 5, 2);
	fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_point(&fl, 0, CS_OP_PROC_EXIT, 0x50, 100, NULL, false);
	fl_all_parked(&fl);
	first = released_thread(&fl);
	fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x20, 0x4000, NULL, false);
	fl_all_parked(&fl);
	second = released_thread(&fl);
	tap_ok(first == 1 && second == 1,
	       "the flusher's two passes go first, the halted exit's pass between them waits (%zu "
	       "%zu)",
	       first, second);
	fl_all_parked(&fl);
	tap_is_int(released_thread(&fl), 0, "then the exit goes");
	fl_end(&fl);
	strategy_free(s);
	declog_free(&rec);

	/* The flusher waits at its start, the schedule's first pass, while
	 * main spins without a point: no note comes. After a second without
	 * a point or a release the order goes on as at a note. */
	declog_init(&rec, 6, NULL);
	declog_add(&rec, id1, 0, 0, DECLOG_PASS, 0x70);
	declog_add(&rec, id1, 0, 1, DECLOG_PASS, 0x10);
	s = strategy_replay_new(strategy_lookup("random"), CS_SERIAL_OFF, &rec, false);
	fl_begin(&fl, s, 6, 2);
	fl_point(&fl, 1, CS_OP_START, 0x70, 101, NULL, false);
	nanosleep(&(struct timespec){ .tv_sec = 1, .tv_nsec = 50000000 }, NULL);
	s->ops->tick(s, &fl.r);
	tap_ok(fl.releases == 1 && released_thread(&fl) == 1,
	       "no note for a second: the thread at the schedule's next pass goes");
	fl_end(&fl);
	strategy_free(s);
	declog_free(&rec);
}

/* The released thread of each of the next n all-parked notes, as a
 * string of thread indexes ("2210": 0.2, 0.2, 0.1, 0). */
static void fl_picks(struct fake_loop *fl, size_t n, char *out)
{
	size_t i, t;

	for (i = 0; i < n; i++) {
		fl_all_parked(fl);
		t = released_thread(fl);
		out[i] = t < 10 ? (char)('0' + t) : '?';
	}
	out[n] = 0;
}

/* A serial recording (pct) whose schedule has a pass its strategy did
 * not make: race_exit_unjoined's flusher, held at its start while main
 * spun on sched_yield for it (no all-parked note), was let go by the
 * scheduler's watchdog. The replay lets it go at its point when that
 * pass is the schedule's next, instead of waiting for its own watchdog
 * (5 s, "the controller answered late"); the logged releases keep their
 * order. That is the replay by releases (RP_SERIAL: --decisions, or a log
 * without passes); with its passes a serial run is replayed in their
 * order (test_replay_serial_passes). 5 tests. */
static void test_replay_serial_unheld(void)
{
	uint64_t id0 = fnv1a64("0", 1, FNV1A64_INIT), id1 = fnv1a64("0.1", 3, FNV1A64_INIT),
		 id2 = fnv1a64("0.2", 3, FNV1A64_INIT);
	const struct declog_entry *e;
	struct strat_decision d;
	struct fake_loop fl;
	struct declog rec;
	struct strategy *s;
	char order[8];

	/* Recorded (VM, 2026-11-30): five releases, six passes, the first
	 * one 0.1's start (site 0x70). */
	declog_init(&rec, 3, NULL);
	declog_add(&rec, id2, 0, 0, DECLOG_RELEASE, 4);
	declog_add(&rec, id2, 0, 1, DECLOG_RELEASE, 3);
	declog_add(&rec, id1, 0, 1, DECLOG_RELEASE, 2);
	declog_add(&rec, id1, 0, 2, DECLOG_RELEASE, 2);
	declog_add(&rec, id0, 0, 0, DECLOG_RELEASE, 1);
	declog_add(&rec, id1, 0, 0, DECLOG_PASS, 0x70);
	declog_add(&rec, id2, 0, 0, DECLOG_PASS, 0x70);
	declog_add(&rec, id2, 0, 1, DECLOG_PASS, 0x10);
	declog_add(&rec, id1, 0, 1, DECLOG_PASS, 0x10);
	declog_add(&rec, id1, 0, 2, DECLOG_PASS, 0x90);
	declog_add(&rec, id0, 0, 0, DECLOG_PASS, -(int64_t)CS_OP_PROC_EXIT - 1);
	s = strategy_replay_new(strategy_lookup("pct"), CS_SERIAL_PRIO, &rec, true);
	fl_begin(&fl, s, 3, 3);
	d = fl_point(&fl, 1, CS_OP_START, 0x70, 101, NULL, false);
	e = last_entry(&fl);
	tap_ok(d.v == STRAT_PARK && fl.releases == 1 && e && e->thread == id1 && e->event == 0,
	       "serial replay: 0.1 goes from its start at once, where the recording's "
	       "scheduler let it go (releases %zu)",
	       fl.releases);
	fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_point(&fl, 2, CS_OP_START, 0x70, 102, NULL, false);
	fl_point(&fl, 0, CS_OP_PROC_EXIT, 0x50, 100, NULL, false);
	tap_is_int((int)fl.releases, 1,
		   "serial replay: 0.1's lock, 0.2's start and the exit wait for their logged "
		   "releases");
	fl_picks(&fl, 1, order);
	fl_point(&fl, 2, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_picks(&fl, 2, order + 1);
	fl_point(&fl, 1, CS_OP_STDIO, 0x90, 0, NULL, false);
	fl_picks(&fl, 2, order + 3);
	tap_is_str(order, "22110",
		   "serial replay: then the logged order: 0.2 (start, lock), 0.1 (lock, "
		   "printf), the exit");
	fl_end(&fl);
	strategy_free(s);
	declog_free(&rec);

	/* The unlogged pass is second: 0.1 at its start waits for 0.2's
	 * logged one, then goes at the next note. */
	declog_init(&rec, 4, NULL);
	declog_add(&rec, id2, 0, 0, DECLOG_RELEASE, 4);
	declog_add(&rec, id2, 0, 0, DECLOG_PASS, 0x70);
	declog_add(&rec, id1, 0, 0, DECLOG_PASS, 0x70);
	s = strategy_replay_new(strategy_lookup("pct"), CS_SERIAL_PRIO, &rec, true);
	fl_begin(&fl, s, 4, 3);
	fl_point(&fl, 1, CS_OP_START, 0x70, 101, NULL, false);
	fl_point(&fl, 2, CS_OP_START, 0x70, 102, NULL, false);
	tap_is_int((int)fl.releases, 0,
		   "serial replay: an unlogged point that is not the next pass waits");
	fl_picks(&fl, 2, order);
	tap_is_str(order, "21", "serial replay: 0.2 as logged, then 0.1, its pass next");
	fl_end(&fl);
	strategy_free(s);
	declog_free(&rec);
}

/* A serial recording (pct:2 --access on race_torn_pair) is replayed in its
 * passes' order, not by its releases: main's spin on a probed flag goes
 * round a number of times that timing sets, which shifts the point
 * indexes the releases are matched by. Recorded: main (0) spun twice at
 * site 0x30, the writer (0.1) stored x (0x40), the reader (0.2) loaded
 * both (0x50, 0x58), the writer stored y (0x48): the torn read. Its
 * releases name main's point 2 first (a point of main's the passes do
 * not have): the replay follows the passes. 4 tests. */
static void test_replay_serial_passes(void)
{
	uint64_t id0 = fnv1a64("0", 1, FNV1A64_INIT), id1 = fnv1a64("0.1", 3, FNV1A64_INIT),
		 id2 = fnv1a64("0.2", 3, FNV1A64_INIT);
	struct fake_loop fl;
	struct declog rec;
	struct strategy *s;
	char order[8];

	declog_init(&rec, 3, NULL);
	declog_add(&rec, id0, 0, 2, DECLOG_RELEASE, 3);
	declog_add(&rec, id1, 0, 0, DECLOG_RELEASE, 2);
	declog_add(&rec, id0, 0, 0, DECLOG_PASS, 0x30);
	declog_add(&rec, id0, 0, 1, DECLOG_PASS, 0x30);
	declog_add(&rec, id1, 0, 0, DECLOG_PASS, 0x40);
	declog_add(&rec, id2, 0, 0, DECLOG_PASS, 0x50);
	declog_add(&rec, id2, 0, 1, DECLOG_PASS, 0x58);
	declog_add(&rec, id1, 0, 1, DECLOG_PASS, 0x48);
	s = strategy_replay_new(strategy_lookup("pct"), CS_SERIAL_PRIO, &rec, false);
	tap_ok(strategy_replay_enforced(s) == 6 && s->sched_serial == CS_SERIAL_FIFO &&
		       strategy_has(s, STRAT_F_SYNC_POINTS) && strategy_has(s, STRAT_F_SERIAL),
	       "a pct run with its schedule replays in its 6 recorded passes, serially");
	fl_begin(&fl, s, 3, 3);
	fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x30, 0x7000, NULL, false);
	fl_picks(&fl, 1, order);
	fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x40, 0x7000, NULL, false);
	fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x30, 0x7000, NULL, false);
	fl_picks(&fl, 2, order + 1);
	fl_point(&fl, 2, CS_OP_LOCK_REQ, 0x50, 0x7000, NULL, false);
	fl_picks(&fl, 1, order + 3);
	fl_point(&fl, 2, CS_OP_LOCK_REQ, 0x58, 0x7000, NULL, false);
	fl_picks(&fl, 1, order + 4);
	tap_is_str(order, "00122", "the spin's two passes, then the reader's loads");
	fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x48, 0x7000, NULL, false);
	fl_picks(&fl, 1, order);
	tap_is_str(order, "1", "... before the writer's second store: the torn read again");
	fl_end(&fl);
	strategy_free(s);
	s = strategy_replay_new(strategy_lookup("pct"), CS_SERIAL_PRIO, &rec, true);
	tap_ok(!strategy_replay_enforced(s) && s->sched_serial == CS_SERIAL_PRIO,
	       "--decisions: its releases, in the recorded serial mode");
	strategy_free(s);
	declog_free(&rec);
}

static void test_replay_enforced(void)
{
	struct fake_loop fl;
	struct strat_decision d;
	struct declog rec;
	struct strategy *s;
	uint64_t id0 = fnv1a64("0", 1, FNV1A64_INIT), id1 = fnv1a64("0.1", 3, FNV1A64_INIT);
	const struct declog_entry *e;

	/* A parallel noise run: 0.1 was delayed at its point 0, so 0 went on
	 * from its point 0 first; then 0.1 twice, then 0. */
	declog_init(&rec, 5, NULL);
	declog_add(&rec, id1, 0, 0, DECLOG_DELAY_US, 300);
	declog_add(&rec, id0, 0, 0, DECLOG_PASS, 0);
	declog_add(&rec, id1, 0, 0, DECLOG_PASS, 0);
	declog_add(&rec, id1, 0, 1, DECLOG_PASS, 0);
	declog_add(&rec, id0, 0, 1, DECLOG_PASS, 0);
	s = strategy_replay_new(strategy_lookup("rnd-s10:0.3"), CS_SERIAL_OFF, &rec, false);
	tap_ok(strategy_has(s, STRAT_F_SERIAL) && s->sched_serial == CS_SERIAL_FIFO &&
		       strategy_replay_enforced(s) == 4,
	       "a noise run with its schedule replays serially, in its 4 recorded passes");
	fl_begin(&fl, s, 5, 2);
	d = fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_is_int(d.v, STRAT_PARK, "enforced: 0.1 waits at its point 0 (no delay: order only)");
	d = fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_is_int(d.v, STRAT_PARK, "enforced: 0 waits at its point 0");
	fl_all_parked(&fl);
	e = last_entry(&fl);
	tap_ok(e && e->thread == id0 && e->event == 0, "enforced: 0 goes first, as it did");
	fl_all_parked(&fl);
	e = last_entry(&fl);
	tap_ok(e && e->thread == id1 && e->event == 0, "enforced: then 0.1");
	fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_all_parked(&fl);
	e = last_entry(&fl);
	tap_ok(e && e->thread == id1 && e->event == 1,
	       "enforced: 0.1 at its point 1 before 0 at its point 1, though 0 came first");
	fl_all_parked(&fl);
	e = last_entry(&fl);
	tap_ok(e && e->thread == id0 && e->event == 1, "enforced: then 0");
	fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	fl_all_parked(&fl);
	e = last_entry(&fl);
	tap_ok(e && e->thread == id0 && e->event == 2,
	       "enforced: past the recorded schedule, the waiting thread goes");
	fl_end(&fl);
	strategy_free(s);

	/* A pass whose thread does not wait yet (0.2 is created later) is
	 * not dropped; a thread behind its next recorded pass catches up. */
	{
		struct declog rec2;
		uint64_t id2 = fnv1a64("0.2", 3, FNV1A64_INIT);

		declog_init(&rec2, 5, NULL);
		declog_add(&rec2, id2, 0, 0, DECLOG_PASS, 0);
		declog_add(&rec2, id1, 0, 0, DECLOG_PASS, 0);
		declog_add(&rec2, id2, 0, 1, DECLOG_PASS, 0);
		declog_add(&rec2, id1, 0, 2, DECLOG_PASS, 0);
		declog_add(&rec2, id0, 0, 0, DECLOG_PASS, 0);
		s = strategy_replay_new(strategy_lookup("rnd-s10:0.3"), CS_SERIAL_OFF, &rec2,
					false);
		fl_begin(&fl, s, 5, 2);
		fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
		fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id1 && e->event == 0,
		       "enforced: 0.2's pass is due but 0.2 does not exist: 0.1's goes");
		fl_thread(&fl);
		fl_point(&fl, 2, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
		fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id2 && e->event == 0,
		       "enforced: once 0.2 waits, its owed pass goes first (not dropped)");
		fl_point(&fl, 2, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id2 && e->event == 1, "enforced: then 0.2 at its point 1");
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id1 && e->event == 1,
		       "enforced: 0.1 waits at point 1, its next pass is point 2: it catches up");
		fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id1 && e->event == 2, "enforced: then its recorded pass");
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id0 && e->event == 0, "enforced: and 0 last, as recorded");
		fl_end(&fl);
		strategy_free(s);
		declog_free(&rec2);
	}

	/* Main spins (a probed read in the loop the recorded run did not
	 * stop at) before it creates 0.2, whose pass comes before 0.1's
	 * second: main goes on from that unrecorded point first, not 0.1
	 * ahead of 0.2 (seen: bad_lostwakeup under sharedVar-all noise,
	 * 0 of 10 replays before). */
	{
		struct declog rec3;
		uint64_t id2 = fnv1a64("0.2", 3, FNV1A64_INIT);

		declog_init(&rec3, 5, NULL);
		declog_add(&rec3, id0, 0, 0, DECLOG_PASS, 0);
		declog_add(&rec3, id1, 0, 0, DECLOG_PASS, 0);
		declog_add(&rec3, id2, 0, 0, DECLOG_PASS, 0);
		declog_add(&rec3, id1, 0, 1, DECLOG_PASS, 0);
		s = strategy_replay_new(strategy_lookup("rnd-s10:0.3"), CS_SERIAL_OFF, &rec3,
					false);
		fl_begin(&fl, s, 5, 2);
		fl_point(&fl, 0, CS_OP_READ, 0x10, 0x4000, NULL, false);
		fl_point(&fl, 1, CS_OP_READ, 0x10, 0x4000, NULL, false);
		fl_all_parked(&fl);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id1 && e->event == 0,
		       "enforced: 0, then 0.1, as recorded");
		fl_point(&fl, 0, CS_OP_READ, 0x10, 0x4000, NULL, false);
		fl_point(&fl, 1, CS_OP_READ, 0x10, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id0 && e->event == 1,
		       "enforced: 0.2's pass is due, 0.2 does not exist: main, at a point the "
		       "recording did not hold, goes before 0.1's later pass");
		fl_thread(&fl);
		fl_point(&fl, 2, CS_OP_READ, 0x10, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id2 && e->event == 0,
		       "enforced: then 0.2, created by main");
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id1 && e->event == 1, "enforced: and 0.1 after it");
		fl_end(&fl);
		strategy_free(s);
		declog_free(&rec3);
	}

	/* The recording's order is off by one probe's timing: main's first
	 * read of first_running already saw 0.1's store, whose pass came
	 * later, so main created 0.2 without spinning. Replayed in that
	 * order, main reads 0 and spins: points the recording did not make,
	 * at the spin read's site (7), where main's point 1 was the read after
	 * the joins (site 9). Main goes from such a point once per pass
	 * followed (not round and round ahead of 0.1's store), and its later
	 * points count the extra ones off (seen: race_wrong_lock under fpair,
	 * 0 of 10 replays before). */
	{
		struct declog rec4;
		uint64_t id2 = fnv1a64("0.2", 3, FNV1A64_INIT);

		declog_init(&rec4, 5, NULL);
		declog_add(&rec4, id0, 0, 0, DECLOG_PASS, 7);
		declog_add(&rec4, id2, 0, 0, DECLOG_PASS, 3);
		declog_add(&rec4, id1, 0, 0, DECLOG_PASS, 3);
		declog_add(&rec4, id1, 0, 1, DECLOG_PASS, 5);
		declog_add(&rec4, id2, 0, 1, DECLOG_PASS, 5);
		declog_add(&rec4, id0, 0, 1, DECLOG_PASS, 9);
		s = strategy_replay_new(strategy_lookup("rnd-s10:0.3"), CS_SERIAL_OFF, &rec4,
					false);
		fl_begin(&fl, s, 5, 2);
		fl_point(&fl, 0, CS_OP_READ, 7, 0x4000, NULL, false);
		fl_point(&fl, 1, CS_OP_WRITE, 3, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id0 && e->event == 0, "spin: main reads first");
		fl_point(&fl, 0, CS_OP_READ, 7, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id0 && e->event == 1,
		       "spin: main at the spin read again (not its recorded point 1) goes once");
		fl_point(&fl, 0, CS_OP_READ, 7, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id1 && e->event == 0,
		       "spin: round again with nothing followed since: 0.1's store goes first");
		fl_point(&fl, 1, CS_OP_READ, 5, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id0 && e->event == 2,
		       "spin: then main, which can end its loop now, before 0.1 goes ahead of 0.2");
		fl_thread(&fl);
		fl_point(&fl, 2, CS_OP_WRITE, 3, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id2 && e->event == 0, "spin: 0.2, created, as recorded");
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id1 && e->event == 1, "spin: 0.1 at its point 1");
		fl_point(&fl, 2, CS_OP_READ, 5, 0x4000, NULL, false);
		fl_point(&fl, 0, CS_OP_READ, 9, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id2 && e->event == 1, "spin: 0.2 at its point 1");
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id0 && e->event == 3,
		       "spin: main's point 3 is its recorded point 1 (two extra points counted "
		       "off)");
		fl_end(&fl);
		strategy_free(s);
		declog_free(&rec4);
	}

	/* The other way round: the recording spun once more than the replay
	 * does; the replay's main is at its read after the loop (site 9)
	 * where the recording has one more spin read (site 7). */
	{
		struct declog rec5;

		declog_init(&rec5, 5, NULL);
		declog_add(&rec5, id0, 0, 0, DECLOG_PASS, 7);
		declog_add(&rec5, id1, 0, 0, DECLOG_PASS, 3);
		declog_add(&rec5, id0, 0, 1, DECLOG_PASS, 7);
		declog_add(&rec5, id0, 0, 2, DECLOG_PASS, 9);
		declog_add(&rec5, id1, 0, 1, DECLOG_PASS, 5);
		declog_add(&rec5, id0, 0, 3, DECLOG_PASS, 11);
		s = strategy_replay_new(strategy_lookup("rnd-s10:0.3"), CS_SERIAL_OFF, &rec5,
					false);
		fl_begin(&fl, s, 5, 2);
		fl_point(&fl, 0, CS_OP_READ, 7, 0x4000, NULL, false);
		fl_point(&fl, 1, CS_OP_WRITE, 3, 0x4000, NULL, false);
		fl_all_parked(&fl);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id1 && e->event == 0, "fewer spins: main, then 0.1");
		fl_point(&fl, 0, CS_OP_READ, 9, 0x4000, NULL, false);
		fl_point(&fl, 1, CS_OP_READ, 5, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id0 && e->event == 1,
		       "fewer spins: main at its read after the loop takes the recorded pass at "
		       "that site (its point 2), before 0.1's point 1");
		fl_point(&fl, 0, CS_OP_READ, 11, 0x4000, NULL, false);
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id1 && e->event == 1,
		       "fewer spins: then 0.1, before main's next point (its recorded point 3)");
		fl_all_parked(&fl);
		e = last_entry(&fl);
		tap_ok(e && e->thread == id0 && e->event == 2, "fewer spins: then main");
		fl_end(&fl);
		strategy_free(s);
		declog_free(&rec5);
	}

	s = strategy_replay_new(strategy_lookup("rnd-s10:0.3"), CS_SERIAL_OFF, &rec, true);
	tap_ok(!strategy_replay_enforced(s) && !strategy_has(s, STRAT_F_SERIAL),
	       "--decisions: the same log replays in parallel");
	fl_begin(&fl, s, 5, 2);
	d = fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_ok(d.v == STRAT_DELAY && d.us == 300, "--decisions: the logged delay, passes ignored");
	d = fl_point(&fl, 0, CS_OP_LOCK_REQ, 0x10, 0x4000, NULL, false);
	tap_is_int(d.v, STRAT_PROCEED, "--decisions: a pass is no decision");
	fl_end(&fl);
	strategy_free(s);
	declog_free(&rec);
}

static void test_replay_paced(void)
{
	struct fake_loop fl;
	struct declog rec;
	struct strategy *s;
	struct cs_event ev = { 0 };
	uint64_t id0 = fnv1a64("0", 1, FNV1A64_INIT), id1 = fnv1a64("0.1", 3, FNV1A64_INIT);

	declog_init(&rec, 2, NULL);
	declog_add(&rec, id1, 0, 0, DECLOG_RELEASE, 4);
	declog_add(&rec, id0, 0, 0, DECLOG_RELEASE, 4);
	s = strategy_replay_new(strategy_lookup("map"), CS_SERIAL_OFF, &rec, false);
	tap_ok(strategy_has(s, STRAT_F_ACCESS_POINTS) && strategy_has(s, STRAT_F_SYNC_POINTS),
	       "replay of map steers the kinds map parks at: access and synchronization points");
	fl_begin(&fl, s, 2, 2);
	fl_point(&fl, 0, CS_OP_WRITE, 0x50, 0x9000, NULL, false);
	tap_is_int(fl.releases, 0, "paced: 0 waits for 0.1, logged before it");
	fl_point(&fl, 1, CS_OP_READ, 0x60, 0x9000, NULL, false);
	tap_is_int(fl.releases, 1, "paced: 0.1 goes at once");
	tap_is_int(last_entry(&fl)->thread, id1, "paced: it is 0.1");
	ev.tid = fl.th[1].tid;
	ev.op = CS_OP_UNLOCK;
	s->ops->event(s, &fl.r, &ev, &fl.th[1]);
	tap_is_int(fl.releases, 2, "paced: once 0.1 moved on, 0 goes");
	tap_is_int(last_entry(&fl)->thread, id0, "paced: it is 0");
	fl_end(&fl);
	strategy_free(s);
	declog_free(&rec);
}

/* ---- ga -------------------------------------------------------------------------------- */

/* ga:2,3 (2 runs per individual, 3 individuals) over two generations on the
 * fake backend, against a hand-made engine with the same seed and gene
 * ranges: each run's configuration is its individual's genome as a noise
 * configuration, the fitness of a run is (WGoldiLockSC + 1000 warnings +
 * 10000 failures) / ms, an individual's is the mean of its runs, a run that
 * did not run is not counted (the same run comes again), and the run that
 * completes a generation notes its summary; the points are the inner noise
 * strategy's decisions. */
static void test_ga(void)
{
	struct ga_gene_spec spec[GA_NOISE_GENES];
	struct ga_params par;
	struct ga g;
	struct fake_loop fl;
	struct strategy *s = make("ga:2,3"), *plain;
	struct strat_campaign c = { .quiet = true, .seed = 0 };
	char buf[256], want[256], exp[400], err[200] = "";
	int run, cfg_ok = 0, note_ok = 0, point_ok = 0;
	double prev = 0;

	tap_is_str(strategy_lookup("ga:2,3")->name, "ga", "ga by name");
	tap_is_int(strategy_lookup("ga")->flags,
		   STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ACCESS_POINTS | STRAT_F_ACCESS |
			   STRAT_F_JOBS,
		   "ga: noise at points and accesses, implies --access; runs at once");
	tap_ok(strategy_new("ga:0", &plain, err, sizeof(err)) == -EINVAL &&
		       strstr(err, "RUNS per evaluation"),
	       "ga:0 is refused (%s)", err);
	tap_ok(strategy_new("ga:2,2", &plain, err, sizeof(err)) == -EINVAL,
	       "ga:2,2 is refused (3 individuals at least)");
	tap_ok(strategy_new("ga:2,x", &plain, err, sizeof(err)) == -EINVAL, "ga:2,x is refused");

	memcpy(spec, ga_noise_spec, sizeof(spec));
	spec[GA_G_SEEDING].max = NOISE_SEED_HALT_ONE;
	spec[GA_G_TIMEOUT].max = 0;
	ga_params_default(&par);
	par.pop_size = 3;
	ga_init(&g, spec, GA_NOISE_GENES, &par, 0x6761ULL);
	s->ops->campaign_begin(s, &c);
	fl_keep_campaign = true;
	fl_access = true;
	for (run = 0; run < 14; run++) {
		/* run 12 does not run: run 13 is run 12 again */
		int e = run == 13 ? 12 : run;
		uint32_t gen = (uint32_t)(e / 6), ind = (uint32_t)(e / 2) % 3;
		struct strat_outcome o = { .ran = run != 12, .duration_ns = 10 * 1000 * 1000 };
		struct noise_config nc;
		struct fake_loop pl;
		struct strat_decision da, db;
		struct cov_event acc = { .obj = 7, .site = 11, .func = 5 };

		fl_begin(&fl, s, (uint64_t)run, 2);
		ga_genome_to_noise(g.pop[ind].genes, &nc);
		noise_config_format(&nc, want, sizeof(want));
		fl_config(&fl, buf, sizeof(buf));
		snprintf(exp, sizeof(exp),
			 "{\"noise\":\"%s\",\"ga\":{\"generation\":%u,\"individual\":%u,\"run\":%u}"
			 "}",
			 want, gen, ind, (uint32_t)(e % 2) + 1);
		cfg_ok += !strcmp(buf, exp);
		if (strcmp(buf, exp))
			tap_diag("run %d: %s, want %s", run, buf, exp);
		/* a noise strategy with the same configuration and run seed
		 * decides the same at the same point */
		plain = make("random-all@100/yield:1");
		strat_noise_configure(plain, &nc);
		fl_keep_campaign = false;
		fl_begin(&pl, plain, (uint64_t)run, 2);
		da = fl_point(&fl, 0, CS_OP_WRITE, 0x50, 0x9000, &acc, true);
		db = fl_point(&pl, 0, CS_OP_WRITE, 0x50, 0x9000, &acc, true);
		point_ok += da.v == db.v && da.us == db.us && da.arg == db.arg;
		fl_end(&pl);
		strategy_free(plain);
		fl_keep_campaign = true;
		/* WGoldiLockSC 10 * (e + 1) over 10 ms, a warning in run 3, run 5
		 * failed */
		o.wgoldilock_sc = 10.0 * (e + 1);
		o.warnings = e == 3;
		o.failed = e == 5;
		fl_end_with(&fl, &o);
		if (run == 12)
			continue;
		{
			double f = ga_fitness(o.wgoldilock_sc, o.warnings, o.failed, 10.0);
			const char *n = fl_nnotes ? fl_notes[fl_nnotes - 1] : "";
			char fit[64];

			snprintf(fit, sizeof(fit), "\"fitness\":%.6g,", f);
			snprintf(exp, sizeof(exp), "\"noise\":\"%s\"", want);
			note_ok += strstr(n, fit) && strstr(n, exp);
			if (e % 2)
				ga_set_fitness(&g, ind, (prev + f) / 2);
			prev = f;
			if (e % 6 == 5)
				ga_next_generation(&g);
		}
	}
	fl_keep_campaign = false;
	fl_access = false;
	tap_is_int(cfg_ok, 14,
		   "each run runs its individual's configuration, numbered by generation, "
		   "individual and run (the run that did not run comes again)");
	tap_is_int(point_ok, 14, "every point is the inner noise strategy's decision");
	tap_is_int((int)fl_nnotes, 13, "a note on each run that ran, none on the one that did not");
	tap_is_int(note_ok, 13, "each note carries the run's configuration and fitness");
	tap_ok(strstr(fl_notes[1], "\"evaluation\":") && !strstr(fl_notes[0], "\"evaluation\":"),
	       "the second run of an individual notes its evaluation (the mean)");
	tap_ok(strstr(fl_notes[5], "\"generation\":{\"index\":0,") &&
		       strstr(fl_notes[5], "\"summary\":\"ga generation 0: best fitness ") &&
		       !strstr(fl_notes[4], "\"summary\""),
	       "the run that completes generation 0 notes its summary");
	tap_ok(strstr(fl_notes[11], "\"generation\":{\"index\":1,") != NULL,
	       "... and generation 1's");
	{
		/* generation 0: individual 2's runs 4 and 5, run 5 failed */
		double best = (ga_fitness(50, 0, 0, 10) + ga_fitness(60, 0, 1, 10)) / 2;
		char b[64];

		snprintf(b, sizeof(b), "best fitness %.4g (", best);
		tap_ok(strstr(fl_notes[5], b) != NULL,
		       "generation 0's best is the individual with the failing run (%s)", b);
	}
	fl_notes_free();
	if (s->ops->campaign_end)
		s->ops->campaign_end(s, &c);
	strategy_free(s);
}

/* ga with runs at once (-j), hand-checked on ga:2,3 (3 individuals, 2 runs
 * each): R1 and R2 evaluate individual 0, R3 individual 1; R2 ends before
 * R1, and individual 0's evaluation is the mean of both. R4 is individual
 * 1's second run, R5 and R6 individual 2's; R7, begun while every
 * evaluation left has its runs in flight, runs individual 1 once more
 * (the fewest, the first of a tie). R6 completes generation 0; R8 begins
 * generation 1; R7 ends after that: left out. Each run's configuration and
 * each point are its own individual's; every run's state is freed at its
 * end (valgrind: no leak). */
static void test_ga_jobs(void)
{
	static const struct {
		uint32_t gen, ind, run;
	} want_run[8] = { { 0, 0, 1 }, { 0, 0, 2 }, { 0, 1, 1 }, { 0, 1, 2 },
			  { 0, 2, 1 }, { 0, 2, 2 }, { 0, 1, 3 }, { 1, 0, 1 } };
	struct ga_gene_spec spec[GA_NOISE_GENES];
	struct ga_params par;
	struct ga g;
	struct fake_loop fl[8];
	struct strategy *s = make("ga:2,3");
	struct strat_campaign c = { .quiet = true, .seed = 0 };
	char buf[256], want[256], exp[400];
	double fit[8], eval[3];
	int cfg_ok = 0, point_ok = 0;

	memcpy(spec, ga_noise_spec, sizeof(spec));
	spec[GA_G_SEEDING].max = NOISE_SEED_HALT_ONE;
	spec[GA_G_TIMEOUT].max = 0;
	ga_params_default(&par);
	par.pop_size = 3;
	ga_init(&g, spec, GA_NOISE_GENES, &par, 0x6761ULL);
	s->ops->campaign_begin(s, &c);
	fl_keep_campaign = true;
	fl_access = true;
	/* Rk's fitness: WGoldiLockSC 10 k over 10 ms, R6 failed */
	for (int k = 0; k < 8; k++)
		fit[k] = ga_fitness(10.0 * (k + 1), 0, k == 5, 10.0);

/* Begin run k (R(k+1)): its configuration is its individual's, and its
 * point the inner noise strategy's decision at that configuration. */
#define GA_BEGIN(k)                                                                                \
	do {                                                                                       \
		struct noise_config nc;                                                            \
		struct fake_loop pl;                                                               \
		struct strategy *plain = make("random-all@100/yield:1");                           \
		struct cov_event acc = { .obj = 7, .site = 11, .func = 5 };                        \
		struct strat_decision da, db;                                                      \
                                                                                                   \
		fl_begin(&fl[k], s, (uint64_t)(k) + 1, 2);                                         \
		ga_genome_to_noise(g.pop[want_run[k].ind].genes, &nc);                             \
		noise_config_format(&nc, want, sizeof(want));                                      \
		snprintf(exp, sizeof(exp),                                                         \
			 "{\"noise\":\"%s\",\"ga\":{\"generation\":%u,\"individual\":%u,"          \
			 "\"run\":%u}}",                                                           \
			 want, want_run[k].gen, want_run[k].ind, want_run[k].run);                 \
		fl_config(&fl[k], buf, sizeof(buf));                                               \
		cfg_ok += !strcmp(buf, exp);                                                       \
		if (strcmp(buf, exp))                                                              \
			tap_diag("R%d: %s, want %s", (k) + 1, buf, exp);                           \
		strat_noise_configure(plain, &nc);                                                 \
		fl_keep_campaign = false;                                                          \
		fl_begin(&pl, plain, (uint64_t)(k) + 1, 2);                                        \
		da = fl_point(&fl[k], 0, CS_OP_WRITE, 0x50, 0x9000, &acc, true);                   \
		db = fl_point(&pl, 0, CS_OP_WRITE, 0x50, 0x9000, &acc, true);                      \
		point_ok += da.v == db.v && da.us == db.us && da.arg == db.arg;                    \
		fl_end(&pl);                                                                       \
		strategy_free(plain);                                                              \
		fl_keep_campaign = true;                                                           \
	} while (0)
#define GA_END(k)                                                                                  \
	do {                                                                                       \
		struct strat_outcome o = { .ran = true, .duration_ns = 10 * 1000 * 1000 };         \
                                                                                                   \
		o.wgoldilock_sc = 10.0 * ((k) + 1);                                                \
		o.failed = (k) == 5;                                                               \
		fl_end_with(&fl[k], &o);                                                           \
	} while (0)

	GA_BEGIN(0);
	GA_BEGIN(1);
	GA_BEGIN(2);
	GA_END(1);
	GA_END(0);
	GA_BEGIN(3);
	GA_BEGIN(4);
	GA_END(2);
	GA_END(4);
	GA_BEGIN(5);
	GA_BEGIN(6);
	GA_END(3);
	/* generation 0 is complete at R6's end: bred like the campaign does */
	eval[0] = (fit[1] + fit[0]) / 2;
	eval[1] = (fit[2] + fit[3]) / 2;
	eval[2] = (fit[4] + fit[5]) / 2;
	for (uint32_t i = 0; i < 3; i++)
		ga_set_fitness(&g, i, eval[i]);
	GA_END(5);
	{
		double best = eval[0], mean = (eval[0] + eval[1] + eval[2]) / 3;
		char b[96];

		for (int i = 1; i < 3; i++)
			best = eval[i] > best ? eval[i] : best;
		snprintf(b, sizeof(b), "best fitness %.4g (", best);
		tap_ok(fl_nnotes == 6 && strstr(fl_notes[5], b) &&
			       (snprintf(b, sizeof(b), "mean %.4g;", mean), strstr(fl_notes[5], b)),
		       "R6 completes generation 0: its best and mean are over the three "
		       "evaluations");
	}
	ga_next_generation(&g);
	GA_BEGIN(7);
	GA_END(6);
	GA_END(7);
	tap_is_int(cfg_ok, 8,
		   "runs at once: each runs the individual whose evaluation lacks runs, numbered "
		   "by generation, individual and run; one begun when all are in flight runs the "
		   "one with the fewest once more; after the breeding, generation 1");
	tap_is_int(point_ok, 8,
		   "every point is the inner noise strategy's at its run's individual");
	{
		char f1[64], f0[64], ev[64];

		snprintf(f1, sizeof(f1), "\"fitness\":%.6g,", fit[1]);
		snprintf(f0, sizeof(f0), "\"fitness\":%.6g,", fit[0]);
		snprintf(ev, sizeof(ev), "\"evaluation\":%.6g", eval[0]);
		tap_ok(fl_nnotes == 8 && strstr(fl_notes[0], "\"individual\":0,") &&
			       strstr(fl_notes[0], f1) && !strstr(fl_notes[0], "\"evaluation\"") &&
			       strstr(fl_notes[1], "\"individual\":0,") &&
			       strstr(fl_notes[1], f0) && strstr(fl_notes[1], ev),
		       "R2 then R1 end: both are individual 0's, the second to end notes the mean "
		       "of both");
		snprintf(ev, sizeof(ev), "\"evaluation\":%.6g", eval[1]);
		tap_ok(strstr(fl_notes[4], "\"individual\":1,") && strstr(fl_notes[4], ev),
		       "R4 completes individual 1 (R3 and R4), R5 ended between");
		snprintf(f1, sizeof(f1), "\"fitness\":%.6g,", fit[6]);
		tap_ok(strstr(fl_notes[6], "\"generation\":0,\"individual\":1,") &&
			       strstr(fl_notes[6], f1) &&
			       strstr(fl_notes[6], "\"discarded\":true") &&
			       !strstr(fl_notes[6], "\"evaluation\""),
		       "R7 ends in generation 1: its generation 0 result is left out (%s)",
		       fl_notes[6]);
		tap_ok(strstr(fl_notes[7], "\"generation\":1,\"individual\":0,") &&
			       !strstr(fl_notes[7], "\"discarded\"") &&
			       !strstr(fl_notes[7], "\"evaluation\""),
		       "R8 counts for generation 1's individual 0 (its first run of 2)");
	}
#undef GA_BEGIN
#undef GA_END
	fl_keep_campaign = false;
	fl_access = false;
	fl_notes_free();
	if (s->ops->campaign_end)
		s->ops->campaign_end(s, &c);
	strategy_free(s);
}

/* ---- fpair ----------------------------------------------------------------------------- */

/* An access point of thread i in function func: variable var, written or
 * read, holding lock (0: none). */
static struct strat_decision fp_access(struct fake_loop *fl, size_t i, uint32_t func, uint32_t var,
				       bool write, uint32_t lock)
{
	struct cov_event ev = { .obj = var, .func = func, .site = func + 1, .thread = (uint32_t)i };

	ev.op = write ? CS_OP_WRITE : CS_OP_READ;
	if (lock)
		cov_event_lockset_add(&ev.held, lock);
	return fl_point(fl, i, ev.op, 0x50, 0x9000 + var, &ev, true);
}

/* fpair on the fake backend, hand-checked. Run 1 profiles: functions 10
 * (writes v7) and 20 (reads v7) with no lock, 30 and 40 (write v8) always
 * under lock 5. The high group then holds (10, 10) and (10, 20) (v7 written,
 * empty locksets), (30, 40) is dropped (a common lock); all S(p) = 1, so
 * the smaller f, then g, goes first: run 2 targets (10, 10), run 3
 * (10, 20). */
static void test_fpair(void)
{
	struct fake_loop fl;
	struct strategy *s = make("fpair"), *bad = NULL;
	struct strat_decision d, e;
	char buf[256], err[200] = "";
	const struct declog_entry *le;
	int goes;

	tap_is_str(strategy_lookup("fpair")->name, "fpair", "fpair by name");
	tap_is_int(strategy_lookup("fpair")->flags,
		   STRAT_F_STEERS | STRAT_F_SYNC_POINTS | STRAT_F_ACCESS_POINTS | STRAT_F_ACCESS |
			   STRAT_F_PICKS | STRAT_F_JOBS,
		   "fpair: access points, and synchronization points for the observed schedule; "
		   "implies --access, picks who runs; runs at once");
	tap_ok(strategy_new("fpair:3", &bad, err, sizeof(err)) == -EINVAL, "fpair:3 is refused");
	fl_keep_campaign = true;
	fl_access = true;

	fl_begin(&fl, s, 1, 2);
	tap_is_str(fl_config(&fl, buf, sizeof(buf)), "{\"fpair\":null}",
		   "run 1 has no target: it profiles");
	goes = 0;
	goes += fp_access(&fl, 0, 10, 7, true, 0).v == STRAT_PROCEED;
	goes += fp_access(&fl, 1, 20, 7, false, 0).v == STRAT_PROCEED;
	goes += fp_access(&fl, 0, 30, 8, true, 5).v == STRAT_PROCEED;
	goes += fp_access(&fl, 1, 40, 8, true, 5).v == STRAT_PROCEED;
	tap_is_int(goes, 4, "... every access goes on");
	fl_end(&fl);

	fl_begin(&fl, s, 2, 2);
	tap_is_str(fl_config(&fl, buf, sizeof(buf)),
		   "{\"fpair\":{\"f\":10,\"g\":10,\"group\":\"high\",\"choices\":0}}",
		   "run 2 targets (10, 10): high group, lowest S, smallest ids");
	d = fp_access(&fl, 0, 10, 7, true, 0);
	tap_is_int(d.v, STRAT_PARK, "thread 0 inside 10 is held");
	d = fp_access(&fl, 1, 20, 7, false, 0);
	tap_is_int(d.v, STRAT_PROCEED, "thread 1 in 20 (not the pair) goes on");
	fl.releases = 0;
	d = fp_access(&fl, 1, 10, 7, true, 0);
	le = last_entry(&fl);
	tap_ok(d.v == STRAT_RELEASE && d.arg == 0 && fl.releases == 0,
	       "thread 1 inside 10 too: met; the first attempt's first choice (bit 0 of 0): the "
	       "newcomer goes on by one access, thread 0 stays held");
	/* the one that went reaches its next access in 10: again one goes */
	{
		size_t went = d.v == STRAT_PARK ? 0 : 1;

		fl.releases = 0;
		e = fp_access(&fl, went, 10, 7, false, 0);
		tap_ok(e.v == STRAT_RELEASE && fl.releases == 0,
		       "at its next access the next choice (bit 1 of 0): the same thread goes on");
		/* whichever is running leaves for function 20: the other goes */
		went = e.v == STRAT_PARK ? 1 - went : went;
		fl.releases = 0;
		e = fp_access(&fl, went, 20, 7, false, 0);
		le = last_entry(&fl);
		tap_ok(e.v == STRAT_PROCEED && fl.releases == 1 &&
			       released_thread(&fl) == 1 - went && le->arg == 2,
		       "one leaves the pair: the interleaving ends, the other goes on");
	}
	fl_end(&fl);
	tap_ok(fl_nnotes == 1 && strstr(fl_notes[0], "\"f\":10,\"g\":10,\"met\":true"),
	       "run 2's note: the target was met (%s)", fl_nnotes ? fl_notes[0] : "none");
	tap_ok(fl_nnotes == 1 && strstr(fl_notes[0], "\"summary\":\"fpair: functions f10 and f10 "
						     "ran concurrently, at attempt 1; pairs met "
						     "so far: 1 ("),
	       "... and the report's summary line: the pair's first meet");

	fl_begin(&fl, s, 3, 2);
	tap_is_str(fl_config(&fl, buf, sizeof(buf)),
		   "{\"fpair\":{\"f\":10,\"g\":20,\"group\":\"high\",\"choices\":0}}",
		   "run 3 targets the untried high pair (10, 20)");
	d = fp_access(&fl, 0, 10, 7, true, 0);
	tap_is_int(d.v, STRAT_PARK, "thread 0 inside 10 waits for a partner in 20");
	fl.releases = 0;
	{
		struct policy_note old = { .ts_ns = now_ns() };

		d = fl_point(&fl, 1, CS_OP_LOCK_REQ, 0x70, 0xa000, NULL, false);
		tap_is_int(d.v, STRAT_PROCEED,
			   "a synchronization point goes on (it parks for the schedule only)");
		s->ops->all_parked(s, &fl.r, &old);
		tap_is_int(fl.releases, 0,
			   "a note from before that point is stale: thread 0 stays held");
	}
	fl_all_parked(&fl);
	le = last_entry(&fl);
	tap_ok(fl.releases == 1 && released_thread(&fl) == 0 && le->arg == 1,
	       "everyone runnable parked: the hold ends, thread 0 goes on alone");
	d = fp_access(&fl, 1, 40, 8, true, 5);
	tap_is_int(d.v, STRAT_PROCEED, "an access outside the pair goes on");
	fl_end(&fl);
	tap_ok(fl_nnotes == 2 && strstr(fl_notes[1], "\"f\":10,\"g\":20,\"met\":false"),
	       "run 3's note: not met");
	tap_ok(fl_nnotes == 2 && !strstr(fl_notes[1], "summary"), "... and no summary line");

	fl_begin(&fl, s, 4, 2);
	tap_is_str(fl_config(&fl, buf, sizeof(buf)),
		   "{\"fpair\":{\"f\":10,\"g\":30,\"group\":\"low\",\"choices\":0}}",
		   "run 4: every high pair tried, the low group's untried pairs come next, "
		   "smallest first (10, 30)");
	/* A partner let go and not seen since is in flight: the held thread
	 * waits for it past FP_HOLD_NS (30 ms), so that the access it went to
	 * make comes before the held one's, as the schedule says. */
	d = fp_access(&fl, 0, 10, 7, true, 0);
	tap_is_int(d.v, STRAT_PARK, "thread 0 inside 10 waits for a partner in 30");
	fl.releases = 0;
	d = fp_access(&fl, 1, 30, 8, true, 5);
	{
		uint64_t gone = now_ns(), waited;
		struct timespec ts = { 0, 40 * 1000 * 1000 };
		struct cs_event ev = { .op = CS_OP_UNLOCK, .tid = fl.th[1].tid };

		tap_ok(d.v == STRAT_RELEASE && fl.releases == 0,
		       "met: the newcomer goes on (bit 0 of 0), thread 0 stays held");
		nanosleep(&ts, NULL);
		s->ops->tick(s, &fl.r);
		waited = now_ns() - gone;
		tap_is_int(
			fl.releases, waited >= 500000000ULL,
			"40 ms on, its partner not seen since it went on: thread 0 is still held "
			"(waited %.0f ms; let go only past 500 ms)",
			(double)waited / 1e6);
		s->ops->event(s, &fl.r, &ev, &fl.th[1]);
		s->ops->tick(s, &fl.r);
		le = last_entry(&fl);
		tap_ok(fl.releases == 1 && released_thread(&fl) == 0 && le->arg == 2,
		       "the partner shows an event: the wait is over, the interleaving ends and "
		       "thread 0 goes on");
	}
	fl_end(&fl);
	tap_ok(fl_nnotes == 3 && strstr(fl_notes[2], "f10 and f30 ran concurrently, at attempt "
						     "1; pairs met so far: 2 ("),
	       "run 4 met its pair: the second pair's summary line");
	fl_keep_campaign = false;
	fl_access = false;
	fl_notes_free();
	strategy_free(s);
}

/* The targets of the next n runs (nothing met), one configuration each. */
static void fp_next_targets(struct strategy *s, char *out, size_t len, int n)
{
	struct fake_loop fl;
	char buf[256];
	size_t off = 0;

	out[0] = 0;
	for (int i = 0; i < n; i++) {
		fl_begin(&fl, s, 100 + (uint64_t)i, 2);
		fl_config(&fl, buf, sizeof(buf));
		off += (size_t)snprintf(out + off, off < len ? len - off : 0, "%s\n", buf);
		fl_end(&fl);
	}
}

/* The profiling run of test_fpair (run 1). */
static void fp_profile(struct strategy *s)
{
	struct fake_loop fl;

	fl_begin(&fl, s, 1, 2);
	fp_access(&fl, 0, 10, 7, true, 0);
	fp_access(&fl, 1, 20, 7, false, 0);
	fp_access(&fl, 0, 30, 8, true, 5);
	fp_access(&fl, 1, 40, 8, true, 5);
	fl_end(&fl);
}

/* fpair with runs at once (-j), hand-checked. After test_fpair's profile,
 * runs A and B begin before either ends: A targets (10, 10), B passes over
 * it (in flight) to the next untried high pair (10, 20). A sees function 50
 * (writes v9), B function 60 (reads v9, writes v7 under lock 6); B ends
 * first. A second instance runs A then B one at a time with the same
 * accesses: the next 20 runs (the 16 untried kept pairs, then by S) target
 * the same pairs in both (the profile,
 * the groups and the attempts are the same). With one kept pair, two runs
 * at once both target it. */
static void test_fpair_jobs(void)
{
	struct strategy *s = make("fpair"), *seq = make("fpair"), *one = make("fpair");
	struct fake_loop a, b;
	char ca[256], cb[256], next_at_once[4096], next_seq[4096];

	fl_keep_campaign = true;
	fl_access = true;
	fp_profile(s);
	fl_begin(&a, s, 2, 2);
	fl_begin(&b, s, 3, 2);
	fl_config(&a, ca, sizeof(ca));
	fl_config(&b, cb, sizeof(cb));
	tap_ok(!strcmp(ca, "{\"fpair\":{\"f\":10,\"g\":10,\"group\":\"high\",\"choices\":0}}") &&
		       !strcmp(cb,
			       "{\"fpair\":{\"f\":10,\"g\":20,\"group\":\"high\",\"choices\":0}}"),
	       "two runs at once target two pairs: A (10, 10), B the next one, (10, 20) (%s %s)",
	       ca, cb);
	fp_access(&a, 0, 50, 9, true, 0);
	fp_access(&b, 0, 60, 9, false, 0);
	fp_access(&b, 1, 60, 7, true, 6);
	fl_end(&b);
	fl_end(&a);

	fp_profile(seq);
	fl_begin(&a, seq, 2, 2);
	fl_config(&a, ca, sizeof(ca));
	fp_access(&a, 0, 50, 9, true, 0);
	fl_end(&a);
	fl_begin(&b, seq, 3, 2);
	fl_config(&b, cb, sizeof(cb));
	fp_access(&b, 0, 60, 9, false, 0);
	fp_access(&b, 1, 60, 7, true, 6);
	fl_end(&b);
	tap_ok(!strcmp(ca, "{\"fpair\":{\"f\":10,\"g\":10,\"group\":\"high\",\"choices\":0}}") &&
		       !strcmp(cb,
			       "{\"fpair\":{\"f\":10,\"g\":20,\"group\":\"high\",\"choices\":0}}"),
	       "one at a time, the same two runs target the same pairs");
	fp_next_targets(s, next_at_once, sizeof(next_at_once), 20);
	fp_next_targets(seq, next_seq, sizeof(next_seq), 20);
	tap_ok(!strcmp(next_at_once, next_seq) &&
		       strstr(next_seq, "\"f\":50,\"g\":50,\"group\":\"high\"") &&
		       strstr(next_seq, "\"f\":10,\"g\":60,\"group\":\"high\""),
	       "once both ended, the profile is the one-at-a-time one: the next 20 runs "
	       "target the same pairs, those of functions 50 and 60 among them");
	if (strcmp(next_at_once, next_seq))
		tap_diag("at once:\n%s\none at a time:\n%s", next_at_once, next_seq);

	{
		struct fake_loop fl;

		fl_begin(&fl, one, 1, 2);
		fp_access(&fl, 0, 10, 7, true, 0);
		fl_end(&fl);
	}
	fl_begin(&a, one, 2, 2);
	fl_begin(&b, one, 3, 2);
	fl_config(&a, ca, sizeof(ca));
	fl_config(&b, cb, sizeof(cb));
	tap_ok(!strcmp(ca, cb) && strstr(ca, "\"f\":10,\"g\":10,"),
	       "one kept pair, two runs at once: both target it (%s)", cb);
	fl_end(&a);
	fl_end(&b);
	fl_keep_campaign = false;
	fl_access = false;
	fl_notes_free();
	strategy_free(s);
	strategy_free(seq);
	strategy_free(one);
}

int main(void)
{
	tap_plan(242 + 10 + 14 + 8 + 4 + 5 + 4 + 4 + 4 + 6);
	test_registry();
	test_noise();
	test_noise_exit();
	test_random();
	test_random_access();
	test_serial();
	test_serial_random();
	test_tsa();
	test_tsa_exit();
	test_map();
	test_map_at_once();
	test_map_at_once_coverage();
	test_map_at_once_stress();
	test_pct_depth1();
	test_pct_change_point();
	test_pct_exit();
	test_start_point();
	test_stdio_point();
	test_pct_seeds();
	test_pct_access();
	test_pct_focus();
	test_pct_focus_sync();
	test_pct_probe_sets();
	test_pct_split();
	test_pct_spin();
	test_replay_decisions();
	test_replay_order();
	test_replay_paced();
	test_replay_serial_passes();
	test_replay_enforced();
	test_replay_serial_unheld();
	test_replay_exit_held();
	test_noise_access();
	test_noise_focus();
	test_ga();
	test_ga_jobs();
	test_fpair();
	test_fpair_jobs();
	return tap_done();
}
