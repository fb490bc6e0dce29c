/*
 * DSpark's confidence head [SPEC.md §13 Step DS-7]: a float32 linear to one
 * output over [hidden; markov_embed] (the embedding of the token the
 * position's bias came from), plus an optional bias, through a sigmoid.
 * The reference sums in double; the result is rounded once to float32.
 */
#include "ref_internal.h"

void mtp_ref_confidence(const double *hidden, const double *embed,
			const double *w, const double *bias, int64_t t,
			int64_t h, int64_t r, double *conf)
{
	for (int64_t row = 0; row < t; row++) {
		double z = mtp_ref_dot(w, hidden + row * h, h);

		if (r) /* R = 0: no embedding (it may have no storage) */
			z += mtp_ref_dot(w + h, embed + row * r, r);

		if (bias)
			z += bias[0];
		conf[row] = mtp_round(MTP_F32, mtp_ref_sigmoid(z));
	}
}
