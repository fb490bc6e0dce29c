/*
 * The synthetic decoder blocks [SPEC.md §10.1, §10.2] on any GPU backend's
 * primitives, with the same rounding points as the reference: the V3 block
 * (RMSNorm, attention stand-in, add_rmsnorm, SwiGLU) and the V4 block (two
 * mHC-wrapped sublayers) under the deferred or internal contract. Scratch
 * lives until the launch ends; each buffer that a GEMM reads or writes at
 * its start is an allocation of its own, so that it is aligned as one.
 */
#include <string.h>

#include "compose.h"

#define IN(pfx, name) mtp_gpu_tensor(c, false, pfx, name)
#define OUT(name) mtp_gpu_tensor(c, true, NULL, name)

void mtp_gpu_v3_block_get(const struct mtp_call *c, const char *pfx,
			  struct gpu_v3_block *b)
{
	b->w_in = IN(pfx, "block.w_in");
	b->W_a = IN(pfx, "block.W_a");
	b->w_post = IN(pfx, "block.w_post");
	b->W_gate = IN(pfx, "block.W_gate");
	b->W_up = IN(pfx, "block.W_up");
	b->W_down = IN(pfx, "block.W_down");
}

void mtp_gpu_v4_block_get(const struct mtp_call *c, const char *pfx,
			  struct gpu_v4_block *b)
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

enum mtp_status mtp_gpu_v3_block(struct mtp_backend *be,
				 const struct gpu_cfg *cfg, struct gpu_buf x,
				 struct gpu_buf residual,
				 const struct gpu_v3_block *b,
				 struct gpu_buf h_out, struct gpu_buf r_out)
{
	const struct gpu_prims *pr = gpu_prims(be);
	const size_t n = (size_t)(cfg->t * cfg->h) * cfg->es;
	struct gpu_buf xn, r0 = x;

	/* xn, the attention output, the post-norm, the new residual */
	GPU_TRY(mtp_gpu_scratch(be, 4 * n, &xn));
	if (residual.mem) {
		GPU_TRY(pr->add_rmsnorm(be, cfg->act, x, residual, b->w_in, xn,
					gpu_at(xn, 3 * n), cfg->t, cfg->h,
					cfg->eps, cfg->rounding));
		r0 = gpu_at(xn, 3 * n);
	} else {
		GPU_TRY(mtp_gpu_norm_rows(be, cfg, x, b->w_in, xn, cfg->t));
	}
	GPU_TRY(pr->linear(be, cfg->act, false, xn, b->W_a, gpu_at(xn, n),
			   cfg->t, cfg->h, cfg->h));
	GPU_TRY(pr->add_rmsnorm(be, cfg->act, gpu_at(xn, n), r0, b->w_post,
				gpu_at(xn, 2 * n), r_out, cfg->t, cfg->h,
				cfg->eps, cfg->rounding));
	return mtp_gpu_swiglu_ffn(be, cfg, gpu_at(xn, 2 * n), b->W_gate,
				  b->W_up, b->W_down, h_out);
}

void mtp_gpu_block_hc_args(const struct gpu_cfg *cfg, struct gpu_hc_pre_args *a)
{
	memset(a, 0, sizeof(*a));
	a->t = cfg->t;
	a->m = cfg->m;
	a->h = cfg->h;
	a->rms_eps = cfg->eps;
	a->pre_eps = cfg->hc_eps;
	a->sinkhorn_eps = cfg->hc_eps;
	a->post_mult = cfg->post_mult;
	a->norm_eps = cfg->eps;
	a->sinkhorn_iters = cfg->sinkhorn_iters;
}

/* One mHC sublayer input: (post, comb, v = RMSNorm(u; norm_w)), u scratch. */
static enum mtp_status
sublayer_input(struct mtp_backend *be, const struct gpu_cfg *cfg,
	       struct gpu_buf streams, struct gpu_buf fn, struct gpu_buf scale,
	       struct gpu_buf base, struct gpu_buf norm_w, struct gpu_buf post,
	       struct gpu_buf comb, struct gpu_buf u, struct gpu_buf v)
{
	struct gpu_hc_pre_args a;

	mtp_gpu_block_hc_args(cfg, &a);
	a.residual = streams;
	a.fn = fn;
	a.scale = scale;
	a.base = base;
	a.post_mix = post;
	a.comb_mix = comb;
	a.layer_input = u;
	GPU_TRY(gpu_prims(be)->hc_pre(be, cfg->act, &a));
	return mtp_gpu_norm_rows(be, cfg, u, norm_w, v, cfg->t);
}

/* Scratch for the mixes of t tokens: post [T,M] and comb [T,M,M] floats. */
static enum mtp_status mixes(struct mtp_backend *be, const struct gpu_cfg *cfg,
			     struct gpu_buf *post, struct gpu_buf *comb)
{
	const int64_t t = cfg->t, m = cfg->m;

	GPU_TRY(mtp_gpu_scratch(be, (size_t)(t * m) * sizeof(float), post));
	return mtp_gpu_scratch(be, (size_t)(t * m * m) * sizeof(float), comb);
}

enum mtp_status mtp_gpu_v4_block(struct mtp_backend *be,
				 const struct gpu_cfg *cfg, struct gpu_buf r0,
				 const struct gpu_v4_block *b,
				 struct gpu_buf f_out, struct gpu_buf r1_out,
				 struct gpu_buf post_out,
				 struct gpu_buf comb_out)
{
	const struct gpu_prims *pr = gpu_prims(be);
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	const size_t nth = (size_t)(t * h) * cfg->es;
	struct gpu_buf u, post_a, comb_a;

	GPU_TRY(mtp_gpu_scratch(be, 3 * nth, &u));
	GPU_TRY(mixes(be, cfg, &post_a, &comb_a));
	GPU_TRY(sublayer_input(be, cfg, r0, b->attn_fn, b->attn_scale,
			       b->attn_base, b->attn_norm_w, post_a, comb_a, u,
			       gpu_at(u, nth)));
	GPU_TRY(pr->linear(be, cfg->act, false, gpu_at(u, nth), b->W_a,
			   gpu_at(u, 2 * nth), t, h, h));
	GPU_TRY(pr->hc_post(be, cfg->act, gpu_at(u, 2 * nth), r0, post_a,
			    comb_a, r1_out, t, m, h));
	GPU_TRY(sublayer_input(be, cfg, r1_out, b->ffn_fn, b->ffn_scale,
			       b->ffn_base, b->ffn_norm_w, post_out, comb_out,
			       u, gpu_at(u, nth)));
	return mtp_gpu_swiglu_ffn(be, cfg, gpu_at(u, nth), b->W_gate, b->W_up,
				  b->W_down, f_out);
}

/* The V4 mtp_block op: optional incoming state, either contract. */
static enum mtp_status op_block_v4(struct mtp_backend *be,
				   const struct mtp_call *c,
				   const struct gpu_cfg *cfg)
{
	const struct gpu_prims *pr = gpu_prims(be);
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	const size_t ns = (size_t)(t * m * h) * cfg->es;
	struct gpu_buf r0 = IN(NULL, "x"), res = IN(NULL, "residual");
	struct gpu_buf f, r1, post, comb;
	struct gpu_v4_block b;

	mtp_gpu_v4_block_get(c, NULL, &b);
	if (res.mem) { /* the streams a previous layer left un-posted */
		GPU_TRY(mtp_gpu_scratch(be, ns, &r0));
		GPU_TRY(pr->hc_post(be, cfg->act, IN(NULL, "x"), res,
				    IN(NULL, "post_mix"), IN(NULL, "res_mix"),
				    r0, t, m, h));
	}
	if (cfg->contract == MTP_CONTRACT_DEFERRED)
		return mtp_gpu_v4_block(
			be, cfg, r0, &b, OUT("x_out"), OUT("residual_out"),
			OUT("post_mix_out"), OUT("res_mix_out"));
	/* internal: the block applies the final hc_post itself */
	GPU_TRY(mtp_gpu_scratch(be, (size_t)(t * h) * cfg->es, &f));
	GPU_TRY(mtp_gpu_scratch(be, ns, &r1));
	GPU_TRY(mixes(be, cfg, &post, &comb));
	GPU_TRY(mtp_gpu_v4_block(be, cfg, r0, &b, f, r1, post, comb));
	return pr->hc_post(be, cfg->act, f, r1, post, comb, OUT("x_out"), t, m,
			   h);
}

enum mtp_status mtp_gpu_op_block(struct mtp_backend *be,
				 const struct mtp_call *c)
{
	struct gpu_cfg cfg;
	struct gpu_v3_block b;

	mtp_gpu_cfg_init(c, &cfg);
	if (mtp_family_mhc(c->params->family))
		return op_block_v4(be, c, &cfg);
	mtp_gpu_v3_block_get(c, NULL, &b);
	return mtp_gpu_v3_block(be, &cfg, IN(NULL, "x"), IN(NULL, "residual"),
				&b, OUT("h"), OUT("residual_out"));
}
