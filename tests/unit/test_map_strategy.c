// SPDX-License-Identifier: MIT
/*
 * MAP strategy (MAPTest testexecute) on scripted threads: a tiny
 * simulator runs the lowest-numbered runnable thread, asks the engine
 * before every access, parks on PAUSE, re-evaluates parked threads when
 * the target changes and asks the engine whom to release when every live
 * thread is parked. Checked by hand: the NullAppender interleaving of
 * seed 001 (reader checks, writer nulls, reader dereferences) is forced in
 * the first run whatever target is drawn; coverage carries over so the
 * second run targets the remaining pattern 7; pattern 3 is preferred; the
 * same seed gives the same decisions. Runs of their own (map_exec), one at
 * a time, decide as the strategy's own run; three in flight at once keep
 * their threads, targets and tried patterns apart, see each other's
 * coverage at once and add their counts at their ends.
 */
#include <stdarg.h>

#include "strategies/map_strategy.h"
#include "tap.h"

enum { R = CS_OP_READ, W = CS_OP_WRITE };

struct step {
	uint32_t site, var;
	unsigned op;
};

struct script {
	unsigned n;
	struct step s[6];
};

#define MAXT 4

/* Log of what happened, e.g. "1:s4 P1 2:s9 1:s5" (P = paused,
 * r = released by choose_release, x = released at re-evaluation). */
struct sim_log {
	char text[512];
	size_t off;
	char order[128]; /* executed accesses only */
	size_t ooff;
	enum map_release_why last_why;
	unsigned releases;
	unsigned first_target;	 /* pattern of the run's first target, 0 = none */
	uint32_t first_x;	 /* its variable x */
	bool target_after_first; /* a target existed after the first access */
	unsigned nexec;
};

static void logf_(struct sim_log *lg, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void logf_(struct sim_log *lg, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (lg->off < sizeof(lg->text))
		lg->off += vsnprintf(lg->text + lg->off, sizeof(lg->text) - lg->off, fmt, ap);
	va_end(ap);
}

static void exec_step(struct map_strategy *s, const struct script *sc, unsigned *pos, uint32_t t,
		      struct sim_log *lg)
{
	const struct step *st = &sc[t].s[pos[t]];
	struct cov_event ev = { .thread = t, .op = st->op, .site = st->site, .obj = st->var };

	map_strategy_after_access(s, &ev);
	if (map_strategy_current_target(s)->active && !lg->first_target) {
		lg->first_target = map_strategy_current_target(s)->pattern;
		lg->first_x = map_strategy_current_target(s)->x;
	}
	if (++lg->nexec == 1)
		lg->target_after_first = map_strategy_current_target(s)->active;
	logf_(lg, "%u:s%u ", t, st->site);
	if (lg->ooff < sizeof(lg->order))
		lg->ooff += snprintf(lg->order + lg->ooff, sizeof(lg->order) - lg->ooff, "%s%u:s%u",
				     lg->ooff ? " " : "", t, st->site);
	if (++pos[t] == sc[t].n)
		map_strategy_thread_exit(s, t);
}

static void sim_run(struct map_strategy *s, uint64_t seed, const struct script *sc, unsigned nt,
		    struct sim_log *lg)
{
	unsigned pos[MAXT] = { 0 };
	bool parked[MAXT] = { false };
	uint64_t gen;

	memset(lg, 0, sizeof(*lg));
	map_strategy_run_begin(s, seed);
	for (uint32_t t = 1; t < nt; t++)
		map_strategy_thread_start(s, t);
	for (;;) {
		uint32_t t;
		struct map_release rel;

		for (t = 1; t < nt && (pos[t] == sc[t].n || parked[t]); t++)
			;
		gen = map_strategy_target_generation(s);
		if (t < nt) {
			const struct step *st = &sc[t].s[pos[t]];

			if (map_strategy_before_access(s, t, st->site, st->var, st->op) ==
			    MAP_PAUSE) {
				parked[t] = true;
				logf_(lg, "P%u ", t);
				continue;
			}
			exec_step(s, sc, pos, t, lg);
		} else {
			if (map_strategy_choose_release(s, &rel))
				break;
			parked[rel.thread] = false;
			lg->last_why = rel.why;
			lg->releases++;
			logf_(lg, "r%u ", rel.thread);
			exec_step(s, sc, pos, rel.thread, lg);
		}
		if (map_strategy_target_generation(s) == gen)
			continue;
		/* The target changed: re-evaluate the parked threads. */
		for (uint32_t u = 1; u < nt; u++) {
			const struct step *st = &sc[u].s[pos[u]];

			if (!parked[u])
				continue;
			if (map_strategy_before_access(s, u, st->site, st->var, st->op) ==
			    MAP_PROCEED) {
				parked[u] = false;
				logf_(lg, "x%u ", u);
			}
		}
	}
}

/* Thread 1 = isAsSevereAsThreshold (check th != NULL at s4, use th at s5),
 * thread 2 = setThreshold(NULL) (write th at s9). x = th = v1. */
static const struct script null_appender[] = {
	{ 0 },
	{ 2, { { 4, 1, R }, { 5, 1, R } } },
	{ 1, { { 9, 1, W } } },
};

static void test_null_appender(void)
{
	struct map_strategy *s = map_strategy_new(NULL);
	const struct map_strategy_stats *st = map_strategy_stats(s);
	const struct cov_taskset *cov = map_strategy_covered(s);
	struct sim_log lg;

	sim_run(s, 1, null_appender, 3, &lg);
	tap_is_str(lg.order, "1:s4 2:s9 1:s5", "run 1: check, null, use (the bug interleaving)");
	tap_ok(strstr(lg.text, "P1 ") != NULL,
	       "run 1: the reader was paused before its second read");
	tap_ok(lg.first_target == 1 || lg.first_target == 4 || lg.first_target == 7,
	       "run 1: first target drawn among the R-first patterns 1, 4, 7 (p%u)",
	       lg.first_target);
	tap_ok(cov_event_taskset_has(cov, "p1 v1 s4 s9") &&
		       cov_event_taskset_has(cov, "p2 v1 s9 s5") &&
		       cov_event_taskset_has(cov, "p4 v1 s4 s9 s5") && cov->count == 3,
	       "run 1 covered p1, p2, p4 (exactly)");

	/* Run 2: p1 and p4 from (v1, s4) are covered: the target is p7. */
	sim_run(s, 2, null_appender, 3, &lg);
	tap_is_int(lg.first_target, 7,
		   "run 2: the target at s4 is pattern 7 (a:R x, b:W x, a:W x)");
	tap_is_str(lg.order, "1:s4 2:s9 1:s5", "run 2: the writer is still run eagerly");
	tap_ok(lg.releases == 1 && lg.last_why == MAP_REL_RANDOM,
	       "run 2: the reader is never p7's next step: released at random once all are parked");
	if (lg.releases != 1)
		tap_diag("run 2 log: %s", lg.text);
	tap_ok(st->targets_abandoned >= 1, "run 2: p7 abandoned when its thread exited");
	map_strategy_free(s);

	/* Without the engine (lowest thread first) the reader never sees NULL. */
	s = map_strategy_new(NULL);
	map_strategy_mark_covered(s, "p1 v1 s4 s9");
	map_strategy_mark_covered(s, "p4 v1 s4 s9 s5");
	map_strategy_mark_covered(s, "p7 v1 s4 s9 s5");
	sim_run(s, 3, null_appender, 3, &lg);
	tap_is_str(lg.order, "1:s4 1:s5 2:s9",
		   "coverage restored from an earlier campaign: no target, natural order");
	tap_ok(!lg.target_after_first, "no uncovered pattern starts at (v1, s4): no target there");
	map_strategy_free(s);
}

/* T1: W x s1, W x s2; T2: W x s3. W-first candidates are 2, 3, 5, 6, 8:
 * pattern 3 is preferred, so T1's second write waits for T2's. */
static const struct script ww[] = {
	{ 0 },
	{ 2, { { 1, 1, W }, { 2, 1, W } } },
	{ 1, { { 3, 1, W } } },
};

static void test_prefer_ww(void)
{
	struct map_strategy *s = map_strategy_new(NULL);
	struct sim_log lg;

	sim_run(s, 7, ww, 3, &lg);
	tap_is_int(lg.first_target, 3, "pattern 3 chosen as the target");
	tap_is_str(lg.order, "1:s1 2:s3 1:s2", "write-write forced: 1:s1 2:s3 1:s2");
	tap_ok(cov_event_taskset_has(map_strategy_covered(s), "p3 v1 s1 s3") &&
		       map_strategy_stats(s)->targets_completed == 1,
	       "p3 v1 s1 s3 covered, target completed");
	map_strategy_free(s);
}

/* Three threads on x and y: random releases; same seed, same decisions. */
static const struct script mixed[] = {
	{ 0 },
	{ 3, { { 1, 1, W }, { 2, 2, R }, { 3, 1, R } } },
	{ 3, { { 4, 2, W }, { 5, 1, R }, { 6, 2, W } } },
	{ 3, { { 7, 1, W }, { 8, 2, R }, { 9, 1, W } } },
};

static void test_determinism(void)
{
	struct map_strategy *a = map_strategy_new(NULL), *b = map_strategy_new(NULL);
	struct sim_log la, lb;
	bool same = true;
	size_t first = 0, prev = 0;
	bool monotone = true;

	for (uint64_t seed = 1; seed <= 12; seed++) {
		sim_run(a, seed, mixed, 4, &la);
		sim_run(b, seed, mixed, 4, &lb);
		same = same && !strcmp(la.text, lb.text);
		if (seed == 1)
			first = map_strategy_covered(a)->count;
		monotone = monotone && map_strategy_covered(a)->count >= prev;
		prev = map_strategy_covered(a)->count;
	}
	tap_ok(same, "same seeds, same decisions over 12 runs");
	tap_ok(monotone && prev > first,
	       "coverage carried across runs grows (%zu after run 1, %zu after 12)", first, prev);
	tap_ok(map_strategy_stats(a)->releases_random + map_strategy_stats(a)->releases_eager > 0,
	       "releases happened (%llu eager, %llu random)",
	       (unsigned long long)map_strategy_stats(a)->releases_eager,
	       (unsigned long long)map_strategy_stats(a)->releases_random);
	map_strategy_free(a);
	map_strategy_free(b);
}

/* sim_run on a run of its own (map_exec), as the strategy steers runs at
 * once: the same steps, through the map_strategy_exec_* calls. */
static void exec_step_x(struct map_exec *x, const struct script *sc, unsigned *pos, uint32_t t,
			struct sim_log *lg)
{
	const struct step *st = &sc[t].s[pos[t]];
	struct cov_event ev = { .thread = t, .op = st->op, .site = st->site, .obj = st->var };

	map_strategy_exec_after_access(x, &ev);
	logf_(lg, "%u:s%u ", t, st->site);
	if (++pos[t] == sc[t].n)
		map_strategy_exec_thread_exit(x, t);
}

static void sim_run_x(struct map_strategy *s, uint64_t seed, const struct script *sc, unsigned nt,
		      struct sim_log *lg)
{
	struct map_exec *x = map_strategy_exec_new(s, seed);
	unsigned pos[MAXT] = { 0 };
	bool parked[MAXT] = { false };
	uint64_t gen;

	memset(lg, 0, sizeof(*lg));
	for (uint32_t t = 1; t < nt; t++)
		map_strategy_exec_thread_start(x, t);
	for (;;) {
		uint32_t t;
		struct map_release rel;

		for (t = 1; t < nt && (pos[t] == sc[t].n || parked[t]); t++)
			;
		gen = map_strategy_exec_generation(x);
		if (t < nt) {
			const struct step *st = &sc[t].s[pos[t]];

			if (map_strategy_exec_before_access(x, t, st->site, st->var, st->op) ==
			    MAP_PAUSE) {
				parked[t] = true;
				logf_(lg, "P%u ", t);
				continue;
			}
			exec_step_x(x, sc, pos, t, lg);
		} else {
			if (map_strategy_exec_choose_release(x, &rel))
				break;
			parked[rel.thread] = false;
			logf_(lg, "r%u ", rel.thread);
			exec_step_x(x, sc, pos, rel.thread, lg);
		}
		if (map_strategy_exec_generation(x) == gen)
			continue;
		for (uint32_t u = 1; u < nt; u++) {
			const struct step *st = &sc[u].s[pos[u]];

			if (!parked[u])
				continue;
			if (map_strategy_exec_before_access(x, u, st->site, st->var, st->op) ==
			    MAP_PROCEED) {
				parked[u] = false;
				logf_(lg, "x%u ", u);
			}
		}
	}
	map_strategy_exec_end(x);
}

/* One run at a time, a run of its own each (map_exec) decides as the
 * strategy's own run did: same decisions, coverage and totals. */
static void test_exec_same(void)
{
	struct map_strategy *a = map_strategy_new(NULL), *b = map_strategy_new(NULL);
	struct sim_log la, lb;
	bool same = true;

	for (uint64_t seed = 1; seed <= 12; seed++) {
		sim_run(a, seed, mixed, 4, &la);
		sim_run_x(b, seed, mixed, 4, &lb);
		same = same && !strcmp(la.text, lb.text);
		if (strcmp(la.text, lb.text))
			tap_diag("seed %llu: '%s' vs '%s'", (unsigned long long)seed, la.text,
				 lb.text);
	}
	tap_ok(same,
	       "runs of their own (map_exec), one at a time: the same decisions over 12 runs");
	tap_ok(map_strategy_covered(a)->count == map_strategy_covered(b)->count &&
		       !memcmp(map_strategy_stats(a), map_strategy_stats(b),
			       sizeof(struct map_strategy_stats)),
	       "the same coverage (%zu) and totals (%llu runs)", map_strategy_covered(b)->count,
	       (unsigned long long)map_strategy_stats(b)->runs);
	map_strategy_free(a);
	map_strategy_free(b);
}

/* Three runs in flight at once over one campaign's coverage (stall limit
 * 1: a random release abandons the target), by hand, on v1:
 *  A: thread 1 writes at s1: target p3 (a:W x, b:W x), a = 1; thread 2's
 *     read at s2 is paused (p3 wants a write).
 *  B begins, its threads 1 and 2 start: A's target and paused thread are
 *     A's still, B has neither.
 *  A: all paused, thread 2 is released at random: p3 at (v1, s1) is
 *     abandoned, tried in A.
 *  C begins. A: thread 1 writes at s1 again: A's target is not p3 (tried
 *     in A); C: thread 1 writes at s1: C's target is p3 (C tried nothing);
 *     C: thread 2 writes at s4: p3 v1 s1 s4 covered.
 *  B: thread 1 writes at s1: p3 there is covered (by C): not B's target.
 *  Totals: a run's counts once it ends: B (1 target), then A (2 targets,
 *  1 pause, 1 random release, 1 abandoned), then C (1 target completed,
 *  1 instance covered). */
static void test_exec_at_once(void)
{
	struct map_strategy_opts opts = { .stall_limit = 1 };
	struct map_strategy *s = map_strategy_new(&opts);
	const struct map_strategy_stats *tot = map_strategy_stats(s);
	const struct map_target *g;
	struct map_exec *a, *b, *c;
	struct cov_event w1 = { .thread = 1, .op = W, .site = 1, .obj = 1 };
	struct cov_event w4 = { .thread = 2, .op = W, .site = 4, .obj = 1 };
	struct map_release rel;
	int rc;

	a = map_strategy_exec_new(s, 1);
	map_strategy_exec_thread_start(a, 1);
	map_strategy_exec_thread_start(a, 2);
	tap_is_int(map_strategy_exec_before_access(a, 1, 1, 1, W), MAP_PROCEED,
		   "A: no target: 1 writes");
	map_strategy_exec_after_access(a, &w1);
	g = map_strategy_exec_target(a);
	tap_ok(g->active && g->pattern == 3 && g->a == 1 && g->x == 1,
	       "A: target p3 at (v1, s1), thread 1 first (p%u)", g->pattern);
	tap_is_int(map_strategy_exec_before_access(a, 2, 2, 1, R), MAP_PAUSE,
		   "A: thread 2's read is paused (p3 wants a write)");

	b = map_strategy_exec_new(s, 2);
	map_strategy_exec_thread_start(b, 1);
	map_strategy_exec_thread_start(b, 2);
	g = map_strategy_exec_target(a);
	tap_ok(g->active && g->pattern == 3 && g->a == 1 && g->next == 1 &&
		       map_strategy_exec_is_paused(a, 2) &&
		       !map_strategy_exec_all_enabled_paused(a),
	       "B began: A's target and A's paused thread 2 are as they were");
	tap_ok(!map_strategy_exec_target(b)->active && !map_strategy_exec_is_paused(b, 2) &&
		       tot->runs == 0,
	       "B: no target, nothing paused; the totals have no run yet");

	rc = map_strategy_exec_choose_release(a, &rel);
	tap_ok(rc == 0 && rel.thread == 2 && rel.why == MAP_REL_RANDOM &&
		       !map_strategy_exec_target(a)->active &&
		       map_strategy_exec_stats(a)->targets_abandoned == 1,
	       "A: thread 2 released at random, p3 abandoned (stall limit 1)");

	c = map_strategy_exec_new(s, 3);
	map_strategy_exec_thread_start(c, 1);
	map_strategy_exec_thread_start(c, 2);
	map_strategy_exec_after_access(a, &w1);
	g = map_strategy_exec_target(a);
	tap_ok(g->active && g->pattern != 3,
	       "A after C began: p3 at (v1, s1) still tried in A: another target (p%u)",
	       g->pattern);
	map_strategy_exec_after_access(c, &w1);
	tap_is_int(map_strategy_exec_target(c)->pattern, 3,
		   "C: p3 at (v1, s1) is C's target (C tried nothing)");
	tap_is_int(map_strategy_exec_before_access(c, 2, 4, 1, W), MAP_PROCEED,
		   "C: thread 2's write is p3's next step");
	map_strategy_exec_after_access(c, &w4);
	tap_ok(cov_event_taskset_has(map_strategy_covered(s), "p3 v1 s1 s4") &&
		       map_strategy_exec_stats(c)->targets_completed == 1 &&
		       !map_strategy_exec_target(c)->active,
	       "C: p3 v1 s1 s4 covered, C's target completed");

	map_strategy_exec_after_access(b, &w1);
	g = map_strategy_exec_target(b);
	tap_ok(g->active && g->pattern != 3,
	       "B: p3 at (v1, s1), covered in C, is not B's target at once (p%u)", g->pattern);

	map_strategy_exec_end(b);
	tap_ok(tot->runs == 1 && tot->targets_started == 1 && tot->pauses == 0,
	       "B ended: the totals are B's");
	map_strategy_exec_end(a);
	tap_ok(tot->runs == 2 && tot->targets_started == 3 && tot->targets_abandoned == 1 &&
		       tot->pauses == 1 && tot->releases_random == 1 && tot->targets_completed == 0,
	       "A ended: its counts added");
	map_strategy_exec_end(c);
	tap_ok(tot->runs == 3 && tot->targets_started == 4 && tot->targets_completed == 1 &&
		       tot->covered_new == 1 && tot->targets_by_pattern[3] == 2 &&
		       map_strategy_covered(s)->count == 1,
	       "C ended: 3 runs, 4 targets (2 of them p3), 1 completed, 1 instance covered");
	map_strategy_free(s);
}

/* race_one_of_N's shape: thread 1 (a handler) writes `served` (v1) twice,
 * thread 2 (the stats handler) reads capacity (v2) and mask (v3), thread 3
 * (the resizer) writes them. The simulator runs thread 1 first. */
static const struct script one_of_n[] = {
	{ 0 },
	{ 2, { { 1, 1, W }, { 2, 1, W } } },
	{ 2, { { 3, 2, R }, { 4, 3, R } } },
	{ 2, { { 5, 2, W }, { 6, 3, W } } },
};

static void test_focus(void)
{
	static const uint32_t cross[] = { 2, 3 }, only2[] = { 2 };
	static const struct script two[] = {
		{ 0 },
		{ 1, { { 1, 1, W } } },
		{ 1, { { 3, 2, R } } },
	};
	/* Every pattern that can start with thread 2's read of v2 at s3
	 * (1, 4, 7 and, with two variables, 14-16) covered already. */
	static const char *const covered[] = { "p1 v2 s3 s9",		"p4 v2 s3 s9 s3",
					       "p7 v2 s3 s9 s3",	"p14 v2 v1 s3 s9 s9 s3",
					       "p15 v2 v1 s3 s9 s9 s3", "p16 v2 v1 s3 s9 s9 s3" };
	struct map_strategy *s = map_strategy_new(NULL);
	struct map_exec *x;
	struct sim_log lg;

	sim_run(s, 1, one_of_n, 4, &lg);
	tap_is_int(lg.first_x, 1,
		   "no focus: the first access (thread 1's write of v1) is the target");
	map_strategy_free(s);

	s = map_strategy_new(NULL);
	map_strategy_set_focus(s, cross, 2);
	sim_run(s, 1, one_of_n, 4, &lg);
	tap_ok(lg.first_x == 2 && lg.first_target,
	       "focus on v2, v3: v1's accesses start nothing, thread 2's read of v2 does (p%u on "
	       "v%u)",
	       lg.first_target, lg.first_x);
	x = map_strategy_exec_new(s, 1);
	tap_ok(map_strategy_exec_focused(x), "... and a run of its own starts focused");
	map_strategy_exec_end(x);
	map_strategy_free(s);

	/* Spent: a run meets v2 and can start no target there; the next run
	 * targets every variable. */
	s = map_strategy_new(NULL);
	map_strategy_set_focus(s, only2, 1);
	for (size_t i = 0; i < sizeof(covered) / sizeof(covered[0]); i++)
		map_strategy_mark_covered(s, covered[i]);
	sim_run(s, 1, two, 3, &lg);
	tap_is_int(lg.first_target, 0,
		   "focus on v2 with its patterns covered: no target in the run that meets it");
	sim_run(s, 1, two, 3, &lg);
	tap_ok(lg.first_target && lg.first_x == 1,
	       "the next run targets every variable: v1's write (p%u on v%u)", lg.first_target,
	       lg.first_x);
	x = map_strategy_exec_new(s, 1);
	tap_ok(!map_strategy_exec_focused(x), "... and so do the runs after");
	map_strategy_exec_end(x);
	map_strategy_free(s);
}

int main(void)
{
	tap_plan(10 + 3 + 3 + 2 + 14 + 6);
	test_null_appender();
	test_prefer_ww();
	test_determinism();
	test_exec_same();
	test_exec_at_once();
	test_focus();
	return tap_done();
}
