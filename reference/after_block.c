/*
 * Everything after a captured block [SPEC.md §12.3]: the block's outputs
 * are taken as the engine captured them. V3 family [Steps V3-5..6]: the
 * final residual add (unfused: rounded, then the norm; or the fused add +
 * RMSNorm of §2.3), the shared-head norm, recycled (or the sum before it,
 * where the family recycles the pre-norm hidden, §8.1),
 * and the LM head. V4 [Steps V4-6..8]: exactly one hc_post over the whole
 * step (the layer's under the deferred contract, the block's own under the
 * internal one), the streams recycled, then hc_head with the layer's own
 * parameters, the shared-head norm and the LM head.
 */
#include "ref_internal.h"

#include <string.h>

#include "mtp/ref_captured.h"

void mtp_ref_after_block_v3(const struct mtp_ref_captured *cap,
			    const struct mtp_ref_v3_layer *w,
			    const struct mtp_ref_dims *d,
			    const struct mtp_ref_step_cfg *c,
			    struct mtp_ref_captured_out *o)
{
	/* the same final add + norm as the synthetic step, conventions and all */
	mtp_ref_v3_final(cap->block_out, cap->block_residual,
			 w->shared_head_norm_w, d, c, o->hidden_pre,
			 o->hidden_post);
	mtp_ref_v3_recycle(o->hidden_pre, o->hidden_post, d, c, o->recycled);
	mtp_ref_v3_head(o->hidden_post, w, d, c, o->logits, o->token);
}

void mtp_ref_v4_logits(const struct mtp_ref_v4_layer *w,
		       const struct mtp_ref_v4_layer *head,
		       const struct mtp_ref_dims *d,
		       const struct mtp_ref_step_cfg *c,
		       struct mtp_ref_captured_out *o)
{
	double *hn = mtp_ref_scratch((size_t)(d->t * d->h) + 1);

	mtp_ref_hc_head(o->streams, head->hc_head_fn, head->hc_head_scale,
			head->hc_head_base, d->t, d->m, d->h, c->eps, c->hc_eps,
			c->hc_head_variant, c->act, o->head_hidden);
	mtp_ref_rmsnorm(o->head_hidden, w->shared_head_norm_w, d->t, d->h,
			c->eps, c->rounding, c->act, hn);
	mtp_ref_lm_head_q(hn,
			  (struct mtp_ref_qweight){w->head_w, w->head_scale},
			  d->t, d->v, d->h, &c->quant,
			  mtp_conv_logits_dtype(&c->conv), o->logits, o->token);
	free(hn);
}

void mtp_ref_after_block_v4(const struct mtp_ref_captured *cap,
			    const struct mtp_ref_v4_layer *w,
			    const struct mtp_ref_dims *d,
			    const struct mtp_ref_step_cfg *c,
			    struct mtp_ref_captured_out *o)
{
	const size_t ns = (size_t)(d->t * d->m * d->h);

	if (c->contract == MTP_CONTRACT_DEFERRED)
		mtp_ref_hc_post(cap->block_out, cap->block_residual,
				cap->post_mix, cap->comb_mix, d->t, d->m, d->h,
				c->act, o->streams);
	else
		memcpy(o->streams, cap->block_out, ns * sizeof(*o->streams));
	memcpy(o->recycled, o->streams, ns * sizeof(*o->recycled));
	mtp_ref_v4_logits(w, w, d, c, o);
}
