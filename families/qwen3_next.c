/*
 * Qwen3-Next and Qwen3.5 (dense and MoE; InternS2-Mobius subclasses the
 * latter): DeepSeek V3's glue under other names, with every RMSNorm
 * zero-centred (the weight is stored as w and multiplies as 1 + w, SPEC.md
 * §2.6). vLLM 0.33.0 and SGLang 0.5.23 alike: fc over
 * [pre_fc_norm_embedding(e), pre_fc_norm_hidden(h)], embedding first, no
 * position-0 mask (a dump declares pos0_mask = 0), one full-attention decoder
 * layer, the final add fused into `norm(hidden, residual)`, whose post-norm
 * output is both what the head reads (no second norm) and what is recycled;
 * the head is the target's lm_head (the checkpoint has no MTP head).
 */
#include "mtp/family.h"

const struct mtp_family_def mtp_family_qwen3_next = {
	.id = MTP_FAMILY_QWEN3_NEXT,
	.name = "qwen3_next",
	.models = "Qwen3-Next-80B-A3B, Qwen3.5 (dense and MoE), "
		  "InternS2-Mobius",
	.source = "vllm 0.33.0 vllm/model_executor/models/qwen3_next_mtp.py, "
		  "qwen3_5_mtp.py, layers/layernorm.py (GemmaRMSNorm); "
		  "sglang 0.5.23 srt/models/qwen3_next_mtp.py, qwen3_5_mtp.py",
	.fusion = MTP_FUSION_EH_PROJ,
	.mhc = false,
	.recycled = MTP_RECYCLED_POST_NORM,
	.ckpt = MTP_CKPT_MTP_FC,
	.attn = MTP_ATTN_GQA,
	.lm_head_is_shared_head = true,
	.norm_weight = MTP_NORM_W_ZERO_CENTRED,
};
