/*
 * RMSNorm of each row [SPEC.md §2.1 eager, §2.2 fused], and the row kernel
 * that every other normalising op of the reference reuses, so that there is
 * exactly one place where an RMSNorm rounds.
 */
#include "ref_internal.h"

double mtp_ref_rms_inv(const double *x, int64_t n, double eps)
{
	double ss = 0.0;

	for (int64_t i = 0; i < n; i++)
		ss += x[i] * x[i];
	return 1.0 / sqrt(ss / (double)n + eps);
}

void mtp_ref_norm_row(const double *x, double r, const double *w, int64_t h,
		      enum mtp_rounding rnd, enum mtp_dtype act, double *y)
{
	for (int64_t i = 0; i < h; i++) {
		if (rnd == MTP_ROUNDING_EAGER)
			y[i] = mtp_round(act, mtp_round(act, x[i] * r) * w[i]);
		else
			y[i] = mtp_round(act, x[i] * r * w[i]);
	}
}

void mtp_ref_rmsnorm(const double *x, const double *w, int64_t rows, int64_t h,
		     double eps, enum mtp_rounding rnd, enum mtp_dtype act,
		     double *y)
{
	for (int64_t r = 0; r < rows; r++) {
		const double *xr = x + r * h;

		mtp_ref_norm_row(xr, mtp_ref_rms_inv(xr, h, eps), w, h, rnd,
				 act, y + r * h);
	}
}
