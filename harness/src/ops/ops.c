/*
 * The op table (SPEC.md §11, FORMAT.md): names, attributes and the
 * tensors of every op, with their shape rules. Signatures that depend on the
 * family or on the attributes are expanded here and nowhere else.
 */
#include "mtp/op.h"

#include <stdio.h>
#include <string.h>

#define HC_ATTRS                                                               \
	"rms_eps pre_eps sinkhorn_eps post_mult? sinkhorn_iters norm_eps?"
/* post_mult may be left out: vLLM hard-codes 2.0 (SPEC.md §1) */
/* [§12.2] how float8 projection weights are computed (FORMAT.md v2) */
#define QUANT_ATTRS "proj_quant? act_quant_eps?"
#define V4_STEP_ATTRS "hc_mult hc_eps sinkhorn_iters post_mult? block_contract"

/* [§10, §5] Every op here reads token row t alone: the synthetic block's
 * attention stand-in is a per-row GEMM (SPEC.md §10.1), a chain runs each
 * row's own draft tokens (§5), and a captured block's outputs are inputs
 * (§12.3). A block with real attention would be MTP_ROWS_CAUSAL. */
#define ROWS MTP_ROWS_INDEPENDENT

static const struct mtp_op op_table[MTP_OP_COUNT] = {
	{MTP_OP_RMSNORM, "rmsnorm", "§2.1/§2.2",
	 "RMSNorm of each row, rounding eager or fused", "eps rounding", "", 0,
	 ROWS},
	{MTP_OP_ADD_RMSNORM, "add_rmsnorm", "§2.3",
	 "residual add + RMSNorm, returns (y, residual_out)", "eps rounding",
	 "", 0, ROWS},
	{MTP_OP_EMBED, "embed", "Step V3-0",
	 "row gather from the embedding table", "", "", 0, ROWS},
	{MTP_OP_FUSED_EH_NORM, "fused_eh_norm", "§7.1",
	 "pos-0 mask + enorm + hnorm + concat -> [T,2H]", "eps", "", 0, ROWS},
	{MTP_OP_FUSED_EMBED_EH_NORM, "fused_embed_eh_norm", "§7.2",
	 "fused_eh_norm with the embedding gather folded in", "eps", "", 0,
	 ROWS},
	{MTP_OP_EH_PROJ, "eh_proj", "Step V3-3", "[T,2H] -> [T,H] projection",
	 QUANT_ATTRS, "", 0, ROWS},
	{MTP_OP_FUSED_MTP_INPUT_RMSNORM, "fused_mtp_input_rmsnorm", "§7.3",
	 "pos-0 mask + enorm [T,H] + per-stream hnorm [T,M,H]", "eps", "", 0,
	 ROWS},
	{MTP_OP_EH_PROJ_HC, "eh_proj_hc", "Step V4-3",
	 "h_proj(p) + e_proj(e) broadcast over the M streams", QUANT_ATTRS, "",
	 0, ROWS},
	{MTP_OP_HC_PRE, "hc_pre", "§4.4.1",
	 "mixes, Sinkhorn, post_mix, comb_mix, layer_input", HC_ATTRS, "", 0,
	 ROWS},
	{MTP_OP_HC_POST, "hc_post", "§4.4.2",
	 "out[j] = post[j]*x + sum_i C[i,j]*R[i]", "", "", 0, ROWS},
	{MTP_OP_HC_FUSED_POST_PRE, "hc_fused_post_pre", "§4.4.3",
	 "hc_post then hc_pre on the new streams", HC_ATTRS, "", 0, ROWS},
	{MTP_OP_HC_HEAD, "hc_head", "§4.4.4",
	 "collapse M streams to one, variant cuda or rocm",
	 "rms_eps hc_eps variant", "", 0, ROWS},
	{MTP_OP_MTP_SHARED_HEAD_RMSNORM, "mtp_shared_head_rmsnorm", "§7.4",
	 "the shared head's RMSNorm (fused rounding)", "eps", "", 0, ROWS},
	{MTP_OP_LM_HEAD, "lm_head", "Step V3-6",
	 "logits [T,V] (float32) and greedy token", QUANT_ATTRS, "", 0, ROWS},
	{MTP_OP_ALL_REDUCE, "all_reduce", "§2.4, Step V3-7",
	 "sum of tensor-parallel partial outputs", "", "", 0, ROWS},
	{MTP_OP_MTP_BLOCK, "mtp_block", "§10",
	 "the synthetic block under either contract", "eps rounding",
	 V4_STEP_ATTRS, 0, ROWS},
	{MTP_OP_MTP_STEP, "mtp_step", "§3/§4 whole, §10",
	 "one draft step: inputs -> logits, token and recycled hidden",
	 "eps rounding " QUANT_ATTRS, V4_STEP_ATTRS " hc_head_variant", 0,
	 ROWS},
	{MTP_OP_DRAFT_CHAIN, "draft_chain", "§5",
	 "K draft steps with recycling, layer spec_step_idx % L",
	 "eps rounding num_steps num_layers pass_step_idx " QUANT_ATTRS,
	 V4_STEP_ATTRS " hc_head_variant", 0, ROWS},
	/* DSpark drafters (§13); appended: rows stay in enum order */
	{MTP_OP_MAIN_PROJ_NORM, "main_proj_norm", "§13 Step DS-1",
	 "DSpark combiner: main_x = main_norm(main_proj(aux))",
	 "eps rounding " QUANT_ATTRS, "", 0, ROWS},
	{MTP_OP_HC_COLLAPSE, "hc_collapse", "§13 Step DS-5",
	 "collapse M streams with a given pre-mix: sum_m pre[m]*x[m]", "", "",
	 0, ROWS},
	{MTP_OP_MARKOV_BIAS, "markov_bias", "§13 Step DS-6",
	 "Markov bias W2*W1[prev] added to the logits, greedy token", "", "", 0,
	 ROWS},
	{MTP_OP_CONFIDENCE, "confidence", "§13 Step DS-7",
	 "acceptance estimate sigmoid(w.[h; e] + b)", "", "", 0, ROWS},
	{MTP_OP_HC_PRE_DELAYED, "hc_pre_delayed", "§13 Step DS-4",
	 "hc_pre whose layer input uses the carried pre-mix (or stream 0)",
	 HC_ATTRS, "", 0, ROWS},
};

#undef ROWS

const struct mtp_op *mtp_op_get(enum mtp_op_id id)
{
	return (unsigned)id < MTP_OP_COUNT ? &op_table[id] : NULL;
}

const struct mtp_op *mtp_op_find(const char *name)
{
	for (int i = 0; i < MTP_OP_COUNT; i++)
		if (strcmp(op_table[i].name, name) == 0)
			return &op_table[i];
	return NULL;
}

#define A MTP_TC_ACT
#define P MTP_TC_PARAM
#define I MTP_TC_INDEX
#define QW MTP_TC_QWEIGHT
#define QS MTP_TC_QSCALE
#define END                                                                    \
	{                                                                      \
		NULL, NULL, MTP_TC_ACT, false                                  \
	}

/* Fixed signatures: inputs then outputs, each list ended by END. */
static const struct mtp_tspec sig_rmsnorm[] = {
	{"x", "R,H", A, 0}, {"weight", "H", A, 0}, END, {"y", "R,H", A, 0}, END};
static const struct mtp_tspec sig_add_rmsnorm[] = {
	{"x", "R,H", A, 0},
	{"residual", "R,H", A, 0},
	{"weight", "H", A, 0},
	END,
	{"y", "R,H", A, 0},
	{"residual_out", "R,H", A, 0},
	END};
static const struct mtp_tspec sig_embed[] = {{"input_ids", "T", I, 0},
					     {"embed_table", "V,H", A, 0},
					     END,
					     {"out", "T,H", A, 0},
					     END};
static const struct mtp_tspec sig_fused_eh_norm[] = {
	{"positions", "T", I, 0},     {"embeds", "T,H", A, 0},
	{"prev_hidden", "T,H", A, 0}, {"enorm_weight", "H", A, 0},
	{"hnorm_weight", "H", A, 0},  END,
	{"out", "T,2*H", A, 0},	      END};
static const struct mtp_tspec sig_fused_embed_eh_norm[] = {
	{"positions", "T", I, 0},
	{"input_ids", "T", I, 0},
	{"embed_table", "V,H", A, 0},
	{"prev_hidden", "T,H", A, 0},
	{"enorm_weight", "H", A, 0},
	{"hnorm_weight", "H", A, 0},
	END,
	{"out", "T,2*H", A, 0},
	END};
static const struct mtp_tspec sig_eh_proj[] = {
	{"x", "T,2*H", A, 0},
	{"weight", "H,2*H", QW, 0},
	{"weight_scale_inv", "H,2*H", QS, 1},
	END,
	{"y", "T,H", A, 0},
	END};
static const struct mtp_tspec sig_fused_mtp_input_rmsnorm[] = {
	{"embeds", "T,H", A, 0},
	{"positions", "T", I, 0},
	{"prev_hidden", "T,M,H", A, 0},
	{"enorm_weight", "H", A, 0},
	{"hnorm_weight", "H", A, 0},
	END,
	{"enorm_out", "T,H", A, 0},
	{"hnorm_out", "T,M,H", A, 0},
	END};
static const struct mtp_tspec sig_eh_proj_hc[] = {
	{"e", "T,H", A, 0},
	{"p", "T,M,H", A, 0},
	{"e_proj_weight", "H,H", QW, 0},
	{"e_proj_scale_inv", "H,H", QS, 1},
	{"h_proj_weight", "H,H", QW, 0},
	{"h_proj_scale_inv", "H,H", QS, 1},
	END,
	{"x", "T,M,H", A, 0},
	END};
static const struct mtp_tspec sig_hc_pre[] = {
	{"residual", "T,M,H", A, 0},  {"fn", "2*M+M*M,M*H", P, 0},
	{"scale", "3", P, 0},	      {"base", "2*M+M*M", P, 0},
	{"norm_weight", "H", A, 1},   END,
	{"post_mix", "T,M", P, 0},    {"comb_mix", "T,M,M", P, 0},
	{"layer_input", "T,H", A, 0}, END};
static const struct mtp_tspec sig_hc_post[] = {{"x", "T,H", A, 0},
					       {"residual", "T,M,H", A, 0},
					       {"post_mix", "T,M", P, 0},
					       {"comb_mix", "T,M,M", P, 0},
					       END,
					       {"out", "T,M,H", A, 0},
					       END};
static const struct mtp_tspec sig_hc_fused_post_pre[] = {
	{"x", "T,H", A, 0},
	{"residual", "T,M,H", A, 0},
	{"post_mix", "T,M", P, 0},
	{"comb_mix", "T,M,M", P, 0},
	{"fn", "2*M+M*M,M*H", P, 0},
	{"scale", "3", P, 0},
	{"base", "2*M+M*M", P, 0},
	{"norm_weight", "H", A, 1},
	END,
	{"residual_out", "T,M,H", A, 0},
	{"post_mix_out", "T,M", P, 0},
	{"comb_mix_out", "T,M,M", P, 0},
	{"layer_input", "T,H", A, 0},
	END};
static const struct mtp_tspec sig_hc_head[] = {{"x", "T,M,H", A, 0},
					       {"fn", "M,M*H", P, 0},
					       {"scale", "1", P, 0},
					       {"base", "M", P, 0},
					       END,
					       {"y", "T,H", A, 0},
					       END};
static const struct mtp_tspec sig_shared_head[] = {
	{"x", "T,H", A, 0}, {"weight", "H", A, 0}, END, {"y", "T,H", A, 0}, END};
static const struct mtp_tspec sig_lm_head[] = {
	{"x", "T,H", A, 0},
	{"weight", "V,H", QW, 0},
	{"weight_scale_inv", "V,H", QS, 1},
	END,
	{"logits", "T,V", MTP_TC_LOGITS, 0},
	{"token", "T", MTP_TC_TOKEN, 0},
	END};
static const struct mtp_tspec sig_all_reduce[] = {
	{"parts", "P,R,H", A, 0}, END, {"out", "R,H", A, 0}, END};

/* DSpark (§13): P is the number of target layers whose hidden states are
 * concatenated, R the Markov rank. */
static const struct mtp_tspec sig_main_proj_norm[] = {
	{"aux", "T,P,H", A, 0},
	{"main_proj_weight", "H,P*H", QW, 0},
	{"main_proj_scale_inv", "H,P*H", QS, 1},
	{"main_norm_weight", "H", A, 0},
	END,
	{"main_proj_out", "T,H", A, 0},
	{"main_x", "T,H", A, 0},
	END};
static const struct mtp_tspec sig_hc_collapse[] = {{"x", "T,M,H", A, 0},
						   {"pre_mix", "T,M", P, 0},
						   END,
						   {"y", "T,H", A, 0},
						   END};
static const struct mtp_tspec sig_markov_bias[] = {
	{"logits_in", "T,V", A, 0},
	{"prev_ids", "T", I, 0},
	{"markov_w1", "V,R", A, 0},
	{"markov_w2", "V,R", A, 0},
	END,
	{"markov_embed", "T,R", A, 0},
	{"logits", "T,V", A, 0},
	{"token", "T", MTP_TC_TOKEN, 0},
	END};
static const struct mtp_tspec sig_confidence[] = {{"hidden", "T,H", A, 0},
						  {"markov_embed", "T,R", A, 0},
						  {"weight", "1,H+R", P, 0},
						  {"bias", "1", P, 1},
						  END,
						  {"confidence", "T", P, 0},
						  END};
static const struct mtp_tspec sig_hc_pre_delayed[] = {
	{"residual", "T,M,H", A, 0},
	{"fn", "2*M+M*M,M*H", P, 0},
	{"scale", "3", P, 0},
	{"base", "2*M+M*M", P, 0},
	{"pre_mix_in", "T,M", P, 1},
	{"norm_weight", "H", A, 1},
	END,
	{"post_mix", "T,M", P, 0},
	{"comb_mix", "T,M,M", P, 0},
	{"layer_input", "T,H", A, 0},
	{"pre_mix", "T,M", P, 0},
	END};

/* The synthetic blocks' weights (§10.1, §10.2). */
static const struct mtp_tspec v3_block_w[] = {{"block.w_in", "H", A, 0},
					      {"block.W_a", "H,H", A, 0},
					      {"block.w_post", "H", A, 0},
					      {"block.W_gate", "F,H", A, 0},
					      {"block.W_up", "F,H", A, 0},
					      {"block.W_down", "H,F", A, 0},
					      END};
static const struct mtp_tspec v4_block_w[] = {
	{"block.hc_attn_fn", "2*M+M*M,M*H", P, 0},
	{"block.hc_attn_scale", "3", P, 0},
	{"block.hc_attn_base", "2*M+M*M", P, 0},
	{"block.hc_ffn_fn", "2*M+M*M,M*H", P, 0},
	{"block.hc_ffn_scale", "3", P, 0},
	{"block.hc_ffn_base", "2*M+M*M", P, 0},
	{"block.attn_norm_w", "H", A, 0},
	{"block.ffn_norm_w", "H", A, 0},
	{"block.W_a", "H,H", A, 0},
	{"block.W_gate", "F,H", A, 0},
	{"block.W_up", "F,H", A, 0},
	{"block.W_down", "H,F", A, 0},
	END};

/* One MTP layer's weights around the block, before and after it. */
static const struct mtp_tspec v3_pre_w[] = {
	{"enorm_weight", "H", A, 0},
	{"hnorm_weight", "H", A, 0},
	{"eh_proj_weight", "H,2*H", QW, 0},
	{"eh_proj_scale_inv", "H,2*H", QS, 1},
	END};
static const struct mtp_tspec v4_pre_w[] = {{"enorm_weight", "H", A, 0},
					    {"hnorm_weight", "H", A, 0},
					    {"e_proj_weight", "H,H", QW, 0},
					    {"e_proj_scale_inv", "H,H", QS, 1},
					    {"h_proj_weight", "H,H", QW, 0},
					    {"h_proj_scale_inv", "H,H", QS, 1},
					    END};
static const struct mtp_tspec v3_post_w[] = {
	{"shared_head_norm_weight", "H", A, 0},
	{"head_weight", "V,H", QW, 0},
	{"head_scale_inv", "V,H", QS, 1},
	END};
static const struct mtp_tspec v4_post_w[] = {
	{"hc_head_fn", "M,M*H", P, 0},
	{"hc_head_scale", "1", P, 0},
	{"hc_head_base", "M", P, 0},
	{"shared_head_norm_weight", "H", A, 0},
	{"head_weight", "V,H", QW, 0},
	{"head_scale_inv", "V,H", QS, 1},
	END};

static const struct mtp_tspec v3_step_out[] = {
	{"block_out", "T,H", A, 0},	 {"block_residual", "T,H", A, 0},
	{"hidden_pre", "T,H", A, 0},	 {"hidden_post", "T,H", A, 0},
	{"recycled", "T,H", A, 0},	 {"logits", "T,V", MTP_TC_LOGITS, 0},
	{"token", "T", MTP_TC_TOKEN, 0}, END};
static const struct mtp_tspec v4_step_out[] = {
	{"block_out", "T,H", A, 0},	 {"block_residual", "T,M,H", A, 0},
	{"post_mix", "T,M", P, 0},	 {"comb_mix", "T,M,M", P, 0},
	{"streams", "T,M,H", A, 0},	 {"recycled", "T,M*H", A, 0},
	{"head_hidden", "T,H", A, 0},	 {"logits", "T,V", MTP_TC_LOGITS, 0},
	{"token", "T", MTP_TC_TOKEN, 0}, END};

/* The captured block (FORMAT.md version 2, SPEC.md §12.3): the block's
 * input and outputs as the engine captured them are inputs; `block_in` is
 * also an output, what the glue must feed the block, judged against the
 * captured one. block_residual is optional under the internal contract. */
static const struct mtp_tspec v3_cap_in[] = {{"block_in", "T,H", A, 0},
					     {"block_out", "T,H", A, 0},
					     {"block_residual", "T,H", A, 0},
					     END};
/* [Step V3-8] the tensor-parallel captured step: the block's partials */
static const struct mtp_tspec v3_cap_tp_in[] = {
	{"block_in", "T,H", A, 0},
	{"block_out_parts", "P,T,H", A, 0},
	{"block_residual", "T,H", A, 0},
	END};
static const struct mtp_tspec v4_cap_deferred[] = {
	{"block_in", "T,M,H", A, 0},	   {"block_out", "T,H", A, 0},
	{"block_residual", "T,M,H", A, 0}, {"post_mix", "T,M", P, 0},
	{"comb_mix", "T,M,M", P, 0},	   END};
static const struct mtp_tspec v4_cap_internal[] = {
	{"block_in", "T,M,H", A, 0},
	{"block_out", "T,M,H", A, 0},
	{"block_residual", "T,M,H", A, 1},
	END};
static const struct mtp_tspec v3_cap_out[] = {
	{"block_in", "T,H", A, 0},
	{"hidden_pre", "T,H", A, 0},
	{"hidden_post", "T,H", A, 0},
	{"recycled", "T,H", A, 0},
	{"logits", "T,V", MTP_TC_LOGITS, 0},
	{"token", "T", MTP_TC_TOKEN, 0},
	END};
static const struct mtp_tspec v4_cap_out[] = {
	{"block_in", "T,M,H", A, 0},
	{"streams", "T,M,H", A, 0},
	{"recycled", "T,M*H", A, 0},
	{"head_hidden", "T,H", A, 0},
	{"logits", "T,V", MTP_TC_LOGITS, 0},
	{"token", "T", MTP_TC_TOKEN, 0},
	END};

#undef A
#undef P
#undef I
#undef QW
#undef QS

/* [§12.4] The target model's lm_head, carried by a dump so that
 * SHARED_HEAD_OVERWRITE can be named; the step itself never reads it. */
static const struct mtp_tspec target_head = {"target_head_weight", "V,H",
					     MTP_TC_ACT, 1};

struct sig_builder {
	struct mtp_signature *sig;
	bool overflow;
};

static void push(struct sig_builder *b, bool out, const struct mtp_tspec *s,
		 const char *prefix)
{
	struct mtp_signature *sig = b->sig;
	int *n = out ? &sig->n_out : &sig->n_in;
	struct mtp_tspec *dst = out ? sig->out : sig->in;

	if (*n >= MTP_SIG_MAX || sig->n_names >= 2 * MTP_SIG_MAX) {
		b->overflow = true;
		return;
	}
	dst[*n] = *s;
	if (prefix) {
		char *name = sig->names[sig->n_names++];

		snprintf(name, MTP_NAME_MAX, "%s%s", prefix, s->name);
		dst[*n].name = name;
	}
	(*n)++;
}

/* Pushes a list ended by END; returns the element after END. */
static const struct mtp_tspec *push_list(struct sig_builder *b, bool out,
					 const struct mtp_tspec *s,
					 const char *prefix)
{
	for (; s->name; s++)
		push(b, out, s, prefix);
	return s + 1;
}

static void push_fixed(struct sig_builder *b, const struct mtp_tspec *s)
{
	push_list(b, true, push_list(b, false, s, NULL), NULL);
}

static void push_layer_weights(struct sig_builder *b, bool v4,
			       const char *prefix, bool captured)
{
	push_list(b, false, v4 ? v4_pre_w : v3_pre_w, prefix);
	if (!captured)
		push_list(b, false, v4 ? v4_block_w : v3_block_w, prefix);
	push_list(b, false, v4 ? v4_post_w : v3_post_w, prefix);
}

/* One step's captured inputs and its outputs under prefix ("" or "step.s/"). */
static void push_captured_step(struct sig_builder *b, bool v4,
			       const struct mtp_params *p, const char *prefix)
{
	const struct mtp_tspec *in =
		!v4 ? (p->tp.step ? v3_cap_tp_in : v3_cap_in)
		: p->contract == MTP_CONTRACT_DEFERRED ? v4_cap_deferred
						       : v4_cap_internal;

	push_list(b, false, in, prefix);
	push_list(b, true, v4 ? v4_cap_out : v3_cap_out, prefix);
}

static void build_block(struct sig_builder *b, bool v4, bool with_state,
			enum mtp_contract contract)
{
	static const struct mtp_tspec v3_in[] = {
		{"x", "T,H", MTP_TC_ACT, 0},
		{"residual", "T,H", MTP_TC_ACT, 1},
		END};
	static const struct mtp_tspec v3_out[] = {
		{"h", "T,H", MTP_TC_ACT, 0},
		{"residual_out", "T,H", MTP_TC_ACT, 0},
		END};
	static const struct mtp_tspec v4_in[] = {
		{"x", "T,M,H", MTP_TC_ACT, 0},
		{"x", "T,H", MTP_TC_ACT, 0},
		{"post_mix", "T,M", MTP_TC_PARAM, 1},
		{"res_mix", "T,M,M", MTP_TC_PARAM, 1},
		{"residual", "T,M,H", MTP_TC_ACT, 1},
		END};
	static const struct mtp_tspec v4_deferred[] = {
		{"x_out", "T,H", MTP_TC_ACT, 0},
		{"residual_out", "T,M,H", MTP_TC_ACT, 0},
		{"post_mix_out", "T,M", MTP_TC_PARAM, 0},
		{"res_mix_out", "T,M,M", MTP_TC_PARAM, 0},
		END};
	static const struct mtp_tspec v4_internal[] = {
		{"x_out", "T,M,H", MTP_TC_ACT, 0}, END};

	if (!v4) {
		push_list(b, false, v3_in, NULL);
		push_list(b, false, v3_block_w, NULL);
		push_list(b, true, v3_out, NULL);
		return;
	}
	push(b, false, &v4_in[with_state ? 1 : 0], NULL);
	for (int i = 2; i < 5; i++)
		push(b, false, &v4_in[i], NULL);
	push_list(b, false, v4_block_w, NULL);
	push_list(b, true,
		  contract == MTP_CONTRACT_DEFERRED ? v4_deferred : v4_internal,
		  NULL);
}

static void build_step(struct sig_builder *b, bool v4,
		       const struct mtp_params *p)
{
	static const struct mtp_tspec in[] = {
		{"embeds", "T,H", MTP_TC_ACT, 0},
		{"positions", "T", MTP_TC_INDEX, 0},
		{"prev_hidden", "T,H", MTP_TC_ACT, 0},
		{"prev_hidden", "T,M*H", MTP_TC_ACT, 0},
		END};

	push(b, false, &in[0], NULL);
	push(b, false, &in[1], NULL);
	push(b, false, &in[v4 ? 3 : 2], NULL);
	push_layer_weights(b, v4, NULL, p->v2.captured);
	push(b, false, &target_head, NULL);
	if (p->v2.captured)
		push_captured_step(b, v4, p, NULL);
	else
		push_list(b, true, v4 ? v4_step_out : v3_step_out, NULL);
}

static void build_chain(struct sig_builder *b, bool v4,
			const struct mtp_params *p)
{
	static const struct mtp_tspec in[] = {
		{"embed_table", "V,H", MTP_TC_ACT, 0},
		{"input_ids", "T", MTP_TC_INDEX, 0},
		{"positions", "T", MTP_TC_INDEX, 0},
		{"prev_hidden", "T,H", MTP_TC_ACT, 0},
		{"prev_hidden", "T,M*H", MTP_TC_ACT, 0},
		{"next_tokens", "K-1,T", MTP_TC_INDEX, 0},
		{"next_tokens", "K-1,T", MTP_TC_INDEX, 1},
		END};
	char prefix[32];

	for (int i = 0; i < 3; i++)
		push(b, false, &in[i], NULL);
	push(b, false, &in[v4 ? 4 : 3], NULL);
	push(b, false, &in[p->num_steps > 1 ? 5 : 6], NULL);
	for (int64_t l = 0; l < p->num_layers; l++) {
		snprintf(prefix, sizeof(prefix), "layer.%lld/", (long long)l);
		push_layer_weights(b, v4, prefix, p->v2.captured);
	}
	push(b, false, &target_head, NULL);
	for (int64_t s = 0; s < p->num_steps; s++) {
		snprintf(prefix, sizeof(prefix), "step.%lld/", (long long)s);
		if (p->v2.captured)
			push_captured_step(b, v4, p, prefix);
		else
			push_list(b, true, v4 ? v4_step_out : v3_step_out,
				  prefix);
	}
}

static const struct mtp_tspec *const fixed_sigs[MTP_OP_COUNT] = {
	[MTP_OP_RMSNORM] = sig_rmsnorm,
	[MTP_OP_ADD_RMSNORM] = sig_add_rmsnorm,
	[MTP_OP_EMBED] = sig_embed,
	[MTP_OP_FUSED_EH_NORM] = sig_fused_eh_norm,
	[MTP_OP_FUSED_EMBED_EH_NORM] = sig_fused_embed_eh_norm,
	[MTP_OP_EH_PROJ] = sig_eh_proj,
	[MTP_OP_FUSED_MTP_INPUT_RMSNORM] = sig_fused_mtp_input_rmsnorm,
	[MTP_OP_EH_PROJ_HC] = sig_eh_proj_hc,
	[MTP_OP_HC_PRE] = sig_hc_pre,
	[MTP_OP_HC_POST] = sig_hc_post,
	[MTP_OP_HC_FUSED_POST_PRE] = sig_hc_fused_post_pre,
	[MTP_OP_HC_HEAD] = sig_hc_head,
	[MTP_OP_MTP_SHARED_HEAD_RMSNORM] = sig_shared_head,
	[MTP_OP_LM_HEAD] = sig_lm_head,
	[MTP_OP_ALL_REDUCE] = sig_all_reduce,
	[MTP_OP_MAIN_PROJ_NORM] = sig_main_proj_norm,
	[MTP_OP_HC_COLLAPSE] = sig_hc_collapse,
	[MTP_OP_MARKOV_BIAS] = sig_markov_bias,
	[MTP_OP_CONFIDENCE] = sig_confidence,
	[MTP_OP_HC_PRE_DELAYED] = sig_hc_pre_delayed,
};

enum mtp_status mtp_signature_build(const struct mtp_op *op,
				    const struct mtp_params *p,
				    const struct mtp_tensor_list *present,
				    struct mtp_signature *sig, char *err,
				    size_t errn)
{
	struct sig_builder b = {sig, false};
	bool v4 = mtp_family_mhc(p->family);

	sig->n_in = sig->n_out = sig->n_names = 0;
	if (fixed_sigs[op->id]) {
		push_fixed(&b, fixed_sigs[op->id]);
	} else if (op->id == MTP_OP_MTP_BLOCK) {
		bool state = present && mtp_list_find(present, "residual");

		build_block(&b, v4, state, p->contract);
	} else if (op->id == MTP_OP_MTP_STEP) {
		build_step(&b, v4, p);
	} else {
		build_chain(&b, v4, p);
	}
	if (b.overflow) {
		snprintf(err, errn,
			 "more than %d tensors (too many layers or steps)",
			 MTP_SIG_MAX);
		return MTP_ERR_LIMIT;
	}
	return MTP_OK;
}
