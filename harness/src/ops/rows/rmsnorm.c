/*
 * The op rmsnorm (SPEC.md §2.1/§2.2): RMSNorm of each of R rows, its
 * rounding eager or fused. One row of the op table (ops.c).
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {{"x", "R,H", MTP_TC_ACT, 0},
				       {"weight", "H", MTP_TC_ACT, 0},
				       ROW_END,
				       {"y", "R,H", MTP_TC_ACT, 0},
				       ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;

	mtp_ref_rmsnorm(mtp_refio_in(io, "x"), mtp_refio_in(io, "weight"),
			c->dims.r, c->dims.h, p->eps, p->rounding, c->act,
			mtp_refio_out(io, "y"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	return 4.0 * (double)c->dims.r * (double)c->dims.h;
}

const struct mtp_op mtp_row_rmsnorm = {
	.id = MTP_OP_RMSNORM,
	.name = "rmsnorm",
	.section = "§2.1/§2.2",
	.summary = "RMSNorm of each row, rounding eager or fused",
	ROW_NORM,
};
