/*
 * The DeepSeek V3 family (V3, V3.1, V3.2, R1; GLM-5 runs V3.2's layer): one
 * eh_proj over the concatenated embedding and hidden, one stream, the
 * post-norm hidden recycled (SPEC.md §3).
 */
#include "mtp/family.h"

const struct mtp_family_def mtp_family_deepseek_v3 = {
	.id = MTP_FAMILY_DEEPSEEK_V3,
	.name = "deepseek_v3",
	.models = "DeepSeek-V3, V3.1, V3.2, R1; GLM-5.x (V3.2's layer)",
	.source = "vllm vllm/model_executor/models/deepseek_mtp.py @055e47c2, "
		  "vllm/models/deepseek_v32/nvidia/mtp.py @03742c0c",
	.fusion = MTP_FUSION_EH_PROJ,
	.mhc = false,
	.recycled = MTP_RECYCLED_POST_NORM,
	.ckpt = MTP_CKPT_LAYERS,
	.attn = MTP_ATTN_MLA,
	.lm_head_is_shared_head = false,
};
