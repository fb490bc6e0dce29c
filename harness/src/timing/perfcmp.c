/*
 * Performance verdicts against a baseline: a two-sided Mann-Whitney U test
 * (normal approximation with the tie correction) on the raw samples, which
 * assumes nothing about their distribution (timings are skewed, with long
 * tails), and a minimum effect so that a significant 0.1 % is still SAME;
 * the gate's verdict over repeats, whose run-to-run spread widens that
 * minimum (a shared machine's load comes and goes between them).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "mtp/timing.h"

struct tagged {
	double v;
	int from_cur;
};

static int cmp_tagged(const void *a, const void *b)
{
	double x = ((const struct tagged *)a)->v,
	       y = ((const struct tagged *)b)->v;

	return (x > y) - (x < y);
}

static double median_of(const double *v, int n)
{
	double *c = malloc((size_t)n * sizeof(*c)), m;

	for (int i = 0; i < n; i++)
		c[i] = v[i];
	for (int i = 1; i < n; i++) /* insertion sort: n is small */
		for (int j = i; j > 0 && c[j - 1] > c[j]; j--) {
			double t = c[j];

			c[j] = c[j - 1];
			c[j - 1] = t;
		}
	m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
	free(c);
	return m;
}

/* Two-sided p-value of U for samples of sizes n1, n2 with mid-ranks. */
static double mann_whitney_p(const double *a, int n1, const double *b, int n2)
{
	int n = n1 + n2;
	struct tagged *t = malloc((size_t)n * sizeof(*t));
	double rank_b = 0, ties = 0;

	for (int i = 0; i < n1; i++)
		t[i] = (struct tagged){a[i], 0};
	for (int i = 0; i < n2; i++)
		t[n1 + i] = (struct tagged){b[i], 1};
	qsort(t, (size_t)n, sizeof(*t), cmp_tagged);
	for (int i = 0; i < n;) {
		int j = i;

		while (j < n && t[j].v == t[i].v)
			j++;
		double mid =
			0.5 * (i + 1 + j); /* ranks i+1..j share their mean */

		for (int k = i; k < j; k++)
			rank_b += t[k].from_cur ? mid : 0;
		ties += pow(j - i, 3) - (j - i);
		i = j;
	}
	free(t);
	double u = rank_b - n2 * (n2 + 1) / 2.0, mu = n1 * (double)n2 / 2;
	double var = n1 * (double)n2 / 12.0 *
		     ((n + 1) - ties / ((double)n * (n - 1)));

	if (var <= 0)
		return 1.0;
	return erfc(fabs(u - mu) / sqrt(var) / sqrt(2.0));
}

enum mtp_verdict mtp_perf_compare(const double *base, int nb, const double *cur,
				  int nc, double min_effect, double alpha,
				  double *ratio, double *p)
{
	*ratio = NAN;
	*p = 1.0;
	if (nb < 1 || nc < 1)
		return MTP_AMBIGUOUS;
	*ratio = median_of(cur, nc) / median_of(base, nb);
	*p = nb >= 2 && nc >= 2 ? mann_whitney_p(base, nb, cur, nc) : 1.0;
	if (fabs(*ratio - 1) < min_effect)
		return MTP_SAME;
	if (*p >= alpha)
		return MTP_AMBIGUOUS;
	return *ratio > 1 ? MTP_SLOWER : MTP_FASTER;
}

void mtp_speed_words(double this_s, double other_s, char *buf, size_t n)
{
	if (!(this_s > 0 && other_s > 0))
		snprintf(buf, n, "-");
	else if (this_s <= other_s)
		snprintf(buf, n, "%.2fx faster", other_s / this_s);
	else
		snprintf(buf, n, "%.2fx slower", this_s / other_s);
}

double mtp_timing_spread(const struct mtp_timing *rep, int n)
{
	double lo = 0, hi = 0;

	for (int i = 0; i < n; i++) {
		lo = i == 0 || rep[i].median < lo ? rep[i].median : lo;
		hi = i == 0 || rep[i].median > hi ? rep[i].median : hi;
	}
	return lo > 0 ? (hi - lo) / lo : 0;
}

enum mtp_verdict mtp_perf_gate(const double *base, int nb, double base_spread,
			       const struct mtp_timing *rep, int n_rep,
			       double min_effect, double alpha, double *ratio,
			       double *p, double *floor)
{
	double spread = mtp_timing_spread(rep, n_rep), r, pr;
	int n[MTP_VERDICT_COUNT] = {0}, all = 0;

	*floor = min_effect;
	*floor = base_spread > *floor ? base_spread : *floor;
	*floor = spread > *floor ? spread : *floor;
	*p = 0;
	for (int i = 0; i < n_rep; i++) {
		n[mtp_perf_compare(base, nb, rep[i].samples, rep[i].reps,
				   *floor, alpha, &r, &pr)]++;
		*p = pr > *p ? pr : *p;
	}
	*ratio = NAN;
	for (int i = 0; i < n_rep; i++)
		all += rep[i].reps;
	double *pool = malloc((size_t)(all ? all : 1) * sizeof(*pool));

	for (int i = 0, k = 0; pool && i < n_rep; i++)
		for (int j = 0; j < rep[i].reps; j++)
			pool[k++] = rep[i].samples[j];
	if (pool && all && nb > 0)
		*ratio = median_of(pool, all) / median_of(base, nb);
	free(pool);
	if (n_rep < 1 || nb < 1)
		return MTP_AMBIGUOUS;
	if (n[MTP_SLOWER] == n_rep || n[MTP_FASTER] == n_rep)
		return n[MTP_SLOWER] ? MTP_SLOWER : MTP_FASTER;
	if (n[MTP_SAME] || (n[MTP_SLOWER] && n[MTP_FASTER]))
		return MTP_SAME;
	return MTP_AMBIGUOUS;
}
