/*
 * The embedding gather [Step V3-0] and the position-0 mask [Step V3-1]. The
 * mask is a select, not a multiply, so a masked row is exactly zero even if
 * the embedding held a NaN or an Inf.
 */
#include "ref_internal.h"

#include <string.h>

void mtp_ref_embed(const double *table, const int64_t *ids, int64_t t,
		   int64_t h, double *out)
{
	for (int64_t r = 0; r < t; r++)
		memcpy(out + r * h, table + ids[r] * h,
		       (size_t)h * sizeof(*out));
}

void mtp_ref_pos0_mask(const double *e, const int64_t *positions, int64_t t,
		       int64_t h, double *out)
{
	for (int64_t r = 0; r < t; r++) {
		for (int64_t i = 0; i < h; i++)
			out[r * h + i] = positions[r] == 0 ? 0.0 : e[r * h + i];
	}
}
