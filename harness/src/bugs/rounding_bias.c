/*
 * ROUNDING_BIAS (SPEC.md §12.1, §12.4): directed rounding. The judge names
 * it with the signed-bias test (judge/bias.c), no hypothesis. The mutant:
 * every bfloat16/float16 output has a hashed half of its elements moved
 * one ulp toward zero, which is what truncating stores do to the elements
 * whose dropped bits were at least half an ulp.
 */
#include "bugs.h"

static enum mtp_status truncate_half(const struct mtp_call *c, uint32_t call_no,
				     struct mtp_tensor *t)
{
	size_t n = (size_t)mtp_tensor_numel(t);
	uint16_t *h = t->data;
	uint16_t inf = t->dtype == MTP_BF16 ? 0x7f80 : 0x7c00;

	(void)c;
	(void)call_no;
	if (t->dtype != MTP_BF16 && t->dtype != MTP_F16)
		return MTP_OK;
	for (size_t i = 0; i < n; i++) {
		uint16_t mag = h[i] & 0x7fff;
		uint32_t hash = (uint32_t)i * 2654435761u;

		if (mag && mag < inf && (hash >> 31))
			h[i] = (uint16_t)((h[i] & 0x8000) | (mag - 1));
	}
	return MTP_OK;
}

const struct mtp_bug_class mtp_bug_rounding_bias = {
	.name = "ROUNDING_BIAS",
	.section = "§12.1, §12.4",
	.history =
		"directed rounding (truncating bf16 stores; Triton's CPU "
		"interpreter truncates): every element within tolerance, the "
		"signed error one-sided",
	.applies_to = "bfloat16/float16 outputs (the signed-bias test)",
	.shows_in = "the sign of the error of every half-precision output",
	.flags = MTP_BUG_MUTANT,
	.after_run = truncate_half,
};
