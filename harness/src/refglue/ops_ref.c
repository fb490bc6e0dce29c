/*
 * Runs the scalar reference (reference/, harness/include/mtp/ref.h) on a call
 * whose tensors live in host memory: widens the inputs, runs the op row's
 * reference (op->ref, harness/src/ops/rows/) or, for a captured block, the
 * captured steps, and stores the outputs in their dtypes. This is the
 * judge's entry point and the `ref` backend's kernel.
 */
#include "captured.h"

/* pos0_mask = 0 [§12.1] for the ops that read positions only for the mask
 * (the fused input kernels): they see positions with no 0 (the steps take
 * the convention through their cfg). */
static void unmask_positions(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	int i = mtp_call_in_index(c, "positions");

	if (!c->op->pos_mask_only || i < 0 || !io->iin[i] ||
	    c->params->conv.pos0_mask != MTP_POS0_UNMASKED)
		return;
	for (int64_t k = 0; k < mtp_tensor_numel(&c->in[i]); k++)
		if (io->iin[i][k] == 0)
			io->iin[i][k] = 1;
}

enum mtp_status mtp_reference_run(const struct mtp_call *c)
{
	struct mtp_ref_io io;
	enum mtp_status st;

	/* an empty batch: no output to compute, and the widened array of an
	 * empty tensor is NULL, which the reference reads as an absent input */
	if (mtp_call_empty(c))
		return MTP_OK;
	if (!c->op->ref)
		return MTP_ERR_UNSUPPORTED;
	st = mtp_refio_open(&io, c);
	if (st)
		return st;
	unmask_positions(&io);
	/* a sub-call of a captured step (a mutant's) copies its params */
	if (c->params->v2.captured && c->op->captured_form)
		st = c->op->captured_ref ? c->op->captured_ref(&io)
					 : mtp_captured_run(&io);
	else
		st = c->op->ref(&io);
	if (st == MTP_OK)
		mtp_refio_store(&io);
	mtp_refio_close(&io);
	return st;
}
