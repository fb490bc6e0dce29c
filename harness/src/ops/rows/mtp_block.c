/*
 * The op mtp_block (SPEC.md §10): the synthetic block under either block
 * contract; its tensors depend on the family (mHC streams or not), on the
 * contract and on whether the optional state (residual) is present. Judged
 * under the error budget along its flow; under an mHC family every output
 * lies downstream of an hc_pre (signed-bias test).
 */
#include "rows.h"

#include <stdlib.h>

static void build_sig(struct mtp_sig_build *b, const struct mtp_params *p,
		      const struct mtp_tensor_list *present)
{
	static const struct mtp_tspec v3_in[] = {
		{"x", "T,H", MTP_TC_ACT, 0},
		{"residual", "T,H", MTP_TC_ACT, 1},
		ROW_END};
	static const struct mtp_tspec v3_out[] = {
		{"h", "T,H", MTP_TC_ACT, 0},
		{"residual_out", "T,H", MTP_TC_ACT, 0},
		ROW_END};
	static const struct mtp_tspec v4_in[] = {
		{"x", "T,M,H", MTP_TC_ACT, 0},
		{"x", "T,H", MTP_TC_ACT, 0},
		{"post_mix", "T,M", MTP_TC_PARAM, 1},
		{"res_mix", "T,M,M", MTP_TC_PARAM, 1},
		{"residual", "T,M,H", MTP_TC_ACT, 1},
		ROW_END};
	static const struct mtp_tspec v4_deferred[] = {
		{"x_out", "T,H", MTP_TC_ACT, 0},
		{"residual_out", "T,M,H", MTP_TC_ACT, 0},
		{"post_mix_out", "T,M", MTP_TC_PARAM, 0},
		{"res_mix_out", "T,M,M", MTP_TC_PARAM, 0},
		ROW_END};
	static const struct mtp_tspec v4_internal[] = {
		{"x_out", "T,M,H", MTP_TC_ACT, 0}, ROW_END};
	bool state = present && mtp_list_find(present, "residual");

	if (!mtp_family_mhc(p->family)) {
		mtp_sig_push_list(b, false, v3_in, NULL);
		mtp_sig_push_list(b, false, mtp_sig_v3_block_w, NULL);
		mtp_sig_push_list(b, true, v3_out, NULL);
		return;
	}
	mtp_sig_push(b, false, &v4_in[state ? 1 : 0], NULL);
	for (int i = 2; i < 5; i++)
		mtp_sig_push(b, false, &v4_in[i], NULL);
	mtp_sig_push_list(b, false, mtp_sig_v4_block_w, NULL);
	mtp_sig_push_list(b, true,
			  p->contract == MTP_CONTRACT_DEFERRED ? v4_deferred
							       : v4_internal,
			  NULL);
}

static enum mtp_status ref_v4(const struct mtp_ref_io *io)
{
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_dims d;
	struct mtp_ref_v4_block b;

	mtp_refio_cfg(io->c, &cfg, &d);
	size_t tmh = (size_t)(d.t * d.m * d.h), tmm = (size_t)(d.t * d.m * d.m);
	/* the internal contract returns only x_out; the rest is scratch */
	double *scratch =
		calloc(tmh + tmm + (size_t)(d.t * d.m) + 1, sizeof(double));
	double *r1 = mtp_refio_out(io, "residual_out"),
	       *pm = mtp_refio_out(io, "post_mix_out");
	double *cm = mtp_refio_out(io, "res_mix_out");

	if (!scratch)
		return MTP_ERR_NOMEM;
	mtp_refio_v4_block(io, "", &b);
	mtp_ref_v4_block(mtp_refio_in(io, "x"), mtp_refio_in(io, "post_mix"),
			 mtp_refio_in(io, "res_mix"),
			 mtp_refio_in(io, "residual"), &b, &d, &cfg,
			 mtp_refio_out(io, "x_out"), r1 ? r1 : scratch,
			 pm ? pm : scratch + tmh,
			 cm ? cm : scratch + tmh + (size_t)(d.t * d.m));
	free(scratch);
	return MTP_OK;
}

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_dims d;
	struct mtp_ref_v3_layer w;

	if (mtp_family_mhc(io->c->params->family))
		return ref_v4(io);
	mtp_refio_cfg(io->c, &cfg, &d);
	mtp_refio_v3_layer(io, "", &w);
	mtp_ref_v3_block(mtp_refio_in(io, "x"), mtp_refio_in(io, "residual"),
			 &w.block, &d, &cfg, mtp_refio_out(io, "h"),
			 mtp_refio_out(io, "residual_out"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;

	mtp_flop_shape(c, &s);
	return mtp_flops_block(&s, mtp_family_mhc(c->params->family));
}

const struct mtp_op mtp_row_mtp_block = {
	.id = MTP_OP_MTP_BLOCK,
	.name = "mtp_block",
	.section = "§10",
	.summary = "the synthetic block under either contract",
	.attrs = "eps rounding",
	.attrs_v4 = ROW_V4_STEP_ATTRS,
	.rows = MTP_ROWS_INDEPENDENT,
	.scope = MTP_SCOPE_BLOCK,
	.build_sig = build_sig,
	.ref = ref,
	.flops = flops,
	.budget_depth = MTP_DEPTH_FLOW,
	.bias = MTP_BIAS_MHC,
};
