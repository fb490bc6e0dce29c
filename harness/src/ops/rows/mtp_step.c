/*
 * The op mtp_step (SPEC.md §3/§4 whole, §10): one draft step from its
 * inputs to the logits, the token and the recycled hidden state, the block
 * synthetic or captured (§12.3; the captured form runs in refglue). Judged
 * under the error budget along its flow.
 */
#include "rows.h"

static void build_sig(struct mtp_sig_build *b, const struct mtp_params *p,
		      const struct mtp_tensor_list *present)
{
	static const struct mtp_tspec in[] = {
		{"embeds", "T,H", MTP_TC_ACT, 0},
		{"positions", "T", MTP_TC_INDEX, 0},
		{"prev_hidden", "T,H", MTP_TC_ACT, 0},
		{"prev_hidden", "T,M*H", MTP_TC_ACT, 0},
		ROW_END};
	bool v4 = mtp_family_mhc(p->family);

	(void)present;
	mtp_sig_push(b, false, &in[0], NULL);
	mtp_sig_push(b, false, &in[1], NULL);
	mtp_sig_push(b, false, &in[v4 ? 3 : 2], NULL);
	mtp_sig_push_layer(b, p, NULL);
	mtp_sig_push_target_head(b);
	mtp_sig_push_step_out(b, v4, p, NULL);
}

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_dims d;
	struct mtp_ref_step_in in = {mtp_refio_in(io, "embeds"),
				     mtp_refio_iin(io, "positions"),
				     mtp_refio_in(io, "prev_hidden")};
	struct mtp_ref_step_out o;

	mtp_refio_cfg(c, &cfg, &d);
	mtp_refio_step_out(io, "", &o);
	if (mtp_family_mhc(c->params->family)) {
		struct mtp_ref_v4_layer w;

		mtp_refio_v4_layer(io, "", &w);
		mtp_ref_mtp_step_v4(&in, &w, &d, &cfg, &o);
	} else {
		struct mtp_ref_v3_layer w;

		mtp_refio_v3_layer(io, "", &w);
		mtp_ref_mtp_step_v3(&in, &w, &d, &cfg, &o);
	}
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;

	mtp_flop_shape(c, &s);
	return mtp_flops_step(&s, mtp_family_mhc(c->params->family)) +
	       mtp_flops_gemm(s.t, s.h, s.v);
}

const struct mtp_op mtp_row_mtp_step = {
	.id = MTP_OP_MTP_STEP,
	.name = "mtp_step",
	.section = "§3/§4 whole, §10",
	.summary =
		"one draft step: inputs -> logits, token and recycled hidden",
	.attrs = "eps rounding logits_mup? " ROW_QUANT_ATTRS,
	.attrs_v4 = ROW_V4_STEP_ATTRS " hc_head_variant",
	.rows = MTP_ROWS_INDEPENDENT,
	.scope = MTP_SCOPE_STEP,
	.build_sig = build_sig,
	.captured_form = true,
	.ref = ref,
	.flops = flops,
	.budget_depth = MTP_DEPTH_FLOW,
	.bias = MTP_BIAS_MHC,
};
