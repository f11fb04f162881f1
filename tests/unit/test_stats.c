// SPDX-License-Identifier: MIT
/*
 * Experiment statistics (experiment/stats.c) on inputs worked out by hand
 * in the comments; the p-values agree with R's wilcox.test(..., exact =
 * FALSE, correct = TRUE).
 */
#include <errno.h>
#include <math.h>

#include "experiment/stats.h"
#include "tap.h"

/* Type 7: h = (n-1)p. {4,1,3,2}: median h=1.5 -> 2.5; Q1 h=0.75 -> 1.75;
 * Q3 h=2.25 -> 3.25. {3,1,2}: median 2. */
static void test_quantiles(void)
{
	double v[] = { 4, 1, 3, 2 }, w[] = { 3, 1, 2 }, c[] = { 1, 2, INFINITY, INFINITY };

	tap_is_dbl(stats_quantile(v, 4, 0.5), 2.5, 1e-12, "median of 1..4 is 2.5");
	tap_is_dbl(stats_quantile(v, 4, 0.25), 1.75, 1e-12, "Q1 of 1..4 is 1.75");
	tap_is_dbl(stats_quantile(v, 4, 0.75), 3.25, 1e-12, "Q3 of 1..4 is 3.25");
	tap_is_dbl(stats_quantile(w, 3, 0.5), 2, 1e-12, "median of 3 values: the middle one");
	tap_is_dbl(stats_quantile(v, 4, 0), 1, 1e-12, "p 0: the minimum");
	tap_is_dbl(stats_quantile(v, 4, 1), 4, 1e-12, "p 1: the maximum");
	tap_ok(isinf(stats_quantile(c, 4, 0.5)), "a median between 2 and a censored value is inf");
	tap_is_dbl(stats_quantile(c, 4, 0.25), 1.75, 1e-12, "Q1 below the censored values");
	tap_ok(isinf(stats_quantile(c, 4, 0.75)), "Q3 among two censored values is inf");
	tap_ok(isnan(stats_quantile(v, 0, 0.5)), "no values: NAN");
}

/* {10, 20, 20, 30, 20}: 10 -> 1, the three 20s share ranks 2..4 -> 3,
 * 30 -> 5; ties: 3^3 - 3 = 24. */
static void test_rank(void)
{
	double v[] = { 10, 20, 20, 30, 20 }, r[5], t;

	t = stats_rank(v, 5, r);
	tap_ok(r[0] == 1 && r[1] == 3 && r[2] == 3 && r[3] == 5 && r[4] == 3,
	       "average ranks 1 3 3 5 3");
	tap_is_dbl(t, 24, 0, "tie term 24");
}

/* a {1,2,3} b {4,5,6}: R1 = 6, U = 0, mu 4.5, var 9*7/12 = 5.25,
 * z = (0 - 4.5 + 0.5)/2.29129 = -1.745743, p = 0.0808556; A12 = 0. */
static void test_mwu_separated(void)
{
	double a[] = { 1, 2, 3 }, b[] = { 4, 5, 6 };
	struct stats_mwu r;

	tap_is_int(stats_mann_whitney(a, 3, b, 3, &r), 0, "mwu");
	tap_is_dbl(r.u, 0, 1e-12, "U 0");
	tap_is_dbl(r.z, -1.745743, 1e-6, "z -1.745743");
	tap_is_dbl(r.p, 0.0808556, 1e-7, "p 0.0808556");
	tap_is_dbl(r.a12, 0, 1e-12, "A12 0: a always smaller");
	stats_mann_whitney(b, 3, a, 3, &r);
	tap_is_dbl(r.u, 9, 1e-12, "swapped: U 9");
	tap_is_dbl(r.a12, 1, 1e-12, "swapped: A12 1");
	tap_is_dbl(r.p, 0.0808556, 1e-7, "swapped: same p");
}

/* a {1,2,2,3} b {2,3,4,4}: ranks 1 | 2,2,2 -> 3 | 3,3 -> 5.5 | 4,4 -> 7.5;
 * R1 = 1+3+3+5.5 = 12.5, U = 12.5 - 10 = 2.5; ties 24+6+6 = 36;
 * var = 16/12 (9 - 36/56) = 11.142857, z = (2.5 - 8 + 0.5)/3.338092 =
 * -1.497862, p = 0.1341692; A12 = (12.5/4 - 2.5)/4 = 0.15625 (by pairs:
 * a>b once, three ties: (1 + 1.5)/16). */
static void test_mwu_ties(void)
{
	double a[] = { 1, 2, 2, 3 }, b[] = { 2, 3, 4, 4 };
	struct stats_mwu r;

	stats_mann_whitney(a, 4, b, 4, &r);
	tap_is_dbl(r.u, 2.5, 1e-12, "ties: U 2.5");
	tap_is_dbl(r.z, -1.497862, 1e-6, "ties: z -1.497862 (tie corrected)");
	tap_is_dbl(r.p, 0.1341692, 1e-7, "ties: p 0.1341692");
	tap_is_dbl(r.a12, 0.15625, 1e-12, "ties: A12 0.15625");
}

/* All values equal (every campaign censored): no evidence. */
static void test_mwu_degenerate(void)
{
	double a[] = { 11, 11 }, b[] = { 11, 11, 11 };
	struct stats_mwu r;

	stats_mann_whitney(a, 2, b, 3, &r);
	tap_ok(r.p == 1 && r.a12 == 0.5, "all tied: p 1, A12 0.5");
	tap_is_int(stats_mann_whitney(a, 0, b, 3, &r), -EINVAL, "empty sample: -EINVAL");
}

/* x {10,12,9,15,11} y {8,12,10,11,7}: d 2 0 -1 4 4, the zero dropped (n 4);
 * |d| ranks 1 -> 1, 2 -> 2, 4,4 -> 3.5; W+ = 2+3.5+3.5 = 9; mu = 5;
 * var = 4*5*9/24 - 6/48 = 7.375; z = (9 - 5 - 0.5)/2.715695 = 1.288804,
 * p = 0.1974661. */
static void test_wilcoxon(void)
{
	double x[] = { 10, 12, 9, 15, 11 }, y[] = { 8, 12, 10, 11, 7 };
	struct stats_wilcoxon w;

	tap_is_int(stats_wilcoxon(x, y, 5, &w), 0, "wilcoxon");
	tap_is_dbl(w.w_plus, 9, 1e-12, "W+ 9");
	tap_is_int(w.n, 4, "the zero difference is dropped");
	tap_is_dbl(w.z, 1.288804, 1e-6, "z 1.288804");
	tap_is_dbl(w.p, 0.1974661, 1e-7, "p 0.1974661");
	stats_wilcoxon(x, x, 5, &w);
	tap_ok(w.n == 0 && w.p == 1, "identical pairs: n 0, p 1");
}

/* Censored as budget+1 (budget 10): {1, 3, 11, 11} found by 0..10. */
static void test_fraction(void)
{
	double v[] = { 1, 3, 11, 11 };

	tap_is_dbl(stats_fraction_le(v, 4, 0), 0, 0, "found by 0: none");
	tap_is_dbl(stats_fraction_le(v, 4, 1), 0.25, 0, "found by 1: 1/4");
	tap_is_dbl(stats_fraction_le(v, 4, 10), 0.5, 0, "found by the budget: 2/4");
}

/* Coverage band, budget 4, four seeds (new tasks per run -> cumulative):
 *   a {3,1,0,2} -> 3 4 4 6
 *   b {1,1}     -> 1 2 2 2   (stopped after run 2: carried forward)
 *   c {2,2,2,2} -> 2 4 6 8
 *   d {5}       -> 5 5 5 5
 * run 1 {1,2,3,5}: Q1 h=.75 -> 1.75, median h=1.5 -> 2.5, Q3 h=2.25 -> 3.5
 * run 2 {2,4,4,5}: 3.5, 4, 4.25
 * run 3 {2,4,5,6}: 3.5, 4.5, 5.25
 * run 4 {2,5,6,8}: 4.25, 5.5, 6.5 */
static void test_coverage_band(void)
{
	static const uint64_t a[] = { 3, 1, 0, 2 }, b[] = { 1, 1 }, c[] = { 2, 2, 2, 2 },
			      d[] = { 5 }, e[] = { 1, 1, 1, 1, 1 };
	static const double want[4][3] = {
		{ 1.75, 2.5, 3.5 }, { 3.5, 4, 4.25 }, { 3.5, 4.5, 5.25 }, { 4.25, 5.5, 6.5 }
	};
	const uint64_t *seeds[] = { a, b, c, d }, *one[] = { e };
	size_t len[] = { 4, 2, 4, 1 }, len1[] = { 5 }, r;
	double q1[4], md[4], q3[4];
	int bad = 0;

	stats_coverage_band(seeds, len, 4, 4, q1, md, q3);
	for (r = 0; r < 4; r++)
		bad += fabs(q1[r] - want[r][0]) > 1e-12 || fabs(md[r] - want[r][1]) > 1e-12 ||
		       fabs(q3[r] - want[r][2]) > 1e-12;
	tap_ok(!bad, "band of 4 seeds over 4 runs: Q1, median, Q3 as worked out");
	tap_is_dbl(md[3], 5.5, 1e-12, "median after run 4: 5.5 (b carried forward at 2)");
	tap_is_dbl(q1[0], 1.75, 1e-12, "Q1 after run 1: 1.75");
	tap_is_dbl(q3[3], 6.5, 1e-12, "Q3 after run 4: 6.5");
	stats_coverage_band(one, len1, 1, 2, q1, md, q3);
	tap_ok(q1[0] == 1 && md[0] == 1 && q3[0] == 1 && md[1] == 2,
	       "one seed: Q1 = median = Q3 = its curve; runs past the budget ignored");
	stats_coverage_band(seeds, len, 4, 0, q1, md, q3);
	tap_ok(1, "budget 0: nothing written");
	stats_coverage_band(NULL, NULL, 0, 2, q1, md, q3);
	tap_ok(isnan(q1[0]) && isnan(md[1]) && isnan(q3[1]), "no seeds: NAN");
}

/* Coverage at the budget of the campaigns of test_coverage_band: a 6, b 2
 * (stopped after run 2), c 8, d 5 at budget 4; a 4 at budget 2; e (5 runs)
 * 2 at budget 2. Compared as two strategies over seeds 1..3, more is
 * better: A {6, 8, 5} vs B {2, 4, 5} (= a c d vs b, then 4 = a at budget 2,
 * d). Pairs A > B: 6 beats 3, 8 beats 3, 5 beats 2 and ties 1: U = 8.5,
 * A12 = 8.5/9 = 0.944444 (A covers more). Ranks 2:1 4:2 5,5:3.5 6:5 8:6;
 * R1 = 14.5; ties 6; var = 9/12 (7 - 6/30) = 5.1; z = (8.5 - 4.5 - 0.5) /
 * 2.258318 = 1.549826, p = 0.1211833. Paired by seed: d 4 4 0, the zero
 * dropped (n 2), ranks 1.5 1.5, W+ = 3; mu 1.5, var = 2*3*5/24 - 6/48 =
 * 1.125, z = (3 - 1.5 - 0.5)/1.06066 = 0.942809, p = 0.3457786. */
static void test_coverage_at(void)
{
	static const uint64_t a[] = { 3, 1, 0, 2 }, b[] = { 1, 1 }, c[] = { 2, 2, 2, 2 },
			      d[] = { 5 }, e[] = { 1, 1, 1, 1, 1 };
	double A[3], B[3];
	struct stats_mwu r;
	struct stats_wilcoxon w;

	tap_is_dbl(stats_coverage_at(a, 4, 4), 6, 0, "coverage at budget 4: 3+1+0+2 = 6");
	tap_is_dbl(stats_coverage_at(b, 2, 4), 2, 0, "stopped after run 2: carried forward, 2");
	tap_is_dbl(stats_coverage_at(a, 4, 2), 4, 0, "budget 2: the first two runs, 4");
	tap_is_dbl(stats_coverage_at(e, 5, 2), 2, 0, "runs past the budget ignored");
	tap_is_dbl(stats_coverage_at(NULL, 0, 4), 0, 0, "no runs: 0");
	A[0] = stats_coverage_at(a, 4, 4);
	A[1] = stats_coverage_at(c, 4, 4);
	A[2] = stats_coverage_at(d, 1, 4);
	B[0] = stats_coverage_at(b, 2, 4);
	B[1] = stats_coverage_at(a, 4, 2);
	B[2] = stats_coverage_at(d, 1, 4);
	stats_mann_whitney(A, 3, B, 3, &r);
	tap_is_dbl(r.u, 8.5, 1e-12, "coverage A vs B: U 8.5");
	tap_is_dbl(r.a12, 8.5 / 9, 1e-12, "coverage A vs B: A12 0.944 (A covers more)");
	tap_is_dbl(r.p, 0.1211833, 1e-7, "coverage A vs B: p 0.1211833");
	stats_wilcoxon(A, B, 3, &w);
	tap_ok(w.n == 2 && w.w_plus == 3, "coverage paired: n 2 (a zero dropped), W+ 3");
	tap_is_dbl(w.p, 0.3457786, 1e-7, "coverage paired: p 0.3457786");
}

int main(void)
{
	tap_plan(52);
	test_quantiles();
	test_rank();
	test_mwu_separated();
	test_mwu_ties();
	test_mwu_degenerate();
	test_wilcoxon();
	test_fraction();
	test_coverage_band();
	test_coverage_at();
	return tap_done();
}
