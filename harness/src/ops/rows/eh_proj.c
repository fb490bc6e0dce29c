/*
 * The op eh_proj (Step V3-3): the [T, 2H] -> [T, H] projection, its weight
 * in the activation dtype or float8 with a block scale (§12.2).
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {
	{"x", "T,2*H", MTP_TC_ACT, 0},
	{"weight", "H,2*H", MTP_TC_QWEIGHT, 0},
	{"weight_scale_inv", "H,2*H", MTP_TC_QSCALE, 1},
	ROW_END,
	{"y", "T,H", MTP_TC_ACT, 0},
	ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_ref_quant q = {c->params->proj_quant,
					c->params->act_quant_eps};

	mtp_ref_eh_proj_q(mtp_refio_in(io, "x"),
			  mtp_refio_qweight(io, "weight"), c->dims.t, c->dims.h,
			  &q, c->act, mtp_refio_out(io, "y"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	double t = (double)c->dims.t, h = (double)c->dims.h;

	return mtp_flops_gemm(t, 2 * h, h);
}

const struct mtp_op mtp_row_eh_proj = {
	.id = MTP_OP_EH_PROJ,
	.name = "eh_proj",
	.section = "Step V3-3",
	.summary = "[T,2H] -> [T,H] projection",
	ROW_SINGLE,
	.attrs = ROW_QUANT_ATTRS,
	.accum_output = "y",
};
