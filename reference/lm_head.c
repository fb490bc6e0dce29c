/*
 * The LM head [SPEC.md Step V3-6, §12.1, §12.2]: logits stored in the
 * declared precision (float32 by default, no activation rounding; or
 * bfloat16, as vLLM's LogitsProcessor returns them), from a plain or a
 * block-quantized weight, and the greedy token with torch.argmax's rules
 * over the stored logits (first index on ties, the first NaN beats every
 * number).
 */
#include "ref_internal.h"

int64_t mtp_ref_argmax(const double *l, int64_t v)
{
	int64_t best = 0;

	for (int64_t i = 1; i < v; i++) {
		if (isnan(l[best]))
			break;
		if (isnan(l[i]) || l[i] > l[best])
			best = i;
	}
	return best;
}

void mtp_ref_lm_head_q(const double *x, struct mtp_ref_qweight w, int64_t t,
		       int64_t v, int64_t h, const struct mtp_ref_quant *q,
		       enum mtp_dtype logits_dtype, double *logits,
		       int64_t *token)
{
	mtp_ref_qlinear(x, w, t, h, v, q, logits_dtype, logits);
	for (int64_t r = 0; r < t; r++)
		token[r] = mtp_ref_argmax(logits + r * v, v);
}

void mtp_ref_lm_head_dt(const double *x, const double *w, int64_t t, int64_t v,
			int64_t h, enum mtp_dtype logits_dtype, double *logits,
			int64_t *token)
{
	mtp_ref_lm_head_q(x, (struct mtp_ref_qweight){w, NULL}, t, v, h, NULL,
			  logits_dtype, logits, token);
}

void mtp_ref_lm_head(const double *x, const double *w, int64_t t, int64_t v,
		     int64_t h, double *logits, int64_t *token)
{
	mtp_ref_lm_head_dt(x, w, t, v, h, MTP_F32, logits, token);
}
