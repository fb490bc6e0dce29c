/*
 * mHC fused post+pre [SPEC.md §4.4.3], large-T path: hc_post stores the
 * new streams in act, and hc_pre reads those rounded streams. (The small-T
 * tilelang path reads the unrounded fp32 streams; that ulp-class difference
 * is a tolerance matter, not a second reference.)
 */
#include "ref_internal.h"

void mtp_ref_hc_fused_post_pre(const double *x, const double *residual,
			       const double *post_in, const double *comb_in,
			       const double *fn, const double *scale,
			       const double *base, const double *norm_w,
			       const struct mtp_hc_params *p, int64_t t,
			       int64_t m, int64_t h, enum mtp_dtype act,
			       double *residual_out, double *post_mix,
			       double *comb_mix, double *layer_input)
{
	mtp_ref_hc_post(x, residual, post_in, comb_in, t, m, h, act,
			residual_out);
	mtp_ref_hc_pre(residual_out, fn, scale, base, norm_w, p, t, m, h, act,
		       post_mix, comb_mix, layer_input);
}
