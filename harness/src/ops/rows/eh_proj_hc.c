/*
 * The op eh_proj_hc (Step V4-3): h_proj of the M streams plus e_proj of the
 * embedding, broadcast over the streams. Judged under an error budget of
 * two GEMM roundings and the add's.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {
	{"e", "T,H", MTP_TC_ACT, 0},
	{"p", "T,M,H", MTP_TC_ACT, 0},
	{"e_proj_weight", "H,H", MTP_TC_QWEIGHT, 0},
	{"e_proj_scale_inv", "H,H", MTP_TC_QSCALE, 1},
	{"h_proj_weight", "H,H", MTP_TC_QWEIGHT, 0},
	{"h_proj_scale_inv", "H,H", MTP_TC_QSCALE, 1},
	ROW_END,
	{"x", "T,M,H", MTP_TC_ACT, 0},
	ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_ref_quant q = {c->params->proj_quant,
					c->params->act_quant_eps};

	mtp_ref_eh_proj_hc_q(mtp_refio_in(io, "e"), mtp_refio_in(io, "p"),
			     mtp_refio_qweight(io, "e_proj_weight"),
			     mtp_refio_qweight(io, "h_proj_weight"), c->dims.t,
			     c->dims.m, c->dims.h, &q, c->act,
			     mtp_refio_out(io, "x"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;

	mtp_flop_shape(c, &s);
	return mtp_flops_gemm(s.t * (s.m + 1), s.h, s.h) + s.t * s.m * s.h;
}

const struct mtp_op mtp_row_eh_proj_hc = {
	.id = MTP_OP_EH_PROJ_HC,
	.name = "eh_proj_hc",
	.section = "Step V4-3",
	.summary = "h_proj(p) + e_proj(e) broadcast over the M streams",
	ROW_MHC,
	.attrs = ROW_QUANT_ATTRS,
	.budget_depth = 2,
};
