/*
 * The op target_handoff (SPEC.md §5.5): what the target model hands draft
 * step 0, from its last decoder layer's output and residual through its
 * final norm. A dump carries it beside the chain it fed, so that what step
 * 0 receives is judged as well as what later steps receive (the recycled
 * hidden); HANDOFF_MISMATCH is its bug. V3-style families only: an mHC
 * target hands over its streams before hc_head, which no op judges yet.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {
	{"target_hidden", "T,H", MTP_TC_ACT, 0},
	{"target_residual", "T,H", MTP_TC_ACT, 0},
	{"target_norm_weight", "H", MTP_TC_ACT, 0},
	ROW_END,
	{"handoff", "T,H", MTP_TC_ACT, 0},
	ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;

	mtp_ref_target_handoff(mtp_refio_in(io, "target_hidden"),
			       mtp_refio_in(io, "target_residual"),
			       mtp_refio_in(io, "target_norm_weight"),
			       c->dims.t, c->dims.h, p->eps, p->rounding,
			       p->conv.add_norm_input,
			       mtp_params_handoff_pre_norm(p), c->act,
			       mtp_refio_out(io, "handoff"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	return 5.0 * (double)c->dims.t * (double)c->dims.h;
}

const struct mtp_op mtp_row_target_handoff = {
	.id = MTP_OP_TARGET_HANDOFF,
	.name = "target_handoff",
	.section = "§5.5",
	.summary = "the target's final add + norm: the hidden step 0 receives",
	.attrs = "eps rounding",
	.attrs_v4 = "",
	.rows = MTP_ROWS_INDEPENDENT,
	.default_family = MTP_FAMILY_DEEPSEEK_V3,
	.sig = sig,
	.ref = ref,
	.flops = flops,
};
