/*
 * The V4 input projection [SPEC.md Step V4-3]: h_proj of every stream plus
 * e_proj of the embedding broadcast over the M streams. Each GEMM result is
 * rounded, then their sum is rounded once more (a bf16 add).
 */
#include "ref_internal.h"

void mtp_ref_eh_proj_hc(const double *e, const double *p,
			const double *e_proj_w, const double *h_proj_w,
			int64_t t, int64_t m, int64_t h, enum mtp_dtype act,
			double *x)
{
	mtp_ref_eh_proj_hc_q(e, p, (struct mtp_ref_qweight){e_proj_w, NULL},
			     (struct mtp_ref_qweight){h_proj_w, NULL}, t, m, h,
			     NULL, act, x);
}

/* Each projection may be FP8 [§12.2]: under W8A8 every stream row of p is
 * a token row of its own (quantized per row per group). */
void mtp_ref_eh_proj_hc_q(const double *e, const double *p,
			  struct mtp_ref_qweight e_proj,
			  struct mtp_ref_qweight h_proj, int64_t t, int64_t m,
			  int64_t h, const struct mtp_ref_quant *q,
			  enum mtp_dtype act, double *x)
{
	double *ep = mtp_ref_scratch((size_t)(t * h + t * m * h));
	double *hp = ep + t * h;

	mtp_ref_qlinear(e, e_proj, t, h, h, q, act, ep);
	mtp_ref_qlinear(p, h_proj, t * m, h, h, q, act, hp);
	for (int64_t r = 0; r < t; r++) {
		for (int64_t s = 0; s < m; s++) {
			const int64_t o = (r * m + s) * h;

			for (int64_t i = 0; i < h; i++)
				x[o + i] = mtp_round(act,
						     hp[o + i] + ep[r * h + i]);
		}
	}
	free(ep);
}
