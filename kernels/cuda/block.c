/*
 * The synthetic decoder blocks on the device [SPEC.md §10.1, §10.2],
 * composed from the backend's kernels and cuBLASLt GEMMs with the same
 * rounding points as the reference: the V3 block (RMSNorm, attention
 * stand-in, add_rmsnorm, SwiGLU) and the V4 block (two mHC-wrapped
 * sublayers) under the deferred or internal contract. Scratch is
 * stream-ordered and released when the launch ends.
 */
#include <stdio.h>

#include "nv_internal.h"

void mtp_nv_v3_block_get(const struct mtp_call *c, const char *pfx,
			 struct nv_v3_block *b)
{
	b->w_in = mtp_nv_in_ptr(c, pfx, "block.w_in");
	b->W_a = mtp_nv_in_ptr(c, pfx, "block.W_a");
	b->w_post = mtp_nv_in_ptr(c, pfx, "block.w_post");
	b->W_gate = mtp_nv_in_ptr(c, pfx, "block.W_gate");
	b->W_up = mtp_nv_in_ptr(c, pfx, "block.W_up");
	b->W_down = mtp_nv_in_ptr(c, pfx, "block.W_down");
}

void mtp_nv_v4_block_get(const struct mtp_call *c, const char *pfx,
			 struct nv_v4_block *b)
{
	b->attn_fn = mtp_nv_in_ptr(c, pfx, "block.hc_attn_fn");
	b->attn_scale = mtp_nv_in_ptr(c, pfx, "block.hc_attn_scale");
	b->attn_base = mtp_nv_in_ptr(c, pfx, "block.hc_attn_base");
	b->ffn_fn = mtp_nv_in_ptr(c, pfx, "block.hc_ffn_fn");
	b->ffn_scale = mtp_nv_in_ptr(c, pfx, "block.hc_ffn_scale");
	b->ffn_base = mtp_nv_in_ptr(c, pfx, "block.hc_ffn_base");
	b->attn_norm_w = mtp_nv_in_ptr(c, pfx, "block.attn_norm_w");
	b->ffn_norm_w = mtp_nv_in_ptr(c, pfx, "block.ffn_norm_w");
	b->W_a = mtp_nv_in_ptr(c, pfx, "block.W_a");
	b->W_gate = mtp_nv_in_ptr(c, pfx, "block.W_gate");
	b->W_up = mtp_nv_in_ptr(c, pfx, "block.W_up");
	b->W_down = mtp_nv_in_ptr(c, pfx, "block.W_down");
}

enum mtp_status mtp_nv_v3_block(struct mtp_backend *be,
				const struct nv_cfg *cfg, const void *x,
				const void *residual,
				const struct nv_v3_block *b, void *h_out,
				void *r_out)
{
	const size_t n = (size_t)(cfg->t * cfg->h) * cfg->es;
	cudaStream_t s = nv_ctx(be)->stream;
	const void *r0 = x;
	char *xn;

	NV_TRY(mtp_nv_scratch(be, 4 * n, (void **)&xn));
	if (residual) {
		NV_CUDA(be, mtp_nv_add_rmsnorm(cfg->act, x, residual, b->w_in,
					       xn, xn + 3 * n, cfg->t, cfg->h,
					       cfg->eps, cfg->rounding, s));
		r0 = xn + 3 * n;
	} else {
		NV_TRY(mtp_nv_rmsnorm_rows(be, cfg, x, NULL, 0, b->w_in, xn,
					   cfg->t));
	}
	NV_TRY(mtp_nv_linear(be, cfg->act, false, xn, b->W_a, xn + n, cfg->t,
			     cfg->h, cfg->h));
	NV_CUDA(be, mtp_nv_add_rmsnorm(cfg->act, xn + n, r0, b->w_post,
				       xn + 2 * n, r_out, cfg->t, cfg->h,
				       cfg->eps, cfg->rounding, s));
	return mtp_nv_swiglu_ffn(be, cfg, xn + 2 * n, b->W_gate, b->W_up,
				 b->W_down, h_out);
}

/* One mHC sublayer input: (post, comb, v = RMSNorm(u; norm_w)), u scratch. */
static enum mtp_status sublayer_input(struct mtp_backend *be,
				      const struct nv_cfg *cfg,
				      const void *streams, const float *fn,
				      const float *scale, const float *base,
				      const void *norm_w, float *post,
				      float *comb, void *u, void *v)
{
	struct mtp_nv_hc_pre_args a = {
		.residual = streams,
		.fn = fn,
		.scale = scale,
		.base = base,
		.norm_w = NULL,
		.post_mix = post,
		.comb_mix = comb,
		.layer_input = u,
		.t = cfg->t,
		.m = cfg->m,
		.h = cfg->h,
		.rms_eps = cfg->eps,
		.pre_eps = cfg->hc_eps,
		.sinkhorn_eps = cfg->hc_eps,
		.post_mult = cfg->post_mult,
		.norm_eps = cfg->eps,
		.sinkhorn_iters = cfg->sinkhorn_iters,
	};

	NV_CUDA(be, mtp_nv_hc_pre(cfg->act, &a, nv_ctx(be)->stream));
	return mtp_nv_rmsnorm_rows(be, cfg, u, NULL, 0, norm_w, v, cfg->t);
}

enum mtp_status mtp_nv_v4_block(struct mtp_backend *be,
				const struct nv_cfg *cfg, const void *r0,
				const struct nv_v4_block *b, void *f_out,
				void *r1_out, float *post_out, float *comb_out)
{
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	const size_t nth = (size_t)(t * h) * cfg->es;
	float *post_a, *comb_a;
	char *u;

	NV_TRY(mtp_nv_scratch(be, 3 * nth, (void **)&u));
	NV_TRY(mtp_nv_scratch(be, (size_t)(t * m) * sizeof(float),
			      (void **)&post_a));
	NV_TRY(mtp_nv_scratch(be, (size_t)(t * m * m) * sizeof(float),
			      (void **)&comb_a));
	NV_TRY(sublayer_input(be, cfg, r0, b->attn_fn, b->attn_scale,
			      b->attn_base, b->attn_norm_w, post_a, comb_a, u,
			      u + nth));
	NV_TRY(mtp_nv_linear(be, cfg->act, false, u + nth, b->W_a, u + 2 * nth,
			     t, h, h));
	NV_CUDA(be, mtp_nv_hc_post(cfg->act, u + 2 * nth, r0, post_a, comb_a,
				   r1_out, t, m, h, nv_ctx(be)->stream));
	NV_TRY(sublayer_input(be, cfg, r1_out, b->ffn_fn, b->ffn_scale,
			      b->ffn_base, b->ffn_norm_w, post_out, comb_out, u,
			      u + nth));
	return mtp_nv_swiglu_ffn(be, cfg, u + nth, b->W_gate, b->W_up,
				 b->W_down, f_out);
}

/* The V4 mtp_block op: optional incoming state, either contract. */
static enum mtp_status op_block_v4(struct mtp_backend *be,
				   const struct mtp_call *c,
				   const struct nv_cfg *cfg)
{
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	const size_t ns = (size_t)(t * m * h) * cfg->es;
	const void *x = mtp_nv_in_ptr(c, NULL, "x");
	const void *res = mtp_nv_in_ptr(c, NULL, "residual");
	void *x_out = mtp_nv_out_ptr(c, NULL, "x_out");
	void *r0 = (void *)x, *f, *r1;
	float *post, *comb;
	struct nv_v4_block b;

	mtp_nv_v4_block_get(c, NULL, &b);
	if (res) { /* the streams a previous layer left un-posted */
		NV_TRY(mtp_nv_scratch(be, ns, &r0));
		NV_CUDA(be, mtp_nv_hc_post(cfg->act, x, res,
					   mtp_nv_in_ptr(c, NULL, "post_mix"),
					   mtp_nv_in_ptr(c, NULL, "res_mix"),
					   r0, t, m, h, nv_ctx(be)->stream));
	}
	if (cfg->contract == MTP_CONTRACT_DEFERRED)
		return mtp_nv_v4_block(be, cfg, r0, &b, x_out,
				       mtp_nv_out_ptr(c, NULL, "residual_out"),
				       mtp_nv_out_ptr(c, NULL, "post_mix_out"),
				       mtp_nv_out_ptr(c, NULL, "res_mix_out"));
	NV_TRY(mtp_nv_scratch(be, (size_t)(t * h) * cfg->es, &f));
	NV_TRY(mtp_nv_scratch(be, ns, &r1));
	NV_TRY(mtp_nv_scratch(be, (size_t)(t * m) * sizeof(float),
			      (void **)&post));
	NV_TRY(mtp_nv_scratch(be, (size_t)(t * m * m) * sizeof(float),
			      (void **)&comb));
	NV_TRY(mtp_nv_v4_block(be, cfg, r0, &b, f, r1, post, comb));
	NV_CUDA(be, mtp_nv_hc_post(cfg->act, f, r1, post, comb, x_out, t, m, h,
				   nv_ctx(be)->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_op_block(struct mtp_backend *be,
				const struct mtp_call *c)
{
	struct nv_cfg cfg;
	struct nv_v3_block b;

	mtp_nv_cfg_init(c, &cfg);
	if (c->params->family == MTP_FAMILY_DEEPSEEK_V4)
		return op_block_v4(be, c, &cfg);
	mtp_nv_v3_block_get(c, NULL, &b);
	return mtp_nv_v3_block(be, &cfg, mtp_nv_in_ptr(c, NULL, "x"),
			       mtp_nv_in_ptr(c, NULL, "residual"), &b,
			       mtp_nv_out_ptr(c, NULL, "h"),
			       mtp_nv_out_ptr(c, NULL, "residual_out"));
}
