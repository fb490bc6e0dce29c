/*
 * The reference's side of a step bug: the operations a row's after_step
 * may ask for (mtp/bugclass.h), on one step's double buffers, composed
 * from the same reference pieces as a correct step.
 */
#include "bug_step.h"
#include "mtp/ref_captured.h"

#include <stdlib.h>
#include <string.h>

#define X(s) ((const struct mtp_ref_bug_step *)(s))

/* The buffer `name` of the step and its element count. */
static double *buf(const struct mtp_ref_bug_step *x, const char *name,
		   size_t *n)
{
	const struct mtp_ref_step_out *o = &x->o;
	size_t th = (size_t)(x->d->t * x->d->h), tmh = th * (size_t)x->d->m;
	bool m = x->s.mhc;
	const struct {
		const char *name;
		double *p;
		size_t n;
	} map[] = {
		{"recycled", o->recycled, m ? tmh : th},
		{"hidden_pre", o->hidden_pre, th},
		{"hidden_post", o->hidden_post, th},
		{"streams", o->streams, tmh},
		{"block_out", o->block_out, th},
		{"block_residual", o->block_residual, m ? tmh : th},
		{"head_hidden", o->head_hidden, th},
	};

	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
		if (strcmp(map[i].name, name) == 0) {
			*n = map[i].n;
			return map[i].p;
		}
	}
	return NULL;
}

static enum mtp_status copy(const struct mtp_bug_step *s, const char *dst,
			    const char *src)
{
	size_t nd = 0, ns = 0;
	double *d = buf(X(s), dst, &nd), *from = buf(X(s), src, &ns);

	if (!d || !from || ns < nd)
		return MTP_ERR_INVALID;
	memcpy(d, from, nd * sizeof(double));
	return MTP_OK;
}

static enum mtp_status head(const struct mtp_bug_step *s, const char *name,
			    bool norm)
{
	const struct mtp_ref_bug_step *x = X(s);
	const struct mtp_ref_dims *d = x->d;
	const struct mtp_ref_step_cfg *cfg = x->cfg;
	const double *norm_w = s->mhc ? x->v4[s->layer].shared_head_norm_w
				      : x->v3[s->layer].shared_head_norm_w;
	struct mtp_ref_qweight hw =
		s->mhc ? (struct mtp_ref_qweight){x->v4[s->layer].head_w,
						  x->v4[s->layer].head_scale}
		       : (struct mtp_ref_qweight){x->v3[s->layer].head_w,
						  x->v3[s->layer].head_scale};
	size_t n = 0;
	double *in = buf(x, name, &n);
	double *tmp = norm ? malloc((size_t)(d->t * d->h) * sizeof(double) + 8)
			   : NULL;

	if (!in || (norm && !tmp)) {
		free(tmp);
		return in ? MTP_ERR_NOMEM : MTP_ERR_INVALID;
	}
	if (norm)
		mtp_ref_rmsnorm(in, norm_w, d->t, d->h, cfg->eps, cfg->rounding,
				cfg->act, tmp);
	if (s->mhc)
		mtp_ref_lm_head_q(norm ? tmp : in, hw, d->t, d->v, d->h,
				  &cfg->quant,
				  mtp_conv_logits_dtype(&cfg->conv),
				  x->o.logits, x->o.token);
	else /* the row's head, a mup divisor included [Step V3-9] */
		mtp_ref_v3_head(norm ? tmp : in, &x->v3[s->layer], d, cfg,
				x->o.logits, x->o.token);
	free(tmp);
	return MTP_OK;
}

static enum mtp_status mhc_head(const struct mtp_bug_step *s, int64_t hc)
{
	const struct mtp_ref_bug_step *x = X(s);
	const struct mtp_ref_v4_layer *w = &x->v4[hc];
	const struct mtp_ref_step_cfg *cfg = x->cfg;

	mtp_ref_hc_head(x->o.streams, w->hc_head_fn, w->hc_head_scale,
			w->hc_head_base, x->d->t, x->d->m, x->d->h, cfg->eps,
			cfg->hc_eps, cfg->hc_head_variant, cfg->act,
			x->o.head_hidden);
	return head(s, "head_hidden", true);
}

static enum mtp_status hc_post_again(const struct mtp_bug_step *s)
{
	const struct mtp_ref_bug_step *x = X(s);
	const struct mtp_ref_dims *d = x->d;
	size_t tmh = (size_t)(d->t * d->m * d->h);
	double *tmp = malloc(tmh * sizeof(double) + 8);

	if (!tmp)
		return MTP_ERR_NOMEM;
	mtp_ref_hc_post(x->o.block_out, x->o.streams, x->o.post_mix,
			x->o.comb_mix, d->t, d->m, d->h, x->cfg->act, tmp);
	memcpy(x->o.streams, tmp, tmh * sizeof(double));
	free(tmp);
	return MTP_OK;
}

static const struct mtp_bug_step_ops ref_ops = {copy, head, mhc_head,
						hc_post_again};

enum mtp_status mtp_ref_bug_step_apply(struct mtp_ref_bug_step *x,
				       const struct mtp_bug_class *row)
{
	x->s.ops = &ref_ops;
	return row->after_step ? row->after_step(&x->s) : MTP_OK;
}
