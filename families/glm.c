/*
 * GLM-4.5's MTP layer: DeepSeek V3's math (SPEC.md §3) over a block with
 * GQA attention (q/k/v stacked into qkv_proj), whose engine loads the
 * target's lm_head as the first MTP layer's shared head (SPEC.md §12.5).
 */
#include "mtp/family.h"

const struct mtp_family_def mtp_family_glm = {
	.id = MTP_FAMILY_GLM,
	.name = "glm",
	.models = "GLM-4.5 (glm4_moe checkpoints)",
	.source = "vllm vllm/model_executor/models/glm4_moe_mtp.py @6e052ba8 "
		  "(vLLM 0.33.0 measured on a CPU, SPEC.md §12.5)",
	.fusion = MTP_FUSION_EH_PROJ,
	.mhc = false,
	.recycled = MTP_RECYCLED_POST_NORM,
	.ckpt = MTP_CKPT_LAYERS,
	.attn = MTP_ATTN_GQA,
	.lm_head_is_shared_head = true,
};
