/*
 * The op hc_post (SPEC.md §4.4.2): the new streams, post[j] * x plus the
 * comb_mix of the old ones.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {{"x", "T,H", MTP_TC_ACT, 0},
				       {"residual", "T,M,H", MTP_TC_ACT, 0},
				       {"post_mix", "T,M", MTP_TC_PARAM, 0},
				       {"comb_mix", "T,M,M", MTP_TC_PARAM, 0},
				       ROW_END,
				       {"out", "T,M,H", MTP_TC_ACT, 0},
				       ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;

	mtp_ref_hc_post(mtp_refio_in(io, "x"), mtp_refio_in(io, "residual"),
			mtp_refio_in(io, "post_mix"),
			mtp_refio_in(io, "comb_mix"), c->dims.t, c->dims.m,
			c->dims.h, c->act, mtp_refio_out(io, "out"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;

	mtp_flop_shape(c, &s);
	return mtp_flops_hc_post(&s);
}

const struct mtp_op mtp_row_hc_post = {
	.id = MTP_OP_HC_POST,
	.name = "hc_post",
	.section = "§4.4.2",
	.summary = "out[j] = post[j]*x + sum_i C[i,j]*R[i]",
	ROW_MHC,
	.attrs = "",
};
