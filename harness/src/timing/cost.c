/*
 * Bytes and flops of each op (timing.h): bytes as an ideal kernel moves them
 * (each input read once, each output written once; of a gathered input only
 * the batch's rows), flops of the math as the spec writes it, which the op's
 * row gives (op->flops, harness/src/ops/rows/). Used to turn times into
 * GB/s, GFLOP/s and % of peak.
 */
#include "mtp/timing.h"

/* The bytes of the batch's rows of a gathered input (embed_table,
 * markov_w1): T rows of the table's row length. */
static double gathered_bytes(const struct mtp_call *c, int i)
{
	int64_t row = 1;

	for (int k = 1; k < c->in[i].ndim; k++)
		row *= c->in[i].shape[k];
	return (double)(c->dims.t * row) *
	       (double)mtp_dtype_size(c->in[i].dtype);
}

void mtp_op_cost(const struct mtp_call *c, double *bytes, double *flops)
{
	const char *g = c->op->gathered;
	int gi = g ? mtp_call_in_index(c, g) : -1;
	double b = 0;

	for (int i = 0; i < c->n_in; i++)
		if (c->in[i].data || c->in[i].ndim)
			b += (double)mtp_tensor_nbytes(&c->in[i]);
	for (int i = 0; i < c->n_out; i++)
		b += (double)mtp_tensor_nbytes(&c->out[i]);
	if (gi >= 0) { /* only the gathered rows of the table are read */
		b -= (double)mtp_tensor_nbytes(&c->in[gi]);
		b += gathered_bytes(c, gi);
	}
	*bytes = b;
	*flops = c->op->flops ? c->op->flops(c) : 0;
}
