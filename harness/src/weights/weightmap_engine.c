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
			/* deepseek_v32 mtp.py load_weights: FP8 indexer wk held with
		 * its scale, dequantized into wk_weights_proj shard 0 */
			.indexer_wk_dequant = true,
			/* deepseek_v4/nvidia/mtp.py load_weights: no alias step */
			.v4_alias = false,
		},
	[MTP_ENGINE_VLLM_0_23] =
		{
			.name = "vllm@0.23",
			.source =
				"vllm 0.23.0: deepseek_mtp.py, glm4_moe_mtp.py "
				"load_weights (SPEC.md §12.5; V3 and GLM "
				"captured here, bf16 and FP8)",
			/* measured: the 0.23 V3 / GLM captures */
			.routed_experts = false,
			.top_embed = false,
			.glm_lm_head = true,
			.glm_qkv = true,
			.indexer_wk_dequant = false,
			.v4_alias = false,
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
