/*
 * Inkling's MTP depth layer (vLLM 0.33.0 models/inkling/{nvidia,amd}/mtp.py,
 * the same file in both builds): input_proj over [hidden_norm(h) |
 * embed_norm(embed_norm_backbone(e))], the hidden first as MiMo's; the
 * embedding normed twice, first by the target's own embed_norm (its weight
 * loaded from model.llm.embed_norm.weight, the result rounded to the
 * activations) and then by the depth's embed_norm (ops/norm.py,
 * embed_dual_rmsnorm_cat with pre_norm_weight); no position-0 mask; a full
 * Inkling block whose output is `residual + sconv(mlp)`; the shared
 * chain_norm (chain_hidden_post_norm) after it, whose output both feeds the
 * head and is handed to the next depth (the post-norm hidden); and the
 * target's LM head with the logits divided by logits_mup_width_multiplier
 * (compute_logits: addmm with alpha = 1/mup, one rounding). A checkpoint
 * with chain_hidden_post_norm off has no final norm at all: not this row.
 */
#include "mtp/family.h"

const struct mtp_family_def mtp_family_inkling = {
	.id = MTP_FAMILY_INKLING,
	.name = "inkling",
	.models = "Inkling (chain_hidden_post_norm on)",
	.source = "vllm 0.33.0 vllm/models/inkling/{nvidia,amd}/mtp.py, "
		  "ops/norm.py (embed_dual_rmsnorm_cat); sglang 0.5.23 "
		  "srt/models/inkling.py",
	.fusion = MTP_FUSION_EH_PROJ_HIDDEN_FIRST,
	.mhc = false,
	.recycled = MTP_RECYCLED_POST_NORM,
	.ckpt = MTP_CKPT_LAYERS,
	.attn = MTP_ATTN_GQA,
	.lm_head_is_shared_head = false,
	.norm_weight = MTP_NORM_W_PLAIN,
	.embed_pre_norm = true,
	.logits_mup = true,
};
