/* SPDX-License-Identifier: MIT */
/*
 * Saturation of a coverage metric (ALGORITHMS.md §9, seeds 000 and 004):
 * cumulative coverage against run index (or seconds); fit a least-squares
 * line to the last window of points (default the last 50 runs, or 120 s);
 * the metric is saturated when the slope is below a threshold (default 0.1
 * tasks per run, or per second) and r² is reported with the slope.
 *
 * The window must be full before a verdict: with fewer than WINDOW runs (or
 * less than WINDOW seconds of history) a metric is never saturated, so a
 * campaign cannot stop after its first few runs just because they found
 * nothing new.
 */
#ifndef CONCSCHED_SATURATION_H
#define CONCSCHED_SATURATION_H

#include <stdbool.h>
#include <stddef.h>

#define SAT_DEFAULT_RUNS      50
#define SAT_DEFAULT_SECONDS   120.0
#define SAT_DEFAULT_THRESHOLD 0.1

struct sat_config {
	bool by_time;	  /* x is seconds instead of run index */
	double window;	  /* runs (whole number) or seconds */
	double threshold; /* tasks per run, or per second */
};

struct sat_result {
	bool enough;	/* the window is full: the verdict below means something */
	bool saturated; /* enough && slope < threshold */
	double slope;	/* tasks per run (or per second) over the window */
	double r2;	/* coefficient of determination of the fit, 1 on a perfect fit */
	size_t first;	/* index of the window's first point */
	size_t points;	/* points in the window */
};

/* Defaults: 50 runs / 0.1. */
void saturation_config_default(struct sat_config *cfg);
/* Parse "--saturation WINDOW,THRESHOLD": "50,0.1" (runs), "120s,0.1"
 * (seconds; "2m" minutes too), or a bare WINDOW keeping the default
 * threshold. 0 or -EINVAL (window must be >= 2 runs / > 0 s, threshold >= 0). */
int saturation_parse(const char *spec, struct sat_config *cfg);
/* "50,0.1" / "120s,0.1" back, for reports. buf >= 48 bytes. */
const char *saturation_format(const struct sat_config *cfg, char *buf, size_t len);

/* Least-squares line y = a + b x over n points; r2 as above. -EINVAL when
 * n < 2 or every x is equal. */
int saturation_linear_fit(const double *x, const double *y, size_t n, double *slope,
			  double *intercept, double *r2);

/* Verdict on the series ending at point n-1. x must be non-decreasing
 * (run indices or seconds), y the cumulative coverage. n == 0 gives
 * enough=false. */
int saturation_evaluate(const double *x, const double *y, size_t n, const struct sat_config *cfg,
			struct sat_result *res);
/* First point at which the series was saturated (evaluating each prefix),
 * or -1 when it never was: the saturation point on the report's chart. */
long saturation_first_saturated(const double *x, const double *y, size_t n,
				const struct sat_config *cfg);

#endif
