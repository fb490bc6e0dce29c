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

static enum mtp_status markov_rows(const struct mtp_call *c, const int64_t *ids,
				   float *bias, float *z)
{
	const struct mtp_dims *d = &c->dims;
	const void *in = mtp_cpu_in(c, "", "logits_in");
	void *out = mtp_cpu_out(c, "", "logits");
	int64_t *token = mtp_cpu_out(c, "", "token");
	void *embed = mtp_cpu_out(c, "", "markov_embed");
	const double scale = c->params->logit_scale;
	enum mtp_status st;

	st = mtp_cpu_embed_rows(c->act, mtp_cpu_in(c, "", "markov_w1"), d->v,
				ids, d->t, d->r, embed);
	if (!st)
		st = mtp_cpu_gemm(c->act, embed, mtp_cpu_in(c, "", "markov_w2"),
				  d->t, d->r, d->v, bias);
	if (st)
		return st;
#pragma omp parallel for schedule(static) if (d->t * d->v >= MTP_CPU_PAR_MIN)
	for (int64_t r = 0; r < d->t; r++) {
		float *b = bias + r * d->v, *o = z + r * d->v;

		mtp_cpu_round_row(c->act, b, d->v);
		if (scale != 1.0) {
			for (int64_t k = 0; k < d->v; k++)
				b[k] *= (float)scale;
			mtp_cpu_round_row(c->act, b, d->v);
		}
		mtp_cpu_load(c->act, in, r * d->v, d->v, o);
		for (int64_t k = 0; k < d->v; k++)
			o[k] += b[k];
		mtp_cpu_store(c->act, out, r * d->v, d->v, o);
		mtp_cpu_round_row(c->act, o, d->v);
		token[r] = d->v ? mtp_cpu_argmax(o, d->v) : 0;
	}
	return MTP_OK;
}

enum mtp_status mtp_cpu_op_markov_bias(const struct mtp_call *c)
{
	int64_t *ids = mtp_cpu_indices(mtp_cpu_in_tensor(c, "prev_ids"));
	const size_t n = (size_t)(c->dims.t * c->dims.v) + 1;
	float *bias = mtp_cpu_floats(2 * n);
	enum mtp_status st = MTP_ERR_NOMEM;

	if (ids && bias)
		st = markov_rows(c, ids, bias, bias + n);
	mtp_cpu_free(bias);
	mtp_cpu_free(ids);
	return st;
}
