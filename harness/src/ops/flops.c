/*
 * The flop formulas that several op rows share (rows/rows.h): a GEMM, the
 * mHC pieces (§4.4), the synthetic block (§10) and one step. Each row's
 * own formula is in its file; mtp_op_cost (timing) adds the bytes.
 */
#include "rows/rows.h"

void mtp_flop_shape(const struct mtp_call *c, struct mtp_flop_shape *s)
{
	const struct mtp_dims *d = &c->dims;

	s->t = (double)d->t;
	s->h = (double)d->h;
	s->m = (double)(d->m ? d->m : 1);
	s->f = (double)d->f;
	s->v = (double)d->v;
	s->r = (double)d->r;
	s->p = (double)d->p;
	s->iters = c->params->hc.sinkhorn_iters;
}

double mtp_flops_gemm(double rows, double in, double out)
{
	return 2 * rows * in * out;
}

double mtp_flops_hc_pre(const struct mtp_flop_shape *s)
{
	double t = s->t, h = s->h, m = s->m, mix = 2 * m + m * m;

	return t * (2 * mix * m * h + 4 * m * h + s->iters * 4 * m * m);
}

double mtp_flops_hc_post(const struct mtp_flop_shape *s)
{
	return s->t * s->m * s->h * (2 * s->m + 2);
}

double mtp_flops_hc_head(const struct mtp_flop_shape *s)
{
	return s->t * (2 * s->m * s->m * s->h + 4 * s->m * s->h);
}

/* The dense stand-ins, their norms and, for V4, the two mHC sublayer
 * wrappers. */
double mtp_flops_block(const struct mtp_flop_shape *s, bool v4)
{
	double t = s->t, h = s->h, m = s->m;
	double block = mtp_flops_gemm(t, h, h) +
		       3 * mtp_flops_gemm(t, h, s->f) + 20 * t * h;

	if (!v4)
		return block;
	return block + 2 * mtp_flops_hc_pre(s) + 2 * t * m * h * (m + 2);
}

/* The block plus the projection in front of it and the norms or hc_head
 * after it. */
double mtp_flops_step(const struct mtp_flop_shape *s, bool v4)
{
	double t = s->t, h = s->h, block = mtp_flops_block(s, v4);

	if (!v4)
		return mtp_flops_gemm(t, 2 * h, h) + block + 10 * t * h;
	return mtp_flops_gemm(t * (s->m + 1), h, h) + block +
	       mtp_flops_hc_head(s);
}
