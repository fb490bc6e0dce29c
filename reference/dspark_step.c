/*
 * The synthetic DSpark step [SPEC.md §13.9] of one request: the context
 * combiner, each layer's context K/V from main_x at the context positions,
 * the block's embeddings broadcast to M streams, L synthetic V4 layers whose
 * sublayers collapse their streams with the pre-mix of the sublayer before
 * (layer 0's attention: stream 0), hc_collapse with the last FFN's pre-mix,
 * the head, the sequential Markov bias and the confidence. Every piece but
 * the attention (dspark_attn.c) is an op of §13.8 or of §10.2. Three bug
 * rows' changes (dc->mistakes, harness/src/bugs/dspark.c) sit where the
 * buggy engines differ: a plain hc_pre, the collapse's pre-mix, the
 * Markov loop's key.
 */
#include "ref_internal.h"

#include <string.h>

/* v = RMSNorm(act(W_kv x); kv_norm_w), k = rope(v, pos): rows n. */
static void layer_kv(const double *x, const struct mtp_ref_dspark_layer *ly,
		     const int64_t *pos, int64_t n, int64_t h,
		     const struct mtp_ref_step_cfg *c, double *k, double *v)
{
	double *p = mtp_ref_scratch((size_t)(n * h) + 1);

	mtp_ref_linear(x, ly->W_kv, n, h, h, c->act, p);
	mtp_ref_rmsnorm(p, ly->kv_norm_w, n, h, c->eps, c->rounding, c->act, v);
	mtp_ref_rope(v, pos, n, h, c->act, k);
	free(p);
}

/* The attention sublayer's output a = act(W_a o) from its input u. */
static void attention(const double *u, const struct mtp_ref_dspark_layer *ly,
		      const double *kc, const double *vc,
		      const int64_t *positions, const struct mtp_ref_dims *d,
		      const struct mtp_ref_step_cfg *c,
		      const struct mtp_ref_dspark_cfg *dc, double *a)
{
	const int64_t t = d->t, h = d->h;
	double *q = mtp_ref_scratch((size_t)(4 * t * h) + 1);
	double *kb = q + t * h, *vb = kb + t * h, *o = vb + t * h;

	mtp_ref_linear(u, ly->W_q, t, h, h, c->act, o);
	mtp_ref_rope(o, positions, t, h, c->act, q);
	layer_kv(u, ly, positions, t, h, c, kb, vb);
	mtp_ref_block_attention(q, kc, vc, kb, vb, dc->c, t, h, dc->mask,
				c->act, o);
	mtp_ref_linear(o, ly->b.W_a, t, h, h, c->act, a);
	free(q);
}

/* The L layers from the streams in R (replaced by the last hc_post's);
 * returns the pre-mix hc_collapse takes (in out->pre_mixes): the last
 * FFN's, or an earlier sublayer's under collapse_back. */
static const double *layers(const struct mtp_ref_dspark_in *in,
			    const struct mtp_ref_dspark_w *w,
			    const struct mtp_ref_dims *d,
			    const struct mtp_ref_step_cfg *c,
			    const struct mtp_ref_dspark_cfg *dc,
			    const struct mtp_ref_dspark_out *out, double *R)
{
	const int64_t t = d->t, m = d->m, h = d->h, nc = dc->c;
	const struct mtp_hc_params hp = mtp_ref_block_hc_params(c);
	double *kc = mtp_ref_scratch(
		(size_t)(2 * nc * h + t * h + t * m * h + t * m + t * m * m) +
		1);
	double *vc = kc + nc * h, *a = vc + nc * h, *R2 = a + t * h;
	double *post = R2 + t * m * h, *comb = post + t * m;
	const double *pre = NULL; /* layer 0's attention: stream 0 */

	for (int64_t l = 0; l < dc->l; l++) {
		const struct mtp_ref_dspark_layer *ly = &w->layers[l];

		layer_kv(out->main_x, ly, in->ctx_positions, nc, h, c, kc, vc);
		for (int s = 0; s < 2; s++) {
			const struct mtp_ref_v4_block *b = &ly->b;
			double *u = out->sublayer_inputs + (2 * l + s) * t * h;
			double *pre_out = out->pre_mixes + (2 * l + s) * t * m;

			mtp_ref_hc_pre_delayed(
				R, s ? b->hc_ffn_fn : b->hc_attn_fn,
				s ? b->hc_ffn_scale : b->hc_attn_scale,
				s ? b->hc_ffn_base : b->hc_attn_base,
				s ? b->ffn_norm_w : b->attn_norm_w, pre, &hp, t,
				m, h, c->act, post, comb, u, pre_out);
			if (dc->mistakes.pre_mix_undelayed) /* plain hc_pre */
				mtp_ref_hc_pre(
					R, s ? b->hc_ffn_fn : b->hc_attn_fn,
					s ? b->hc_ffn_scale : b->hc_attn_scale,
					s ? b->hc_ffn_base : b->hc_attn_base,
					s ? b->ffn_norm_w : b->attn_norm_w, &hp,
					t, m, h, c->act, post, comb, u);
			if (s)
				mtp_ref_swiglu(u, b->W_gate, b->W_up, b->W_down,
					       t, h, d->f,
					       c->conv.silu_mul_rounding,
					       c->act, a);
			else
				attention(u, ly, kc, vc, in->positions, d, c,
					  dc, a);
			mtp_ref_hc_post(a, R, post, comb, t, m, h, c->act, R2);
			memcpy(R, R2, (size_t)(t * m * h) * sizeof(*R));
			pre = pre_out;
		}
	}
	free(kc);
	if (dc->mistakes.collapse_back > 0 &&
	    dc->mistakes.collapse_back < 2 * dc->l) /* DS-5's mistakes */
		return out->pre_mixes +
		       (2 * dc->l - 1 - dc->mistakes.collapse_back) * t * m;
	return pre;
}

/* [DS-5..7] the final norm, then the head of both forms (dspark_head.c). */
static void head(const struct mtp_ref_dspark_in *in,
		 const struct mtp_ref_dspark_w *w, const struct mtp_ref_dims *d,
		 const struct mtp_ref_step_cfg *c,
		 const struct mtp_ref_dspark_cfg *dc,
		 const struct mtp_ref_dspark_out *out)
{
	const int64_t t = d->t, h = d->h;
	double *hn = mtp_ref_scratch((size_t)(t * h) + 1);

	mtp_ref_rmsnorm(out->h, w->norm_w, t, h, c->eps, c->rounding, c->act,
			hn);
	mtp_ref_dspark_head(
		&(struct mtp_ref_dspark_head){in->ids, hn, out->h, w->head_w,
					      w->markov_w1, w->markov_w2,
					      w->conf_w, NULL, dc->logit_scale,
					      dc->mistakes.markov_on_ids},
		t, h, d->v, dc->r, c->act,
		&(struct mtp_ref_dspark_head_out){
			out->base_logits, out->markov_embed, out->logits,
			out->confidence, out->token});
	free(hn);
}

void mtp_ref_dspark_step(const struct mtp_ref_dspark_in *in,
			 const struct mtp_ref_dspark_w *w,
			 const struct mtp_ref_dims *d,
			 const struct mtp_ref_step_cfg *c,
			 const struct mtp_ref_dspark_cfg *dc,
			 const struct mtp_ref_dspark_out *out)
{
	const int64_t t = d->t, m = d->m, h = d->h;
	double *proj = mtp_ref_scratch((size_t)(dc->c * h + t * h) + 1);
	double *e = proj + dc->c * h;
	const double *pre;

	mtp_ref_main_proj_norm(in->aux,
			       (struct mtp_ref_qweight){w->main_proj_w, NULL},
			       NULL, w->main_norm_w, dc->c, dc->p, h, c->eps,
			       c->rounding, c->act, proj, out->main_x);
	mtp_ref_embed(w->embed_table, in->ids, t, h, e);
	for (int64_t r = 0; r < t; r++)
		for (int64_t s = 0; s < m; s++)
			memcpy(out->streams + (r * m + s) * h, e + r * h,
			       (size_t)h * sizeof(*e));
	pre = layers(in, w, d, c, dc, out, out->streams);
	mtp_ref_hc_collapse(out->streams, pre, t, m, h, c->act, out->h);
	head(in, w, d, c, dc, out);
	free(proj);
}
