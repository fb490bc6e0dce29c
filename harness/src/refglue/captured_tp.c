/*
 * The tensor-parallel captured step (SPEC.md Step V3-8): the block's
 * partial outputs of every rank, reduced in the declared order (§2.5) at
 * the declared place, become the block output that the captured step's
 * glue and head then take as usual. Under reduce_at = final_norm the fused
 * all-reduce + norm adds the unrounded fp32 sum to the residual (a fused
 * add + RMSNorm, §2.3).
 */
#include "captured.h"

#include <stdlib.h>

double *mtp_captured_tp_block_out(const struct mtp_ref_io *io,
				  struct mtp_ref_step_cfg *cfg)
{
	const struct mtp_call *c = io->c;
	const struct mtp_tp_params *tp = &c->params->tp;
	int64_t t = c->dims.t, h = c->dims.h;
	size_t n = (size_t)(t * h);
	double *u = malloc(2 * n * sizeof(double) + 1);

	if (!u)
		return NULL;
	mtp_ref_all_reduce_order(mtp_refio_in(io, "block_out_parts"), c->dims.p,
				 t, h, tp->order, c->act, u + n, u);
	if (tp->at == MTP_REDUCE_AT_FINAL_NORM) {
		for (size_t i = 0; i < n; i++)
			u[i] = u[n + i]; /* the fp32 sum, unrounded */
		cfg->conv.final_add = MTP_FINAL_ADD_FUSED;
	}
	return u;
}
