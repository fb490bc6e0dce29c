/*
 * Kimi K3's MTP layer: DeepSeek V3's glue (SPEC.md §3) whose final fused
 * add-RMSNorm hands the head the normed hidden and the next draft step the
 * sum before the norm, on purpose ("the pre-norm recurrent state", vLLM's
 * models/kimi_k3/nvidia/mtp.py): what it recycles is the pre-norm hidden
 * (SPEC.md §8.1), so recycling the post-norm one is the bug here.
 */
#include "mtp/family.h"

const struct mtp_family_def mtp_family_kimi_k3 = {
	.id = MTP_FAMILY_KIMI_K3,
	.name = "kimi_k3",
	.models = "Kimi K3",
	.source = "vllm 0.33.0 vllm/models/kimi_k3/{nvidia,amd}/mtp.py "
		  "(KimiK3MultiTokenPredictorLayer), "
		  "models/kimi_k3/common/mtp.py (fused_mtp_input)",
	.fusion = MTP_FUSION_EH_PROJ,
	.mhc = false,
	.recycled = MTP_RECYCLED_PRE_NORM,
	.ckpt = MTP_CKPT_LAYERS,
	.attn = MTP_ATTN_MLA,
	.lm_head_is_shared_head = false,
};
