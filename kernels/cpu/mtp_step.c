/*
 * One draft step of one MTP layer on the CPU [SPEC.md §3, §4, §10]:
 * V3 family: mask + enorm/hnorm + concat, eh_proj, the block, the unfused
 * h + r add, the shared-head norm (which is also what is recycled) and the
 * LM head. V4: mask + enorm and per-stream hnorm, e_proj/h_proj broadcast,
 * the mHC block with exactly one final hc_post (the layer's under the
 * deferred contract, the block's under the internal one), the streams as
 * the recycled hidden, hc_head, the shared-head norm and the LM head.
 * Split into the glue before the block and what follows it, which the
 * captured-block step (captured.c) shares.
 */
#include "cpu_internal.h"

void mtp_cpu_step_out_get(const struct mtp_call *c, const char *pfx,
			  struct mtp_cpu_step_out *o)
{
	o->block_in = mtp_cpu_out(c, pfx, "block_in");
	o->block_out = mtp_cpu_out(c, pfx, "block_out");
	o->block_residual = mtp_cpu_out(c, pfx, "block_residual");
	o->hidden_pre = mtp_cpu_out(c, pfx, "hidden_pre");
	o->hidden_post = mtp_cpu_out(c, pfx, "hidden_post");
	o->post_mix = mtp_cpu_out(c, pfx, "post_mix");
	o->comb_mix = mtp_cpu_out(c, pfx, "comb_mix");
	o->streams = mtp_cpu_out(c, pfx, "streams");
	o->head_hidden = mtp_cpu_out(c, pfx, "head_hidden");
	o->recycled = mtp_cpu_out(c, pfx, "recycled");
	o->logits = mtp_cpu_out(c, pfx, "logits");
	o->token = mtp_cpu_out(c, pfx, "token");
}

/* [§12.1] positions only select the position-0 mask in the glue: under
 * pos0_mask = 0 they are replaced by a row of ones (*tmp, freed by the
 * caller). NULL on failure. */
static const int64_t *mask_positions(const struct mtp_cpu_cfg *cfg,
				     const int64_t *positions, int64_t **tmp)
{
	*tmp = NULL;
	if (cfg->conv.pos0_mask != MTP_POS0_UNMASKED)
		return positions;
	*tmp = mtp_cpu_alloc((size_t)cfg->t * sizeof(int64_t) + 8);
	for (int64_t r = 0; *tmp && r < cfg->t; r++)
		(*tmp)[r] = 1;
	return *tmp;
}

/* V3: x0 = eh_proj([enorm(mask(E)) | hnorm(P)]), the halves in the
 * family's order [Steps V3-1..3]. */
static enum mtp_status glue_v3(const struct mtp_cpu_cfg *cfg,
			       const struct mtp_cpu_layer *w,
			       const void *embeds, const int64_t *positions,
			       const void *prev, void *x0)
{
	const int64_t t = cfg->t, h = cfg->h;
	struct mtp_cpu_eh_norm en = {
		.positions = positions,
		.embeds = embeds,
		.prev = prev,
		.enorm_w = w->enorm_w,
		.hnorm_w = w->hnorm_w,
		.t = t,
		.h = h,
		.eps = cfg->eps,
		.rnd = cfg->rnd,
		.hidden_first = mtp_family_hidden_first(cfg->family)};
	void *z = mtp_cpu_act_alloc(cfg->act, (size_t)(2 * t * h));
	void *pre = NULL;
	enum mtp_status st = MTP_ERR_NOMEM;

	if (z && mtp_family_embed_pre_norm(cfg->family)) {
		/* [Step V3-9] the target's embed_norm first, rounded */
		pre = mtp_cpu_act_alloc(cfg->act, (size_t)(t * h));
		st = pre ? mtp_cpu_rmsnorm_rows(cfg->act, embeds,
						w->embed_pre_norm_w, t, h,
						cfg->eps, cfg->rnd, pre)
			 : MTP_ERR_NOMEM;
		en.embeds = pre;
		if (st) {
			mtp_cpu_free(pre);
			mtp_cpu_free(z);
			return st;
		}
	}
	if (z) {
		st = mtp_cpu_eh_norm_rows(cfg->act, &en, z);
		if (!st)
			st = mtp_cpu_qlinear(cfg->act, z, &w->eh_proj,
					     &cfg->quant, t, 2 * h, h, x0);
	}
	mtp_cpu_free(pre);
	mtp_cpu_free(z);
	return st;
}

/* V4: X0 [T,M,H] = h_proj(hnorm(P)) + e_proj(enorm(mask(E))) broadcast
 * over the streams [Steps V4-1..3]. */
static enum mtp_status glue_v4(const struct mtp_cpu_cfg *cfg,
			       const struct mtp_cpu_layer *w,
			       const void *embeds, const int64_t *positions,
			       const void *prev, void *x0)
{
	const size_t es = mtp_dtype_size(cfg->act);
	const size_t nth = (size_t)(cfg->t * cfg->h) * es;
	const size_t ns = nth * (size_t)cfg->m;
	struct mtp_cpu_arena ar;
	enum mtp_status st;

	if (!mtp_cpu_arena_init(&ar, MTP_CPU_PIECE(nth) + MTP_CPU_PIECE(ns)))
		return MTP_ERR_NOMEM;
	void *e = mtp_cpu_arena_take(&ar, nth),
	     *p = mtp_cpu_arena_take(&ar, ns);

	st = mtp_cpu_mtp_input_norm_rows(cfg->act, positions, embeds, prev,
					 w->enorm_w, w->hnorm_w, cfg->t, cfg->m,
					 cfg->h, cfg->eps, cfg->rnd, e, p);
	if (!st)
		st = mtp_cpu_eh_proj_hc_rows(cfg->act, e, p, &w->e_proj,
					     &w->h_proj, &cfg->quant, cfg->t,
					     cfg->m, cfg->h, x0);
	mtp_cpu_arena_fini(&ar);
	return st;
}

enum mtp_status mtp_cpu_glue(const struct mtp_cpu_cfg *cfg,
			     const struct mtp_cpu_layer *w, const void *embeds,
			     const int64_t *positions, const void *prev,
			     void *x0)
{
	int64_t *ones;
	const int64_t *pos = mask_positions(cfg, positions, &ones);
	enum mtp_status st = MTP_ERR_NOMEM;

	if (pos)
		st = mtp_family_mhc(cfg->family)
			     ? glue_v4(cfg, w, embeds, pos, prev, x0)
			     : glue_v3(cfg, w, embeds, pos, prev, x0);
	mtp_cpu_free(ones);
	return st;
}

/* The LM head into o's logits in the declared dtype (§12.1). */
static enum mtp_status head(const struct mtp_cpu_cfg *cfg,
			    const struct mtp_cpu_layer *w, const void *x,
			    const struct mtp_cpu_step_out *o)
{
	return mtp_cpu_lm_head_rows(cfg->act, x, &w->head, &cfg->quant, cfg->t,
				    cfg->v, cfg->h, cfg->logits_mup,
				    mtp_conv_logits_dtype(&cfg->conv),
				    o->logits, o->token);
}

enum mtp_status mtp_cpu_after_v3(const struct mtp_cpu_cfg *cfg,
				 const struct mtp_cpu_layer *w, const void *h,
				 const void *r1,
				 const struct mtp_cpu_step_out *o)
{
	const enum mtp_dtype act = cfg->act;
	const int64_t t = cfg->t, n = t * cfg->h;
	enum mtp_status st;

	if (cfg->conv.final_add == MTP_FINAL_ADD_FUSED) /* §12.1 */
		st = mtp_cpu_add_rmsnorm_conv_rows(
			act, h, r1, w->shared_head_norm_w, t, cfg->h, cfg->eps,
			cfg->rnd, cfg->conv.add_norm_input, o->hidden_post,
			o->hidden_pre);
	else {
		st = mtp_cpu_add(act, r1, h, n, o->hidden_pre);
		if (!st)
			st = mtp_cpu_rmsnorm_rows(
				act, o->hidden_pre, w->shared_head_norm_w, t,
				cfg->h, cfg->eps, cfg->rnd, o->hidden_post);
	}
	if (st)
		return st;
	memcpy(o->recycled,
	       mtp_family_recycles_pre_norm(cfg->family) ? o->hidden_pre
							 : o->hidden_post,
	       (size_t)n * mtp_dtype_size(act)); /* the row's choice, §8.1 */
	return head(cfg, w, o->hidden_post, o);
}

enum mtp_status mtp_cpu_after_v4(const struct mtp_cpu_cfg *cfg,
				 const struct mtp_cpu_layer *w,
				 const struct mtp_cpu_step_out *o)
{
	const enum mtp_dtype act = cfg->act;
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	void *hn = mtp_cpu_act_alloc(act, (size_t)(t * h));
	enum mtp_status st;

	if (!hn)
		return MTP_ERR_NOMEM;
	memcpy(o->recycled, o->streams,
	       (size_t)(t * m * h) * mtp_dtype_size(act));
	st = mtp_cpu_hc_head_rows(act, o->streams, w->hc_head_fn,
				  w->hc_head_scale, w->hc_head_base, t, m, h,
				  cfg->eps, cfg->hc_eps, cfg->variant,
				  o->head_hidden);
	if (!st)
		st = mtp_cpu_rmsnorm_rows(act, o->head_hidden,
					  w->shared_head_norm_w, t, h, cfg->eps,
					  cfg->rnd, hn);
	if (!st)
		st = head(cfg, w, hn, o);
	mtp_cpu_free(hn);
	return st;
}

/* The synthetic block between the glue's x0 and what follows it; V4: with
 * exactly one final hc_post (the layer's under the deferred contract, the
 * block's under the internal one). */
static enum mtp_status block(const struct mtp_cpu_cfg *cfg,
			     const struct mtp_cpu_layer *w, const void *x0,
			     const struct mtp_cpu_step_out *o)
{
	const bool internal = cfg->contract == MTP_CONTRACT_INTERNAL;
	const struct mtp_cpu_v4_out bo = {o->block_out, o->block_residual,
					  o->post_mix, o->comb_mix,
					  internal ? o->streams : NULL};
	enum mtp_status st;

	if (!mtp_family_mhc(cfg->family)) {
		st = mtp_cpu_block_v3(cfg, w, x0, NULL, o->block_out,
				      o->block_residual);
		return st ? st
			  : mtp_cpu_after_v3(cfg, w, o->block_out,
					     o->block_residual, o);
	}
	st = mtp_cpu_block_v4(cfg, w, x0, NULL, &bo);
	if (!st && !internal)
		st = mtp_cpu_hc_post_rows(
			cfg->act, o->block_out, o->block_residual, o->post_mix,
			o->comb_mix, cfg->t, cfg->m, cfg->h, o->streams);
	return st ? st : mtp_cpu_after_v4(cfg, w, o);
}

enum mtp_status mtp_cpu_step(const struct mtp_cpu_cfg *cfg,
			     const struct mtp_cpu_layer *w, const void *embeds,
			     const int64_t *positions, const void *prev,
			     const struct mtp_cpu_captured *cap,
			     const struct mtp_cpu_step_out *o)
{
	void *x0;
	enum mtp_status st;

	if (cap)
		return mtp_cpu_captured_step(cfg, w, embeds, positions, prev,
					     cap, o);
	x0 = mtp_cpu_act_alloc(cfg->act, (size_t)(cfg->t * cfg->m * cfg->h));
	if (!x0)
		return MTP_ERR_NOMEM;
	st = mtp_cpu_glue(cfg, w, embeds, positions, prev, x0);
	if (!st)
		st = block(cfg, w, x0, o);
	mtp_cpu_free(x0);
	return st;
}

enum mtp_status mtp_cpu_op_mtp_step(const struct mtp_call *c)
{
	struct mtp_cpu_cfg cfg;
	struct mtp_cpu_layer w;
	struct mtp_cpu_step_out o;
	struct mtp_cpu_captured cap;
	int64_t *pos = mtp_cpu_indices(mtp_cpu_in_tensor(c, "positions"));
	enum mtp_status st = MTP_OK;
	bool captured = mtp_cpu_captured_get(c, "", &cap);
	void *tp_h = NULL;

	if (!pos)
		return MTP_ERR_NOMEM;
	mtp_cpu_cfg_init(c, &cfg);
	if (captured && c->params->tp.step) /* Step V3-8 */
		tp_h = mtp_cpu_tp_block_out(c, &cfg, &cap, &st);
	mtp_cpu_layer_get(c, "", &w);
	mtp_cpu_step_out_get(c, "", &o);
	if (!st)
		st = mtp_cpu_step(&cfg, &w, mtp_cpu_in(c, "", "embeds"), pos,
				  mtp_cpu_in(c, "", "prev_hidden"),
				  captured ? &cap : NULL, &o);
	mtp_cpu_free(tp_h);
	mtp_cpu_free(pos);
	return st;
}
