/*
 * The LM head [SPEC.md Step V3-6]: fp32 logits from an sgemm, stored with
 * no activation rounding (or rounded to bf16 under logits_dtype, §12.1), and the greedy token with torch.argmax's rules
 * (first index on ties, the first NaN beats every number).
 */
#include "cpu_internal.h"

int64_t mtp_cpu_argmax(const float *l, int64_t v)
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
				     int64_t v, int64_t h, double mup,
				     enum mtp_dtype logits_dt, void *logits,
				     int64_t *token)
{
	const bool wide = logits_dt == MTP_F32;
	float *l = wide ? logits : mtp_cpu_floats((size_t)(t * v) + 1);
	enum mtp_status st;

	if (!l)
		return MTP_ERR_NOMEM;
	st = mtp_cpu_qgemm(act, x, w, q, t, h, v, l);
	if (st)
		goto out;
		/* [§12.1] bf16 logits: rounded, and the token is the rounded ones' */
#pragma omp parallel for schedule(static) if (t * v >= MTP_CPU_PAR_MIN)
	for (int64_t r = 0; r < t; r++) {
		for (int64_t i = 0; mup != 0.0 && i < v; i++)
			l[r * v + i] = (float)((double)l[r * v + i] / mup);
		if (!wide) {
			mtp_cpu_round_row(logits_dt, l + r * v, v);
			mtp_cpu_store(logits_dt, logits, r * v, v, l + r * v);
		}
		token[r] = v ? mtp_cpu_argmax(l + r * v, v) : 0;
	}
out:
	if (!wide)
		mtp_cpu_free(l);
	return st;
}

enum mtp_status mtp_cpu_op_lm_head(const struct mtp_call *c)
{
	struct mtp_cpu_qw w;
	const struct mtp_ref_quant q = {c->params->proj_quant,
					c->params->act_quant_eps};

	mtp_cpu_qw_get(c, "", "weight", &w);
	return mtp_cpu_lm_head_rows(
		c->act, mtp_cpu_in(c, "", "x"), &w, &q, c->dims.t, c->dims.v,
		c->dims.h, c->params->logits_mup,
		mtp_conv_logits_dtype(&c->params->conv),
		mtp_cpu_out(c, "", "logits"), mtp_cpu_out(c, "", "token"));
}
