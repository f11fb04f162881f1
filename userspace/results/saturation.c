// SPDX-License-Identifier: MIT
/*
 * Saturation (ALGORITHMS.md §9): least-squares slope of cumulative coverage
 * over the last window. saturation_evaluate fits the window directly (two passes,
 * centred sums) so r² is exact on small integer data; saturation_first_saturated
 * scans every prefix with running sums and confirms each candidate with
 * the exact fit, which keeps long time-windowed campaigns linear.
 */
#include "results/saturation.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/parse.h"

void saturation_config_default(struct sat_config *cfg)
{
	cfg->by_time = false;
	cfg->window = SAT_DEFAULT_RUNS;
	cfg->threshold = SAT_DEFAULT_THRESHOLD;
}

static int parse_window(const char *s, size_t len, struct sat_config *cfg)
{
	char buf[64], *end;
	double v, unit = 1;
	bool by_time = false;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (buf[len - 1] == 's' || buf[len - 1] == 'm') {
		unit = buf[len - 1] == 'm' ? 60 : 1;
		by_time = true;
		buf[--len] = '\0';
	}
	if (!len)
		return -EINVAL;
	errno = 0;
	v = strtod(buf, &end);
	if (errno || *end || !isfinite(v) || v <= 0)
		return -EINVAL;
	if (!by_time && (v < 2 || v != floor(v)))
		return -EINVAL; /* a run window is a whole number of runs, 2 or more */
	cfg->by_time = by_time;
	cfg->window = v * unit;
	return 0;
}

int saturation_parse(const char *spec, struct sat_config *cfg)
{
	struct sat_config c;
	const char *comma;
	double t;

	saturation_config_default(&c);
	if (!spec || !*spec)
		return -EINVAL;
	comma = strchr(spec, ',');
	if (parse_window(spec, comma ? (size_t)(comma - spec) : strlen(spec), &c))
		return -EINVAL;
	if (comma) {
		if (parse_double(comma + 1, &t) || !isfinite(t) || t < 0)
			return -EINVAL;
		c.threshold = t;
	}
	*cfg = c;
	return 0;
}

const char *saturation_format(const struct sat_config *cfg, char *buf, size_t len)
{
	snprintf(buf, len, "%g%s,%g", cfg->window, cfg->by_time ? "s" : "", cfg->threshold);
	return buf;
}

int saturation_linear_fit(const double *x, const double *y, size_t n, double *slope,
			  double *intercept, double *r2)
{
	double mx = 0, my = 0, sxx = 0, sxy = 0, syy = 0, b, a, ssres = 0, e;
	size_t i;

	if (n < 2)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		mx += x[i];
		my += y[i];
	}
	mx /= (double)n;
	my /= (double)n;
	for (i = 0; i < n; i++) {
		sxx += (x[i] - mx) * (x[i] - mx);
		sxy += (x[i] - mx) * (y[i] - my);
		syy += (y[i] - my) * (y[i] - my);
	}
	if (sxx == 0)
		return -EINVAL;
	b = sxy / sxx;
	a = my - b * mx;
	for (i = 0; i < n; i++) {
		e = y[i] - (a + b * x[i]);
		ssres += e * e;
	}
	if (slope)
		*slope = b;
	if (intercept)
		*intercept = a;
	/* A flat window is fitted perfectly by a flat line: r² = 1 rather
	 * than 0/0. */
	if (r2)
		*r2 = syy == 0 ? 1.0 : 1.0 - ssres / syy;
	return 0;
}

/* Window of the series ending at point n-1: [*first, n). Returns whether
 * the history covers a full window. */
static bool sat_window(const double *x, size_t n, const struct sat_config *cfg, size_t *first)
{
	size_t w, f;

	if (!cfg->by_time) {
		w = (size_t)cfg->window;
		*first = n > w ? n - w : 0;
		return n >= w;
	}
	f = n - 1;
	while (f > 0 && x[f - 1] >= x[n - 1] - cfg->window)
		f--;
	/* Fewer than two points inside the window (runs longer than it):
	 * fit across the point just before it. */
	if (n - f < 2 && f > 0)
		f--;
	*first = f;
	return x[n - 1] - x[0] >= cfg->window;
}

int saturation_evaluate(const double *x, const double *y, size_t n, const struct sat_config *cfg,
			struct sat_result *res)
{
	memset(res, 0, sizeof(*res));
	res->slope = NAN;
	res->r2 = NAN;
	if (!n)
		return 0;
	if (cfg->window <= 0 || (!cfg->by_time && cfg->window < 2))
		return -EINVAL;
	res->enough = sat_window(x, n, cfg, &res->first);
	res->points = n - res->first;
	if (saturation_linear_fit(x + res->first, y + res->first, res->points, &res->slope, NULL,
				  &res->r2)) {
		res->enough = false;
		return 0;
	}
	res->saturated = res->enough && res->slope < cfg->threshold;
	return 0;
}

struct sat_sums {
	double n, x, y, xx, xy;
};

static void sums_add(struct sat_sums *s, double x, double y, double sign)
{
	s->n += sign;
	s->x += sign * x;
	s->y += sign * y;
	s->xx += sign * x * x;
	s->xy += sign * x * y;
}

/* Slope from running sums; rounding makes it approximate for large x. */
static double sums_slope(const struct sat_sums *s)
{
	double sxx = s->xx - s->x * s->x / s->n;

	if (s->n < 2 || sxx <= 0)
		return NAN;
	return (s->xy - s->x * s->y / s->n) / sxx;
}

long saturation_first_saturated(const double *x, const double *y, size_t n,
				const struct sat_config *cfg)
{
	struct sat_sums s = { 0 };
	struct sat_result r;
	size_t end, first = 0, f;
	double approx, slack;

	for (end = 1; end <= n; end++) {
		sums_add(&s, x[end - 1], y[end - 1], 1);
		if (!sat_window(x, end, cfg, &f))
			continue;
		for (; first < f; first++)
			sums_add(&s, x[first], y[first], -1);
		while (first > f) {
			first--;
			sums_add(&s, x[first], y[first], 1);
		}
		approx = sums_slope(&s);
		slack = 1e-6 * (fabs(cfg->threshold) + 1);
		if (!(approx < cfg->threshold + slack) && !isnan(approx))
			continue;
		if (saturation_evaluate(x, y, end, cfg, &r) == 0 && r.saturated)
			return (long)end - 1;
	}
	return -1;
}
