/*
 * One step of DSpark's Markov head [SPEC.md §13 Step DS-6] for a batch of
 * rows: gather the previous token's rank-R embedding, project it to a
 * vocabulary bias with an sgemm (rounded to the activation dtype, as the
 * engine's LM-head output is, then scaled by logit_scale with one more
 * rounding, as its logits processor does), add it to the given logits with one more
 * rounding, and take the greedy token of the rounded result. The logits are
 * activation-dtype tensors, as vLLM's are.
 */
#include "cpu_internal.h"

static enum mtp_status markov_rows(const struct mtp_cpu_markov *k,
				   const int64_t *ids, int64_t t, float *bias,
				   float *z)
{
	const int64_t v = k->v;
	enum mtp_status st;

	st = mtp_cpu_embed_rows(k->act, k->w1, v, ids, t, k->r, k->embed);
	if (!st)
		st = mtp_cpu_gemm(k->act, k->embed, k->w2, t, k->r, v, bias);
	if (st)
		return st;
#pragma omp parallel for schedule(static) if (t * v >= MTP_CPU_PAR_MIN)
	for (int64_t r = 0; r < t; r++) {
		float *b = bias + r * v, *o = z + r * v;

		mtp_cpu_round_row(k->act, b, v);
		if (k->scale != 1.0) {
			for (int64_t i = 0; i < v; i++)
				b[i] *= (float)k->scale;
			mtp_cpu_round_row(k->act, b, v);
		}
		mtp_cpu_load(k->act, k->logits_in, r * v, v, o);
		for (int64_t i = 0; i < v; i++)
			o[i] += b[i];
		mtp_cpu_store(k->act, k->logits, r * v, v, o);
		mtp_cpu_round_row(k->act, o, v);
		k->token[r] = v ? mtp_cpu_argmax(o, v) : 0;
	}
	return MTP_OK;
}

enum mtp_status mtp_cpu_markov_rows(const struct mtp_cpu_markov *k,
				    const int64_t *ids, int64_t t)
{
	const size_t n = (size_t)(t * k->v) + 1;
	float *bias = mtp_cpu_floats(2 * n);
	enum mtp_status st = MTP_ERR_NOMEM;

	if (bias)
		st = markov_rows(k, ids, t, bias, bias + n);
	mtp_cpu_free(bias);
	return st;
}

enum mtp_status mtp_cpu_op_markov_bias(const struct mtp_call *c)
{
	int64_t *ids = mtp_cpu_indices(mtp_cpu_in_tensor(c, "prev_ids"));
	const struct mtp_cpu_markov k = {
		c->act,
		mtp_cpu_in(c, "", "markov_w1"),
		mtp_cpu_in(c, "", "markov_w2"),
		c->dims.v,
		c->dims.r,
		c->params->logit_scale,
		mtp_cpu_in(c, "", "logits_in"),
		mtp_cpu_out(c, "", "markov_embed"),
		mtp_cpu_out(c, "", "logits"),
		mtp_cpu_out(c, "", "token"),
	};
	enum mtp_status st = MTP_ERR_NOMEM;

	if (ids)
		st = mtp_cpu_markov_rows(&k, ids, c->dims.t);
	mtp_cpu_free(ids);
	return st;
}
