/*
 * The LM head [SPEC.md Step V3-6]: fp32 logits from an sgemm, stored with
 * no activation rounding, and the greedy token with torch.argmax's rules
 * (first index on ties, the first NaN beats every number).
 */
#include "cpu_internal.h"

static int64_t argmax_row(const float *l, int64_t v)
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

enum mtp_status mtp_cpu_lm_head_rows(enum mtp_dtype act, const void *x,
				     const struct mtp_cpu_qw *w,
				     const struct mtp_ref_quant *q, int64_t t,
				     int64_t v, int64_t h, float *logits,
				     int64_t *token)
{
	enum mtp_status st = mtp_cpu_qgemm(act, x, w, q, t, h, v, logits);

	if (st)
		return st;
#pragma omp parallel for schedule(static) if (t * v >= MTP_CPU_PAR_MIN)
	for (int64_t r = 0; r < t; r++)
		token[r] = v ? argmax_row(logits + r * v, v) : 0;
	return MTP_OK;
}

enum mtp_status mtp_cpu_op_lm_head(const struct mtp_call *c)
{
	struct mtp_cpu_qw w;
	const struct mtp_ref_quant q = {c->params->proj_quant,
					c->params->act_quant_eps};

	mtp_cpu_qw_get(c, "", "weight", &w);
	return mtp_cpu_lm_head_rows(c->act, mtp_cpu_in(c, "", "x"), &w, &q,
				    c->dims.t, c->dims.v, c->dims.h,
				    mtp_cpu_out(c, "", "logits"),
				    mtp_cpu_out(c, "", "token"));
}
