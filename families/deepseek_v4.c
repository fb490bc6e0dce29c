/*
 * DeepSeek V4 (Flash, Pro): e_proj and h_proj over M mHC streams, hc_head
 * before the final norm, the streams recycled; the checkpoint names the
 * layers mtp.{i}.* (SPEC.md §4, §6.2).
 */
#include "mtp/family.h"

const struct mtp_family_def mtp_family_deepseek_v4 = {
	.id = MTP_FAMILY_DEEPSEEK_V4,
	.name = "deepseek_v4",
	.models = "DeepSeek-V4-Flash, V4-Pro",
	.source = "vllm vllm/models/deepseek_v4/nvidia/mtp.py @0050eb86, "
		  ".../amd/mtp.py @02ea0451, .../xpu/mtp.py @055e47c2",
	.fusion = MTP_FUSION_HC_PROJ,
	.mhc = true,
	.recycled = MTP_RECYCLED_STREAMS,
	.ckpt = MTP_CKPT_MTP,
	.attn = MTP_ATTN_MLA,
	.lm_head_is_shared_head = false,
};
