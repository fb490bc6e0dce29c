/*
 * mHC hc_head [MTP-SPEC §4.4.4]: collapses the M streams of a token into one
 * hidden with sigmoid weights, in fp32 per token. The CUDA (tilelang)
 * variant takes the mixes from the unrounded streams and scales them by rho
 * afterwards; the ROCm (triton) variant first rounds x*rho to the
 * activation dtype.
 */
#include "cpu_internal.h"

struct head_args {
	enum mtp_dtype act;
	const void *x;
	const float *fn, *scale, *base;
	void *y;
	int64_t m, h;
	float rms_eps, hc_eps;
	enum mtp_hc_head_variant variant;
};

/* The M sigmoid weights of one token's streams x [M*H]; xhat scratch. */
static void head_weights(const struct head_args *g, const float *x,
			 float *xhat, float *pre)
{
	const int64_t m = g->m, n = m * g->h;
	const float rho = mtp_cpu_rms_inv(x, n, g->rms_eps);

	if (g->variant == MTP_HC_HEAD_CUDA) {
		for (int64_t s = 0; s < m; s++)
			pre[s] = mtp_cpu_scaled_dot(rho, x, g->fn + s * n, n);
	} else {
		for (int64_t k = 0; k < n; k++)
			xhat[k] = x[k] * rho;
		mtp_cpu_round_row(g->act, xhat, n);
		for (int64_t s = 0; s < m; s++)
			pre[s] = mtp_cpu_scaled_dot(1.0f, xhat, g->fn + s * n,
						    n);
	}
	for (int64_t s = 0; s < m; s++)
		pre[s] = mtp_cpu_sigmoid(pre[s] * g->scale[0] + g->base[s]) +
			 g->hc_eps;
}

static void head_one(const void *ctx, int64_t t, float *buf)
{
	const struct head_args *g = ctx;
	const int64_t m = g->m, h = g->h, n = m * h;
	float *x = buf, *xhat = x + n, *y = xhat + n, *pre = y + h;

	mtp_cpu_load(g->act, g->x, t * n, n, x);
	head_weights(g, x, xhat, pre);
	for (int64_t i = 0; i < h; i++)
		y[i] = pre[0] * x[i];
	for (int64_t s = 1; s < m; s++)
		for (int64_t i = 0; i < h; i++)
			y[i] += pre[s] * x[s * h + i];
	mtp_cpu_store(g->act, g->y, t * h, h, y);
}

enum mtp_status mtp_cpu_hc_head_rows(enum mtp_dtype act, const void *x,
				     const float *fn, const float *scale,
				     const float *base, int64_t t, int64_t m,
				     int64_t h, float rms_eps, float hc_eps,
				     enum mtp_hc_head_variant variant, void *y)
{
	const struct head_args g = {act, x, fn, scale, base, y, m, h,
				    rms_eps, hc_eps, variant};

	return mtp_cpu_rows(t, m * h, (size_t)(2 * m * h + h + m), head_one,
			    &g);
}

enum mtp_status mtp_cpu_op_hc_head(const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;

	return mtp_cpu_hc_head_rows(c->act, mtp_cpu_in(c, "", "x"),
				    mtp_cpu_in(c, "", "fn"),
				    mtp_cpu_in(c, "", "scale"),
				    mtp_cpu_in(c, "", "base"), c->dims.t,
				    c->dims.m, c->dims.h, (float)p->hc.rms_eps,
				    (float)p->hc_eps, p->variant,
				    mtp_cpu_out(c, "", "y"));
}
