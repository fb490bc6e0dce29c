/*
 * The op hc_pre (SPEC.md §4.4.1): the mHC mixes of the M streams, the
 * Sinkhorn iterations, post_mix, comb_mix and the layer's input. Every
 * output comes out of the mix GEMM, where the signed-bias test applies.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {{"residual", "T,M,H", MTP_TC_ACT, 0},
				       {"fn", "2*M+M*M,M*H", MTP_TC_PARAM, 0},
				       {"scale", "3", MTP_TC_PARAM, 0},
				       {"base", "2*M+M*M", MTP_TC_PARAM, 0},
				       {"norm_weight", "H", MTP_TC_ACT, 1},
				       ROW_END,
				       {"post_mix", "T,M", MTP_TC_PARAM, 0},
				       {"comb_mix", "T,M,M", MTP_TC_PARAM, 0},
				       {"layer_input", "T,H", MTP_TC_ACT, 0},
				       ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;

	mtp_ref_hc_pre(mtp_refio_in(io, "residual"), mtp_refio_in(io, "fn"),
		       mtp_refio_in(io, "scale"), mtp_refio_in(io, "base"),
		       mtp_refio_in(io, "norm_weight"), &c->params->hc,
		       c->dims.t, c->dims.m, c->dims.h, c->act,
		       mtp_refio_out(io, "post_mix"),
		       mtp_refio_out(io, "comb_mix"),
		       mtp_refio_out(io, "layer_input"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;

	mtp_flop_shape(c, &s);
	return mtp_flops_hc_pre(&s);
}

const struct mtp_op mtp_row_hc_pre = {
	.id = MTP_OP_HC_PRE,
	.name = "hc_pre",
	.section = "§4.4.1",
	.summary = "mixes, Sinkhorn, post_mix, comb_mix, layer_input",
	ROW_HC_MIX,
	.bias = MTP_BIAS_ALL,
};
