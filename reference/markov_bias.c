/*
 * One step of DSpark's sequential Markov head [SPEC.md §13 Step DS-6] for a
 * batch of rows: the rank-R embedding of the token sampled before (an exact
 * gather from markov_w1), its vocabulary bias through markov_w2 (rounded
 * like any LM-head output, then scaled by the drafter's logit scale with one
 * more rounding, as its logits processor does), the biased logits (the add
 * rounds: both are activation-dtype tensors in vLLM), and the greedy token.
 */
#include "ref_internal.h"

#include <string.h>

void mtp_ref_markov_bias(const double *logits_in, const int64_t *prev_ids,
			 const double *w1, const double *w2, int64_t t,
			 int64_t v, int64_t r, double scale, enum mtp_dtype act,
			 double *embed, double *logits, int64_t *token)
{
	for (int64_t row = 0; row < t; row++) {
		double *e = embed + row * r;
		const double *in = logits_in + row * v;
		double *out = logits + row * v;

		memcpy(e, w1 + prev_ids[row] * r, (size_t)r * sizeof(*e));
		for (int64_t k = 0; k < v; k++) {
			double b =
				mtp_round(act, mtp_ref_dot(w2 + k * r, e, r));

			b = mtp_round(act, scale * b); /* exact for scale 1 */

			out[k] = mtp_round(act, in[k] + b);
		}
		token[row] = mtp_ref_argmax(out, v);
	}
}
