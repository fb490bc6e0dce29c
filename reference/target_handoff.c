/*
 * What the target model hands to draft step 0 [SPEC.md §5.5]: its last
 * decoder layer's output and residual through its final norm (the fused
 * add of §2.3, whose norm input is the §12.1 convention), the same kind of
 * hidden (post-norm) that every later draft step receives as the recycled
 * h_post. A separate op so that a dump can carry the hand-off the engine
 * made beside the chain it fed (issue 30: a target that hands over the raw
 * pre-norm sum, LightLLM #1402).
 */
#include "ref_internal.h"

#include <string.h>

void mtp_ref_target_handoff(const double *hidden, const double *residual,
			    const double *norm_w, int64_t rows, int64_t h,
			    double eps, enum mtp_rounding rnd,
			    enum mtp_add_norm_input in, bool pre_norm,
			    enum mtp_dtype act, double *handoff)
{
	size_t n = (size_t)(rows * h);
	double *y = mtp_ref_scratch(n), *sum = mtp_ref_scratch(n);

	mtp_ref_add_rmsnorm_conv(hidden, residual, norm_w, rows, h, eps, rnd,
				 in, act, y, sum);
	/* HANDOFF_MISMATCH hands over the rounded sum before the norm */
	memcpy(handoff, pre_norm ? sum : y, n * sizeof(*handoff));
	free(sum);
	free(y);
}
