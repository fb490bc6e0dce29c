/*
 * The op all_reduce (SPEC.md §2.4, Step V3-7): the sum of P tensor-parallel
 * partial outputs, in the order the spec fixes.
 */
#include "rows.h"

static const struct mtp_tspec sig[] = {{"parts", "P,R,H", MTP_TC_ACT, 0},
				       ROW_END,
				       {"out", "R,H", MTP_TC_ACT, 0},
				       ROW_END};

static enum mtp_status ref(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;

	mtp_ref_all_reduce_order(mtp_refio_in(io, "parts"), c->dims.p,
				 c->dims.r, c->dims.h, c->params->tp.order,
				 c->act, NULL, mtp_refio_out(io, "out"));
	return MTP_OK;
}

static double flops(const struct mtp_call *c)
{
	return (double)c->dims.p * (double)c->dims.r * (double)c->dims.h;
}

const struct mtp_op mtp_row_all_reduce = {
	.id = MTP_OP_ALL_REDUCE,
	.name = "all_reduce",
	.section = "§2.4, Step V3-7",
	.summary = "sum of tensor-parallel partial outputs",
	ROW_SINGLE,
	.attrs = "",
};
