/*
 * Residual add fused with RMSNorm [MTP-SPEC §2.3], single pass: the fp32 sum
 * gives the variance, the rounded sum is the new residual and is what gets
 * normalised, as in vLLM's fused_add_rms_norm.
 */
#include "cpu_internal.h"

struct add_norm_args {
	enum mtp_dtype act;
	const void *x, *res;
	const float *w;
	void *y, *res_out;
	int64_t h;
	float eps;
	enum mtp_rounding rnd;
};

static void add_norm_one(const void *ctx, int64_t r, float *buf)
{
	const struct add_norm_args *g = ctx;
	const int64_t h = g->h, o = r * h;
	float *x = buf, *b = buf + h, *s = b + h;
	float ss, rinv;

	mtp_cpu_load(g->act, g->x, o, h, x);
	mtp_cpu_load(g->act, g->res, o, h, b);
	for (int64_t i = 0; i < h; i++)
		s[i] = x[i] + b[i];
	ss = mtp_cpu_sumsq(s, h); /* the unrounded sum */
	rinv = isfinite(ss) ? 1.0f / sqrtf(ss / (float)h + g->eps)
			    : mtp_cpu_rms_from(mtp_cpu_sumsq_wide(x, b, h), h,
					       g->eps);
	mtp_cpu_round_row(g->act, s, h);
	mtp_cpu_store(g->act, g->res_out, o, h, s);
	mtp_cpu_norm_row(s, rinv, g->w, h, g->rnd, g->act, s);
	mtp_cpu_store(g->act, g->y, o, h, s);
}

enum mtp_status mtp_cpu_add_rmsnorm_rows(enum mtp_dtype act, const void *x,
					 const void *res, const void *w,
					 int64_t rows, int64_t h, float eps,
					 enum mtp_rounding rnd, void *y,
					 void *res_out)
{
	struct add_norm_args g = {act, x, res, NULL, y, res_out, h, eps, rnd};
	float *wf = mtp_cpu_widen(act, w, h);
	enum mtp_status st;

	if (!wf)
		return MTP_ERR_NOMEM;
	g.w = wf;
	st = mtp_cpu_rows(rows, h, 3 * (size_t)h, add_norm_one, &g);
	mtp_cpu_free(wf);
	return st;
}

enum mtp_status mtp_cpu_op_add_rmsnorm(const struct mtp_call *c)
{
	return mtp_cpu_add_rmsnorm_rows(
		c->act, mtp_cpu_in(c, "", "x"), mtp_cpu_in(c, "", "residual"),
		mtp_cpu_in(c, "", "weight"), c->dims.r, c->dims.h,
		(float)c->params->eps, c->params->rounding,
		mtp_cpu_out(c, "", "y"), mtp_cpu_out(c, "", "residual_out"));
}
