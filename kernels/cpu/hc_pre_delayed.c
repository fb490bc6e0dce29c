/*
 * DSpark's delayed hc_pre [SPEC.md §13 Step DS-4]: the mixes of hc_pre
 * (§4.4.1) from the streams, but the layer input collapses the streams with
 * the pre-mix carried from the previous sublayer (stream 0 as it is when
 * none is given: layer 0's identity pre-mix), and this sublayer's own
 * pre-mix is an output. One token per task on hc_pre's token kernel.
 */
#include "cpu_internal.h"

struct delayed_args {
	struct mtp_cpu_hc_pre k;
	const void *residual;
	const float *pre_in;
	float *post, *comb, *pre_out;
	void *layer_input;
};

static void delayed_one(const void *ctx, int64_t t, float *buf)
{
	const struct delayed_args *g = ctx;
	const int64_t m = g->k.m, h = g->k.h, n = m * h;
	float *x = buf, *mu = x + n, *u = mu + 2 * m + m * m, *li = u + h;

	mtp_cpu_load(g->k.act, g->residual, t * n, n, x);
	mtp_cpu_hc_pre_token(&g->k, x, mu, u, g->post + t * m,
			     g->comb + t * m * m, li);
	memcpy(g->pre_out + t * m, mu, (size_t)m * sizeof(*mu)); /* pre */
	mtp_cpu_hc_layer_input(&g->k, x, g->pre_in ? g->pre_in + t * m : NULL,
			       u, li);
	mtp_cpu_store(g->k.act, g->layer_input, t * h, h, li);
}

enum mtp_status mtp_cpu_hc_pre_delayed_rows(const struct mtp_cpu_hc_pre *k,
					    const void *residual,
					    const float *pre_in, int64_t t,
					    float *post, float *comb,
					    float *pre_out, void *layer_input)
{
	const int64_t m = k->m, h = k->h;
	const struct delayed_args g = {*k,   residual, pre_in,	   post,
				       comb, pre_out,  layer_input};

	return mtp_cpu_rows(t, m * h, (size_t)(m * h + 2 * m + m * m + 2 * h),
			    delayed_one, &g);
}

enum mtp_status mtp_cpu_op_hc_pre_delayed(const struct mtp_call *c)
{
	const int64_t m = c->dims.m, h = c->dims.h;
	const void *norm_w = mtp_cpu_in(c, "", "norm_weight");
	struct mtp_cpu_hc_pre k;
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
	st = mtp_cpu_hc_pre_delayed_rows(
		&k, mtp_cpu_in(c, "", "residual"),
		mtp_cpu_in(c, "", "pre_mix_in"), c->dims.t,
		mtp_cpu_out(c, "", "post_mix"), mtp_cpu_out(c, "", "comb_mix"),
		mtp_cpu_out(c, "", "pre_mix"),
		mtp_cpu_out(c, "", "layer_input"));
	mtp_cpu_free(wf);
	return st;
}
