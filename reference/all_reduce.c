/*
 * Tensor-parallel all-reduce [SPEC.md §2.4, §2.5, Step V3-7]: the sum of the
 * P partial outputs, rounded once, or added in a declared order whose
 * value depends on it (one-shot, two-shot, ring, tree), because an engine's
 * sum is judged under its own order.
 */
#include "ref_internal.h"

void mtp_ref_all_reduce(const double *parts, int64_t p, int64_t rows,
			int64_t cols, enum mtp_dtype act, double *out)
{
	mtp_ref_all_reduce_order(parts, p, rows, cols, MTP_REDUCE_EXACT, act,
				 NULL, out);
}

static double f32(double x)
{
	return mtp_round(MTP_F32, x);
}

/* Pairwise levels over v[0..n), each sum stored in act; *u the top sum. */
static double tree_sum(double *v, int64_t n, enum mtp_dtype act, double *u)
{
	*u = v[0];
	while (n > 1) {
		int64_t m = 0;

		for (int64_t i = 0; i + 1 < n; i += 2) {
			*u = f32(v[i] + v[i + 1]);
			v[m++] = mtp_round(act, *u);
		}
		if (n % 2)
			v[m++] = v[n - 1];
		n = m;
	}
	return v[0];
}

/* One element: x(k) is part k's value; c the element's chunk. */
static double one_sum(const double *parts, int64_t n, int64_t i, int64_t p,
		      int64_t c, enum mtp_reduce_order order,
		      enum mtp_dtype act, double *v, double *u)
{
	double s = 0;

	*u = 0;
	switch (order) {
	case MTP_REDUCE_EXACT:
		for (int64_t k = 0; k < p; k++)
			s += parts[k * n + i];
		*u = s;
		return mtp_round(act, s);
	case MTP_REDUCE_ONE_SHOT:
	case MTP_REDUCE_TWO_SHOT:
		if (order == MTP_REDUCE_ONE_SHOT)
			c = 0; /* every rank adds in rank order */
		s = parts[c * n + i];
		for (int64_t k = 1; k < p; k++)
			s = f32(s + parts[((c + k) % p) * n + i]);
		*u = s;
		return mtp_round(act, s);
	case MTP_REDUCE_RING:
		s = parts[((c + 1) % p) * n + i];
		*u = s;
		for (int64_t k = 2; k <= p; k++) {
			*u = f32(s + parts[((c + k) % p) * n + i]);
			s = mtp_round(act, *u);
		}
		return mtp_round(act, s);
	case MTP_REDUCE_TREE:
		for (int64_t k = 0; k < p; k++)
			v[k] = parts[k * n + i];
		return mtp_round(act, tree_sum(v, p, act, u));
	}
	return 0;
}

void mtp_ref_all_reduce_order(const double *parts, int64_t p, int64_t rows,
			      int64_t cols, enum mtp_reduce_order order,
			      enum mtp_dtype act, double *u, double *out)
{
	const int64_t n = rows * cols;
	double *v = mtp_ref_scratch((size_t)p + 1);

	for (int64_t i = 0; i < n; i++) {
		int64_t c = (i % cols) * p / cols;
		double ui = 0;

		out[i] = one_sum(parts, n, i, p, c, order, act, v, &ui);
		if (u)
			u[i] = ui;
	}
	free(v);
}
