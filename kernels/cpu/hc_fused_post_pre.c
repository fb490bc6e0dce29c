/*
 * mHC fused post+pre [SPEC.md §4.4.3], large-T semantics, single pass per
 * token: hc_post builds the new streams in fp32, they are rounded and
 * stored once, and hc_pre runs on the rounded streams still in scratch
 * (the streams are never read back from memory).
 */
#include "cpu_internal.h"

struct fpp_args {
	const struct mtp_cpu_hc_pre *k;
	const void *x, *residual;
	const float *post_in, *comb_in;
	void *res_out, *li;
	float *post, *comb;
};

static void fpp_one(const void *ctx, int64_t t, float *buf)
{
	const struct fpp_args *g = ctx;
	const struct mtp_cpu_hc_pre *k = g->k;
	const enum mtp_dtype act = k->act;
	const int64_t m = k->m, h = k->h, n = m * h;
	float *x = buf, *r = x + h, *s = r + n, *u = s + n, *li = u + h;
	float *mu = li + h;

	mtp_cpu_load(act, g->x, t * h, h, x);
	mtp_cpu_load(act, g->residual, t * n, n, r);
	mtp_cpu_hc_post_token(x, r, g->post_in + t * m, g->comb_in + t * m * m,
			      m, h, s);
	mtp_cpu_round_row(act, s, n);
	mtp_cpu_store(act, g->res_out, t * n, n, s);
	mtp_cpu_hc_pre_token(k, s, mu, u, g->post + t * m, g->comb + t * m * m,
			     li);
	mtp_cpu_store(act, g->li, t * h, h, li);
}

enum mtp_status mtp_cpu_op_hc_fused_post_pre(const struct mtp_call *c)
{
	const int64_t m = c->dims.m, h = c->dims.h;
	const void *norm_w = mtp_cpu_in(c, "", "norm_weight");
	struct mtp_cpu_hc_pre k;
	const struct fpp_args g = {
		&k,
		mtp_cpu_in(c, "", "x"),
		mtp_cpu_in(c, "", "residual"),
		mtp_cpu_in(c, "", "post_mix"),
		mtp_cpu_in(c, "", "comb_mix"),
		mtp_cpu_out(c, "", "residual_out"),
		mtp_cpu_out(c, "", "layer_input"),
		mtp_cpu_out(c, "", "post_mix_out"),
		mtp_cpu_out(c, "", "comb_mix_out"),
	};
	float *wf = NULL;
	enum mtp_status st;

	mtp_cpu_hc_pre_init(
		&k, mtp_cpu_in(c, "", "fn"), mtp_cpu_in(c, "", "scale"),
		mtp_cpu_in(c, "", "base"), &c->params->hc, m, h, c->act);
	if (norm_w) {
		wf = mtp_cpu_widen(c->act, norm_w, h);
		if (!wf)
			return MTP_ERR_NOMEM;
		k.norm_w = wf;
	}
	st = mtp_cpu_rows(c->dims.t, m * h,
			  (size_t)(2 * m * h + 3 * h + 2 * m + m * m), fpp_one,
			  &g);
	mtp_cpu_free(wf);
	return st;
}
