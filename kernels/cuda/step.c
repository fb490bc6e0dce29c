/*
 * One MTP draft step [SPEC.md §3, §4, §10] and the teacher-forced draft
 * chain [§5] on the device. A V3-family step: masked enorm and hnorm into
 * one [T,2H] buffer, eh_proj, the block, the unfused h + r add, the shared
 * head's norm (the recycled hidden) and the LM head. A V4 step: enorm and
 * per-stream hnorm, e_proj/h_proj broadcast, the block in its deferred form
 * with exactly one final hc_post (the internal contract computes the same
 * numbers), the streams as the recycled hidden, hc_head, the shared head's
 * norm and the LM head. Each step is the same code in a chain.
 */
#include <stdio.h>
#include <string.h>

#include "nv_internal.h"

struct nv_step_in {
	const void *embeds, *pos, *prev;
	int pos64;
};

struct nv_step_out {
	void *block_out, *block_residual, *hidden_pre, *hidden_post;
	float *post_mix, *comb_mix;
	void *streams, *head_hidden, *recycled;
	float *logits;
	void *token;
	int tok64;
};

static void step_out_get(const struct mtp_call *c, const char *pfx,
			 struct nv_step_out *o)
{
	char name[MTP_NAME_MAX];
	const struct mtp_tensor *tok;

	o->block_out = mtp_nv_out_ptr(c, pfx, "block_out");
	o->block_residual = mtp_nv_out_ptr(c, pfx, "block_residual");
	o->hidden_pre = mtp_nv_out_ptr(c, pfx, "hidden_pre");
	o->hidden_post = mtp_nv_out_ptr(c, pfx, "hidden_post");
	o->post_mix = mtp_nv_out_ptr(c, pfx, "post_mix");
	o->comb_mix = mtp_nv_out_ptr(c, pfx, "comb_mix");
	o->streams = mtp_nv_out_ptr(c, pfx, "streams");
	o->head_hidden = mtp_nv_out_ptr(c, pfx, "head_hidden");
	o->recycled = mtp_nv_out_ptr(c, pfx, "recycled");
	o->logits = mtp_nv_out_ptr(c, pfx, "logits");
	o->token = mtp_nv_out_ptr(c, pfx, "token");
	snprintf(name, sizeof(name), "%stoken", pfx ? pfx : "");
	tok = mtp_nv_out(c, name);
	o->tok64 = tok && tok->dtype == MTP_I64;
}

static enum mtp_status step_v3(struct mtp_backend *be, const struct nv_cfg *cfg,
			       const struct mtp_call *c, const char *pfx,
			       const struct nv_step_in *in,
			       const struct nv_step_out *o)
{
	const int64_t t = cfg->t, h = cfg->h;
	cudaStream_t s = nv_ctx(be)->stream;
	struct nv_v3_block b;
	char *z, *x0;

	NV_TRY(mtp_nv_scratch(be, (size_t)(3 * t * h) * cfg->es, (void **)&z));
	x0 = z + (size_t)(2 * t * h) * cfg->es;
	struct mtp_nv_norm_job j[2] = {
		{.x = in->embeds,
		 .x_stride = h,
		 .pos = in->pos,
		 .pos64 = in->pos64,
		 .w = mtp_nv_in_ptr(c, pfx, "enorm_weight"),
		 .y = z,
		 .y_stride = 2 * h,
		 .rows = t},
		{.x = in->prev,
		 .x_stride = h,
		 .w = mtp_nv_in_ptr(c, pfx, "hnorm_weight"),
		 .y = z + (size_t)h * cfg->es,
		 .y_stride = 2 * h,
		 .rows = t},
	};
	NV_CUDA(be,
		mtp_nv_rmsnorm(cfg->act, j, 2, h, cfg->eps, cfg->rounding, s));
	NV_TRY(mtp_nv_linear(be, cfg->act, false, z,
			     mtp_nv_in_ptr(c, pfx, "eh_proj_weight"), x0, t,
			     2 * h, h));
	mtp_nv_v3_block_get(c, pfx, &b);
	NV_TRY(mtp_nv_v3_block(be, cfg, x0, NULL, &b, o->block_out,
			       o->block_residual));
	NV_CUDA(be, mtp_nv_add_bcast(cfg->act, o->block_residual, o->block_out,
				     o->hidden_pre, t, 1, h, s));
	NV_TRY(mtp_nv_rmsnorm_rows(
		be, cfg, o->hidden_pre, NULL, 0,
		mtp_nv_in_ptr(c, pfx, "shared_head_norm_weight"),
		o->hidden_post, t));
	NV_TRY(mtp_nv_copy(be, o->recycled, o->hidden_post,
			   (size_t)(t * h) * cfg->es));
	return mtp_nv_lm_head(be, cfg->act, o->hidden_post,
			      mtp_nv_in_ptr(c, pfx, "head_weight"), o->logits,
			      o->token, o->tok64, t, cfg->v, h);
}

/* e = RMSNorm(mask(E); enorm), p = RMSNorm(P; hnorm) per stream, then X0. */
static enum mtp_status v4_input(struct mtp_backend *be,
				const struct nv_cfg *cfg,
				const struct mtp_call *c, const char *pfx,
				const struct nv_step_in *in, void *x0)
{
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	char *e, *p;

	NV_TRY(mtp_nv_scratch(be, (size_t)(t * h + t * m * h) * cfg->es,
			      (void **)&e));
	p = e + (size_t)(t * h) * cfg->es;
	struct mtp_nv_norm_job j[2] = {
		{.x = in->embeds,
		 .x_stride = h,
		 .pos = in->pos,
		 .pos64 = in->pos64,
		 .w = mtp_nv_in_ptr(c, pfx, "enorm_weight"),
		 .y = e,
		 .y_stride = h,
		 .rows = t},
		{.x = in->prev,
		 .x_stride = h,
		 .w = mtp_nv_in_ptr(c, pfx, "hnorm_weight"),
		 .y = p,
		 .y_stride = h,
		 .rows = t * m},
	};
	NV_CUDA(be, mtp_nv_rmsnorm(cfg->act, j, 2, h, cfg->eps, cfg->rounding,
				   nv_ctx(be)->stream));
	return mtp_nv_eh_proj_hc(be, cfg, e, p,
				 mtp_nv_in_ptr(c, pfx, "e_proj_weight"),
				 mtp_nv_in_ptr(c, pfx, "h_proj_weight"), x0);
}

/* Steps V4-1..8: one V4 step, the block in its deferred form. */
static enum mtp_status step_v4(struct mtp_backend *be, const struct nv_cfg *cfg,
			       const struct mtp_call *c, const char *pfx,
			       const struct nv_step_in *in,
			       const struct nv_step_out *o)
{
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	cudaStream_t s = nv_ctx(be)->stream;
	struct nv_v4_block b;
	char *x0, *hn;

	NV_TRY(mtp_nv_scratch(be, (size_t)(t * m * h + t * h) * cfg->es,
			      (void **)&x0));
	hn = x0 + (size_t)(t * m * h) * cfg->es;
	NV_TRY(v4_input(be, cfg, c, pfx, in, x0));
	mtp_nv_v4_block_get(c, pfx, &b);
	NV_TRY(mtp_nv_v4_block(be, cfg, x0, &b, o->block_out, o->block_residual,
			       o->post_mix, o->comb_mix));
	NV_CUDA(be, mtp_nv_hc_post(cfg->act, o->block_out, o->block_residual,
				   o->post_mix, o->comb_mix, o->streams, t, m,
				   h, s));
	NV_TRY(mtp_nv_copy(be, o->recycled, o->streams,
			   (size_t)(t * m * h) * cfg->es));
	NV_CUDA(be, mtp_nv_hc_head(
			    cfg->act, o->streams,
			    mtp_nv_in_ptr(c, pfx, "hc_head_fn"),
			    mtp_nv_in_ptr(c, pfx, "hc_head_scale"),
			    mtp_nv_in_ptr(c, pfx, "hc_head_base"),
			    o->head_hidden, t, m, h, cfg->eps, cfg->hc_eps,
			    cfg->variant == MTP_HC_HEAD_ROCM ? MTP_NV_HEAD_ROCM
							     : MTP_NV_HEAD_CUDA,
			    s));
	NV_TRY(mtp_nv_rmsnorm_rows(
		be, cfg, o->head_hidden, NULL, 0,
		mtp_nv_in_ptr(c, pfx, "shared_head_norm_weight"), hn, t));
	return mtp_nv_lm_head(be, cfg->act, hn,
			      mtp_nv_in_ptr(c, pfx, "head_weight"), o->logits,
			      o->token, o->tok64, t, cfg->v, h);
}

static enum mtp_status run_step(struct mtp_backend *be,
				const struct nv_cfg *cfg,
				const struct mtp_call *c, const char *pfx,
				const struct nv_step_in *in,
				const struct nv_step_out *o)
{
	if (c->params->family == MTP_FAMILY_DEEPSEEK_V4)
		return step_v4(be, cfg, c, pfx, in, o);
	return step_v3(be, cfg, c, pfx, in, o);
}

static int in_is64(const struct mtp_call *c, const char *name)
{
	const struct mtp_tensor *t = mtp_nv_in(c, name);

	return t && t->dtype == MTP_I64;
}

enum mtp_status mtp_nv_op_step(struct mtp_backend *be, const struct mtp_call *c)
{
	struct nv_cfg cfg;
	struct nv_step_out o;
	struct nv_step_in in = {
		.embeds = mtp_nv_in_ptr(c, NULL, "embeds"),
		.pos = mtp_nv_in_ptr(c, NULL, "positions"),
		.prev = mtp_nv_in_ptr(c, NULL, "prev_hidden"),
		.pos64 = in_is64(c, "positions"),
	};

	mtp_nv_cfg_init(c, &cfg);
	step_out_get(c, NULL, &o);
	return run_step(be, &cfg, c, NULL, &in, &o);
}

/* Step s of the chain: its embeddings, positions + s, previous hidden. */
static enum mtp_status chain_step(struct mtp_backend *be,
				  const struct nv_cfg *cfg,
				  const struct mtp_call *c, int64_t s,
				  const struct nv_step_out *prev_out,
				  struct nv_step_out *o)
{
	const struct mtp_params *p = c->params;
	const int64_t t = cfg->t;
	cudaStream_t st = nv_ctx(be)->stream;
	const char *ids_name = s ? "next_tokens" : "input_ids";
	const int ids64 = in_is64(c, ids_name);
	const char *ids = mtp_nv_in_ptr(c, NULL, ids_name);
	char pfx[32], opfx[32];
	struct nv_step_in in = {.pos64 = 1};
	void *emb, *pos;

	if (s)
		ids += (size_t)((s - 1) * t) * (ids64 ? 8 : 4);
	snprintf(pfx, sizeof(pfx), "layer.%lld/",
		 (long long)(p->pass_step_idx ? s % p->num_layers : 0));
	snprintf(opfx, sizeof(opfx), "step.%lld/", (long long)s);
	step_out_get(c, opfx, o);
	NV_TRY(mtp_nv_scratch(be, (size_t)(t * cfg->h) * cfg->es, &emb));
	NV_TRY(mtp_nv_scratch(be, (size_t)t * sizeof(int64_t), &pos));
	NV_CUDA(be,
		mtp_nv_embed(cfg->act, mtp_nv_in_ptr(c, NULL, "embed_table"),
			     ids, ids64, emb, t, cfg->h, st));
	NV_CUDA(be,
		mtp_nv_positions_add(mtp_nv_in_ptr(c, NULL, "positions"),
				     in_is64(c, "positions"), s, pos, t, st));
	in.embeds = emb;
	in.pos = pos;
	in.prev =
		s ? prev_out->recycled : mtp_nv_in_ptr(c, NULL, "prev_hidden");
	NV_TRY(run_step(be, cfg, c, pfx, &in, o));
	/* stream-ordered: the next step may reuse this step's scratch */
	return mtp_nv_scratch_release(be);
}

enum mtp_status mtp_nv_op_chain(struct mtp_backend *be,
				const struct mtp_call *c)
{
	struct nv_cfg cfg;
	struct nv_step_out prev = {0}, cur;

	mtp_nv_cfg_init(c, &cfg);
	for (int64_t s = 0; s < c->params->num_steps; s++) {
		NV_TRY(chain_step(be, &cfg, c, s, &prev, &cur));
		prev = cur;
	}
	return MTP_OK;
}
