/*
 * dspark_step with block = captured (SPEC.md §13.9.1): the engine's decoder
 * layers are a black box, so their captured input and outputs are inputs
 * and only the glue is judged: main_x, the block's positions and its input
 * (block_in, judged against the captured one as mtp_step's is), then after
 * the layers V4.1's final hc_post and hc_collapse, or Qwen3's final
 * add-norm, the head, the Markov loop and the confidence. The attribute
 * dspark_variant says which drafter (v4.1, the default, or qwen3).
 */
#include "rows.h"

#include "dspark_captured.h"

static const struct mtp_tspec common_in[] = {
	{"aux", "C,P,H", MTP_TC_ACT, 0},
	{"ctx_positions", "C", MTP_TC_INDEX, 0},
	{"ids", "T", MTP_TC_INDEX, 0},
	{"embed_table", "V,H", MTP_TC_ACT, 0},
	{"main_proj_weight", "H,P*H", MTP_TC_ACT, 0},
	{"main_norm_weight", "H", MTP_TC_ACT, 0},
	ROW_END};

/* The captured block: V4.1's (f, R and the last FFN's mixes) */
static const struct mtp_tspec v41_block[] = {
	{"block_in", "T,M,H", MTP_TC_ACT, 0},
	{"block_out", "T,H", MTP_TC_ACT, 0},
	{"block_residual", "T,M,H", MTP_TC_ACT, 0},
	{"post_mix", "T,M", MTP_TC_PARAM, 0},
	{"comb_mix", "T,M,M", MTP_TC_PARAM, 0},
	{"pre_mix", "T,M", MTP_TC_PARAM, 0},
	ROW_END};

/* ... and Qwen3's (the last layer's h and residual) */
static const struct mtp_tspec qwen3_block[] = {
	{"block_in", "T,H", MTP_TC_ACT, 0},
	{"block_out", "T,H", MTP_TC_ACT, 0},
	{"block_residual", "T,H", MTP_TC_ACT, 0},
	ROW_END};

static const struct mtp_tspec head_in[] = {
	{"norm_weight", "H", MTP_TC_ACT, 0},
	{"lm_head_weight", "V,H", MTP_TC_ACT, 0},
	{"markov_w1", "V,R", MTP_TC_ACT, 0},
	{"markov_w2", "V,R", MTP_TC_ACT, 0},
	{"conf_weight", "1,H+R", MTP_TC_PARAM, 0},
	{"conf_bias", "1", MTP_TC_PARAM, 1},
	ROW_END};

/* Outputs: the glue's before the block, the block input (V4.1 with the
 * streams after the final hc_post), the head's. */
static const struct mtp_tspec glue_out[] = {
	{"main_proj_out", "C,H", MTP_TC_ACT, 0},
	{"main_x", "C,H", MTP_TC_ACT, 0},
	{"positions", "T", MTP_TC_INDEX, 0},
	ROW_END};

static const struct mtp_tspec v41_out[] = {{"block_in", "T,M,H", MTP_TC_ACT, 0},
					   {"streams", "T,M,H", MTP_TC_ACT, 0},
					   ROW_END};

const struct mtp_tspec mtp_dspark_head_out[] = {
	{"h", "T,H", MTP_TC_ACT, 0},
	{"base_logits", "T,V", MTP_TC_ACT, 0},
	{"markov_embed", "T,R", MTP_TC_ACT, 0},
	{"logits", "T,V", MTP_TC_ACT, 0},
	{"token", "T", MTP_TC_TOKEN, 0},
	{"confidence", "T", MTP_TC_PARAM, 0},
	ROW_END};

void mtp_dspark_captured_sig(struct mtp_sig_build *b,
			     const struct mtp_params *p)
{
	const bool q = p->dspark_variant == MTP_DSPARK_QWEN3;

	mtp_sig_push_list(b, false, common_in, NULL);
	mtp_sig_push_list(b, false, q ? qwen3_block : v41_block, NULL);
	mtp_sig_push_list(b, false, head_in, NULL);
	mtp_sig_push_list(b, true, glue_out, NULL);
	if (q)
		mtp_sig_push(b, true, &qwen3_block[0], NULL);
	else
		mtp_sig_push_list(b, true, v41_out, NULL);
	mtp_sig_push_list(b, true, mtp_dspark_head_out, NULL);
}

enum mtp_status mtp_dspark_captured_ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_dims d;

	mtp_refio_cfg(c, &cfg, &d);
	mtp_ref_dspark_captured(
		&(struct mtp_ref_dspark_cap_in){
			mtp_refio_in(io, "aux"),
			mtp_refio_iin(io, "ctx_positions"),
			mtp_refio_iin(io, "ids"), p->v2.max_position,
			mtp_refio_in(io, "block_out"),
			mtp_refio_in(io, "block_residual"),
			mtp_refio_in(io, "post_mix"),
			mtp_refio_in(io, "comb_mix"),
			mtp_refio_in(io, "pre_mix")},
		&(struct mtp_ref_dspark_cap_w){
			mtp_refio_in(io, "embed_table"),
			mtp_refio_in(io, "main_proj_weight"),
			mtp_refio_in(io, "main_norm_weight"),
			mtp_refio_in(io, "norm_weight"),
			mtp_refio_in(io, "lm_head_weight"),
			mtp_refio_in(io, "markov_w1"),
			mtp_refio_in(io, "markov_w2"),
			mtp_refio_in(io, "conf_weight"),
			mtp_refio_in(io, "conf_bias")},
		&d, &cfg,
		&(struct mtp_ref_dspark_cap_cfg){
			c->dims.c, c->dims.p, c->dims.r,
			p->dspark_variant == MTP_DSPARK_QWEN3, p->logit_scale,
			p->dspark.markov_on_ids},
		&(struct mtp_ref_dspark_cap_out){
			mtp_refio_out(io, "main_proj_out"),
			mtp_refio_out(io, "main_x"),
			mtp_refio_iout(io, "positions"),
			mtp_refio_out(io, "block_in"),
			mtp_refio_out(io, "streams"), mtp_refio_out(io, "h"),
			mtp_refio_out(io, "base_logits"),
			mtp_refio_out(io, "markov_embed"),
			mtp_refio_out(io, "logits"),
			mtp_refio_iout(io, "token"),
			mtp_refio_out(io, "confidence")});
	return MTP_OK;
}
