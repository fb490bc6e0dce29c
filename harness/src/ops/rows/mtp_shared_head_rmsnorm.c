/*
 * The op mtp_shared_head_rmsnorm (SPEC.md §7.4): the shared head's RMSNorm,
 * fused rounding; generated problems are deepseek_v4's.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {{"x", "T,H", MTP_TC_ACT, 0},
				       {"weight", "H", MTP_TC_ACT, 0},
				       ROW_END,
				       {"y", "T,H", MTP_TC_ACT, 0},
				       ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;

	mtp_ref_mtp_shared_head_rmsnorm(
		mtp_refio_in(io, "x"), mtp_refio_in(io, "weight"), c->dims.t,
		c->dims.h, c->params->eps, c->act, mtp_refio_out(io, "y"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	return 4 * (double)c->dims.t * (double)c->dims.h;
}

const struct mtp_op mtp_row_mtp_shared_head_rmsnorm = {
	.id = MTP_OP_MTP_SHARED_HEAD_RMSNORM,
	.name = "mtp_shared_head_rmsnorm",
	.section = "§7.4",
	.summary = "the shared head's RMSNorm (fused rounding)",
	ROW_MHC,
	.attrs = "eps",
};
