/*
 * The V4 fused MTP input kernel [SPEC.md §7.3, Step V4-2]: position-0 mask
 * and enorm of the embedding, and hnorm of each of the M previous-hidden
 * streams separately with the same weight, all with fused rounding (§2.2).
 */
#include "ref_internal.h"

void mtp_ref_fused_mtp_input_rmsnorm(
	const double *embeds, const int64_t *positions,
	const double *prev_hidden, const double *enorm_w, const double *hnorm_w,
	int64_t t, int64_t m, int64_t h, double eps, enum mtp_dtype act,
	double *enorm_out, double *hnorm_out)
{
	double *masked = mtp_ref_scratch((size_t)(t * h));

	mtp_ref_pos0_mask(embeds, positions, t, h, masked);
	mtp_ref_rmsnorm(masked, enorm_w, t, h, eps, MTP_ROUNDING_FUSED, act,
			enorm_out);
	/* [T,M,H] is T*M rows of H: one norm per (token, stream) */
	mtp_ref_rmsnorm(prev_hidden, hnorm_w, t * m, h, eps, MTP_ROUNDING_FUSED,
			act, hnorm_out);
	free(masked);
}
