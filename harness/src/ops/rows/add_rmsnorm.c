/*
 * The op add_rmsnorm (SPEC.md §2.3): the residual add, then RMSNorm; the
 * engine convention says which of the two the norm reads (§12.1). Bench
 * times it against an all_reduce of two parts and an rmsnorm.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {{"x", "R,H", MTP_TC_ACT, 0},
				       {"residual", "R,H", MTP_TC_ACT, 0},
				       {"weight", "H", MTP_TC_ACT, 0},
				       ROW_END,
				       {"y", "R,H", MTP_TC_ACT, 0},
				       {"residual_out", "R,H", MTP_TC_ACT, 0},
				       ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;

	mtp_ref_add_rmsnorm_conv(
		mtp_refio_in(io, "x"), mtp_refio_in(io, "residual"),
		mtp_refio_in(io, "weight"), c->dims.r, c->dims.h, p->eps,
		p->rounding, p->conv.add_norm_input, c->act,
		mtp_refio_out(io, "y"), mtp_refio_out(io, "residual_out"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	return 5.0 * (double)c->dims.r * (double)c->dims.h;
}

const struct mtp_op mtp_row_add_rmsnorm = {
	.id = MTP_OP_ADD_RMSNORM,
	.name = "add_rmsnorm",
	.section = "§2.3",
	.summary = "residual add + RMSNorm, returns (y, residual_out)",
	ROW_NORM,
	.unfused_what = "add (all_reduce of 2) + rmsnorm",
	.unfused = {{"all_reduce", false, 2}, {"rmsnorm", false, 0}},
};
