/*
 * The synthetic V3-family decoder block [SPEC.md §10.1]: a dense stand-in
 * for MLA + MoE with the real block's call contract, returning the last
 * sublayer output h and the running residual r1 separately (the final h + r1
 * add is the MTP layer's).
 */
#include "ref_internal.h"

#include <string.h>

void mtp_ref_v3_block(const double *x, const double *residual,
		      const struct mtp_ref_v3_block *b,
		      const struct mtp_ref_dims *d,
		      const struct mtp_ref_step_cfg *c, double *h_out,
		      double *r_out)
{
	const int64_t t = d->t, h = d->h;
	const size_t n = (size_t)(t * h);
	double *xn = mtp_ref_scratch(4 * n);
	double *r0 = xn + n;
	double *a = r0 + n;
	double *x1 = a + n;

	if (residual) {
		mtp_ref_add_rmsnorm_conv(x, residual, b->w_in, t, h, c->eps,
					 c->rounding, c->conv.add_norm_input,
					 c->act, xn, r0);
	} else {
		memcpy(r0, x, n * sizeof(*r0));
		mtp_ref_rmsnorm(x, b->w_in, t, h, c->eps, c->rounding, c->act,
				xn);
	}
	mtp_ref_linear(xn, b->W_a, t, h, h, c->act, a);
	mtp_ref_add_rmsnorm_conv(a, r0, b->w_post, t, h, c->eps, c->rounding,
				 c->conv.add_norm_input, c->act, x1, r_out);
	mtp_ref_swiglu(x1, b->W_gate, b->W_up, b->W_down, t, h, d->f,
		       c->conv.silu_mul_rounding, c->act, h_out);
	free(xn);
}
