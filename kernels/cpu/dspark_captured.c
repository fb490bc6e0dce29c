/*
 * The captured-block DSpark step on the CPU [SPEC.md §13.9.1]: the layers
 * are the engine's and arrive as inputs, so this recomputes the glue only:
 * main_x, the block's positions, its input (V4.1: the embeddings broadcast
 * to M streams), then V4.1's final hc_post and hc_collapse with the last
 * FFN's pre-mix and the norm, or Qwen3's final add-norm, the head (the
 * logit scale on the base logits too, as vLLM's LogitsProcessor), the
 * Markov loop one block position at a time and the confidence.
 */
#include "cpu_internal.h"

#include <string.h>

/* [DS-3] pos[k] = min(last + 1 + k, max_position), last the largest
 * context position. */
static enum mtp_status block_positions(const struct mtp_call *c, int64_t t)
{
	int64_t *ctx = mtp_cpu_indices(mtp_cpu_in_tensor(c, "ctx_positions"));
	int64_t *pos = mtp_cpu_out(c, "", "positions"), last = -1;
	const int64_t clamp = c->params->v2.max_position;

	if (!ctx)
		return MTP_ERR_NOMEM;
	for (int64_t j = 0; j < c->dims.c; j++)
		last = ctx[j] > last ? ctx[j] : last;
	for (int64_t k = 0; k < t; k++)
		pos[k] = last + 1 + k < clamp ? last + 1 + k : clamp;
	mtp_cpu_free(ctx);
	return MTP_OK;
}

/* main_proj_out, main_x, the positions and the block input. */
static enum mtp_status glue(const struct mtp_call *c,
			    const struct mtp_cpu_cfg *g, int64_t m)
{
	const size_t es = mtp_dtype_size(g->act);
	const int64_t t = g->t, h = g->h;
	void *proj = mtp_cpu_out(c, "", "main_proj_out");
	char *bin = mtp_cpu_out(c, "", "block_in");
	int64_t *ids = mtp_cpu_indices(mtp_cpu_in_tensor(c, "ids"));
	enum mtp_status st;

	if (!ids)
		return MTP_ERR_NOMEM;
	st = mtp_cpu_linear(g->act, mtp_cpu_in(c, "", "aux"),
			    mtp_cpu_in(c, "", "main_proj_weight"), c->dims.c,
			    c->dims.p * h, h, proj);
	if (!st)
		st = mtp_cpu_rmsnorm_rows(g->act, proj,
					  mtp_cpu_in(c, "", "main_norm_weight"),
					  c->dims.c, h, g->eps, g->rnd,
					  mtp_cpu_out(c, "", "main_x"));
	if (!st)
		st = block_positions(c, t);
	/* row r of the block: the embedding, then its copies (streams) */
	for (int64_t r = 0; !st && r < t; r++) {
		st = mtp_cpu_embed_rows(
			g->act, mtp_cpu_in(c, "", "embed_table"), g->v, ids + r,
			1, h, bin + (size_t)(r * m * h) * es);
		for (int64_t s = 1; !st && s < m; s++)
			memcpy(bin + (size_t)((r * m + s) * h) * es,
			       bin + (size_t)(r * m * h) * es, (size_t)h * es);
	}
	mtp_cpu_free(ids);
	return st;
}

/* [DS-5] h, the head hidden, and hn, what the head reads. */
static enum mtp_status hidden(const struct mtp_call *c,
			      const struct mtp_cpu_cfg *g, bool qwen3, void *hn,
			      float *row)
{
	const int64_t t = g->t, m = g->m, h = g->h;
	void *hid = mtp_cpu_out(c, "", "h");
	char *streams = mtp_cpu_out(c, "", "streams");
	const float *pre = mtp_cpu_in(c, "", "pre_mix");
	enum mtp_status st;

	if (qwen3) { /* norm(h, residual): post-norm, read by the head */
		st = mtp_cpu_add_rmsnorm_conv_rows(
			g->act, mtp_cpu_in(c, "", "block_out"),
			mtp_cpu_in(c, "", "block_residual"),
			mtp_cpu_in(c, "", "norm_weight"), t, h, g->eps, g->rnd,
			g->conv.add_norm_input, hid, hn);
		if (!st)
			memcpy(hn, hid,
			       (size_t)(t * h) * mtp_dtype_size(g->act));
		return st;
	}
	st = mtp_cpu_hc_post_rows(g->act, mtp_cpu_in(c, "", "block_out"),
				  mtp_cpu_in(c, "", "block_residual"),
				  mtp_cpu_in(c, "", "post_mix"),
				  mtp_cpu_in(c, "", "comb_mix"), t, m, h,
				  streams);
	for (int64_t i = 0; !st && i < t; i++) {
		mtp_cpu_load(g->act, streams, i * m * h, m * h, row);
		mtp_cpu_collapse_row(row, pre + i * m, m, h, row + m * h);
		mtp_cpu_store(g->act, hid, i * h, h, row + m * h);
	}
	return st ? st
		  : mtp_cpu_rmsnorm_rows(g->act, hid,
					 mtp_cpu_in(c, "", "norm_weight"), t, h,
					 g->eps, g->rnd, hn);
}

/* [DS-5..7] the head of both forms (dspark_head.c), keyed on the ids. */
static enum mtp_status head(const struct mtp_call *c,
			    const struct mtp_cpu_cfg *g, const void *hn)
{
	int64_t *ids = mtp_cpu_indices(mtp_cpu_in_tensor(c, "ids"));
	enum mtp_status st =
		ids ? mtp_cpu_dspark_head(c, g->act, hn, ids) : MTP_ERR_NOMEM;

	mtp_cpu_free(ids);
	return st;
}

enum mtp_status mtp_cpu_op_dspark_captured(const struct mtp_call *c)
{
	const bool qwen3 = c->params->dspark_variant == MTP_DSPARK_QWEN3;
	struct mtp_cpu_cfg g;
	int64_t m, wide;
	void *hn;
	float *row;
	enum mtp_status st = MTP_ERR_NOMEM;

	mtp_cpu_cfg_init(c, &g);
	m = qwen3 || g.m < 1 ? 1 : g.m;
	wide = (m + 1) * g.h > g.v ? (m + 1) * g.h : g.v;
	hn = mtp_cpu_act_alloc(g.act, (size_t)(g.t * g.h) + 1);
	row = mtp_cpu_floats((size_t)wide + 1);
	if (hn && row) {
		st = glue(c, &g, m);
		if (!st)
			st = hidden(c, &g, qwen3, hn, row);
		if (!st)
			st = head(c, &g, hn);
	}
	mtp_cpu_free(row);
	mtp_cpu_free(hn);
	return st;
}
