/*
 * Bug hypotheses: the reference run as the buggy code would run it. Each is
 * composed from the same reference pieces as the judge (ref_io.h): a changed
 * attribute or input (NORM_ROUNDING, MISSING_POS0_MASK), or the MTP steps run
 * one by one with the bug applied to each step's outputs before the next step
 * receives them (the recycle, hc_post and hc_head bugs, MTP-SPEC §8, §10.2).
 */
#include "mtp/diagnose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ref_io.h"

struct step_ctx {
	const struct mtp_ref_io *io;
	struct mtp_ref_dims d;
	struct mtp_ref_step_cfg cfg;
	bool chain, v4;
};

/* V4 logits path from given streams: hc_head with the params of layer
 * `head`, then the shared head of layer `w` (§4 Step V4-8). */
static void v4_head(const struct step_ctx *x, const struct mtp_ref_v4_layer *w,
		    const struct mtp_ref_v4_layer *head,
		    struct mtp_ref_step_out *o, double *tmp)
{
	const struct mtp_ref_dims *d = &x->d;

	mtp_ref_hc_head(o->streams, head->hc_head_fn, head->hc_head_scale,
			head->hc_head_base, d->t, d->m, d->h, x->cfg.eps,
			x->cfg.hc_eps, x->cfg.hc_head_variant, x->cfg.act,
			o->head_hidden);
	mtp_ref_rmsnorm(o->head_hidden, w->shared_head_norm_w, d->t, d->h,
			x->cfg.eps, x->cfg.rounding, x->cfg.act, tmp);
	mtp_ref_lm_head_q(tmp,
			  (struct mtp_ref_qweight){w->head_w, w->head_scale},
			  d->t, d->v, d->h, &x->cfg.quant, o->logits, o->token);
}

/* Applies bug `b` to one step's outputs (in place). */
static void apply_bug(const struct step_ctx *x, enum mtp_diag b, int64_t l,
		      struct mtp_ref_step_out *o, double *tmp)
{
	const struct mtp_ref_dims *d = &x->d;
	size_t th = (size_t)(d->t * d->h), tmh = th * (size_t)d->m;
	struct mtp_ref_v3_layer w3;
	struct mtp_ref_v4_layer w4, w0;
	char pfx[32] = "";

	if (x->chain)
		snprintf(pfx, sizeof(pfx), "layer.%lld/", (long long)l);
	if (!x->v4) {
		mtp_refio_v3_layer(x->io, pfx, &w3);
		if (b == MTP_DIAG_PRE_NORM_RECYCLE)
			memcpy(o->recycled, o->hidden_pre, th * sizeof(double));
		if (b == MTP_DIAG_DOUBLE_FINAL_NORM) {
			mtp_ref_rmsnorm(o->hidden_post, w3.shared_head_norm_w,
					d->t, d->h, x->cfg.eps, x->cfg.rounding,
					x->cfg.act, tmp);
			mtp_ref_lm_head_q(tmp,
					  (struct mtp_ref_qweight){
						  w3.head_w, w3.head_scale},
					  d->t, d->v, d->h, &x->cfg.quant,
					  o->logits, o->token);
		}
		return;
	}
	mtp_refio_v4_layer(x->io, pfx, &w4);
	mtp_refio_v4_layer(x->io, x->chain ? "layer.0/" : "", &w0);
	if (b == MTP_DIAG_MISSING_HC_POST) {
		memcpy(o->streams, o->block_residual, tmh * sizeof(double));
	} else if (b == MTP_DIAG_HC_POST_TWICE) {
		mtp_ref_hc_post(o->block_out, o->streams, o->post_mix,
				o->comb_mix, d->t, d->m, d->h, x->cfg.act, tmp);
		memcpy(o->streams, tmp, tmh * sizeof(double));
	} else if (b != MTP_DIAG_HC_HEAD_OWNER || l == 0) {
		return;
	}
	if (b != MTP_DIAG_HC_HEAD_OWNER)
		memcpy(o->recycled, o->streams, tmh * sizeof(double));
	v4_head(x, &w4, b == MTP_DIAG_HC_HEAD_OWNER ? &w0 : &w4, o, tmp);
}

static int64_t chain_layer(const struct mtp_params *p, int64_t s)
{
	return p->pass_step_idx ? s % p->num_layers : 0;
}

/* Runs K steps (1 for mtp_step) with the bug applied after each. */
static enum mtp_status run_steps(const struct mtp_ref_io *io, enum mtp_diag b)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;
	struct step_ctx x = {io,
			     {0},
			     {0},
			     c->op->id == MTP_OP_DRAFT_CHAIN,
			     p->family == MTP_FAMILY_DEEPSEEK_V4};
	int64_t k = x.chain ? p->num_steps : 1;

	mtp_refio_cfg(c, &x.cfg, &x.d);
	size_t th = (size_t)(x.d.t * x.d.h), tmh = th * (size_t)x.d.m;
	double *emb = malloc(th * sizeof(double) + 1);
	double *tmp = malloc(tmh * sizeof(double) + 8);
	int64_t *pos = malloc((size_t)x.d.t * sizeof(int64_t) + 8);
	const double *prev = mtp_refio_in(io, "prev_hidden");

	if (!emb || !tmp || !pos) {
		free(emb);
		free(tmp);
		free(pos);
		return MTP_ERR_NOMEM;
	}
	for (int64_t s = 0; s < k; s++) {
		char lp[32] = "", sp[32] = "";
		int64_t l = x.chain ? chain_layer(p, s) : 0;
		struct mtp_ref_step_in in = {mtp_refio_in(io, "embeds"), pos,
					     prev};
		struct mtp_ref_step_out o;

		if (x.chain) {
			const int64_t *ids =
				s ? mtp_refio_iin(io, "next_tokens") +
						(s - 1) * x.d.t
				  : mtp_refio_iin(io, "input_ids");

			snprintf(lp, sizeof(lp), "layer.%lld/", (long long)l);
			snprintf(sp, sizeof(sp), "step.%lld/", (long long)s);
			mtp_ref_embed(mtp_refio_in(io, "embed_table"), ids,
				      x.d.t, x.d.h, emb);
			in.embeds = emb;
		}
		for (int64_t t = 0; t < x.d.t; t++)
			pos[t] = mtp_refio_iin(io, "positions")[t] + s;
		mtp_refio_step_out(io, sp, &o);
		if (x.v4) {
			struct mtp_ref_v4_layer w;

			mtp_refio_v4_layer(io, lp, &w);
			mtp_ref_mtp_step_v4(&in, &w, &x.d, &x.cfg, &o);
		} else {
			struct mtp_ref_v3_layer w;

			mtp_refio_v3_layer(io, lp, &w);
			mtp_ref_mtp_step_v3(&in, &w, &x.d, &x.cfg, &o);
		}
		apply_bug(&x, b, l, &o, tmp);
		prev = o.recycled;
	}
	free(emb);
	free(tmp);
	free(pos);
	return MTP_OK;
}

static bool is_step_op(const struct mtp_call *c)
{
	return c->op->id == MTP_OP_MTP_STEP || c->op->id == MTP_OP_DRAFT_CHAIN;
}

static bool has_zero_position(const struct mtp_call *c)
{
	int i = mtp_call_in_index(c, "positions");
	const struct mtp_tensor *t = i < 0 ? NULL : &c->in[i];

	for (int64_t k = 0; t && t->data && k < mtp_tensor_numel(t); k++)
		if (mtp_load(t->dtype, t->data, (size_t)k) == 0)
			return true;
	return false;
}

bool mtp_diag_applies(enum mtp_diag d, const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;
	bool v4 = p->family == MTP_FAMILY_DEEPSEEK_V4;

	switch (d) {
	case MTP_DIAG_PRE_NORM_RECYCLE:
	case MTP_DIAG_DOUBLE_FINAL_NORM: return is_step_op(c) && !v4;
	case MTP_DIAG_MISSING_HC_POST:
	case MTP_DIAG_HC_POST_TWICE: return is_step_op(c) && v4;
	case MTP_DIAG_HC_HEAD_OWNER:
		return c->op->id == MTP_OP_DRAFT_CHAIN && v4 &&
		       p->num_layers >= 2 && p->pass_step_idx &&
		       p->num_steps >= 2;
	case MTP_DIAG_MISSING_POS0_MASK: return has_zero_position(c);
	case MTP_DIAG_NORM_ROUNDING:
		return strstr(c->op->attrs, "rounding") != NULL;
	default: return mtp_diag_field_applies(d, c);
	}
}

/* Runs the reference on a copy of the call whose outputs are hyp, with the
 * params or one input replaced. */
static enum mtp_status run_changed(const struct mtp_call *c,
				   const struct mtp_params *p,
				   const struct mtp_tensor *positions,
				   struct mtp_tensor *hyp)
{
	struct mtp_call h = *c;
	struct mtp_tensor *in = malloc((size_t)c->n_in * sizeof(*in) + 1);
	enum mtp_status st;
	int ip = mtp_call_in_index(c, "positions");

	if (!in)
		return MTP_ERR_NOMEM;
	memcpy(in, c->in, (size_t)c->n_in * sizeof(*in));
	if (positions && ip >= 0)
		in[ip] = *positions;
	h.in = in;
	h.params = p;
	h.out = hyp;
	st = mtp_reference_run(&h);
	free(in);
	return st;
}

/* positions with every 0 replaced by 1: the mask never fires. */
static enum mtp_status unmasked_run(const struct mtp_call *c,
				    struct mtp_tensor *hyp)
{
	const struct mtp_tensor *src =
		&c->in[mtp_call_in_index(c, "positions")];
	struct mtp_tensor pos = {0};
	enum mtp_status st;

	st = mtp_tensor_alloc(&pos, src->dtype, src->ndim, src->shape);
	for (int64_t k = 0; !st && k < mtp_tensor_numel(src); k++) {
		double v = mtp_load(src->dtype, src->data, (size_t)k);

		mtp_store(pos.dtype, pos.data, (size_t)k, v == 0 ? 1 : v);
	}
	if (!st)
		st = run_changed(c, c->params, &pos, hyp);
	mtp_tensor_fini(&pos);
	return st;
}

enum mtp_status mtp_diag_hypothesis(enum mtp_diag d, const struct mtp_call *c,
				    struct mtp_tensor *hyp)
{
	struct mtp_params p = *c->params;
	struct mtp_call h = *c;
	struct mtp_ref_io io;
	enum mtp_status st = MTP_OK;

	for (int i = 0; !st && i < c->n_out; i++) {
		hyp[i] = c->out[i];
		hyp[i].data = NULL;
		st = mtp_tensor_alloc(&hyp[i], c->out[i].dtype, c->out[i].ndim,
				      c->out[i].shape);
	}
	if (st)
		return st;
	if (d == MTP_DIAG_NORM_ROUNDING) {
		p.rounding = p.rounding == MTP_ROUNDING_EAGER
				     ? MTP_ROUNDING_FUSED
				     : MTP_ROUNDING_EAGER;
		return run_changed(c, &p, NULL, hyp);
	}
	if (d == MTP_DIAG_MISSING_POS0_MASK)
		return unmasked_run(c, hyp);
	if (mtp_diag_field_applies(d, c))
		return mtp_diag_field_hypothesis(d, c, hyp);
	h.out = hyp;
	st = mtp_refio_open(&io, &h);
	if (st)
		return st;
	st = run_steps(&io, d);
	if (!st)
		mtp_refio_store(&io);
	mtp_refio_close(&io);
	return st;
}
