/*
 * One MTP draft step [SPEC.md §3, §4, §10] and the teacher-forced draft
 * chain [§5] on any GPU backend's primitives. A V3-family step: masked
 * enorm and hnorm into one [T,2H] buffer, eh_proj, the block, the unfused
 * h + r add, the shared head's norm (the recycled hidden) and the LM head.
 * A V4 step: enorm and per-stream hnorm, e_proj/h_proj broadcast, the block
 * in its deferred form with exactly one final hc_post (the internal
 * contract computes the same numbers), the streams as the recycled hidden,
 * hc_head, the shared head's norm and the LM head. A captured-block step
 * [§12.3] runs the same glue (into block_in) and the same code after the
 * block on the engine's block outputs; the tensor-parallel one [Step V3-8]
 * first reduces the block's partials in the declared order [§2.5]. The
 * §12.1 conventions of that form (pos0_mask, final_add, add_norm_input,
 * logits_dtype) are honoured. A chain runs the same step code.
 */
#include <stdio.h>

#include "compose.h"

#define W(name) mtp_gpu_tensor(c, false, pfx, name)

struct gpu_step_in {
	struct gpu_buf embeds, pos, prev;
	bool pos64;
};

struct gpu_step_out {
	struct gpu_buf block_in, block_out, block_residual, hidden_pre;
	struct gpu_buf hidden_post, post_mix, comb_mix, streams, head_hidden;
	struct gpu_buf recycled, logits, token;
	bool tok64;
};

/* [§12.3] A captured block's outputs (inputs of the call); block_out NULL:
 * a synthetic block. */
struct gpu_captured {
	struct gpu_buf block_out, block_residual, post_mix, comb_mix;
};

static void step_out_get(const struct mtp_call *c, const char *pfx,
			 struct gpu_step_out *o)
{
#define O(name) mtp_gpu_tensor(c, true, pfx, name)
	o->block_in = O("block_in");
	o->block_out = O("block_out");
	o->block_residual = O("block_residual");
	o->hidden_pre = O("hidden_pre");
	o->hidden_post = O("hidden_post");
	o->post_mix = O("post_mix");
	o->comb_mix = O("comb_mix");
	o->streams = O("streams");
	o->head_hidden = O("head_hidden");
	o->recycled = O("recycled");
	o->logits = O("logits");
	o->token = O("token");
#undef O
	o->tok64 = mtp_gpu_is64(c, true, pfx, "token");
}

static void captured_get(const struct mtp_call *c, const char *pfx,
			 struct gpu_captured *cap)
{
	cap->block_out = W("block_out");
	cap->block_residual = W("block_residual");
	cap->post_mix = W("post_mix");
	cap->comb_mix = W("comb_mix");
}

/* The two input norms in one call (enorm of the embeddings, masked at
 * position 0 unless the pos0_mask convention says not, and hnorm of rows_p
 * rows of the previous hidden) in the step's rounding. */
static enum mtp_status input_norms(struct mtp_backend *be,
				   const struct gpu_cfg *cfg,
				   const struct mtp_call *c, const char *pfx,
				   const struct gpu_step_in *in,
				   struct gpu_buf e, struct gpu_buf p,
				   int64_t y_stride, int64_t rows_p)
{
	const struct gpu_norm_job j[2] = {
		{
			.x = in->embeds,
			.pos = cfg->unmasked ? (struct gpu_buf){0} : in->pos,
			.pos64 = in->pos64,
			.w = W("enorm_weight"),
			.y = e,
			.x_stride = cfg->h,
			.y_stride = y_stride,
			.rows = cfg->t,
		},
		{
			.x = in->prev,
			.w = W("hnorm_weight"),
			.y = p,
			.x_stride = cfg->h,
			.y_stride = y_stride,
			.rows = rows_p,
		},
	};

	return gpu_prims(be)->rmsnorm(be, cfg->act, j, 2, cfg->h, cfg->eps,
				      cfg->rounding);
}

/* Steps V3-1..3: x0 [T,H] = eh_proj([enorm(mask(E)) | hnorm(P)]), the
 * halves in the family's order ([ hnorm(P) | enorm ] hidden first). */
static enum mtp_status glue_v3(struct mtp_backend *be,
			       const struct gpu_cfg *cfg,
			       const struct mtp_call *c, const char *pfx,
			       const struct gpu_step_in *in, struct gpu_buf x0)
{
	const int64_t t = cfg->t, h = cfg->h;
	const struct gpu_qw eh = mtp_gpu_qw(c, pfx, "eh_proj_weight");
	const size_t half = (size_t)h * cfg->es;
	bool hf = mtp_family_hidden_first(c->params->family);
	struct gpu_buf z;

	GPU_TRY(mtp_gpu_scratch(be, (size_t)(2 * t * h) * cfg->es, &z));
	GPU_TRY(input_norms(be, cfg, c, pfx, in, gpu_at(z, hf ? half : 0),
			    gpu_at(z, hf ? 0 : half), 2 * h, t));
	return mtp_gpu_qlinear(be, cfg, false, z, &eh, x0, t, 2 * h, h);
}

/* Steps V4-1..3: x0 [T,M,H], e_proj(enorm) broadcast over h_proj(hnorm). */
static enum mtp_status glue_v4(struct mtp_backend *be,
			       const struct gpu_cfg *cfg,
			       const struct mtp_call *c, const char *pfx,
			       const struct gpu_step_in *in, struct gpu_buf x0)
{
	const size_t nth = (size_t)(cfg->t * cfg->h) * cfg->es;
	const struct gpu_qw we = mtp_gpu_qw(c, pfx, "e_proj_weight"),
			    wh = mtp_gpu_qw(c, pfx, "h_proj_weight");
	struct gpu_buf e, p;

	/* e [T,H], p [T,M,H] */
	GPU_TRY(mtp_gpu_scratch(be, nth * (size_t)(1 + cfg->m), &e));
	p = gpu_at(e, nth);
	GPU_TRY(input_norms(be, cfg, c, pfx, in, e, p, cfg->h,
			    cfg->t * cfg->m));
	return mtp_gpu_eh_proj_hc(be, cfg, e, p, &we, &wh, x0);
}

/* Steps V3-5..7 from the block's h and r1: the final add and the shared
 * head's norm (fused into one add_rmsnorm under the final_add convention),
 * the recycled hidden and the LM head. */
static enum mtp_status after_v3(struct mtp_backend *be,
				const struct gpu_cfg *cfg,
				const struct mtp_call *c, const char *pfx,
				struct gpu_buf h, struct gpu_buf r1,
				const struct gpu_step_out *o)
{
	const struct gpu_prims *pr = gpu_prims(be);
	const struct gpu_qw head = mtp_gpu_qw(c, pfx, "head_weight");
	const int64_t t = cfg->t;

	if (cfg->final_fused)
		GPU_TRY(pr->add_rmsnorm(
			be, cfg->act, h, r1, W("shared_head_norm_weight"),
			o->hidden_post, o->hidden_pre, t, cfg->h, cfg->eps,
			cfg->rounding | (cfg->norm_sum ? GPU_NORM_SUM : 0)));
	else {
		GPU_TRY(pr->add_bcast(be, cfg->act, r1, h, o->hidden_pre, t, 1,
				      cfg->h));
		GPU_TRY(mtp_gpu_norm_rows(be, cfg, o->hidden_pre,
					  W("shared_head_norm_weight"),
					  o->hidden_post, t));
	}
	GPU_TRY(pr->copy(be, o->recycled,
			 mtp_family_recycles_pre_norm(c->params->family)
				 ? o->hidden_pre
				 : o->hidden_post,
			 (size_t)(t * cfg->h) * cfg->es)); /* the row's, §8.1 */
	return mtp_gpu_lm_head(be, cfg, o->hidden_post, &head, o->logits,
			       o->token, o->tok64);
}

/* Steps V4-6..8 from the streams: recycled, hc_head, the shared head's
 * norm and the LM head. */
static enum mtp_status after_v4(struct mtp_backend *be,
				const struct gpu_cfg *cfg,
				const struct mtp_call *c, const char *pfx,
				const struct gpu_step_out *o)
{
	const struct gpu_prims *pr = gpu_prims(be);
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	const size_t nth = (size_t)(t * h) * cfg->es;
	const struct gpu_qw head = mtp_gpu_qw(c, pfx, "head_weight");
	struct gpu_buf hn;

	GPU_TRY(mtp_gpu_scratch(be, nth, &hn));
	GPU_TRY(pr->copy(be, o->recycled, o->streams, nth * (size_t)m));
	GPU_TRY(pr->hc_head(be, cfg->act, o->streams, W("hc_head_fn"),
			    W("hc_head_scale"), W("hc_head_base"),
			    o->head_hidden, t, m, h, cfg->eps, cfg->hc_eps,
			    cfg->rocm_head));
	GPU_TRY(mtp_gpu_norm_rows(be, cfg, o->head_hidden,
				  W("shared_head_norm_weight"), hn, t));
	return mtp_gpu_lm_head(be, cfg, hn, &head, o->logits, o->token,
			       o->tok64);
}

static enum mtp_status step_v3(struct mtp_backend *be,
			       const struct gpu_cfg *cfg,
			       const struct mtp_call *c, const char *pfx,
			       const struct gpu_step_in *in,
			       const struct gpu_step_out *o)
{
	struct gpu_v3_block b;
	struct gpu_buf x0, none = {0};

	GPU_TRY(mtp_gpu_scratch(be, (size_t)(cfg->t * cfg->h) * cfg->es, &x0));
	GPU_TRY(glue_v3(be, cfg, c, pfx, in, x0));
	mtp_gpu_v3_block_get(c, pfx, &b);
	GPU_TRY(mtp_gpu_v3_block(be, cfg, x0, none, &b, o->block_out,
				 o->block_residual));
	return after_v3(be, cfg, c, pfx, o->block_out, o->block_residual, o);
}

/* Steps V4-1..8: one V4 step, the block in its deferred form. */
static enum mtp_status step_v4(struct mtp_backend *be,
			       const struct gpu_cfg *cfg,
			       const struct mtp_call *c, const char *pfx,
			       const struct gpu_step_in *in,
			       const struct gpu_step_out *o)
{
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	struct gpu_v4_block b;
	struct gpu_buf x0;

	GPU_TRY(mtp_gpu_scratch(be, (size_t)(t * m * h) * cfg->es, &x0));
	GPU_TRY(glue_v4(be, cfg, c, pfx, in, x0));
	mtp_gpu_v4_block_get(c, pfx, &b);
	GPU_TRY(mtp_gpu_v4_block(be, cfg, x0, &b, o->block_out,
				 o->block_residual, o->post_mix, o->comb_mix));
	GPU_TRY(gpu_prims(be)->hc_post(be, cfg->act, o->block_out,
				       o->block_residual, o->post_mix,
				       o->comb_mix, o->streams, t, m, h));
	return after_v4(be, cfg, c, pfx, o);
}

/* [§12.3] The captured-block step: the glue into block_in (judged against
 * the captured one), the captured outputs as given, everything after them
 * recomputed; V4: the one final hc_post over the captured mixes under the
 * deferred contract, none under the internal one (block_out already is
 * the streams). */
static enum mtp_status step_captured(struct mtp_backend *be,
				     const struct gpu_cfg *cfg,
				     const struct mtp_call *c, const char *pfx,
				     const struct gpu_step_in *in,
				     const struct gpu_captured *cap,
				     const struct gpu_step_out *o)
{
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;

	if (!mtp_family_mhc(c->params->family)) {
		GPU_TRY(glue_v3(be, cfg, c, pfx, in, o->block_in));
		return after_v3(be, cfg, c, pfx, cap->block_out,
				cap->block_residual, o);
	}
	GPU_TRY(glue_v4(be, cfg, c, pfx, in, o->block_in));
	if (cfg->contract == MTP_CONTRACT_INTERNAL)
		GPU_TRY(gpu_prims(be)->copy(be, o->streams, cap->block_out,
					    (size_t)(t * m * h) * cfg->es));
	else
		GPU_TRY(gpu_prims(be)->hc_post(
			be, cfg->act, cap->block_out, cap->block_residual,
			cap->post_mix, cap->comb_mix, o->streams, t, m, h));
	return after_v4(be, cfg, c, pfx, o);
}

static enum mtp_status run_step(struct mtp_backend *be,
				const struct gpu_cfg *cfg,
				const struct mtp_call *c, const char *pfx,
				const struct gpu_step_in *in,
				const struct gpu_captured *cap,
				const struct gpu_step_out *o)
{
	if (cap)
		return step_captured(be, cfg, c, pfx, in, cap, o);
	if (mtp_family_mhc(c->params->family))
		return step_v4(be, cfg, c, pfx, in, o);
	return step_v3(be, cfg, c, pfx, in, o);
}

/* [Step V3-8] The tensor-parallel captured step's block output: the
 * block's partials reduced in the declared order (rank p's outputs are
 * every rank's: the reduced tensor is replicated). Fused into the final
 * norm, the sum is stored in act first, as the cpu backend does. */
static enum mtp_status tp_block_out(struct mtp_backend *be,
				    const struct mtp_call *c,
				    struct gpu_cfg *cfg,
				    struct gpu_captured *cap)
{
	const struct mtp_tp_params *tp = &c->params->tp;

	GPU_TRY(mtp_gpu_scratch(be, (size_t)(cfg->t * cfg->h) * cfg->es,
				&cap->block_out));
	if (tp->at == MTP_REDUCE_AT_FINAL_NORM)
		cfg->final_fused = true;
	return gpu_prims(be)->reduce_ordered(
		be, cfg->act, mtp_gpu_tensor(c, false, NULL, "block_out_parts"),
		c->dims.p, cfg->t, cfg->h, (int)tp->order, cap->block_out);
}

enum mtp_status mtp_gpu_op_step(struct mtp_backend *be,
				const struct mtp_call *c)
{
	struct gpu_cfg cfg;
	struct gpu_step_out o;
	struct gpu_captured cap;
	const struct gpu_step_in in = {
		.embeds = mtp_gpu_tensor(c, false, NULL, "embeds"),
		.pos = mtp_gpu_tensor(c, false, NULL, "positions"),
		.prev = mtp_gpu_tensor(c, false, NULL, "prev_hidden"),
		.pos64 = mtp_gpu_is64(c, false, NULL, "positions"),
	};
	const bool captured = c->params->v2.captured;

	mtp_gpu_cfg_init(c, &cfg);
	step_out_get(c, NULL, &o);
	if (captured)
		captured_get(c, NULL, &cap);
	if (captured && c->params->tp.step)
		GPU_TRY(tp_block_out(be, c, &cfg, &cap));
	return run_step(be, &cfg, c, NULL, &in, captured ? &cap : NULL, &o);
}

/* Step s of the chain: its embeddings, positions + s, previous hidden
 * (the recomputed recycled state in a captured chain, whose positions
 * clamp to max_position: they only select the position-0 mask, which the
 * clamp changes only for max_position < 1, declined by supports()). */
static enum mtp_status chain_step(struct mtp_backend *be,
				  const struct gpu_cfg *cfg,
				  const struct mtp_call *c, int64_t s,
				  const struct gpu_step_out *prev_out,
				  struct gpu_step_out *o)
{
	const struct gpu_prims *pr = gpu_prims(be);
	const struct mtp_params *p = c->params;
	const int64_t t = cfg->t;
	const char *ids_name = s ? "next_tokens" : "input_ids";
	const bool ids64 = mtp_gpu_is64(c, false, NULL, ids_name);
	struct gpu_buf ids = mtp_gpu_tensor(c, false, NULL, ids_name);
	struct gpu_step_in in = {.pos64 = true};
	struct gpu_captured cap;
	char pfx[32], opfx[32];

	if (s)
		ids = gpu_at(ids, (size_t)((s - 1) * t) * (ids64 ? 8 : 4));
	snprintf(pfx, sizeof(pfx), "layer.%lld/",
		 (long long)(p->pass_step_idx ? s % p->num_layers : 0));
	snprintf(opfx, sizeof(opfx), "step.%lld/", (long long)s);
	step_out_get(c, opfx, o);
	if (p->v2.captured)
		captured_get(c, opfx, &cap);
	GPU_TRY(mtp_gpu_scratch(be, (size_t)(t * cfg->h) * cfg->es,
				&in.embeds));
	GPU_TRY(mtp_gpu_scratch(be, (size_t)t * sizeof(int64_t), &in.pos));
	GPU_TRY(pr->embed(be, cfg->act,
			  mtp_gpu_tensor(c, false, NULL, "embed_table"), ids,
			  ids64, in.embeds, t, cfg->h));
	GPU_TRY(pr->positions_add(
		be, mtp_gpu_tensor(c, false, NULL, "positions"),
		mtp_gpu_is64(c, false, NULL, "positions"), s, in.pos, t));
	in.prev = s ? prev_out->recycled
		    : mtp_gpu_tensor(c, false, NULL, "prev_hidden");
	GPU_TRY(run_step(be, cfg, c, pfx, &in, p->v2.captured ? &cap : NULL,
			 o));
	/* in queue order: the next step may reuse this step's scratch */
	return mtp_gpu_scratch_release(be);
}

enum mtp_status mtp_gpu_op_chain(struct mtp_backend *be,
				 const struct mtp_call *c)
{
	struct gpu_cfg cfg;
	struct gpu_step_out prev = {0}, cur;

	mtp_gpu_cfg_init(c, &cfg);
	for (int64_t s = 0; s < c->params->num_steps; s++) {
		GPU_TRY(chain_step(be, &cfg, c, s, &prev, &cur));
		prev = cur;
	}
	return MTP_OK;
}
