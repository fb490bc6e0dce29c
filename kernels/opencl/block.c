/*
 * The synthetic decoder blocks on the device [SPEC.md §10.1, §10.2],
 * composed from the OpenCL C kernels with the reference's rounding points:
 * the V3 block (RMSNorm, attention stand-in, add_rmsnorm, SwiGLU) and the
 * V4 block (two mHC-wrapped sublayers) under the deferred or internal
 * contract. Scratch lives until the launch ends.
 */
#include "ocl_internal.h"

#define IN(pfx, name) mtp_ocl_tensor(c, false, pfx, name)
#define OUT(name) mtp_ocl_tensor(c, true, NULL, name)

void mtp_ocl_v3_block_get(const struct mtp_call *c, const char *pfx,
			  struct ocl_v3_block *b)
{
	b->w_in = IN(pfx, "block.w_in");
	b->W_a = IN(pfx, "block.W_a");
	b->w_post = IN(pfx, "block.w_post");
	b->W_gate = IN(pfx, "block.W_gate");
	b->W_up = IN(pfx, "block.W_up");
	b->W_down = IN(pfx, "block.W_down");
}

void mtp_ocl_v4_block_get(const struct mtp_call *c, const char *pfx,
			  struct ocl_v4_block *b)
{
	b->attn_fn = IN(pfx, "block.hc_attn_fn");
	b->attn_scale = IN(pfx, "block.hc_attn_scale");
	b->attn_base = IN(pfx, "block.hc_attn_base");
	b->ffn_fn = IN(pfx, "block.hc_ffn_fn");
	b->ffn_scale = IN(pfx, "block.hc_ffn_scale");
	b->ffn_base = IN(pfx, "block.hc_ffn_base");
	b->attn_norm_w = IN(pfx, "block.attn_norm_w");
	b->ffn_norm_w = IN(pfx, "block.ffn_norm_w");
	b->W_a = IN(pfx, "block.W_a");
	b->W_gate = IN(pfx, "block.W_gate");
	b->W_up = IN(pfx, "block.W_up");
	b->W_down = IN(pfx, "block.W_down");
}

enum mtp_status mtp_ocl_v3_block(struct mtp_backend *be,
				 const struct ocl_cfg *cfg, struct ocl_buf x,
				 struct ocl_buf residual,
				 const struct ocl_v3_block *b,
				 struct ocl_buf h_out, struct ocl_buf r_out)
{
	const size_t n = (size_t)(cfg->t * cfg->h) * cfg->es;
	struct ocl_buf xn, r0 = x;

	OCL_TRY(mtp_ocl_scratch(be, 4 * n, &xn));
	if (residual.mem) {
		OCL_TRY(mtp_ocl_add_rmsnorm(be, cfg->act, x, residual, b->w_in,
					    xn, ocl_at(xn, 3 * n), cfg->t,
					    cfg->h, cfg->eps, cfg->rounding));
		r0 = ocl_at(xn, 3 * n);
	} else {
		OCL_TRY(mtp_ocl_norm_rows(be, cfg, x, b->w_in, xn, cfg->t));
	}
	OCL_TRY(mtp_ocl_linear(be, cfg->act, false, xn, b->W_a, ocl_at(xn, n),
			       cfg->t, cfg->h, cfg->h));
	OCL_TRY(mtp_ocl_add_rmsnorm(be, cfg->act, ocl_at(xn, n), r0, b->w_post,
				    ocl_at(xn, 2 * n), r_out, cfg->t, cfg->h,
				    cfg->eps, cfg->rounding));
	return mtp_ocl_swiglu_ffn(be, cfg, ocl_at(xn, 2 * n), b->W_gate,
				  b->W_up, b->W_down, h_out);
}

/* One mHC sublayer input: (post, comb, v = RMSNorm(u; norm_w)), u scratch. */
static enum mtp_status
sublayer_input(struct mtp_backend *be, const struct ocl_cfg *cfg,
	       struct ocl_buf streams, struct ocl_buf fn, struct ocl_buf scale,
	       struct ocl_buf base, struct ocl_buf norm_w, struct ocl_buf post,
	       struct ocl_buf comb, struct ocl_buf u, struct ocl_buf v)
{
	const struct ocl_hc_pre_args a = {
		.residual = streams,
		.fn = fn,
		.scale = scale,
		.base = base,
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

	OCL_TRY(mtp_ocl_hc_pre(be, cfg->act, &a));
	return mtp_ocl_norm_rows(be, cfg, u, norm_w, v, cfg->t);
}

enum mtp_status mtp_ocl_v4_block(struct mtp_backend *be,
				 const struct ocl_cfg *cfg, struct ocl_buf r0,
				 const struct ocl_v4_block *b,
				 struct ocl_buf f_out, struct ocl_buf r1_out,
				 struct ocl_buf post_out,
				 struct ocl_buf comb_out)
{
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	const size_t nth = (size_t)(t * h) * cfg->es;
	struct ocl_buf u, post_a, comb_a;

	OCL_TRY(mtp_ocl_scratch(be, 3 * nth, &u));
	OCL_TRY(mtp_ocl_scratch(be, (size_t)(t * m + t * m * m) * 4, &post_a));
	comb_a = ocl_at(post_a, (size_t)(t * m) * 4);
	OCL_TRY(sublayer_input(be, cfg, r0, b->attn_fn, b->attn_scale,
			       b->attn_base, b->attn_norm_w, post_a, comb_a, u,
			       ocl_at(u, nth)));
	OCL_TRY(mtp_ocl_linear(be, cfg->act, false, ocl_at(u, nth), b->W_a,
			       ocl_at(u, 2 * nth), t, h, h));
	OCL_TRY(mtp_ocl_hc_post(be, cfg->act, ocl_at(u, 2 * nth), r0, post_a,
				comb_a, r1_out, t, m, h));
	OCL_TRY(sublayer_input(be, cfg, r1_out, b->ffn_fn, b->ffn_scale,
			       b->ffn_base, b->ffn_norm_w, post_out, comb_out,
			       u, ocl_at(u, nth)));
	return mtp_ocl_swiglu_ffn(be, cfg, ocl_at(u, nth), b->W_gate, b->W_up,
				  b->W_down, f_out);
}

/* The V4 mtp_block op: optional incoming state, either contract. */
static enum mtp_status op_block_v4(struct mtp_backend *be,
				   const struct mtp_call *c,
				   const struct ocl_cfg *cfg)
{
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	const size_t ns = (size_t)(t * m * h) * cfg->es;
	struct ocl_buf r0 = IN(NULL, "x"), res = IN(NULL, "residual");
	struct ocl_buf f, r1, post, comb;
	struct ocl_v4_block b;

	mtp_ocl_v4_block_get(c, NULL, &b);
	if (res.mem) { /* the streams a previous layer left un-posted */
		OCL_TRY(mtp_ocl_scratch(be, ns, &r0));
		OCL_TRY(mtp_ocl_hc_post(be, cfg->act, IN(NULL, "x"), res,
					IN(NULL, "post_mix"),
					IN(NULL, "res_mix"), r0, t, m, h));
	}
	if (cfg->contract == MTP_CONTRACT_DEFERRED)
		return mtp_ocl_v4_block(
			be, cfg, r0, &b, OUT("x_out"), OUT("residual_out"),
			OUT("post_mix_out"), OUT("res_mix_out"));
	/* internal: the block applies the final hc_post itself */
	OCL_TRY(mtp_ocl_scratch(be, (size_t)(t * h) * cfg->es + ns, &f));
	r1 = ocl_at(f, (size_t)(t * h) * cfg->es);
	OCL_TRY(mtp_ocl_scratch(be, (size_t)(t * m + t * m * m) * 4, &post));
	comb = ocl_at(post, (size_t)(t * m) * 4);
	OCL_TRY(mtp_ocl_v4_block(be, cfg, r0, &b, f, r1, post, comb));
	return mtp_ocl_hc_post(be, cfg->act, f, r1, post, comb, OUT("x_out"), t,
			       m, h);
}

enum mtp_status mtp_ocl_op_block(struct mtp_backend *be,
				 const struct mtp_call *c)
{
	struct ocl_cfg cfg;
	struct ocl_v3_block b;

	mtp_ocl_cfg_init(c, &cfg);
	if (c->params->family == MTP_FAMILY_DEEPSEEK_V4)
		return op_block_v4(be, c, &cfg);
	mtp_ocl_v3_block_get(c, NULL, &b);
	return mtp_ocl_v3_block(be, &cfg, IN(NULL, "x"), IN(NULL, "residual"),
				&b, OUT("h"), OUT("residual_out"));
}
