/*
 * The op main_proj_norm (SPEC.md §13 Step DS-1): DSpark's combiner, the
 * hidden states of P target layers projected to H and normed.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {
	{"aux", "T,P,H", MTP_TC_ACT, 0},
	{"main_proj_weight", "H,P*H", MTP_TC_QWEIGHT, 0},
	{"main_proj_scale_inv", "H,P*H", MTP_TC_QSCALE, 1},
	{"main_norm_weight", "H", MTP_TC_ACT, 0},
	ROW_END,
	{"main_proj_out", "T,H", MTP_TC_ACT, 0},
	{"main_x", "T,H", MTP_TC_ACT, 0},
	ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_dims *d = &c->dims;
	const struct mtp_ref_quant q = {c->params->proj_quant,
					c->params->act_quant_eps};

	mtp_ref_main_proj_norm(mtp_refio_in(io, "aux"),
			       mtp_refio_qweight(io, "main_proj_weight"), &q,
			       mtp_refio_in(io, "main_norm_weight"), d->t, d->p,
			       d->h, c->params->eps, c->params->rounding,
			       c->act, mtp_refio_out(io, "main_proj_out"),
			       mtp_refio_out(io, "main_x"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;

	mtp_flop_shape(c, &s);
	return mtp_flops_gemm(s.t, s.p * s.h, s.h) + 4 * s.t * s.h;
}

const struct mtp_op mtp_row_main_proj_norm = {
	.id = MTP_OP_MAIN_PROJ_NORM,
	.name = "main_proj_norm",
	.section = "§13 Step DS-1",
	.summary = "DSpark combiner: main_x = main_norm(main_proj(aux))",
	ROW_SINGLE,
	.attrs = "eps rounding " ROW_QUANT_ATTRS,
	/* main_x is the norm of the rounded main_proj_out: a one-ulp flip of
	 * the GEMM's store (its sums ordered otherwise) moves main_x too */
	.budget_depth = 2,
};
