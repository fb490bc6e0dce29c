/*
 * Residual add fused with RMSNorm [SPEC.md §2.3]: the new residual is the
 * rounded sum, but the variance comes from the unrounded sum, as in vLLM's
 * fused_add_rms_norm kernel. A separate op because that difference is the
 * point.
 */
#include "ref_internal.h"

void mtp_ref_add_rmsnorm(const double *x, const double *residual,
			 const double *w, int64_t rows, int64_t h, double eps,
			 enum mtp_rounding rnd, enum mtp_dtype act, double *y,
			 double *residual_out)
{
	double *s = mtp_ref_scratch((size_t)h);

	for (int64_t r = 0; r < rows; r++) {
		const int64_t o = r * h;

		for (int64_t i = 0; i < h; i++) {
			s[i] = x[o + i] + residual[o + i];
			residual_out[o + i] = mtp_round(act, s[i]);
		}
		mtp_ref_norm_row(residual_out + o, mtp_ref_rms_inv(s, h, eps),
				 w, h, rnd, act, y + o);
	}
	free(s);
}
