/*
 * The synthetic V4 decoder block [SPEC.md §10.2]: attention and FFN
 * stand-ins, each wrapped in mHC hc_pre / hc_post, under either call
 * contract: deferred (CUDA, XPU: the final hc_post is the caller's) or
 * internal (ROCm: the block applies it and returns the streams).
 */
#include "ref_internal.h"

#include <assert.h>

struct mtp_hc_params mtp_ref_block_hc_params(const struct mtp_ref_step_cfg *c)
{
	struct mtp_hc_params p = {
		.rms_eps = c->eps,
		.pre_eps = c->hc_eps,
		.sinkhorn_eps = c->hc_eps,
		.post_mult = c->post_mult,
		.sinkhorn_iters = c->sinkhorn_iters,
		.norm_eps = c->eps,
	};
	return p;
}

/* One mHC-wrapped sublayer's input: (post, comb, v = RMSNorm(u; norm_w)).
 * u is scratch [T,H]. */
static void sublayer_input(const double *streams, const double *fn,
			   const double *scale, const double *base,
			   const double *norm_w, const struct mtp_ref_dims *d,
			   const struct mtp_ref_step_cfg *c, double *post,
			   double *comb, double *u, double *v)
{
	const struct mtp_hc_params p = mtp_ref_block_hc_params(c);

	mtp_ref_hc_pre(streams, fn, scale, base, NULL, &p, d->t, d->m, d->h,
		       c->act, post, comb, u);
	mtp_ref_rmsnorm(u, norm_w, d->t, d->h, c->eps, c->rounding, c->act, v);
}

void mtp_ref_v4_block(const double *x, const double *post_mix,
		      const double *res_mix, const double *residual,
		      const struct mtp_ref_v4_block *b,
		      const struct mtp_ref_dims *d,
		      const struct mtp_ref_step_cfg *c, double *x_out,
		      double *residual_out, double *post_out, double *comb_out)
{
	const int64_t t = d->t, m = d->m, h = d->h;
	const size_t nth = (size_t)(t * h), ns = (size_t)(t * m * h);
	double *r0s =
		mtp_ref_scratch(ns + (size_t)(t * m + t * m * m) + 3 * nth);
	double *post_a = r0s + ns;
	double *comb_a = post_a + t * m;
	double *u = comb_a + t * m * m;
	double *v = u + nth;
	double *a = v + nth;
	const double *r0 = x;

	assert(!residual == !post_mix && !residual == !res_mix);
	if (residual) { /* the streams a previous layer left un-posted */
		mtp_ref_hc_post(x, residual, post_mix, res_mix, t, m, h, c->act,
				r0s);
		r0 = r0s;
	}
	sublayer_input(r0, b->hc_attn_fn, b->hc_attn_scale, b->hc_attn_base,
		       b->attn_norm_w, d, c, post_a, comb_a, u, v);
	mtp_ref_linear(v, b->W_a, t, h, h, c->act, a);
	mtp_ref_hc_post(a, r0, post_a, comb_a, t, m, h, c->act, residual_out);
	sublayer_input(residual_out, b->hc_ffn_fn, b->hc_ffn_scale,
		       b->hc_ffn_base, b->ffn_norm_w, d, c, post_out, comb_out,
		       u, v);
	if (c->contract == MTP_CONTRACT_DEFERRED) {
		mtp_ref_swiglu(v, b->W_gate, b->W_up, b->W_down, t, h, d->f,
			       c->conv.silu_mul_rounding, c->act, x_out);
	} else {
		mtp_ref_swiglu(v, b->W_gate, b->W_up, b->W_down, t, h, d->f,
			       c->conv.silu_mul_rounding, c->act,
			       a); /* a's buffer now holds f */
		mtp_ref_hc_post(a, residual_out, post_out, comb_out, t, m, h,
				c->act, x_out);
	}
	free(r0s);
}
