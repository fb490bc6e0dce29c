/*
 * The V4 shared head's fused RMSNorm kernel [SPEC.md §7.4]: an op of its
 * own in the op table, always with the fused rounding of §2.2.
 */
#include "cpu_internal.h"

enum mtp_status mtp_cpu_op_shared_head_rmsnorm(const struct mtp_call *c)
{
	return mtp_cpu_rmsnorm_rows(
		c->act, mtp_cpu_in(c, "", "x"), mtp_cpu_in(c, "", "weight"),
		c->dims.t, c->dims.h, (float)c->params->eps, MTP_ROUNDING_FUSED,
		mtp_cpu_out(c, "", "y"));
}
