/*
 * Residual add fused with RMSNorm [SPEC.md §2.3, §12.1]: the new residual is
 * the rounded sum and the variance comes from the unrounded sum, as in vLLM's
 * fused_add_rms_norm kernel. What is normalised is a convention: the stored
 * residual (§2.3, the CUDA kernel) or the unrounded sum (vLLM's native
 * implementation). A separate op because that difference is the point.
 */
#include "ref_internal.h"

void mtp_ref_add_rmsnorm_conv(const double *x, const double *residual,
			      const double *w, int64_t rows, int64_t h,
			      double eps, enum mtp_rounding rnd,
			      enum mtp_add_norm_input in, enum mtp_dtype act,
			      double *y, double *residual_out)
{
	double *s = mtp_ref_scratch((size_t)h);

	for (int64_t r = 0; r < rows; r++) {
		const int64_t o = r * h;

		for (int64_t i = 0; i < h; i++) {
			s[i] = x[o + i] + residual[o + i];
			residual_out[o + i] = mtp_round(act, s[i]);
		}
		mtp_ref_norm_row(in == MTP_ADD_NORM_SUM ? s : residual_out + o,
				 mtp_ref_rms_inv(s, h, eps), w, h, rnd, act,
				 y + o);
	}
	free(s);
}

void mtp_ref_add_rmsnorm(const double *x, const double *residual,
			 const double *w, int64_t rows, int64_t h, double eps,
			 enum mtp_rounding rnd, enum mtp_dtype act, double *y,
			 double *residual_out)
{
	mtp_ref_add_rmsnorm_conv(x, residual, w, rows, h, eps, rnd,
				 MTP_ADD_NORM_RESIDUAL, act, y, residual_out);
}
