/*
 * The op hc_fused_post_pre (SPEC.md §4.4.3): hc_post, then hc_pre on the
 * rounded new streams. Judged under a budget of three roundings (hc_post's
 * feeds hc_pre); every output but hc_post's residual_out comes out of the
 * mix GEMM. Bench times it against hc_post and hc_pre.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {
	{"x", "T,H", MTP_TC_ACT, 0},
	{"residual", "T,M,H", MTP_TC_ACT, 0},
	{"post_mix", "T,M", MTP_TC_PARAM, 0},
	{"comb_mix", "T,M,M", MTP_TC_PARAM, 0},
	{"fn", "2*M+M*M,M*H", MTP_TC_PARAM, 0},
	{"scale", "3", MTP_TC_PARAM, 0},
	{"base", "2*M+M*M", MTP_TC_PARAM, 0},
	{"norm_weight", "H", MTP_TC_ACT, 1},
	ROW_END,
	{"residual_out", "T,M,H", MTP_TC_ACT, 0},
	{"post_mix_out", "T,M", MTP_TC_PARAM, 0},
	{"comb_mix_out", "T,M,M", MTP_TC_PARAM, 0},
	{"layer_input", "T,H", MTP_TC_ACT, 0},
	ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;

	mtp_ref_hc_fused_post_pre(
		mtp_refio_in(io, "x"), mtp_refio_in(io, "residual"),
		mtp_refio_in(io, "post_mix"), mtp_refio_in(io, "comb_mix"),
		mtp_refio_in(io, "fn"), mtp_refio_in(io, "scale"),
		mtp_refio_in(io, "base"), mtp_refio_in(io, "norm_weight"),
		&c->params->hc, c->dims.t, c->dims.m, c->dims.h, c->act,
		mtp_refio_out(io, "residual_out"),
		mtp_refio_out(io, "post_mix_out"),
		mtp_refio_out(io, "comb_mix_out"),
		mtp_refio_out(io, "layer_input"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;

	mtp_flop_shape(c, &s);
	return mtp_flops_hc_post(&s) + mtp_flops_hc_pre(&s);
}

const struct mtp_op mtp_row_hc_fused_post_pre = {
	.id = MTP_OP_HC_FUSED_POST_PRE,
	.name = "hc_fused_post_pre",
	.section = "§4.4.3",
	.summary = "hc_post then hc_pre on the new streams",
	ROW_HC_MIX,
	.budget_depth = 3,
	.bias = MTP_BIAS_ALL,
	.bias_skip = "residual_out",
	.unfused_what = "hc_post + hc_pre",
	.unfused = {{"hc_post", false, 0}, {"hc_pre", false, 0}},
};
