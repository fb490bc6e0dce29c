/*
 * The captured-block DSpark step [SPEC.md §13.9.1]: the engine's decoder
 * layers are a black box (their input and outputs arrive captured), so only
 * the glue around them is recomputed, where every DSpark bug of the field
 * reports but the in-block mask sits: the combiner, the block's positions
 * from the context's (DS-3), the block input (the embeddings, broadcast to
 * M streams for V4.1), then after the layers V4.1's final hc_post and
 * hc_collapse with the last FFN's pre-mix, or Qwen3's final add-norm, the
 * head, the sequential Markov loop and the confidence.
 */
#include "ref_internal.h"

#include <string.h>

/* [DS-3] pos[k] = min(last + 1 + k, max_position), last the largest
 * context position (padding rows sit at 0; no context: the block from 0). */
static void block_positions(const struct mtp_ref_dspark_cap_in *in, int64_t nc,
			    int64_t t, int64_t *pos)
{
	int64_t last = -1;

	for (int64_t j = 0; j < nc; j++)
		last = in->ctx_positions[j] > last ? in->ctx_positions[j]
						   : last;
	for (int64_t k = 0; k < t; k++)
		pos[k] = last + 1 + k < in->max_position ? last + 1 + k
							 : in->max_position;
}

/* [DS-5] The head hidden: V4.1 hc_collapse(hc_post(f, R, post, C), pre),
 * pre-norm, and its norm into hn; Qwen3 norm(h + residual), post-norm,
 * which the head reads as it is. */
static void head_hidden(const struct mtp_ref_dspark_cap_in *in,
			const struct mtp_ref_dspark_cap_w *w,
			const struct mtp_ref_dims *d,
			const struct mtp_ref_step_cfg *c,
			const struct mtp_ref_dspark_cap_cfg *dc,
			const struct mtp_ref_dspark_cap_out *out, double *hn)
{
	const int64_t t = d->t, h = d->h;

	if (dc->qwen3) {
		double *res = mtp_ref_scratch((size_t)(t * h) + 1);

		mtp_ref_add_rmsnorm_conv(in->block_out, in->block_residual,
					 w->norm_w, t, h, c->eps, c->rounding,
					 c->conv.add_norm_input, c->act, out->h,
					 res);
		memcpy(hn, out->h, (size_t)(t * h) * sizeof(*hn));
		free(res);
		return;
	}
	mtp_ref_hc_post(in->block_out, in->block_residual, in->post_mix,
			in->comb_mix, t, d->m, h, c->act, out->streams);
	mtp_ref_hc_collapse(out->streams, in->pre_mix, t, d->m, h, c->act,
			    out->h);
	mtp_ref_rmsnorm(out->h, w->norm_w, t, h, c->eps, c->rounding, c->act,
			hn);
}

void mtp_ref_dspark_captured(const struct mtp_ref_dspark_cap_in *in,
			     const struct mtp_ref_dspark_cap_w *w,
			     const struct mtp_ref_dims *d,
			     const struct mtp_ref_step_cfg *c,
			     const struct mtp_ref_dspark_cap_cfg *dc,
			     const struct mtp_ref_dspark_cap_out *out)
{
	const int64_t t = d->t, h = d->h, m = dc->qwen3 ? 1 : d->m;
	double *e = mtp_ref_scratch((size_t)(2 * t * h) + 1), *hn = e + t * h;

	mtp_ref_main_proj_norm(
		in->aux, (struct mtp_ref_qweight){w->main_proj_w, NULL}, NULL,
		w->main_norm_w, dc->c, dc->p, h, c->eps, c->rounding, c->act,
		out->main_proj_out, out->main_x);
	block_positions(in, dc->c, t, out->positions);
	mtp_ref_embed(w->embed_table, in->ids, t, h, e);
	for (int64_t r = 0; r < t * m; r++)
		memcpy(out->block_in + r * h, e + r / m * h,
		       (size_t)h * sizeof(*e));
	head_hidden(in, w, d, c, dc, out, hn);
	mtp_ref_dspark_head(
		&(struct mtp_ref_dspark_head){
			in->ids, hn, out->h, w->head_w, w->markov_w1,
			w->markov_w2, w->conf_w, w->conf_b, dc->logit_scale,
			dc->markov_on_ids},
		t, h, d->v, dc->r, c->act,
		&(struct mtp_ref_dspark_head_out){
			out->base_logits, out->markov_embed, out->logits,
			out->confidence, out->token});
	free(e);
}
