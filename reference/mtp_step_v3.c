/*
 * One draft step of a V3-family MTP layer (DeepSeek V3/V3.1/V3.2/R1, GLM)
 * [SPEC.md §3, §10.1]: mask, enorm/hnorm, eh_proj, the synthetic block,
 * the h + r add and the shared-head norm (unfused, or fused under the
 * final_add convention, §12.1), whose output is also what is recycled (the
 * post-norm hidden, §8.1), and the LM head.
 */
#include "ref_internal.h"

#include <assert.h>
#include <string.h>

#include "mtp/ref_captured.h"

/* X0 [T,H] = eh_proj(cat(RMSNorm(mask(E); enorm), RMSNorm(P; hnorm))), the
 * halves in the family's order. z is scratch [T,2H], e scratch [T,H]. */
static void v3_input(const struct mtp_ref_step_in *in,
		     const struct mtp_ref_v3_layer *w,
		     const struct mtp_ref_dims *d,
		     const struct mtp_ref_step_cfg *c, double *z, double *e,
		     double *x0)
{
	const int64_t t = d->t, h = d->h;
	double *normed = x0; /* x0 is free until the GEMM: the normed rows */
	bool hf = mtp_family_hidden_first(c->family);

	if (c->conv.pos0_mask == MTP_POS0_MASKED)
		mtp_ref_pos0_mask(in->embeds, in->positions, t, h, e);
	else
		memcpy(e, in->embeds, (size_t)(t * h) * sizeof(*e));
	/* z's second half is free scratch until the halves are written */
	mtp_ref_v3_embed_norm(e, w->embed_pre_norm_w, w->enorm_w, d, c,
			      z + t * h, normed);
	mtp_ref_v3_put_half(z, normed, t, h, hf);
	mtp_ref_rmsnorm(in->prev_hidden, w->hnorm_w, t, h, c->eps, c->rounding,
			c->act, normed);
	mtp_ref_v3_put_half(z, normed, t, h, !hf);
	mtp_ref_eh_proj_q(
		z, (struct mtp_ref_qweight){w->eh_proj_w, w->eh_proj_scale}, t,
		h, &c->quant, c->act, x0);
}

void mtp_ref_v3_put_half(double *z, const double *rows, int64_t t, int64_t h,
			 bool second)
{
	for (int64_t r = 0; r < t; r++)
		memcpy(z + r * 2 * h + (second ? h : 0), rows + r * h,
		       (size_t)h * sizeof(*z));
}

void mtp_ref_v3_embed_norm(const double *x, const double *pre_w,
			   const double *enorm_w, const struct mtp_ref_dims *d,
			   const struct mtp_ref_step_cfg *c, double *tmp,
			   double *e)
{
	if (mtp_family_embed_pre_norm(c->family)) {
		mtp_ref_rmsnorm(x, pre_w, d->t, d->h, c->eps, c->rounding,
				c->act, tmp);
		x = tmp;
	}
	mtp_ref_rmsnorm(x, enorm_w, d->t, d->h, c->eps, c->rounding, c->act, e);
}

void mtp_ref_v3_head(const double *x, const struct mtp_ref_v3_layer *w,
		     const struct mtp_ref_dims *d,
		     const struct mtp_ref_step_cfg *c, double *logits,
		     int64_t *token)
{
	const struct mtp_ref_qweight hw = {w->head_w, w->head_scale};
	const enum mtp_dtype dt = mtp_conv_logits_dtype(&c->conv);

	if (c->logits_mup == 0.0) {
		mtp_ref_lm_head_q(x, hw, d->t, d->v, d->h, &c->quant, dt,
				  logits, token);
		return;
	}
	/* addmm's alpha = 1/mup on the unrounded product, one rounding */
	mtp_ref_qlinear(x, hw, d->t, d->h, d->v, &c->quant, MTP_F64, logits);
	for (int64_t i = 0; i < d->t * d->v; i++)
		logits[i] = mtp_round(dt, logits[i] / c->logits_mup);
	for (int64_t r = 0; r < d->t; r++)
		token[r] = mtp_ref_argmax(logits + r * d->v, d->v);
}

void mtp_ref_v3_recycle(const double *hidden_pre, const double *hidden_post,
			const struct mtp_ref_dims *d,
			const struct mtp_ref_step_cfg *c, double *recycled)
{
	memcpy(recycled,
	       mtp_family_recycles_pre_norm(c->family) ? hidden_pre
						       : hidden_post,
	       (size_t)(d->t * d->h) * sizeof(*recycled));
}

void mtp_ref_v3_final(const double *h_out, const double *r1,
		      const double *norm_w, const struct mtp_ref_dims *d,
		      const struct mtp_ref_step_cfg *c, double *hidden_pre,
		      double *hidden_post)
{
	const int64_t t = d->t, h = d->h;

	if (c->conv.final_add == MTP_FINAL_ADD_FUSED) {
		mtp_ref_add_rmsnorm_conv(h_out, r1, norm_w, t, h, c->eps,
					 c->rounding, c->conv.add_norm_input,
					 c->act, hidden_post, hidden_pre);
		return;
	}
	for (int64_t i = 0; i < t * h; i++)
		hidden_pre[i] = mtp_round(c->act, r1[i] + h_out[i]);
	mtp_ref_rmsnorm(hidden_pre, norm_w, t, h, c->eps, c->rounding, c->act,
			hidden_post);
}

void mtp_ref_mtp_step_v3(const struct mtp_ref_step_in *in,
			 const struct mtp_ref_v3_layer *w,
			 const struct mtp_ref_dims *d,
			 const struct mtp_ref_step_cfg *c,
			 struct mtp_ref_step_out *out)
{
	const int64_t t = d->t, h = d->h;
	const size_t n = (size_t)(t * h);
	double *z = mtp_ref_scratch(4 * n);
	double *e = z + 2 * n;
	double *x0 = e + n;

	assert(out->block_out && out->block_residual && out->hidden_pre &&
	       out->hidden_post && out->recycled && out->logits && out->token);
	v3_input(in, w, d, c, z, e, x0);
	mtp_ref_v3_block(x0, NULL, &w->block, d, c, out->block_out,
			 out->block_residual);
	mtp_ref_v3_final(out->block_out, out->block_residual,
			 w->shared_head_norm_w, d, c, out->hidden_pre,
			 out->hidden_post);
	mtp_ref_v3_recycle(out->hidden_pre, out->hidden_post, d, c,
			   out->recycled);
	mtp_ref_v3_head(out->hidden_post, w, d, c, out->logits, out->token);
	free(z);
}
