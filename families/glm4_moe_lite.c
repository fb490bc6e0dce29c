/*
 * GLM-4.7-Flash (glm4_moe_lite): DeepSeek V3's layer (SPEC.md §3: enorm and
 * hnorm, eh_proj over [embedding, hidden], the block, the shared head's norm)
 * over an MLA block (with V3.2's indexer where the config has index_topk),
 * the layer's own shared head, rms_norm_eps 1e-5 in its config. vLLM 0.33.0's
 * layer returns the pre-norm sum and compute_logits norms it: what it
 * recycles is the question of SPEC.md §8.1.
 */
#include "mtp/family.h"

const struct mtp_family_def mtp_family_glm4_moe_lite = {
	.id = MTP_FAMILY_GLM4_MOE_LITE,
	.name = "glm4_moe_lite",
	.models = "GLM-4.7-Flash",
	.source = "vllm 0.33.0 vllm/model_executor/models/glm4_moe_lite_mtp.py "
		  "(Glm4MoeLiteMTP); transformers Glm4MoeLiteConfig",
	.fusion = MTP_FUSION_EH_PROJ,
	.mhc = false,
	.recycled = MTP_RECYCLED_POST_NORM,
	.ckpt = MTP_CKPT_LAYERS,
	.attn = MTP_ATTN_MLA,
	.lm_head_is_shared_head = false,
};
