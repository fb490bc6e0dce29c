/*
 * The V3-family input projection [SPEC.md Step V3-3]: X0 [T,H] =
 * W_eh [H,2H] . cat(e, p) [T,2H], an sgemm with one rounding of its result.
 */
#include "cpu_internal.h"

enum mtp_status mtp_cpu_op_eh_proj(const struct mtp_call *c)
{
	struct mtp_cpu_qw w;
	const struct mtp_ref_quant q = {c->params->proj_quant,
					c->params->act_quant_eps};

	mtp_cpu_qw_get(c, "", "weight", &w);
	return mtp_cpu_qlinear(c->act, mtp_cpu_in(c, "", "x"), &w, &q,
			       c->dims.t, 2 * c->dims.h, c->dims.h,
			       mtp_cpu_out(c, "", "y"));
}
