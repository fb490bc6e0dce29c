/*
 * mHC hc_post [SPEC.md §4.4.2]: the new streams after a sublayer,
 * out[j] = post[j]*x + sum_i C[i,j]*R[i], with row i of C the source stream
 * and column j the destination. Double arithmetic, one rounding on store.
 */
#include "ref_internal.h"

void mtp_ref_hc_post(const double *x, const double *residual,
		     const double *post_mix, const double *comb_mix, int64_t t,
		     int64_t m, int64_t h, enum mtp_dtype act, double *out)
{
	for (int64_t r = 0; r < t; r++) {
		const double *xr = x + r * h;
		const double *rr = residual + r * m * h;
		const double *c = comb_mix + r * m * m;

		for (int64_t j = 0; j < m; j++) {
			for (int64_t k = 0; k < h; k++) {
				double acc = post_mix[r * m + j] * xr[k];

				for (int64_t i = 0; i < m; i++)
					acc += c[i * m + j] * rr[i * h + k];
				out[(r * m + j) * h + k] = mtp_round(act, acc);
			}
		}
	}
}
