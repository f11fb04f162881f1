// SPDX-License-Identifier: MIT
/* Statistics of an experiment report (stats.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "experiment/stats.h"
#include "lib/xalloc.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

double stats_quantile(const double *v, size_t n, double p)
{
	double *s, h, frac, q;
	size_t lo;

	if (!n)
		return NAN;
	s = xcalloc(n, sizeof(*s));
	memcpy(s, v, n * sizeof(*s));
	qsort(s, n, sizeof(*s), cmp_double);
	h = (double)(n - 1) * p;
	lo = (size_t)floor(h);
	frac = h - (double)lo;
	/* frac == 0 or equal neighbours: no arithmetic, so inf stays inf. */
	if (frac == 0 || lo + 1 >= n || s[lo] == s[lo + 1])
		q = s[lo];
	else
		q = s[lo] + frac * (s[lo + 1] - s[lo]);
	free(s);
	return q;
}

struct ranked {
	double v;
	size_t i;
};

static int cmp_ranked(const void *a, const void *b)
{
	return cmp_double(&((const struct ranked *)a)->v, &((const struct ranked *)b)->v);
}

double stats_rank(const double *v, size_t n, double *ranks)
{
	struct ranked *r = xcalloc(n ? n : 1, sizeof(*r));
	double ties = 0, t;
	size_t i, j, k;

	for (i = 0; i < n; i++)
		r[i] = (struct ranked){ v[i], i };
	qsort(r, n, sizeof(*r), cmp_ranked);
	for (i = 0; i < n; i = j) {
		for (j = i + 1; j < n && r[j].v == r[i].v; j++)
			;
		/* positions i..j-1 hold ranks i+1..j: their mean */
		for (k = i; k < j; k++)
			ranks[r[k].i] = (double)(i + 1 + j) / 2;
		t = (double)(j - i);
		ties += t * t * t - t;
	}
	free(r);
	return ties;
}

/* Two-sided p of a normal deviate. */
static double two_sided_p(double z)
{
	return erfc(fabs(z) / sqrt(2));
}

/* (x - mu) moved 0.5 towards 0 (continuity), over sigma; 0 when sigma is 0. */
static double corrected_z(double x, double mu, double sigma)
{
	double d = x - mu;

	if (sigma <= 0)
		return 0;
	d = d > 0.5 ? d - 0.5 : d < -0.5 ? d + 0.5 : 0;
	return d / sigma;
}

int stats_mann_whitney(const double *a, size_t m, const double *b, size_t n, struct stats_mwu *out)
{
	size_t N = m + n, i;
	double *v, *ranks, ties, r1 = 0, sigma;

	if (!m || !n)
		return -EINVAL;
	v = xcalloc(N, sizeof(*v));
	ranks = xcalloc(N, sizeof(*ranks));
	memcpy(v, a, m * sizeof(*v));
	memcpy(v + m, b, n * sizeof(*v));
	ties = stats_rank(v, N, ranks);
	for (i = 0; i < m; i++)
		r1 += ranks[i];
	out->u = r1 - (double)m * (m + 1) / 2;
	/* Var U = mn/12 ((N+1) - sum(t^3 - t) / (N(N-1))) */
	sigma = N > 1 ? sqrt((double)m * n / 12 *
			     ((double)(N + 1) - ties / ((double)N * (double)(N - 1))))
		      : 0;
	out->z = corrected_z(out->u, (double)m * n / 2, sigma);
	out->p = two_sided_p(out->z);
	out->a12 = (r1 / m - (double)(m + 1) / 2) / n;
	free(v);
	free(ranks);
	return 0;
}

int stats_wilcoxon(const double *a, const double *b, size_t n, struct stats_wilcoxon *out)
{
	double *d, *absd, *ranks, ties, nn, sigma;
	size_t i, k = 0;

	if (!n)
		return -EINVAL;
	d = xcalloc(n, sizeof(*d));
	absd = xcalloc(n, sizeof(*absd));
	ranks = xcalloc(n, sizeof(*ranks));
	for (i = 0; i < n; i++)
		if (a[i] != b[i])
			d[k++] = a[i] - b[i];
	for (i = 0; i < k; i++)
		absd[i] = fabs(d[i]);
	ties = stats_rank(absd, k, ranks);
	out->w_plus = 0;
	for (i = 0; i < k; i++)
		if (d[i] > 0)
			out->w_plus += ranks[i];
	out->n = k;
	nn = (double)k;
	/* Var W+ = n(n+1)(2n+1)/24 - sum(t^3 - t)/48 */
	sigma = sqrt(nn * (nn + 1) * (2 * nn + 1) / 24 - ties / 48);
	out->z = corrected_z(out->w_plus, nn * (nn + 1) / 4, sigma);
	out->p = two_sided_p(out->z);
	free(d);
	free(absd);
	free(ranks);
	return 0;
}

double stats_fraction_le(const double *v, size_t n, double b)
{
	size_t i, c = 0;

	for (i = 0; i < n; i++)
		c += v[i] <= b;
	return n ? (double)c / n : NAN;
}

void stats_coverage_band(const uint64_t *const *new_tasks, const size_t *len, size_t n,
			 size_t budget, double *q1, double *median, double *q3)
{
	double *cum = xcalloc(n ? n : 1, sizeof(*cum));
	size_t r, s;

	for (r = 0; r < budget; r++) {
		for (s = 0; s < n; s++)
			if (r < len[s]) /* else carried forward */
				cum[s] += (double)new_tasks[s][r];
		q1[r] = stats_quantile(cum, n, 0.25);
		median[r] = stats_quantile(cum, n, 0.5);
		q3[r] = stats_quantile(cum, n, 0.75);
	}
	free(cum);
}

double stats_coverage_at(const uint64_t *new_tasks, size_t len, size_t budget)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < len && i < budget; i++)
		sum += (double)new_tasks[i];
	return sum;
}
