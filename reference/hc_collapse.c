/*
 * hc_collapse [SPEC.md §13 Step DS-5]: the M streams of a token summed with
 * given pre-mix weights, one rounding. DSpark V4.1 has no learned hc_head;
 * it collapses with the last FFN's pre-mix. hc_head (§4.4.4) ends with the
 * same sum over its own weights and calls this.
 */
#include "ref_internal.h"

void mtp_ref_hc_collapse(const double *x, const double *pre, int64_t t,
			 int64_t m, int64_t h, enum mtp_dtype act, double *y)
{
	for (int64_t r = 0; r < t; r++) {
		const double *xr = x + r * m * h;

		for (int64_t i = 0; i < h; i++) {
			double acc = 0.0;

			for (int64_t s = 0; s < m; s++)
				acc += pre[r * m + s] * xr[s * h + i];
			y[r * h + i] = mtp_round(act, acc);
		}
	}
}
