/*
 * The V3.2/GLM-5 fused MTP input kernels [SPEC.md §7.1, §7.2]: position-0
 * mask, enorm and hnorm with fused rounding (§2.2), concatenated as
 * [ e | p ]. fused_embed_eh_norm only adds the embedding gather, so both
 * share one per-token helper and are bit-identical by construction.
 */
#include "ref_internal.h"

/* out [2H] = [ norm(mask(e)) | norm(p) ]; masked is scratch of H doubles. */
static void eh_norm_token(int64_t pos, const double *e, const double *p,
			  const double *enorm_w, const double *hnorm_w,
			  int64_t h, double eps, enum mtp_dtype act,
			  double *masked, double *out)
{
	mtp_ref_pos0_mask(e, &pos, 1, h, masked);
	mtp_ref_rmsnorm(masked, enorm_w, 1, h, eps, MTP_ROUNDING_FUSED, act,
			out);
	mtp_ref_rmsnorm(p, hnorm_w, 1, h, eps, MTP_ROUNDING_FUSED, act,
			out + h);
}

void mtp_ref_fused_eh_norm(const int64_t *positions, const double *embeds,
			   const double *prev_hidden, const double *enorm_w,
			   const double *hnorm_w, int64_t t, int64_t h,
			   double eps, enum mtp_dtype act, double *out)
{
	double *masked = mtp_ref_scratch((size_t)h);

	for (int64_t r = 0; r < t; r++)
		eh_norm_token(positions[r], embeds + r * h, prev_hidden + r * h,
			      enorm_w, hnorm_w, h, eps, act, masked,
			      out + r * 2 * h);
	free(masked);
}

void mtp_ref_fused_embed_eh_norm(const int64_t *positions,
				 const int64_t *input_ids,
				 const double *embed_table,
				 const double *prev_hidden,
				 const double *enorm_w, const double *hnorm_w,
				 int64_t t, int64_t h, double eps,
				 enum mtp_dtype act, double *out)
{
	double *masked = mtp_ref_scratch((size_t)h);

	for (int64_t r = 0; r < t; r++)
		eh_norm_token(positions[r], embed_table + input_ids[r] * h,
			      prev_hidden + r * h, enorm_w, hnorm_w, h, eps,
			      act, masked, out + r * 2 * h);
	free(masked);
}
