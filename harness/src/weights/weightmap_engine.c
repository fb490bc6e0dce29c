/*
 * The loader rules of each engine release, as data (docs/WEIGHTS.md): what
 * the measured vLLM loaders (SPEC.md §12.5: vLLM 0.33.0 and 0.23.0, their
 * own load_weights run on CPU) do differently from the spec's §6 loader.
 * Each flag names the engine file and function it was read from; the
 * mapping code in weightmap.c asks these flags and nothing else.
 */
#include <string.h>

#include "mtp/weightmap.h"

static const struct mtp_wm_rules rules[MTP_ENGINE_COUNT] = {
	[MTP_ENGINE_SPEC] =
		{
			.name = "spec",
			.source = "SPEC.md §6: nvidia mtp.py @0050eb86, "
				  "deepseek_mtp.py @055e47c2",
			.v4_alias = true,
			.v4_eh_prefix = true,
		},
	[MTP_ENGINE_VLLM_0_33] =
		{
			.name = "vllm@0.33",
			.source = "vllm 0.33.0: deepseek_mtp.py DeepSeekMTP."
				  "load_weights, glm4_moe_mtp.py Glm4MoeMTP."
				  "load_weights, deepseek_v32/nvidia/mtp.py, "
				  "deepseek_v4/nvidia/mtp.py load_weights",
			/* fused_moe/layer.py: FusedMoE keeps its weights in a
		 * `routed_experts` submodule (load_weights expert loop) */
			.routed_experts = true,
			/* deepseek_mtp.py load_weights: "a tied top-level
		 * embed_tokens has no spec layer" -> loaded as is */
			.top_embed = true,
			/* glm4_moe_mtp.py load_weights: lm_head -> shared_head.head,
		 * stacked q/k/v -> qkv_proj */
			.glm_lm_head = true,
			.glm_qkv = true,
			/* deepseek_v2.py _try_load_fp8_indexer_wk (called by
		 * deepseek_mtp.py and deepseek_v32 mtp.py load_weights): an FP8
		 * indexer wk held until its scale arrives, `"weight_scale" in
		 * name` (both scale names), dequantized into wk_weights_proj
		 * shard 0 */
			.indexer_wk_scale = "weight_scale",
			/* deepseek_v4/nvidia/mtp.py load_weights: no alias step */
			.v4_alias = false,
			/* deepseek_v4/nvidia/mtp.py DeepSeekV4MultiTokenPredictor
		 * Layer.__init__: ReplicatedLinear(..., prefix=f"{prefix}.e_proj") */
			.v4_eh_prefix = true,
		},
	[MTP_ENGINE_VLLM_0_23] =
		{
			.name = "vllm@0.23",
			.source = "vllm 0.23.0: deepseek_mtp.py DeepSeekMTP."
				  "load_weights (V3, V3.2, GLM-5), "
				  "glm4_moe_mtp.py Glm4MoeMTP.load_weights, "
				  "deepseek_v2.py _try_load_fp8_indexer_wk, "
				  "models/deepseek_v4/nvidia/mtp.py "
				  "load_weights",
			/* fused_moe/layer.py: the expert weights on FusedMoE
		 * itself (measured: every 0.23 capture) */
			.routed_experts = false,
			/* deepseek_mtp.py load_weights: a top-level name has no
		 * spec layer (get_spec_layer_idx_from_weight_name) and is
		 * skipped */
			.top_embed = false,
			.glm_lm_head = true,
			.glm_qkv = true,
			/* deepseek_v2.py _try_load_fp8_indexer_wk: `is_scale =
		 * "weight_scale_inv" in name`; compressed-tensors'
		 * .weight_scale is not caught (its FP8 wk waits forever, the
		 * scale goes on to wk_weights_proj.weight_scale: a KeyError) */
			.indexer_wk_scale = "weight_scale_inv",
			/* deepseek_v4/nvidia/mtp.py load_weights: no alias step */
			.v4_alias = false,
			/* deepseek_v4/nvidia/mtp.py DeepSeekV4MultiTokenPredictor
		 * Layer.__init__: ReplicatedLinear(...) without prefix= for
		 * e_proj and h_proj (SPEC.md §12.5 #6) */
			.v4_eh_prefix = false,
		},
};

const struct mtp_wm_rules *mtp_wm_rules_of(enum mtp_engine e)
{
	return (unsigned)e < MTP_ENGINE_COUNT ? &rules[e] : &rules[0];
}

bool mtp_engine_parse(const char *s, enum mtp_engine *out)
{
	for (int i = 0; i < MTP_ENGINE_COUNT; i++) {
		if (strcmp(s, rules[i].name) == 0) {
			*out = (enum mtp_engine)i;
			return true;
		}
	}
	if (strcmp(s, "vllm") == 0) { /* the newest */
		*out = MTP_ENGINE_VLLM_0_33;
		return true;
	}
	return false;
}
