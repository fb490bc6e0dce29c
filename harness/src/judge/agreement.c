/*
 * The draft agreement of a token output (compare.h, struct mtp_agreement):
 * per step, the rows whose draft token is the reference's, and the
 * reference's top-1 margins. A tolerance says whether the tokens are right;
 * this says how much acceptance a wrong layer costs, the figure an engine
 * developer compares with the acceptance rate they see (issue 30).
 */
#include "mtp/compare.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

double mtp_logits_margin(const struct mtp_tensor *l, int64_t r)
{
	int64_t cols = l->shape[l->ndim - 1];
	double top = -INFINITY, second = -INFINITY;

	for (int64_t k = 0; k < cols; k++) {
		double v = mtp_load(l->dtype, l->data, (size_t)(r * cols + k));

		if (v > top) {
			second = top;
			top = v;
		} else if (v > second) {
			second = v;
		}
	}
	return top - second;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* min, median and disagreeing-row max of the reference's margins */
static void margins(struct mtp_agreement *a, const struct mtp_tensor *got,
		    const struct mtp_tensor *want, const struct mtp_tensor *l,
		    int64_t n)
{
	double *m = malloc((size_t)n * sizeof(*m));

	a->margin_min = a->margin_median = a->disagree_margin_max = NAN;
	if (!m)
		return;
	for (int64_t r = 0; r < n; r++) {
		m[r] = mtp_logits_margin(l, r);
		if (mtp_load(got->dtype, got->data, (size_t)r) !=
			    mtp_load(want->dtype, want->data, (size_t)r) &&
		    !(m[r] <= a->disagree_margin_max))
			a->disagree_margin_max = m[r];
	}
	qsort(m, (size_t)n, sizeof(*m), cmp_double);
	a->margin_min = m[0];
	a->margin_median = n % 2 ? m[n / 2] : (m[n / 2 - 1] + m[n / 2]) / 2;
	free(m);
}

void mtp_cmp_agreement(struct mtp_cmp *c, const struct mtp_tensor *got,
		       const struct mtp_tensor *want,
		       const struct mtp_tensor *want_logits)
{
	struct mtp_agreement *a = &c->agreement;
	const int64_t n = mtp_tensor_numel(want);
	const int64_t steps = want->ndim == 2 ? want->shape[0] : 1;

	*a = (struct mtp_agreement){0};
	if (n == 0 || !got->data || !want->data)
		return; /* nothing compared says so elsewhere */
	a->steps = steps < MTP_AGREE_STEPS ? (int)steps : MTP_AGREE_STEPS;
	a->rows = n / steps;
	for (int64_t r = 0; r < a->steps * a->rows; r++)
		a->agree[r / a->rows] +=
			mtp_load(got->dtype, got->data, (size_t)r) ==
			mtp_load(want->dtype, want->data, (size_t)r);
	if (want_logits && want_logits->data &&
	    mtp_tensor_numel(want_logits) /
			    want_logits->shape[want_logits->ndim - 1] ==
		    n)
		margins(a, got, want, want_logits, n);
	else
		a->margin_min = a->margin_median = a->disagree_margin_max = NAN;
}

bool mtp_agreement_text(const struct mtp_cmp *cmp, int n_cmp, char *buf,
			size_t n)
{
	double miss = -1;
	size_t k = 0;
	int steps = 0;

	buf[0] = '\0';
	for (int i = 0; i < n_cmp; i++) {
		const struct mtp_agreement *a = &cmp[i].agreement;

		for (int s = 0; s < a->steps && k + 48 < n; s++, steps++)
			k += (size_t)snprintf(buf + k, n - k, "%s%lld/%lld",
					      steps ? ", " : "",
					      (long long)a->agree[s],
					      (long long)a->rows);
		if (a->steps && a->disagree_margin_max > miss) /* NaN: none */
			miss = a->disagree_margin_max;
	}
	if (steps && miss >= 0 && k + 64 < n)
		snprintf(buf + k, n - k,
			 " (the reference's top-1 margin on a missed token: "
			 "up to %.3g)",
			 miss);
	return steps > 0;
}
