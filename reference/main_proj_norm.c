/*
 * The DSpark context combiner [SPEC.md §13 Step DS-1]: the target's aux
 * hidden states, concatenated per token, projected to H (one rounding) and
 * normalised by main_norm. Both results are outputs, because Qwen3 DSpark
 * applies the norm later (inside the context-KV projection) and the judge
 * must be able to tell which of the two rounding points went wrong. V4.1's
 * main_proj may be a block-FP8 linear [§12.2].
 */
#include "ref_internal.h"

void mtp_ref_main_proj_norm(const double *aux, struct mtp_ref_qweight w,
			    const struct mtp_ref_quant *q, const double *norm_w,
			    int64_t t, int64_t a, int64_t h, double eps,
			    enum mtp_rounding rnd, enum mtp_dtype act,
			    double *proj_out, double *main_x)
{
	mtp_ref_qlinear(aux, w, t, a * h, h, q, act, proj_out);
	mtp_ref_rmsnorm(proj_out, norm_w, t, h, eps, rnd, act, main_x);
}
