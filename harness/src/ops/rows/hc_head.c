/*
 * The op hc_head (SPEC.md §4.4.4): the M streams collapsed to one, variant
 * cuda or rocm. Judged under a budget of two roundings (rocm's bf16(x*rho)
 * feeds the mixes, then the store); its output comes out of the mix GEMM.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {{"x", "T,M,H", MTP_TC_ACT, 0},
				       {"fn", "M,M*H", MTP_TC_PARAM, 0},
				       {"scale", "1", MTP_TC_PARAM, 0},
				       {"base", "M", MTP_TC_PARAM, 0},
				       ROW_END,
				       {"y", "T,H", MTP_TC_ACT, 0},
				       ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;

	mtp_ref_hc_head(mtp_refio_in(io, "x"), mtp_refio_in(io, "fn"),
			mtp_refio_in(io, "scale"), mtp_refio_in(io, "base"),
			c->dims.t, c->dims.m, c->dims.h, p->hc.rms_eps,
			p->hc_eps, p->variant, c->act, mtp_refio_out(io, "y"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;

	mtp_flop_shape(c, &s);
	return mtp_flops_hc_head(&s);
}

const struct mtp_op mtp_row_hc_head = {
	.id = MTP_OP_HC_HEAD,
	.name = "hc_head",
	.section = "§4.4.4",
	.summary = "collapse M streams to one, variant cuda or rocm",
	ROW_MHC,
	.attrs = "rms_eps hc_eps variant",
	.budget_depth = 2,
	.bias = MTP_BIAS_ALL,
};
