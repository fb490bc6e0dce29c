/*
 * The op dspark_step (SPEC.md §13.9): one request's synthetic DSpark draft
 * block, from the target's aux hidden states to the draft tokens and their
 * confidence: L synthetic V4 layers (§10.2's weights, W_a the attention's
 * output projection, plus W_q, W_kv and kv_norm_w) with single-pass mHC and
 * a single-head attention over the context keys and the block's own under
 * block_mask. Its attribute num_layers sets L; C is the context rows.
 * Scope PIECE: no MTP step's rule or diagnosis (they read an MTP layer)
 * applies; judged under an error budget of fixed depth.
 */
#include "dspark_captured.h"
#include "rows.h"

#include <stdio.h>
#include <stdlib.h>

static void build_sig(struct mtp_sig_build *b, const struct mtp_params *p,
		      const struct mtp_tensor_list *present)
{
	static const struct mtp_tspec in[] = {
		{"aux", "C,P,H", MTP_TC_ACT, 0},
		{"ctx_positions", "C", MTP_TC_INDEX, 0},
		{"ids", "T", MTP_TC_INDEX, 0},
		{"positions", "T", MTP_TC_INDEX, 0},
		{"embed_table", "V,H", MTP_TC_ACT, 0},
		{"main_proj_weight", "H,P*H", MTP_TC_ACT, 0},
		{"main_norm_weight", "H", MTP_TC_ACT, 0},
		ROW_END,
		{"W_q", "H,H", MTP_TC_ACT, 0},
		{"W_kv", "H,H", MTP_TC_ACT, 0},
		{"kv_norm_w", "H", MTP_TC_ACT, 0},
		ROW_END,
		{"norm_weight", "H", MTP_TC_ACT, 0},
		{"lm_head_weight", "V,H", MTP_TC_ACT, 0},
		{"markov_w1", "V,R", MTP_TC_ACT, 0},
		{"markov_w2", "V,R", MTP_TC_ACT, 0},
		{"conf_weight", "1,H+R", MTP_TC_PARAM, 0},
		ROW_END,
		{"main_x", "C,H", MTP_TC_ACT, 0},
		{"sublayer_inputs", "2*L,T,H", MTP_TC_ACT, 0},
		{"pre_mixes", "2*L,T,M", MTP_TC_PARAM, 0},
		{"streams", "T,M,H", MTP_TC_ACT, 0},
		ROW_END};
	const struct mtp_tspec *layer, *head, *outs;
	char pfx[32];

	(void)present;
	if (p->v2.captured) { /* §13.9.1: the layers are the engine's */
		mtp_dspark_captured_sig(b, p);
		return;
	}
	layer = mtp_sig_push_list(b, false, in, NULL);
	head = layer + 4;
	for (int64_t l = 0; l < p->num_layers; l++) {
		snprintf(pfx, sizeof(pfx), "layer.%lld/", (long long)l);
		mtp_sig_push_list(b, false, mtp_sig_v4_block_w, pfx);
		mtp_sig_push_list(b, false, layer, pfx);
	}
	outs = mtp_sig_push_list(b, false, head, NULL);
	mtp_sig_push_list(b, true, outs,
			  NULL); /* then the head's, as captured */
	mtp_sig_push_list(b, true, mtp_dspark_head_out, NULL);
}

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;
	struct mtp_ref_dspark_layer *ly =
		calloc((size_t)p->num_layers, sizeof(*ly));
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_dims d;
	char pfx[32];

	if (!ly)
		return MTP_ERR_NOMEM;
	mtp_refio_cfg(c, &cfg, &d);
	for (int64_t l = 0; l < p->num_layers; l++) {
		snprintf(pfx, sizeof(pfx), "layer.%lld/", (long long)l);
		mtp_refio_v4_block(io, pfx, &ly[l].b);
		ly[l].W_q = mtp_refio_inp(io, pfx, "W_q");
		ly[l].W_kv = mtp_refio_inp(io, pfx, "W_kv");
		ly[l].kv_norm_w = mtp_refio_inp(io, pfx, "kv_norm_w");
	}
	mtp_ref_dspark_step(
		&(struct mtp_ref_dspark_in){mtp_refio_in(io, "aux"),
					    mtp_refio_iin(io, "ctx_positions"),
					    mtp_refio_iin(io, "ids"),
					    mtp_refio_iin(io, "positions")},
		&(struct mtp_ref_dspark_w){mtp_refio_in(io, "embed_table"),
					   mtp_refio_in(io, "main_proj_weight"),
					   mtp_refio_in(io, "main_norm_weight"),
					   ly, mtp_refio_in(io, "norm_weight"),
					   mtp_refio_in(io, "lm_head_weight"),
					   mtp_refio_in(io, "markov_w1"),
					   mtp_refio_in(io, "markov_w2"),
					   mtp_refio_in(io, "conf_weight")},
		&d, &cfg,
		&(struct mtp_ref_dspark_cfg){
			c->dims.c, c->dims.p, p->num_layers, c->dims.r,
			p->block_mask, p->logit_scale, p->dspark},
		&(struct mtp_ref_dspark_out){
			mtp_refio_out(io, "main_x"),
			mtp_refio_out(io, "sublayer_inputs"),
			mtp_refio_out(io, "pre_mixes"),
			mtp_refio_out(io, "streams"), mtp_refio_out(io, "h"),
			mtp_refio_out(io, "base_logits"),
			mtp_refio_out(io, "markov_embed"),
			mtp_refio_out(io, "logits"),
			mtp_refio_iout(io, "token"),
			mtp_refio_out(io, "confidence")});
	free(ly);
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	struct mtp_flop_shape s;
	const double l = (double)c->params->num_layers, n = c->dims.c;

	mtp_flop_shape(c, &s);
	return mtp_flops_gemm(n, s.p * s.h, s.h) +
	       l * (mtp_flops_block(&s, true) +
		    3 * mtp_flops_gemm(s.t, s.h, s.h) +
		    mtp_flops_gemm(n, s.h, s.h) + 4 * s.t * (n + s.t) * s.h) +
	       2 * mtp_flops_gemm(s.t, s.h, s.v) +
	       mtp_flops_gemm(s.t, s.r, s.v);
}

const struct mtp_op mtp_row_dspark_step = {
	.id = MTP_OP_DSPARK_STEP,
	.name = "dspark_step",
	.section = "§13.9",
	.summary = "synthetic DSpark block: aux states -> draft tokens, "
		   "confidence",
	.attrs = "eps rounding hc_mult hc_eps sinkhorn_iters post_mult? "
		 "num_layers block_mask? logit_scale? dspark_variant?",
	.attrs_v4 = "",
	.families = 1u << MTP_FAMILY_DEEPSEEK_V4,
	.rows = MTP_ROWS_MIXED,
	.scope = MTP_SCOPE_PIECE,
	.default_family = MTP_FAMILY_DEEPSEEK_V4,
	.build_sig = build_sig,
	.captured_form = true,
	.captured_ref = mtp_dspark_captured_ref,
	.ref = ref,
	.flops = flops,
	.budget_depth = 48,
	/* every output but the combiner's main_x lies downstream of
	 * hc_pre_delayed's mix GEMMs (per-token scalars: tested by rows, as
	 * a V4 step's); main_x by elements */
	.bias = MTP_BIAS_ALL,
	.bias_skip = "main_x",
	.gathered = "embed_table",
};
