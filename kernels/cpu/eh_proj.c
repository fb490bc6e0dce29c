/*
 * The V3-family input projection [SPEC.md Step V3-3]: X0 [T,H] =
 * W_eh [H,2H] . cat(e, p) [T,2H], an sgemm with one rounding of its result.
 */
#include "cpu_internal.h"

enum mtp_status mtp_cpu_op_eh_proj(const struct mtp_call *c)
{
	return mtp_cpu_linear(
		c->act, mtp_cpu_in(c, "", "x"), mtp_cpu_in(c, "", "weight"),
		c->dims.t, 2 * c->dims.h, c->dims.h, mtp_cpu_out(c, "", "y"));
}
