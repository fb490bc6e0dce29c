/*
 * The V4 shared head's fused RMSNorm kernel [SPEC.md §7.4]: an op of its
 * own in the op table, with the fused rounding of §2.2 whatever the case.
 */
#include "ref_internal.h"

void mtp_ref_mtp_shared_head_rmsnorm(const double *x, const double *w,
				     int64_t t, int64_t h, double eps,
				     enum mtp_dtype act, double *y)
{
	mtp_ref_rmsnorm(x, w, t, h, eps, MTP_ROUNDING_FUSED, act, y);
}
