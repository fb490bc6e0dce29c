/*
 * The op hc_collapse (SPEC.md §13 Step DS-5): the M streams collapsed with
 * a given pre-mix; generated problems are deepseek_v4's.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {{"x", "T,M,H", MTP_TC_ACT, 0},
				       {"pre_mix", "T,M", MTP_TC_PARAM, 0},
				       ROW_END,
				       {"y", "T,H", MTP_TC_ACT, 0},
				       ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;

	mtp_ref_hc_collapse(mtp_refio_in(io, "x"), mtp_refio_in(io, "pre_mix"),
			    c->dims.t, c->dims.m, c->dims.h, c->act,
			    mtp_refio_out(io, "y"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;

	mtp_flop_shape(c, &s);
	return 2 * s.t * s.m * s.h;
}

const struct mtp_op mtp_row_hc_collapse = {
	.id = MTP_OP_HC_COLLAPSE,
	.name = "hc_collapse",
	.section = "§13 Step DS-5",
	.summary = "collapse M streams with a given pre-mix: sum_m pre[m]*x[m]",
	ROW_MHC,
	.attrs = "",
};
