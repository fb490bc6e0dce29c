/*
 * Bytes and flops of each op (timing.h): bytes as an ideal kernel moves them
 * (each input read once, each output written once), flops of the math as the
 * spec writes it. Used to turn times into GB/s, GFLOP/s and % of peak.
 */
#include "mtp/timing.h"

static double gemm(double rows, double in, double out)
{
	return 2 * rows * in * out;
}

/* The shape an op's flops are counted in, as doubles (m is 1 without mHC). */
struct shape {
	double t, h, m, f, v;
	int iters;
};

static double hc_pre_flops(const struct shape *s)
{
	double t = s->t, h = s->h, m = s->m, mix = 2 * m + m * m;

	return t * (2 * mix * m * h + 4 * m * h + s->iters * 4 * m * m);
}

static double hc_post_flops(const struct shape *s)
{
	return s->t * s->m * s->h * (2 * s->m + 2);
}

static double hc_head_flops(const struct shape *s)
{
	return s->t * (2 * s->m * s->m * s->h + 4 * s->m * s->h);
}

/* Flops of the synthetic block (§10): the dense stand-ins, their norms and,
 * for V4, the two mHC sublayer wrappers. */
static double block_flops(const struct shape *s, bool v4)
{
	double t = s->t, h = s->h, m = s->m;
	double block = gemm(t, h, h) + 3 * gemm(t, h, s->f) + 20 * t * h;

	if (!v4)
		return block;
	return block + 2 * hc_pre_flops(s) + 2 * t * m * h * (m + 2);
}

/* Flops of one V3/V4 step (§10): the block plus the projection in front of
 * it and the norms or hc_head after it, without the vocabulary GEMM. */
static double step_flops(const struct shape *s, bool v4)
{
	double t = s->t, h = s->h, block = block_flops(s, v4);

	if (!v4)
		return gemm(t, 2 * h, h) + block + 10 * t * h;
	return gemm(t * (s->m + 1), h, h) + block + hc_head_flops(s);
}

static double flops_of(const struct mtp_call *c)
{
	const struct mtp_dims *d = &c->dims;
	const struct shape s = {
		.t = (double)d->t,
		.h = (double)d->h,
		.m = (double)(d->m ? d->m : 1),
		.f = (double)d->f,
		.v = (double)d->v,
		.iters = c->params->hc.sinkhorn_iters,
	};
	double t = s.t, h = s.h, m = s.m;
	bool v4 = mtp_family_mhc(c->params->family);

	switch (c->op->id) {
	case MTP_OP_RMSNORM: return 4.0 * (double)d->r * h;
	case MTP_OP_ADD_RMSNORM: return 5.0 * (double)d->r * h;
	case MTP_OP_FUSED_EH_NORM:
	case MTP_OP_FUSED_EMBED_EH_NORM: return 8 * t * h;
	case MTP_OP_FUSED_MTP_INPUT_RMSNORM: return 4 * t * h * (m + 1);
	case MTP_OP_MTP_SHARED_HEAD_RMSNORM: return 4 * t * h;
	case MTP_OP_EH_PROJ: return gemm(t, 2 * h, h);
	case MTP_OP_EH_PROJ_HC: return gemm(t * (m + 1), h, h) + t * m * h;
	case MTP_OP_LM_HEAD: return gemm(t, h, s.v);
	case MTP_OP_ALL_REDUCE: return (double)d->p * (double)d->r * h;
	case MTP_OP_HC_PRE:
	case MTP_OP_HC_PRE_DELAYED: return hc_pre_flops(&s);
	case MTP_OP_HC_POST: return hc_post_flops(&s);
	case MTP_OP_HC_FUSED_POST_PRE:
		return hc_post_flops(&s) + hc_pre_flops(&s);
	case MTP_OP_HC_HEAD: return hc_head_flops(&s);
	case MTP_OP_MTP_BLOCK: return block_flops(&s, v4);
	case MTP_OP_MTP_STEP: return step_flops(&s, v4) + gemm(t, h, s.v);
	case MTP_OP_DRAFT_CHAIN:
		return (double)c->params->num_steps *
		       (step_flops(&s, v4) + gemm(t, h, s.v));
	case MTP_OP_MAIN_PROJ_NORM:
		return gemm(t, (double)d->p * h, h) + 4 * t * h;
	case MTP_OP_HC_COLLAPSE: return 2 * t * m * h;
	case MTP_OP_MARKOV_BIAS: return gemm(t, (double)d->r, s.v) + t * s.v;
	case MTP_OP_CONFIDENCE: return 2 * t * (h + (double)d->r) + 4 * t;
	default: return 0;
	}
}

void mtp_op_cost(const struct mtp_call *c, double *bytes, double *flops)
{
	double b = 0;

	for (int i = 0; i < c->n_in; i++)
		if (c->in[i].data || c->in[i].ndim)
			b += (double)mtp_tensor_nbytes(&c->in[i]);
	for (int i = 0; i < c->n_out; i++)
		b += (double)mtp_tensor_nbytes(&c->out[i]);
	if (c->op->id == MTP_OP_EMBED ||
	    c->op->id == MTP_OP_FUSED_EMBED_EH_NORM) {
		/* only the gathered rows of the table are read */
		int i = mtp_call_in_index(c, "embed_table");

		b -= (double)mtp_tensor_nbytes(&c->in[i]);
		b += (double)(c->dims.t * c->dims.h) *
		     (double)mtp_dtype_size(c->in[i].dtype);
	}
	if (c->op->id == MTP_OP_MARKOV_BIAS) { /* T rows of markov_w1 */
		int i = mtp_call_in_index(c, "markov_w1");

		b -= (double)mtp_tensor_nbytes(&c->in[i]);
		b += (double)(c->dims.t * c->dims.r) *
		     (double)mtp_dtype_size(c->in[i].dtype);
	}
	*bytes = b;
	*flops = flops_of(c);
}
