/*
 * The op lm_head (Step V3-6): the logits [T, V] in float32 (or the engine's
 * logits dtype, §12.1) and the greedy token.
 */
#include "rows.h"

#include "mtp/ref_captured.h"

static const struct mtp_tspec sig[] = {
	{"x", "T,H", MTP_TC_ACT, 0},
	{"weight", "V,H", MTP_TC_QWEIGHT, 0},
	{"weight_scale_inv", "V,H", MTP_TC_QSCALE, 1},
	ROW_END,
	{"logits", "T,V", MTP_TC_LOGITS, 0},
	{"token", "T", MTP_TC_TOKEN, 0},
	ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;
	const struct mtp_ref_quant q = {p->proj_quant, p->act_quant_eps};

	const struct mtp_ref_qweight hw = mtp_refio_qweight(io, "weight");
	const struct mtp_ref_v3_layer w = {.head_w = hw.w,
					   .head_scale = hw.scale_inv};
	/* logits_mup: no file sets it on lm_head; a mutant's head, a subcall
	 * of a step whose row divides by it, carries the step's [Step V3-9] */
	const struct mtp_ref_step_cfg cfg = {
		.conv = p->conv, .quant = q, .logits_mup = p->logits_mup};
	const struct mtp_ref_dims d = {
		.t = c->dims.t, .h = c->dims.h, .v = c->dims.v};

	mtp_ref_v3_head(mtp_refio_in(io, "x"), &w, &d, &cfg,
			mtp_refio_out(io, "logits"),
			mtp_refio_iout(io, "token"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	return mtp_flops_gemm((double)c->dims.t, (double)c->dims.h,
			      (double)c->dims.v);
}

const struct mtp_op mtp_row_lm_head = {
	.id = MTP_OP_LM_HEAD,
	.name = "lm_head",
	.section = "Step V3-6",
	.summary = "logits [T,V] (float32) and greedy token",
	ROW_SINGLE,
	.attrs = ROW_QUANT_ATTRS,
	.accum_output = "logits",
};
