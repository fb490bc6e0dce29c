/*
 * The head of a DSpark step [SPEC.md §13 DS-5..7] on the cpu backend,
 * shared by the synthetic step (dspark_step.c) and the captured one
 * (dspark_captured.c), as the reference shares reference/dspark_head.c:
 * the base logits (times logit_scale, rounded to act, as vLLM's
 * LogitsProcessor scales them), the Markov loop one block position at a
 * time, and the confidence of the hidden the drafter returns.
 */
#include "cpu_internal.h"

enum mtp_status mtp_cpu_dspark_head(const struct mtp_call *c,
				    enum mtp_dtype act, const void *hn,
				    const int64_t *ids)
{
	const size_t es = mtp_dtype_size(act);
	const int64_t t = c->dims.t, h = c->dims.h, v = c->dims.v;
	const int64_t rk = c->dims.r;
	const double scale = c->params->logit_scale;
	char *base = mtp_cpu_out(c, "", "base_logits");
	struct mtp_cpu_markov k = {act,
				   mtp_cpu_in(c, "", "markov_w1"),
				   mtp_cpu_in(c, "", "markov_w2"),
				   v,
				   rk,
				   scale,
				   NULL,
				   NULL,
				   NULL,
				   NULL};
	float *row = mtp_cpu_floats((size_t)v + 1);
	int64_t prev = t ? ids[0] : 0; /* T = 0: nothing to draft */
	enum mtp_status st = row ? MTP_OK : MTP_ERR_NOMEM;

	if (!st)
		st = mtp_cpu_linear(act, hn,
				    mtp_cpu_in(c, "", "lm_head_weight"), t, h,
				    v, base);
	for (int64_t i = 0; !st && scale != 1.0 && i < t; i++) {
		mtp_cpu_load(act, base, i * v, v, row);
		for (int64_t j = 0; j < v; j++)
			row[j] = (float)(scale * row[j]);
		mtp_cpu_store(act, base, i * v, v, row);
	}
	for (int64_t i = 0; !st && i < t; i++) {
		k.logits_in = base + (size_t)(i * v) * es;
		k.embed = (char *)mtp_cpu_out(c, "", "markov_embed") +
			  (size_t)(i * rk) * es;
		k.logits = (char *)mtp_cpu_out(c, "", "logits") +
			   (size_t)(i * v) * es;
		k.token = (int64_t *)mtp_cpu_out(c, "", "token") + i;
		if (c->params->dspark.markov_on_ids)
			prev = ids[i]; /* DSPARK_MARKOV_KEYED_ON_IDS */
		st = mtp_cpu_markov_rows(&k, &prev, 1);
		prev = *k.token;
	}
	mtp_cpu_free(row);
	return st ? st
		  : mtp_cpu_confidence_rows(act, mtp_cpu_out(c, "", "h"),
					    mtp_cpu_out(c, "", "markov_embed"),
					    mtp_cpu_in(c, "", "conf_weight"),
					    mtp_cpu_in(c, "", "conf_bias"), t,
					    h, rk,
					    mtp_cpu_out(c, "", "confidence"));
}
