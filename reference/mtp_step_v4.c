/*
 * One draft step of a DeepSeek V4 MTP layer [SPEC.md §4, §10.2]: mask,
 * enorm and per-stream hnorm, e_proj/h_proj broadcast over the M streams,
 * the synthetic mHC block under the case's contract with exactly one final
 * hc_post, the pre-hc_head streams as the recycled hidden, then hc_head, the
 * shared-head norm and the LM head.
 */
#include "ref_internal.h"

#include <assert.h>
#include <string.h>

/* X0 [T,M,H] from the step inputs; e is scratch [T,H], p scratch [T,M,H]. */
static void v4_input(const struct mtp_ref_step_in *in,
		     const struct mtp_ref_v4_layer *w,
		     const struct mtp_ref_dims *d,
		     const struct mtp_ref_step_cfg *c, double *e, double *p,
		     double *x0)
{
	const int64_t t = d->t, m = d->m, h = d->h;
	double *masked = x0; /* x0 is free until the projections */

	if (c->conv.pos0_mask == MTP_POS0_MASKED)
		mtp_ref_pos0_mask(in->embeds, in->positions, t, h, masked);
	else
		memcpy(masked, in->embeds, (size_t)(t * h) * sizeof(*masked));
	mtp_ref_rmsnorm(masked, w->enorm_w, t, h, c->eps, c->rounding, c->act,
			e);
	/* prev_hidden [T, M*H] viewed as [T,M,H]: T*M rows of H */
	mtp_ref_rmsnorm(in->prev_hidden, w->hnorm_w, t * m, h, c->eps,
			c->rounding, c->act, p);
	mtp_ref_eh_proj_hc_q(
		e, p, (struct mtp_ref_qweight){w->e_proj_w, w->e_proj_scale},
		(struct mtp_ref_qweight){w->h_proj_w, w->h_proj_scale}, t, m, h,
		&c->quant, c->act, x0);
}

/*
 * (f, R1, post_f, C_f) and the streams after the one final hc_post. Under
 * the deferred contract the layer applies it; under the internal contract
 * the block does, and f, which that block does not return, is recovered by
 * a deferred call of the same block (scratch holds its other outputs).
 */
static void v4_block_streams(const double *x0, const struct mtp_ref_v4_layer *w,
			     const struct mtp_ref_dims *d,
			     const struct mtp_ref_step_cfg *c,
			     struct mtp_ref_step_out *out, double *scratch)
{
	const int64_t t = d->t, m = d->m, h = d->h;
	struct mtp_ref_step_cfg deferred = *c;

	if (c->contract == MTP_CONTRACT_DEFERRED) {
		mtp_ref_v4_block(x0, NULL, NULL, NULL, &w->block, d, c,
				 out->block_out, out->block_residual,
				 out->post_mix, out->comb_mix);
		mtp_ref_hc_post(out->block_out, out->block_residual,
				out->post_mix, out->comb_mix, t, m, h, c->act,
				out->streams);
		return;
	}
	mtp_ref_v4_block(x0, NULL, NULL, NULL, &w->block, d, c, out->streams,
			 out->block_residual, out->post_mix, out->comb_mix);
	deferred.contract = MTP_CONTRACT_DEFERRED;
	mtp_ref_v4_block(x0, NULL, NULL, NULL, &w->block, d, &deferred,
			 out->block_out, scratch, scratch + t * m * h,
			 scratch + t * m * h + t * m);
}

void mtp_ref_mtp_step_v4(const struct mtp_ref_step_in *in,
			 const struct mtp_ref_v4_layer *w,
			 const struct mtp_ref_dims *d,
			 const struct mtp_ref_step_cfg *c,
			 struct mtp_ref_step_out *out)
{
	const int64_t t = d->t, m = d->m, h = d->h;
	const size_t ns = (size_t)(t * m * h), nth = (size_t)(t * h);
	double *x0 =
		mtp_ref_scratch(3 * ns + 2 * nth + (size_t)(t * m + t * m * m));
	double *p = x0 + ns;
	double *e = p + ns;
	double *hn = e + nth;
	double *scratch = hn + nth; /* [T,M,H] + [T,M] + [T,M,M] */

	assert(out->block_out && out->block_residual && out->post_mix &&
	       out->comb_mix && out->streams && out->recycled &&
	       out->head_hidden && out->logits && out->token);
	v4_input(in, w, d, c, e, p, x0);
	v4_block_streams(x0, w, d, c, out, scratch);
	memcpy(out->recycled, out->streams, ns * sizeof(*out->recycled));
	mtp_ref_hc_head(out->streams, w->hc_head_fn, w->hc_head_scale,
			w->hc_head_base, t, m, h, c->eps, c->hc_eps,
			c->hc_head_variant, c->act, out->head_hidden);
	mtp_ref_rmsnorm(out->head_hidden, w->shared_head_norm_w, t, h, c->eps,
			c->rounding, c->act, hn);
	mtp_ref_lm_head_q(hn,
			  (struct mtp_ref_qweight){w->head_w, w->head_scale}, t,
			  d->v, h, &c->quant, mtp_conv_logits_dtype(&c->conv),
			  out->logits, out->token);
	free(x0);
}
