/* SPDX-License-Identifier: MIT */
/*
 * Statistics of an experiment report (docs/experiment.md "Statistics").
 * Censored campaigns (no failure within the budget) enter the tests as
 * budget+1, worse than any campaign that found a failure; the caller does
 * that substitution. Smaller values are better (runs to the first failure).
 */
#ifndef CONCSCHED_EXP_STATS_H
#define CONCSCHED_EXP_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Quantile p (0..1) of n values (any order; not modified): linear
 * interpolation between order statistics, h = (n-1)p (Hyndman & Fan type
 * 7, R's and numpy's default). NAN when n == 0. Infinite values are
 * allowed: a quantile that touches one is infinite. */
double stats_quantile(const double *v, size_t n, double p);

/* Average ranks (1-based; tied values share the mean of their ranks) of v
 * into ranks; returns sum over tie groups of t^3 - t (the tie correction). */
double stats_rank(const double *v, size_t n, double *ranks);

struct stats_mwu {
	double u;   /* U of sample a: pairs (a_i, b_j) with a_i > b_j, ties 1/2 */
	double z;   /* normal approximation with tie and continuity corrections */
	double p;   /* two-sided */
	double a12; /* Vargha-Delaney: P(a > b) + P(a = b)/2 */
};

/* Mann-Whitney U of samples a (m) and b (n); -EINVAL when either is empty. */
int stats_mann_whitney(const double *a, size_t m, const double *b, size_t n, struct stats_mwu *out);

struct stats_wilcoxon {
	double w_plus; /* sum of the ranks of |a_i - b_i| where a_i > b_i */
	size_t n;      /* pairs left once zero differences are dropped */
	double z, p;   /* normal approximation, tie and continuity corrected */
};

/* Wilcoxon signed-rank test of n pairs (a_i, b_i); zero differences are
 * dropped (Wilcoxon's method). -EINVAL when n == 0. */
int stats_wilcoxon(const double *a, const double *b, size_t n, struct stats_wilcoxon *out);

/* Fraction of the n values <= b (the found-by-budget curve at b). */
double stats_fraction_le(const double *v, size_t n, double b);

/* Coverage curve of n seeds (docs/experiment.md "Coverage curves"): seed s
 * covered new_tasks[s][i] tasks new to its campaign in its run i + 1, for
 * i < len[s]. Its cumulative count after run r is the sum over its runs
 * <= r; a seed that stopped before run r (it failed or saturated) keeps its
 * last value. For r = 1..budget, index r - 1 of q1, median and q3 gets the
 * quantiles 0.25, 0.5 and 0.75 (stats_quantile, type 7) over the n seeds;
 * NAN when n == 0. Runs past the budget are ignored. */
void stats_coverage_band(const uint64_t *const *new_tasks, const size_t *len, size_t n,
			 size_t budget, double *q1, double *median, double *q3);

/* Coverage of one campaign at the budget (docs/experiment.md "Coverage at
 * the budget"): the sum of new_tasks[i] over its runs i + 1 <= budget, i <
 * len (a campaign that stopped earlier keeps its last value). The samples
 * of the coverage comparisons; there larger is better, so stats_mann_whitney's
 * A12 of (a, b) is the probability that a covers more. */
double stats_coverage_at(const uint64_t *new_tasks, size_t len, size_t budget);

#endif
