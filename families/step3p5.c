/*
 * Step-3.5 (Flash): DeepSeek V3's glue (eh_proj over [enorm(e), hnorm(h)],
 * no position-0 mask, the shared head's norm before the layer's own head)
 * with every RMSNorm zero-centred (GemmaRMSNorm, 1 + w: SPEC.md §2.6), and
 * the pre-norm sum chained from one draft step to the next on purpose:
 * SGLang 0.5.23's step3p5_mtp.py calls it the "standard Step-3.5 Flash
 * design" (each MTP layer fed the previous one's hidden_states_before_norm),
 * and vLLM 0.33.0's step3p5_mtp.py returns the block's output alone, which
 * its proposers feed back. Recycling the normed hidden is the bug here.
 */
#include "mtp/family.h"

const struct mtp_family_def mtp_family_step3p5 = {
	.id = MTP_FAMILY_STEP3P5,
	.name = "step3p5",
	.models = "Step-3.5-Flash",
	.source = "vllm 0.33.0 vllm/model_executor/models/step3p5_mtp.py; "
		  "sglang 0.5.23 srt/models/step3p5_mtp.py "
		  "(chain_mtp_hidden_states)",
	.fusion = MTP_FUSION_EH_PROJ,
	.mhc = false,
	.recycled = MTP_RECYCLED_PRE_NORM,
	.ckpt = MTP_CKPT_LAYERS,
	.attn = MTP_ATTN_GQA,
	.lm_head_is_shared_head = false,
	.norm_weight = MTP_NORM_W_ZERO_CENTRED,
};
