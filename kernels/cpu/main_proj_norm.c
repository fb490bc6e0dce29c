/*
 * The DSpark context combiner [SPEC.md §13 Step DS-1]: the concatenated aux
 * hidden states through main_proj (an sgemm, one rounding) and main_norm.
 * Both results are outputs: Qwen3 DSpark applies the norm at another place.
 * The projection may be block-FP8 [SPEC.md §12.2].
 */
#include "cpu_internal.h"

enum mtp_status mtp_cpu_op_main_proj_norm(const struct mtp_call *c)
{
	const struct mtp_dims *d = &c->dims;
	const struct mtp_ref_quant q = {c->params->proj_quant,
					c->params->act_quant_eps};
	void *proj = mtp_cpu_out(c, "", "main_proj_out");
	struct mtp_cpu_qw w;
	enum mtp_status st;

	mtp_cpu_qw_get(c, "", "main_proj_weight", &w);
	st = mtp_cpu_qlinear(c->act, mtp_cpu_in(c, "", "aux"), &w, &q, d->t,
			     d->p * d->h, d->h, proj);
	if (st)
		return st;
	return mtp_cpu_rmsnorm_rows(
		c->act, proj, mtp_cpu_in(c, "", "main_norm_weight"), d->t, d->h,
		(float)c->params->eps, c->params->rounding,
		mtp_cpu_out(c, "", "main_x"));
}
