/*
 * MiMo-7B's MTP layer: DeepSeek V3's glue (SPEC.md §3) with the halves of
 * the fused input the other way round, input_proj(cat(hidden_layernorm(h),
 * token_layernorm(mask(e)))) (SPEC.md Step V3-2), over a Qwen2 (GQA)
 * block; the layer's final_layernorm output feeds the head and is what a
 * chain would recycle. The order is the model's own: XiaomiMiMo's
 * modeling_mimo.py concatenates [previous_hidden_states, input_embeds].
 * vLLM's layer asserts spec_step_idx == 0 (one MTP layer, one step of it).
 */
#include "mtp/family.h"

const struct mtp_family_def mtp_family_mimo = {
	.id = MTP_FAMILY_MIMO,
	.name = "mimo",
	.models = "MiMo-7B-Base, MiMo-7B-SFT, MiMo-7B-RL, MiMo-7B-RL-Zero",
	.source = "vllm 0.33.0 vllm/model_executor/models/mimo_mtp.py, sglang "
		  "0.5.23 sglang/srt/models/mimo_mtp.py; XiaomiMiMo/MiMo "
		  "modeling_mimo.py @051d98d0 (the order)",
	.fusion = MTP_FUSION_EH_PROJ_HIDDEN_FIRST,
	.mhc = false,
	.recycled = MTP_RECYCLED_POST_NORM,
	.ckpt = MTP_CKPT_LAYERS,
	.attn = MTP_ATTN_GQA,
	.lm_head_is_shared_head = false,
};
