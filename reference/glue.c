/*
 * The glue before a captured block [SPEC.md §12.3; Steps V3-1..3 and
 * V4-1..3]: what the MTP layer must feed its decoder block, recomputed so
 * that the block input an engine captured can be judged. The position-0
 * mask is a convention (§12.1): applied when cv->pos0_mask is set. The
 * projections may be float8 with block scales (§12.2).
 */
#include "ref_internal.h"

#include <string.h>

#include "mtp/ref_captured.h"

void mtp_ref_conv_init(struct mtp_ref_conv *cv)
{
	cv->pos0_mask = true;
}

/* e [T,H] = RMSNorm(mask(E); enorm); `masked` is scratch [T,H]. */
static void embed_norm(const struct mtp_ref_step_in *in, const double *pre_w,
		       const double *enorm_w, const struct mtp_ref_dims *d,
		       const struct mtp_ref_step_cfg *c,
		       const struct mtp_ref_conv *cv, double *masked, double *e)
{
	if (cv->pos0_mask)
		mtp_ref_pos0_mask(in->embeds, in->positions, d->t, d->h,
				  masked);
	else
		memcpy(masked, in->embeds,
		       (size_t)(d->t * d->h) * sizeof(*masked));
	/* e is scratch for the first of two norms [Step V3-9] */
	if (mtp_family_embed_pre_norm(c->family)) {
		mtp_ref_rmsnorm(masked, pre_w, d->t, d->h, c->eps, c->rounding,
				c->act, e);
		memcpy(masked, e, (size_t)(d->t * d->h) * sizeof(*masked));
	}
	mtp_ref_rmsnorm(masked, enorm_w, d->t, d->h, c->eps, c->rounding,
			c->act, e);
}

void mtp_ref_glue_v3(const struct mtp_ref_step_in *in,
		     const struct mtp_ref_v3_layer *w,
		     const struct mtp_ref_dims *d,
		     const struct mtp_ref_step_cfg *c,
		     const struct mtp_ref_conv *cv, double *block_in)
{
	const int64_t t = d->t, h = d->h;
	const size_t n = (size_t)(t * h);
	double *z = mtp_ref_scratch(4 * n + 1); /* [T,2H], then two [T,H] */
	double *tmp = z + 2 * n, *normed = tmp + n;

	bool hf = mtp_family_hidden_first(c->family);

	embed_norm(in, w->embed_pre_norm_w, w->enorm_w, d, c, cv, tmp, normed);
	mtp_ref_v3_put_half(z, normed, t, h, hf);
	mtp_ref_rmsnorm(in->prev_hidden, w->hnorm_w, t, h, c->eps, c->rounding,
			c->act, normed);
	mtp_ref_v3_put_half(z, normed, t, h, !hf);
	mtp_ref_eh_proj_q(
		z, (struct mtp_ref_qweight){w->eh_proj_w, w->eh_proj_scale}, t,
		h, &c->quant, c->act, block_in);
	free(z);
}

void mtp_ref_glue_v4(const struct mtp_ref_step_in *in,
		     const struct mtp_ref_v4_layer *w,
		     const struct mtp_ref_dims *d,
		     const struct mtp_ref_step_cfg *c,
		     const struct mtp_ref_conv *cv, double *block_in)
{
	const int64_t t = d->t, m = d->m, h = d->h;
	const size_t nth = (size_t)(t * h), ns = nth * (size_t)m;
	double *e = mtp_ref_scratch(2 * nth + ns + 1);
	double *masked = e + nth, *p = masked + nth;

	embed_norm(in, NULL, w->enorm_w, d, c, cv, masked, e);
	/* prev_hidden [T, M*H] viewed as T*M rows of H */
	mtp_ref_rmsnorm(in->prev_hidden, w->hnorm_w, t * m, h, c->eps,
			c->rounding, c->act, p);
	mtp_ref_eh_proj_hc_q(
		e, p, (struct mtp_ref_qweight){w->e_proj_w, w->e_proj_scale},
		(struct mtp_ref_qweight){w->h_proj_w, w->h_proj_scale}, t, m, h,
		&c->quant, c->act, block_in);
	free(e);
}
