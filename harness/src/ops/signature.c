/*
 * A problem's signature from its op's row (mtp_signature_build): a row's
 * fixed tensor list, or the list its build_sig expands from the family and
 * the attributes. What the block, step and chain rows share is here: the
 * builder and the tensors of one MTP layer, of a step's outputs and of the
 * captured block (rows/rows.h).
 */
#include "rows/rows.h"

#include <stdio.h>

#define A MTP_TC_ACT
#define P MTP_TC_PARAM
#define QW MTP_TC_QWEIGHT
#define QS MTP_TC_QSCALE
#define END ROW_END

const struct mtp_tspec mtp_sig_v3_block_w[] = {{"block.w_in", "H", A, 0},
					       {"block.W_a", "H,H", A, 0},
					       {"block.w_post", "H", A, 0},
					       {"block.W_gate", "F,H", A, 0},
					       {"block.W_up", "F,H", A, 0},
					       {"block.W_down", "H,F", A, 0},
					       END};
const struct mtp_tspec mtp_sig_v4_block_w[] = {
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
#undef QW
#undef QS

void mtp_sig_push(struct mtp_sig_build *b, bool out, const struct mtp_tspec *s,
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

const struct mtp_tspec *mtp_sig_push_list(struct mtp_sig_build *b, bool out,
					  const struct mtp_tspec *s,
					  const char *prefix)
{
	for (; s->name; s++)
		mtp_sig_push(b, out, s, prefix);
	return s + 1;
}

void mtp_sig_push_layer(struct mtp_sig_build *b, const struct mtp_params *p,
			const char *prefix)
{
	/* [Step V3-9] the target's embed_norm, for a row that norms e twice */
	static const struct mtp_tspec pre_norm = {"embed_pre_norm_weight", "H",
						  MTP_TC_ACT, 0};
	bool v4 = mtp_family_mhc(p->family), captured = p->v2.captured;

	mtp_sig_push_list(b, false, v4 ? v4_pre_w : v3_pre_w, prefix);
	if (mtp_family_embed_pre_norm(p->family))
		mtp_sig_push(b, false, &pre_norm, prefix);
	if (!captured)
		mtp_sig_push_list(b, false,
				  v4 ? mtp_sig_v4_block_w : mtp_sig_v3_block_w,
				  prefix);
	mtp_sig_push_list(b, false, v4 ? v4_post_w : v3_post_w, prefix);
}

void mtp_sig_push_step_out(struct mtp_sig_build *b, bool v4,
			   const struct mtp_params *p, const char *prefix)
{
	const struct mtp_tspec *in =
		!v4 ? (p->tp.step ? v3_cap_tp_in : v3_cap_in)
		: p->contract == MTP_CONTRACT_DEFERRED ? v4_cap_deferred
						       : v4_cap_internal;

	if (!p->v2.captured) {
		mtp_sig_push_list(b, true, v4 ? v4_step_out : v3_step_out,
				  prefix);
		return;
	}
	mtp_sig_push_list(b, false, in, prefix);
	mtp_sig_push_list(b, true, v4 ? v4_cap_out : v3_cap_out, prefix);
}

void mtp_sig_push_target_head(struct mtp_sig_build *b)
{
	static const struct mtp_tspec target_head = {"target_head_weight",
						     "V,H", MTP_TC_ACT, 1};

	mtp_sig_push(b, false, &target_head, NULL);
}

enum mtp_status mtp_signature_build(const struct mtp_op *op,
				    const struct mtp_params *p,
				    const struct mtp_tensor_list *present,
				    struct mtp_signature *sig, char *err,
				    size_t errn)
{
	struct mtp_sig_build b = {sig, false};

	sig->n_in = sig->n_out = sig->n_names = 0;
	if (op->sig)
		mtp_sig_push_list(&b, true,
				  mtp_sig_push_list(&b, false, op->sig, NULL),
				  NULL);
	else
		op->build_sig(&b, p, present);
	if (b.overflow) {
		snprintf(err, errn,
			 "more than %d tensors (too many layers or steps)",
			 MTP_SIG_MAX);
		return MTP_ERR_LIMIT;
	}
	return MTP_OK;
}
