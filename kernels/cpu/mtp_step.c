/*
 * One draft step of one MTP layer on the CPU [SPEC.md §3, §4, §10]:
 * V3 family: mask + enorm/hnorm + concat, eh_proj, the block, the unfused
 * h + r add, the shared-head norm (which is also what is recycled) and the
 * LM head. V4: mask + enorm and per-stream hnorm, e_proj/h_proj broadcast,
 * the mHC block with exactly one final hc_post (the layer's under the
 * deferred contract, the block's under the internal one), the streams as
 * the recycled hidden, hc_head, the shared-head norm and the LM head.
 */
#include "cpu_internal.h"

void mtp_cpu_step_out_get(const struct mtp_call *c, const char *pfx,
			  struct mtp_cpu_step_out *o)
{
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

static enum mtp_status step_v3(const struct mtp_cpu_cfg *cfg,
			       const struct mtp_cpu_layer *w,
			       const void *embeds, const int64_t *positions,
			       const void *prev,
			       const struct mtp_cpu_step_out *o)
{
	const enum mtp_dtype act = cfg->act;
	const int64_t t = cfg->t, h = cfg->h;
	const size_t nb = (size_t)(t * h) * mtp_dtype_size(act);
	const struct mtp_cpu_eh_norm en = {.positions = positions,
					   .embeds = embeds,
					   .prev = prev,
					   .enorm_w = w->enorm_w,
					   .hnorm_w = w->hnorm_w,
					   .t = t,
					   .h = h,
					   .eps = cfg->eps,
					   .rnd = cfg->rnd};
	struct mtp_cpu_arena ar;
	enum mtp_status st;

	if (!mtp_cpu_arena_init(&ar, MTP_CPU_PIECE(2 * nb) + MTP_CPU_PIECE(nb)))
		return MTP_ERR_NOMEM;
	void *z = mtp_cpu_arena_take(&ar, 2 * nb);
	void *x0 = mtp_cpu_arena_take(&ar, nb);

	st = mtp_cpu_eh_norm_rows(act, &en, z);
	if (!st)
		st = mtp_cpu_qlinear(act, z, &w->eh_proj, &cfg->quant, t, 2 * h,
				     h, x0);
	if (!st)
		st = mtp_cpu_block_v3(cfg, w, x0, NULL, o->block_out,
				      o->block_residual);
	if (!st)
		st = mtp_cpu_add(act, o->block_residual, o->block_out, t * h,
				 o->hidden_pre);
	if (!st)
		st = mtp_cpu_rmsnorm_rows(act, o->hidden_pre,
					  w->shared_head_norm_w, t, h, cfg->eps,
					  cfg->rnd, o->hidden_post);
	if (!st) {
		memcpy(o->recycled, o->hidden_post, nb);
		st = mtp_cpu_lm_head_rows(act, o->hidden_post, &w->head,
					  &cfg->quant, t, cfg->v, h, o->logits,
					  o->token);
	}
	mtp_cpu_arena_fini(&ar);
	return st;
}

/* X0 [T,M,H] from the step inputs; e [T,H] and p [T,M,H] are scratch. */
static enum mtp_status v4_input(const struct mtp_cpu_cfg *cfg,
				const struct mtp_cpu_layer *w,
				const void *embeds, const int64_t *positions,
				const void *prev, void *e, void *p, void *x0)
{
	enum mtp_status st;

	st = mtp_cpu_mtp_input_norm_rows(cfg->act, positions, embeds, prev,
					 w->enorm_w, w->hnorm_w, cfg->t, cfg->m,
					 cfg->h, cfg->eps, cfg->rnd, e, p);
	if (!st)
		st = mtp_cpu_eh_proj_hc_rows(cfg->act, e, p, &w->e_proj,
					     &w->h_proj, &cfg->quant, cfg->t,
					     cfg->m, cfg->h, x0);
	return st;
}

/* The block and the one final hc_post, then hc_head, norm and LM head. */
static enum mtp_status v4_output(const struct mtp_cpu_cfg *cfg,
				 const struct mtp_cpu_layer *w, const void *x0,
				 void *hn, const struct mtp_cpu_step_out *o)
{
	const enum mtp_dtype act = cfg->act;
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	const bool internal = cfg->contract == MTP_CONTRACT_INTERNAL;
	const struct mtp_cpu_v4_out bo = {o->block_out, o->block_residual,
					  o->post_mix, o->comb_mix,
					  internal ? o->streams : NULL};
	enum mtp_status st = mtp_cpu_block_v4(cfg, w, x0, NULL, &bo);

	if (!st && !internal)
		st = mtp_cpu_hc_post_rows(act, o->block_out, o->block_residual,
					  o->post_mix, o->comb_mix, t, m, h,
					  o->streams);
	if (st)
		return st;
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
		st = mtp_cpu_lm_head_rows(act, hn, &w->head, &cfg->quant, t,
					  cfg->v, h, o->logits, o->token);
	return st;
}

static enum mtp_status step_v4(const struct mtp_cpu_cfg *cfg,
			       const struct mtp_cpu_layer *w,
			       const void *embeds, const int64_t *positions,
			       const void *prev,
			       const struct mtp_cpu_step_out *o)
{
	const size_t es = mtp_dtype_size(cfg->act);
	const size_t nth = (size_t)(cfg->t * cfg->h) * es;
	const size_t ns = (size_t)(cfg->t * cfg->m * cfg->h) * es;
	struct mtp_cpu_arena ar;
	enum mtp_status st;

	if (!mtp_cpu_arena_init(&ar,
				2 * MTP_CPU_PIECE(nth) + 2 * MTP_CPU_PIECE(ns)))
		return MTP_ERR_NOMEM;
	void *e = mtp_cpu_arena_take(&ar, nth),
	     *hn = mtp_cpu_arena_take(&ar, nth);
	void *p = mtp_cpu_arena_take(&ar, ns),
	     *x0 = mtp_cpu_arena_take(&ar, ns);

	st = v4_input(cfg, w, embeds, positions, prev, e, p, x0);
	if (!st)
		st = v4_output(cfg, w, x0, hn, o);
	mtp_cpu_arena_fini(&ar);
	return st;
}

enum mtp_status mtp_cpu_step(const struct mtp_cpu_cfg *cfg,
			     const struct mtp_cpu_layer *w, const void *embeds,
			     const int64_t *positions, const void *prev,
			     const struct mtp_cpu_step_out *o)
{
	if (cfg->family == MTP_FAMILY_DEEPSEEK_V4)
		return step_v4(cfg, w, embeds, positions, prev, o);
	return step_v3(cfg, w, embeds, positions, prev, o);
}

enum mtp_status mtp_cpu_op_mtp_step(const struct mtp_call *c)
{
	struct mtp_cpu_cfg cfg;
	struct mtp_cpu_layer w;
	struct mtp_cpu_step_out o;
	int64_t *pos = mtp_cpu_indices(mtp_cpu_in_tensor(c, "positions"));
	enum mtp_status st;

	if (!pos)
		return MTP_ERR_NOMEM;
	mtp_cpu_cfg_init(c, &cfg);
	mtp_cpu_layer_get(c, "", &w);
	mtp_cpu_step_out_get(c, "", &o);
	st = mtp_cpu_step(&cfg, &w, mtp_cpu_in(c, "", "embeds"), pos,
			  mtp_cpu_in(c, "", "prev_hidden"), &o);
	mtp_cpu_free(pos);
	return st;
}
