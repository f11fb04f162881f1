// SPDX-License-Identifier: MIT
/*
 * noise.c: parse/format round trips, rejected strings, the seed 000 RND
 * baselines' frequencies and strengths, placements, determinism per seed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "lib/json.h"
#include "strategies/noise.h"
#include "tap.h"

static const char *roundtrip(const char *in)
{
	static char out[320];
	struct noise_config c;
	char err[256];

	if (noise_config_parse(in, &c, err, sizeof(err)))
		snprintf(out, sizeof(out), "error: %s", err);
	else
		noise_config_format(&c, out, sizeof(out));
	return out;
}

static void test_roundtrip(void)
{
	static const char *const same[] = {
		"random-all@150/sleep:2000",
		"sharedVar-one@300/yield:10,ht",
		"read-write@300/yield:10,read=sleep:2000,write=sleep:20000,tt",
		"pattern@50/busyWait:100-2000",
		"coverage@1000/haltOneThread",
		"sharedVar-all@5/mixed:2000,ht,tt",
		"random-all@200/sleep:500,xh",
		"sharedVar-one@50/yield:3,ht,tt,xh",
		"random-all@200/priority:5",
		"random-all@100/timeoutTamper:30",
		"rnd-y:0.3",
		"rnd-s10:0.2",
		"rnd-s100:0.5",
	};
	int bad = 0;

	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++)
		if (strcmp(roundtrip(same[i]), same[i])) {
			bad++;
			tap_diag("'%s' -> '%s'", same[i], roundtrip(same[i]));
		}
	tap_is_int(bad, 0, "format(parse(s)) == s for 13 canonical strings");
	tap_is_str(roundtrip("noise:Random-All@150/SLEEP"), "random-all@150/sleep:2000",
		   "prefix and case are accepted; omitted strength is the reference low one");
	tap_is_str(roundtrip("read-write@10/yield:1,write=wait:7"),
		   "read-write@10/yield:1,read=yield:1,write=wait:7",
		   "read-write: an omitted read seeding defaults to the main one");
}

static bool same_config(const struct noise_config *a, const struct noise_config *b)
{
	return a->rnd == b->rnd && a->placement == b->placement && a->freq == b->freq &&
	       !memcmp(&a->seed, &b->seed, sizeof(a->seed)) &&
	       !memcmp(&a->read, &b->read, sizeof(a->read)) &&
	       !memcmp(&a->write, &b->write, sizeof(a->write)) && a->halt_one == b->halt_one &&
	       a->timeout_tamper == b->timeout_tamper && a->exit_hold == b->exit_hold;
}

static void test_random_configs(void)
{
	int bad = 0, placements[NOISE_PLACE__COUNT] = { 0 }, freq_bad = 0, missing = 0;

	for (uint64_t seed = 0; seed < 500; seed++) {
		struct noise_config c, d;
		struct cs_rng r;
		char s[256], err[256];

		rng_seed(&r, seed);
		noise_config_random(&r, &c);
		noise_config_format(&c, s, sizeof(s));
		if (noise_config_parse(s, &d, err, sizeof(err)) || !same_config(&c, &d)) {
			if (!bad++)
				tap_diag("'%s': %s", s, err);
		}
		placements[c.placement]++;
		freq_bad += c.freq < 50 || c.freq > 500;
	}
	for (int p = 0; p < NOISE_PLACE__COUNT; p++)
		missing += !placements[p];
	tap_is_int(bad, 0, "500 random configurations survive format -> parse unchanged");
	tap_ok(!freq_bad && !missing,
	       "random configurations: frequency 5-50 %%, every placement drawn");
}

static void test_invalid(void)
{
	static const char *const bad[] = {
		"",
		"rnd-y",
		"rnd-y:0",
		"rnd-y:1.5",
		"rnd-y:abc",
		"rnd-z:0.3",
		"bogus@10/yield",
		"random-all@1001/yield",
		"random-all@10",
		"random-all@x/yield",
		"random-all@10/teleport",
		"random-all@10/yield:0",
		"random-all@10/sleep:5-1",
		"random-all@10/sleep:2000000",
		"random-all@10/yield,read=sleep",
		"random-all@10/yield,foo",
		"random-all@10/",
		"random-all",
	};
	int accepted = 0, silent = 0;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct noise_config c;
		char err[256] = "";

		if (noise_config_parse(bad[i], &c, err, sizeof(err)) != -EINVAL) {
			accepted++;
			tap_diag("accepted '%s'", bad[i]);
		} else if (!err[0]) {
			silent++;
		}
	}
	tap_is_int(accepted, 0, "18 malformed strings are rejected with -EINVAL");
	tap_is_int(silent, 0, "every rejection comes with a message");

	char err[256];
	struct noise_config c;

	noise_config_parse("random-all@10/teleport", &c, err, sizeof(err));
	tap_ok(strstr(err, "teleport") && strstr(err, "busyWait"),
	       "message names the bad word and the valid ones: %s", err);
}

static struct noise_point sync_point(uint32_t site)
{
	return (struct noise_point){ .kind = NOISE_PT_SYNC, .site = site };
}

/* Frequency and strength of a baseline over many visits. */
static void rnd_stats(const char *name, uint64_t seed, int visits, double *frac, double *mean,
		      int64_t *max, int *wrong_act, enum noise_act want)
{
	struct noise_config c;
	struct noise_run r;
	int hit = 0;
	double sum = 0;

	noise_config_parse(name, &c, NULL, 0);
	noise_run_begin(&r, &c, seed);
	*max = 0;
	*wrong_act = 0;
	for (int i = 0; i < visits; i++) {
		struct noise_point pt = sync_point(i % 7);
		struct noise_decision d = noise_decide(&r, &pt);

		if (d.act == NOISE_ACT_NONE)
			continue;
		hit++;
		*wrong_act += d.act != want;
		sum += d.n;
		if (d.n > *max)
			*max = d.n;
	}
	*frac = (double)hit / visits;
	*mean = hit ? sum / hit : 0;
}

static void test_rnd_baselines(void)
{
	double frac, mean;
	int64_t max;
	int wrong;
	const int N = 200000;

	/* Binomial sd at p = 0.3, N = 200000 is 0.001: 0.005 is 5 sd. */
	rnd_stats("rnd-y:0.3", 42, N, &frac, &mean, &max, &wrong, NOISE_ACT_YIELD);
	tap_is_dbl(frac, 0.3, 0.005, "rnd-y:0.3 yields at 30 %% of visits");
	tap_ok(!wrong && mean == 1.0 && max == 1, "rnd-y yields exactly once each time");

	rnd_stats("rnd-s10:0.1", 42, N, &frac, &mean, &max, &wrong, NOISE_ACT_SLEEP);
	tap_is_dbl(frac, 0.1, 0.004, "rnd-s10:0.1 sleeps at 10 %% of visits");
	/* Uniform [0, 10000]: mean 5000, sd of the mean ~2887/sqrt(20000) = 20. */
	tap_ok(!wrong && max <= 10000 && mean > 4900 && mean < 5100,
	       "rnd-s10 sleeps uniformly up to 10 ms (mean %.0f us, max %lld us)", mean,
	       (long long)max);

	rnd_stats("rnd-s100:0.5", 7, N, &frac, &mean, &max, &wrong, NOISE_ACT_SLEEP);
	tap_is_dbl(frac, 0.5, 0.005, "rnd-s100:0.5 sleeps at 50 %% of visits");
	tap_ok(!wrong && max <= 100000 && max > 99000 && mean > 49000 && mean < 51000,
	       "rnd-s100 sleeps uniformly up to 100 ms (mean %.0f us, max %lld us)", mean,
	       (long long)max);

	struct noise_config c;

	tap_ok(!noise_config_parse("rnd-s10:0.2", &c, NULL, 0) && c.freq == 200 &&
		       c.placement == NOISE_PLACE_RANDOM_ALL,
	       "rnd-s10:0.2 is random-all at 200 per mille");
}

static void test_determinism(void)
{
	struct noise_config c;
	struct noise_run a, b, other;
	int differ_same = 0, differ_other = 0;

	noise_config_parse("random-all@250/mixed:10-5000,ht", &c, NULL, 0);
	noise_run_begin(&a, &c, 99);
	noise_run_begin(&b, &c, 99);
	noise_run_begin(&other, &c, 100);
	for (int i = 0; i < 5000; i++) {
		struct noise_point pt = sync_point(i);
		struct noise_decision x = noise_decide(&a, &pt), y = noise_decide(&b, &pt),
				      z = noise_decide(&other, &pt);

		differ_same += x.act != y.act || x.n != y.n;
		differ_other += x.act != z.act || x.n != z.n;
	}
	tap_is_int(differ_same, 0, "same config and seed: identical 5000 decisions");
	tap_ok(differ_other > 100, "another seed: different decisions (%d differ)", differ_other);
}

static int count_noise(const char *cfg, struct noise_point pt, int n, uint64_t seed)
{
	struct noise_config c;
	struct noise_run r;
	int hits = 0;

	noise_config_parse(cfg, &c, NULL, 0);
	noise_run_begin(&r, &c, seed);
	for (int i = 0; i < n; i++)
		hits += noise_decide(&r, &pt).act != NOISE_ACT_NONE;
	return hits;
}

static void test_placements(void)
{
	struct noise_point sync = sync_point(1);
	struct noise_point rd = { .kind = NOISE_PT_READ, .site = 2, .var = 0x10 };
	struct noise_point shared = rd;
	struct noise_config c;
	struct noise_run r;

	shared.shared = true;
	tap_ok(count_noise("sharedVar-all@1000/yield:1", sync, 100, 1) == 0 &&
		       count_noise("sharedVar-all@1000/yield:1", rd, 100, 1) == 0 &&
		       count_noise("sharedVar-all@1000/yield:1", shared, 100, 1) == 100,
	       "sharedVar-all: only accesses to shared variables");

	noise_config_parse("sharedVar-one@1000/yield:1", &c, NULL, 0);
	noise_run_begin(&r, &c, 3);
	struct noise_point other = shared;

	other.var = 0x20;
	tap_ok(noise_decide(&r, &other).act == NOISE_ACT_YIELD &&
		       noise_decide(&r, &shared).act == NOISE_ACT_NONE &&
		       noise_decide(&r, &other).act == NOISE_ACT_YIELD,
	       "sharedVar-one: the first shared variable reached becomes the run's target");
	uint64_t vars[] = { 0x10, 0x20, 0x30 };
	int chosen[3] = { 0, 0, 0 };

	for (uint64_t s = 0; s < 60; s++) {
		noise_run_begin(&r, &c, s);
		noise_run_choose_var(&r, vars, 3);
		for (int k = 0; k < 3; k++)
			chosen[k] += r.var == vars[k];
	}
	tap_ok(chosen[0] && chosen[1] && chosen[2] && chosen[0] + chosen[1] + chosen[2] == 60,
	       "sharedVar-one: seeded choice among candidates (%d/%d/%d)", chosen[0], chosen[1],
	       chosen[2]);

	struct noise_point repeat = rd;

	repeat.repeat_in_function = true;
	tap_ok(count_noise("pattern@1000/yield:1", rd, 50, 1) == 0 &&
		       count_noise("pattern@1000/yield:1", repeat, 50, 1) == 50,
	       "pattern: only second and later accesses within a function");

	noise_config_parse("read-write@1000/yield:3,read=sleep:20,write=busyWait:40", &c, NULL, 0);
	noise_run_begin(&r, &c, 1);
	struct noise_point wr = rd;

	wr.kind = NOISE_PT_WRITE;
	struct noise_decision d1 = noise_decide(&r, &sync), d2 = noise_decide(&r, &rd),
			      d3 = noise_decide(&r, &wr);
	tap_ok(d1.act == NOISE_ACT_YIELD && d1.n == 3 && d2.act == NOISE_ACT_SLEEP && d2.n == 20 &&
		       d3.act == NOISE_ACT_BUSYWAIT && d3.n == 40,
	       "read-write: sync, read and write points use their own seeding");

	struct noise_point cold = { .kind = NOISE_PT_WRITE, .coverage_target = true };
	struct noise_point hot = cold;

	hot.site_hits = 1023; /* 1 / (1 + log2(1024)) = 1/11 */
	int c0 = count_noise("coverage@1000/yield:1", cold, 2000, 5);
	int c1 = count_noise("coverage@1000/yield:1", hot, 22000, 5);

	tap_ok(c0 == 2000 && c1 > 1800 && c1 < 2200 &&
		       count_noise("coverage@1000/yield:1", rd, 100, 5) == 0,
	       "coverage: targets only, probability falls with hits (%d/22000 at 1023 hits)", c1);
}

static void test_seedings(void)
{
	struct noise_config c;
	struct noise_run r;
	struct noise_point pt = sync_point(1);
	int halts = 0, inj = 0, prio_up = 0, prio_down = 0, acts[NOISE_ACT__COUNT] = { 0 };

	noise_config_parse("random-all@1000/yield:5,ht", &c, NULL, 0);
	noise_run_begin(&r, &c, 11);
	for (int i = 0; i < 20000; i++) {
		struct noise_decision d = noise_decide(&r, &pt);

		inj += d.act != NOISE_ACT_NONE;
		halts += d.act == NOISE_ACT_HALT;
	}
	tap_ok(inj == 20000 && halts > 1800 && halts < 2200,
	       "+ht replaces about 1 injection in 10 by haltOneThread (%d/20000)", halts);

	noise_config_parse("random-all@1000/priority:7", &c, NULL, 0);
	noise_run_begin(&r, &c, 11);
	for (int i = 0; i < 1000; i++) {
		struct noise_decision d = noise_decide(&r, &pt);

		prio_up += d.act == NOISE_ACT_PRIORITY && d.n == 7;
		prio_down += d.act == NOISE_ACT_PRIORITY && d.n == -7;
	}
	tap_ok(prio_up + prio_down == 1000 && prio_up > 400 && prio_down > 400,
	       "priority: +-strength, both signs (%d up, %d down)", prio_up, prio_down);

	noise_config_parse("random-all@1000/mixed:1000", &c, NULL, 0);
	noise_run_begin(&r, &c, 11);
	for (int i = 0; i < 4000; i++) {
		struct noise_decision d = noise_decide(&r, &pt);

		acts[d.act]++;
		if (d.act == NOISE_ACT_YIELD && d.n != 10)
			acts[NOISE_ACT_NONE]++;
	}
	tap_ok(acts[NOISE_ACT_YIELD] > 800 && acts[NOISE_ACT_SLEEP] > 800 &&
		       acts[NOISE_ACT_BUSYWAIT] > 800 && acts[NOISE_ACT_WAIT] > 800 &&
		       !acts[NOISE_ACT_NONE],
	       "mixed: yield (1 per 100 us), sleep, busyWait, wait about equally");

	noise_config_parse("random-all@1000/inverseNoise:20", &c, NULL, 0);
	noise_run_begin(&r, &c, 1);
	struct noise_decision d = noise_decide(&r, &pt);

	tap_ok(d.act == NOISE_ACT_INVERSE && d.n == 20, "inverseNoise: run alone for 20 actions");

	uint64_t lo = UINT64_MAX, hi = 0;

	noise_config_parse("random-all@0/yield:1,tt", &c, NULL, 0);
	noise_run_begin(&r, &c, 1);
	for (int i = 0; i < 2000; i++) {
		uint64_t t = noise_tamper_timeout(&r, 1000000);

		lo = t < lo ? t : lo;
		hi = t > hi ? t : hi;
	}
	tap_ok(lo >= 500000 && lo < 510000 && hi <= 1000000 && hi > 990000,
	       "+tt cuts up to half of a timeout (1 ms -> %llu..%llu ns)", (unsigned long long)lo,
	       (unsigned long long)hi);
	noise_config_parse("random-all@1000/yield:1", &c, NULL, 0);
	noise_run_begin(&r, &c, 1);
	tap_is_int(noise_tamper_timeout(&r, 12345), 12345, "without tt timeouts are untouched");
}

/* ,xh: the end of the process halts, whatever the placement and the
 * frequency, and draws nothing; without it the exit is a synchronization
 * point like the others. */
static void test_exit_hold(void)
{
	struct noise_point sync = sync_point(4), ex = sync_point(9);
	struct noise_config c, plain_c;
	struct noise_run r, plain;
	struct noise_decision d;
	int bad = 0;

	ex.exit = true;
	noise_config_parse("sharedVar-one@0/yield:1,xh", &c, NULL, 0);
	noise_run_begin(&r, &c, 3);
	d = noise_decide(&r, &ex);
	tap_ok(d.act == NOISE_ACT_HALT && r.injected[NOISE_ACT_HALT] == 1,
	       "xh: the exit halts under a placement that never acts at synchronization points");
	noise_config_parse("random-all@1000/sleep:700", &c, NULL, 0);
	noise_run_begin(&r, &c, 3);
	d = noise_decide(&r, &ex);
	tap_ok(d.act == NOISE_ACT_SLEEP && d.n == 700,
	       "without xh the exit gets the configuration's noise (sleep 700)");
	noise_config_parse("random-all@0/yield:1", &c, NULL, 0);
	noise_run_begin(&r, &c, 3);
	d = noise_decide(&r, &ex);
	tap_ok(d.act == NOISE_ACT_NONE, "without xh, at frequency 0 the exit goes on");

	/* The hold draws nothing: the run's other decisions are the ones of
	 * a run that never reached the exit. */
	noise_config_parse("random-all@300/mixed:10-5000,ht,xh", &c, NULL, 0);
	plain_c = c;
	plain_c.exit_hold = false;
	noise_run_begin(&r, &c, 17);
	noise_run_begin(&plain, &plain_c, 17);
	for (int i = 0; i < 200; i++) {
		struct noise_decision a, b;

		if (i % 50 == 25 && noise_decide(&r, &ex).act != NOISE_ACT_HALT)
			bad++;
		a = noise_decide(&r, &sync);
		b = noise_decide(&plain, &sync);
		bad += a.act != b.act || a.n != b.n;
	}
	tap_is_int(bad, 0, "xh: every exit halts and the other 200 decisions are unchanged");
}

static void test_json(void)
{
	struct noise_config c;
	struct json j;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	noise_config_parse("rnd-s100:0.4", &c, NULL, 0);
	json_init(&j, f, false);
	noise_config_json(&j, NULL, &c);
	json_end(&j);
	fclose(f);
	tap_ok(strstr(buf, "\"string\":\"rnd-s100:0.4\"") && strstr(buf, "\"freq_permille\":400") &&
		       strstr(buf, "\"strength_max\":100000"),
	       "JSON carries the compact string for replay: %s", buf);
	free(buf);
}

/* Focus (issue 30): the campaign's cross-thread variables are 0x10 and
 * 0x30; 0x20 is shared but no two threads meet at it (always under one
 * lock, say). */
static void test_focus(void)
{
	static const uint64_t cross[] = { 0x10, 0x30 };
	struct noise_point sync = sync_point(1);
	struct noise_point at10 = { .kind = NOISE_PT_READ, .site = 2, .var = 0x10, .shared = true };
	struct noise_point at20 = {
		.kind = NOISE_PT_WRITE, .site = 3, .var = 0x20, .shared = true
	};
	struct noise_point at30 = at10;
	struct noise_config c;
	struct noise_run r, plain;
	int bad = 0, chose10 = 0, chose30 = 0;

	at30.var = 0x30;
	/* sharedVar-all and random-all: every shared access, as before. */
	noise_config_parse("sharedVar-all@1000/yield:1", &c, NULL, 0);
	noise_run_begin(&r, &c, 1);
	noise_run_focus(&r, cross, 2);
	tap_ok(!r.focus && noise_decide(&r, &at20).act == NOISE_ACT_YIELD &&
		       noise_decide(&r, &at10).act == NOISE_ACT_YIELD,
	       "sharedVar-all with cross-thread variables: noise at every shared access still");
	noise_config_parse("random-all@1000/yield:1", &c, NULL, 0);
	noise_run_begin(&r, &c, 1);
	noise_run_focus(&r, cross, 2);
	tap_ok(noise_decide(&r, &sync).act == NOISE_ACT_YIELD &&
		       noise_decide(&r, &at20).act == NOISE_ACT_YIELD &&
		       noise_decide(&r, &at10).act == NOISE_ACT_YIELD,
	       "random-all with cross-thread variables: synchronization points and every access");

	/* sharedVar-one: the first shared variable reached (0x20) is not
	 * taken; the run's variable is one of the two, by the seed. */
	noise_config_parse("sharedVar-one@1000/yield:1", &c, NULL, 0);
	for (uint64_t seed = 0; seed < 40; seed++) {
		noise_run_begin(&r, &c, seed);
		noise_run_focus(&r, cross, 2);
		chose10 += r.focus && r.var_chosen && r.var == 0x10;
		chose30 += r.focus && r.var_chosen && r.var == 0x30;
		bad += noise_decide(&r, &at20).act != NOISE_ACT_NONE;
		bad += noise_decide(&r, r.var == 0x10 ? &at10 : &at30).act != NOISE_ACT_YIELD;
		bad += noise_decide(&r, r.var == 0x10 ? &at30 : &at10).act != NOISE_ACT_NONE;
		noise_run_begin(&plain, &c, seed);
		noise_run_focus(&plain, cross, 2);
		bad += plain.var != r.var;
	}
	tap_ok(chose10 + chose30 == 40 && chose10 && chose30 && !bad,
	       "sharedVar-one with cross-thread variables: its variable is one of them, drawn from "
	       "the seed (0x10 in %d, 0x30 in %d of 40 seeds), noise there only",
	       chose10, chose30);
	noise_run_begin(&r, &c, 1);
	noise_run_focus(&r, cross, 0);
	tap_ok(!r.focus && noise_decide(&r, &at20).act == NOISE_ACT_YIELD && r.var == 0x20 &&
		       noise_decide(&r, &at10).act == NOISE_ACT_NONE,
	       "sharedVar-one with none: the first shared variable reached, as before");

	/* Placements other than sharedVar-one draw nothing for the focus:
	 * their decisions are today's. */
	noise_config_parse("read-write@500/sleep:0-100", &c, NULL, 0);
	noise_run_begin(&r, &c, 9);
	noise_run_focus(&r, cross, 2);
	noise_run_begin(&plain, &c, 9);
	bad = 0;
	for (int i = 0; i < 50; i++) {
		const struct noise_point *pt = i % 3 ? &sync : &at20;
		struct noise_decision a = noise_decide(&r, pt), b = noise_decide(&plain, pt);

		bad += a.act != b.act || a.n != b.n;
	}
	tap_is_int(bad, 0, "the focus leaves the other placements' draws unchanged");
}

int main(void)
{
	tap_plan(39);
	test_roundtrip();
	test_random_configs();
	test_invalid();
	test_rnd_baselines();
	test_determinism();
	test_placements();
	test_seedings();
	test_exit_hold();
	test_json();
	test_focus();
	return tap_done();
}
