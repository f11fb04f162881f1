// SPDX-License-Identifier: MIT
/*
 * Saturation (ALGORITHMS.md §9) on synthetic curves whose answers are
 * worked out by hand in the comments.
 */
#include <errno.h>
#include <math.h>

#include "results/saturation.h"
#include "tap.h"

static void test_parse(void)
{
	struct sat_config c;
	char buf[48];

	tap_ok(!saturation_parse("50,0.1", &c) && !c.by_time && c.window == 50 &&
		       c.threshold == 0.1,
	       "parse 50,0.1");
	tap_ok(!saturation_parse("120s,0.1", &c) && c.by_time && c.window == 120 &&
		       c.threshold == 0.1,
	       "parse 120s,0.1");
	tap_ok(!saturation_parse("2m,0.5", &c) && c.by_time && c.window == 120 &&
		       c.threshold == 0.5,
	       "parse 2m,0.5 (minutes)");
	tap_ok(!saturation_parse("30", &c) && c.window == 30 &&
		       c.threshold == SAT_DEFAULT_THRESHOLD,
	       "bare window keeps the default threshold");
	tap_is_int(saturation_parse("", &c) + saturation_parse("0,0.1", &c) +
			   saturation_parse("1,0.1", &c) + saturation_parse("abc", &c) +
			   saturation_parse("50,", &c) + saturation_parse("50,-1", &c) +
			   saturation_parse("2.5,0.1", &c) + saturation_parse("s,0.1", &c) +
			   saturation_parse("50,0.1x", &c),
		   -9 * EINVAL, "nine malformed specs rejected");
	saturation_config_default(&c);
	tap_ok(!c.by_time && c.window == 50 && c.threshold == 0.1, "default 50 runs, 0.1");
	saturation_parse("120s,0.25", &c);
	tap_is_str(saturation_format(&c, buf, sizeof(buf)), "120s,0.25", "format round trip");
}

/* x 1..4, y 1 3 2 4: mean 2.5/2.5, Sxx = 5, Sxy = 4 -> slope 0.8,
 * intercept 0.5; fitted 1.3 2.1 2.9 3.7, SSres = 1.8, SStot = 5,
 * r² = 1 - 1.8/5 = 0.64. */
static void test_fit(void)
{
	double x[] = { 1, 2, 3, 4 }, y[] = { 1, 3, 2, 4 }, b, a, r2;

	tap_is_int(saturation_linear_fit(x, y, 4, &b, &a, &r2), 0, "fit");
	tap_is_dbl(b, 0.8, 1e-12, "slope 0.8");
	tap_is_dbl(a, 0.5, 1e-12, "intercept 0.5");
	tap_is_dbl(r2, 0.64, 1e-12, "r² 0.64");
	tap_is_int(saturation_linear_fit(x, y, 1, &b, &a, &r2), -EINVAL, "one point: no fit");
	x[1] = x[2] = x[3] = 1;
	tap_is_int(saturation_linear_fit(x, y, 4, &b, &a, &r2), -EINVAL, "equal x: no fit");
}

static void test_linear_never(void)
{
	struct sat_config c = { false, 50, 0.1 };
	struct sat_result r;
	double x[500], y[500];
	int i;

	for (i = 0; i < 500; i++) {
		x[i] = i + 1;
		y[i] = 2.0 * (i + 1);
	}
	tap_is_int(saturation_first_saturated(x, y, 500, &c), -1, "linear growth never saturates");
	saturation_evaluate(x, y, 500, &c, &r);
	tap_ok(r.enough && !r.saturated, "linear growth: window full, not saturated");
	tap_is_dbl(r.slope, 2.0, 1e-9, "linear growth: slope 2/run");
	tap_is_dbl(r.r2, 1.0, 1e-12, "linear growth: r² 1");
	tap_is_int(r.points, 50, "window holds the last 50 runs");
	tap_is_int(r.first, 450, "window starts at run 451");
}

/*
 * Coverage grows 10 per run for runs 1..20 (y = 10 x) and stays at 200.
 * Window 5 runs, threshold 0.1. Window ending at run 23 = runs 19..23,
 * y = 190 200 200 200 200: mean x 21, Sxy = -2*190 - 200 + 200 + 2*200 = 20,
 * Sxx = 10, slope 2, intercept 156; fitted 194 196 198 200 202, SSres =
 * 16+16+4+0+4 = 40, SStot = 64+4*4 = 80, r² 0.5 -> not saturated. Window
 * ending at run 24 = runs 20..24, all 200: slope 0 -> saturated. First
 * saturated: run 24 (index 23).
 */
static void test_plateau(void)
{
	struct sat_config c = { false, 5, 0.1 };
	struct sat_result r;
	double x[60], y[60];
	int i;

	for (i = 0; i < 60; i++) {
		x[i] = i + 1;
		y[i] = i + 1 <= 20 ? 10.0 * (i + 1) : 200;
	}
	tap_is_int(saturation_first_saturated(x, y, 60, &c), 23, "plateau saturates at run 24");
	saturation_evaluate(x, y, 23, &c, &r);
	tap_ok(r.enough && !r.saturated, "run 23: not yet");
	tap_is_dbl(r.slope, 2.0, 1e-12, "run 23: slope 2 by hand");
	tap_is_dbl(r.r2, 0.5, 1e-12, "run 23: r² 0.5 (SSres 40, SStot 80)");
	saturation_evaluate(x, y, 24, &c, &r);
	tap_ok(r.saturated && r.slope == 0 && r.r2 == 1, "run 24: flat window, slope 0, r² 1");
}

static void test_short_and_empty(void)
{
	struct sat_config c = { false, 50, 0.1 };
	struct sat_result r;
	double x[60], y[60];
	int i;

	for (i = 0; i < 60; i++) {
		x[i] = i + 1;
		y[i] = 7;
	}
	saturation_evaluate(x, y, 10, &c, &r);
	tap_ok(!r.enough && !r.saturated, "10 flat runs < window 50: no verdict");
	tap_is_int(saturation_first_saturated(x, y, 60, &c), 49,
		   "flat series saturates when the window fills");
	saturation_evaluate(x, y, 0, &c, &r);
	tap_ok(!r.enough && !r.saturated && r.points == 0, "empty series: no verdict");
	tap_is_int(saturation_first_saturated(x, y, 0, &c), -1, "empty series never saturates");
}

/*
 * By time: a point every 10 s, y = 0 5 10 15 20 then 20 from t = 40.
 * Window 30 s, threshold 0.1/s. At t = 60 the window is t 30..60, y 15 20
 * 20 20: mean t 45, Sxy = -15*15 - 5*20 + 5*20 + 15*20 = 75, Stt = 500,
 * slope 0.15 -> not saturated. At t = 70 (index 7) the window is flat.
 */
static void test_by_time(void)
{
	double t[11], y[11] = { 0, 5, 10, 15, 20, 20, 20, 20, 20, 20, 20 };
	double sx[3] = { 0, 100, 200 }, sy[3] = { 0, 10, 13 };
	struct sat_config c = { true, 30, 0.1 };
	struct sat_result r;
	int i;

	for (i = 0; i < 11; i++)
		t[i] = 10.0 * i;
	saturation_evaluate(t, y, 3, &c, &r);
	tap_ok(!r.enough, "20 s of history < 30 s window: no verdict");
	saturation_evaluate(t, y, 7, &c, &r);
	tap_ok(r.enough && !r.saturated && r.points == 4, "t=60: 4 points in window");
	tap_is_dbl(r.slope, 0.15, 1e-12, "t=60: slope 0.15/s by hand");
	tap_is_int(saturation_first_saturated(t, y, 11, &c), 7, "saturated at t=70");
	/* Runs longer than the window: fit across the point before it. */
	saturation_evaluate(sx, sy, 3, &c, &r);
	tap_ok(r.points == 2 && fabs(r.slope - 0.03) < 1e-12 && r.saturated,
	       "sparse points: two-point fit, slope 0.03/s");
}

/* The running-sum scan must agree with evaluating every prefix exactly,
 * also when x carries a large offset (epoch seconds) that makes the
 * running sums lose precision. */
static long brute_first(const double *x, const double *y, size_t n, const struct sat_config *c)
{
	struct sat_result r;
	size_t k;

	for (k = 1; k <= n; k++)
		if (!saturation_evaluate(x, y, k, c, &r) && r.saturated)
			return (long)k - 1;
	return -1;
}

static void test_scan_agrees(void)
{
	struct sat_config byrun = { false, 20, 0.1 }, bytime = { true, 60, 0.05 };
	double x[400], t[400], y[400];
	unsigned seed = 1;
	int i;

	for (i = 0; i < 400; i++) {
		seed = seed * 1103515245 + 12345;
		x[i] = i + 1;
		t[i] = 1.7e9 + i * 0.75 + (seed >> 16) % 100 / 1000.0;
		/* Fast growth that tails off as 300/(1 + i/10). */
		y[i] = floor(300.0 - 3000.0 / (10.0 + i));
	}
	tap_is_int(saturation_first_saturated(x, y, 400, &byrun), brute_first(x, y, 400, &byrun),
		   "scan by runs agrees with exact prefixes");
	tap_is_int(saturation_first_saturated(t, y, 400, &bytime), brute_first(t, y, 400, &bytime),
		   "scan by time (epoch offsets) agrees with exact prefixes");
	tap_ok(brute_first(x, y, 400, &byrun) > 20 && brute_first(t, y, 400, &bytime) > 80,
	       "the tailing curve does saturate, late, both ways");
	tap_diag("saturated at index %ld by runs, %ld by time", brute_first(x, y, 400, &byrun),
		 brute_first(t, y, 400, &bytime));
}

int main(void)
{
	tap_plan(36);
	test_parse();
	test_fit();
	test_linear_never();
	test_plateau();
	test_short_and_empty();
	test_by_time();
	test_scan_agrees();
	return tap_done();
}
