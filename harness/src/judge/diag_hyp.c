/*
 * Bug hypotheses: the reference run as the buggy code would run it. Each is
 * composed from the same reference pieces as the judge (ref_io.h): a changed
 * attribute or convention (NORM_ROUNDING, MISSING_POS0_MASK,
 * CONVENTION_MISMATCH), or the MTP steps run
 * one by one with the bug applied to each step's outputs before the next step
 * receives them (the recycle, hc_post and hc_head bugs, SPEC.md §8, §10.2).
 */
#include "mtp/diagnose.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "refglue/refglue.h"

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
	mtp_ref_lm_head_q(
		tmp, (struct mtp_ref_qweight){w->head_w, w->head_scale}, d->t,
		d->v, d->h, &x->cfg.quant, mtp_conv_logits_dtype(&x->cfg.conv),
		o->logits, o->token);
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
					  mtp_conv_logits_dtype(&x->cfg.conv),
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
			     mtp_family_mhc(p->family)};
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

bool mtp_call_has_zero_position(const struct mtp_call *c)
{
	int i = mtp_call_in_index(c, "positions");
	const struct mtp_tensor *t = i < 0 ? NULL : &c->in[i];

	for (int64_t k = 0; t && t->data && k < mtp_tensor_numel(t); k++)
		if (mtp_load(t->dtype, t->data, (size_t)k) == 0)
			return true;
	return false;
}

/* The conventions a call exercises (mtp/conventions.h), one bit each. */
unsigned mtp_conv_exercised(const struct mtp_call *c)
{
	enum mtp_op_id op = c->op->id;
	bool v4 = mtp_family_mhc(c->params->family);
	bool step = op == MTP_OP_MTP_STEP || op == MTP_OP_DRAFT_CHAIN;
	unsigned m = 0;

	if (op == MTP_OP_ADD_RMSNORM ||
	    (!v4 && (step || op == MTP_OP_MTP_BLOCK)))
		m |= 1u << MTP_CONV_ADD_NORM_INPUT;
	if (!v4 && step)
		m |= 1u << MTP_CONV_FINAL_ADD;
	/* SwiGLU lives in the block: a captured block's is the engine's own */
	if ((step && !c->params->v2.captured) || op == MTP_OP_MTP_BLOCK)
		m |= 1u << MTP_CONV_SILU_MUL_ROUNDING;
	if (step || op == MTP_OP_LM_HEAD)
		m |= 1u << MTP_CONV_LOGITS_DTYPE;
	if ((step || op == MTP_OP_FUSED_EH_NORM ||
	     op == MTP_OP_FUSED_EMBED_EH_NORM ||
	     op == MTP_OP_FUSED_MTP_INPUT_RMSNORM) &&
	    mtp_call_has_zero_position(c))
		m |= 1u << MTP_CONV_POS0_MASK;
	return m;
}

bool mtp_diag_applies(enum mtp_diag d, const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;
	bool v4 = mtp_family_mhc(p->family);

	if (mtp_diag_tp(d))
		return mtp_diag_tp_applies(d, c);
	if (!mtp_captured_diag_applies(d, c))
		return false;
	switch (d) {
	case MTP_DIAG_PRE_NORM_RECYCLE:
	case MTP_DIAG_DOUBLE_FINAL_NORM: return is_step_op(c) && !v4;
	case MTP_DIAG_MISSING_HC_POST:
	case MTP_DIAG_HC_POST_TWICE: return is_step_op(c) && v4;
	case MTP_DIAG_HC_HEAD_OWNER:
		return c->op->id == MTP_OP_DRAFT_CHAIN && v4 &&
		       p->num_layers >= 2 && p->pass_step_idx &&
		       p->num_steps >= 2;
	case MTP_DIAG_MISSING_POS0_MASK:
		/* only against a mask that is due (§12.1) */
		return mtp_call_has_zero_position(c) &&
		       p->conv.pos0_mask == MTP_POS0_MASKED;
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

static enum mtp_status hyp_alloc(const struct mtp_call *c,
				 struct mtp_tensor *hyp)
{
	enum mtp_status st = MTP_OK;

	for (int i = 0; !st && i < c->n_out; i++) {
		hyp[i] = c->out[i];
		hyp[i].data = NULL;
		st = mtp_tensor_alloc(&hyp[i], c->out[i].dtype, c->out[i].ndim,
				      c->out[i].shape);
	}
	return st;
}

bool mtp_diag_conv_applies(int id, const struct mtp_call *c)
{
	const struct mtp_conventions *v = &c->params->conv;

	if (id < 0 || id >= MTP_CONV_COUNT || !mtp_conv_declared(v, id) ||
	    !((mtp_conv_exercised(c) >> id) & 1u))
		return false;
	return id != MTP_CONV_POS0_MASK || v->pos0_mask != MTP_POS0_MASKED;
}

enum mtp_status mtp_diag_conv_hypothesis(int id, const struct mtp_call *c,
					 struct mtp_tensor *hyp)
{
	struct mtp_params p = *c->params;
	enum mtp_status st = hyp_alloc(c, hyp);

	if (st)
		return st;
	mtp_conv_set(&p.conv, id, 1 - mtp_conv_get(&p.conv, id));
	return run_changed(c, &p, NULL, hyp);
}

void mtp_diag_conv_describe(int id, const struct mtp_call *c, char *buf,
			    size_t n)
{
	int v = mtp_conv_get(&c->params->conv, id);

	snprintf(buf, n, "%s declared %s, outputs match %s", mtp_conv_name(id),
		 mtp_conv_value_name(id, v), mtp_conv_value_name(id, 1 - v));
}

enum mtp_status mtp_diag_hypothesis(enum mtp_diag d, const struct mtp_call *c,
				    struct mtp_tensor *hyp)
{
	struct mtp_params p = *c->params;
	struct mtp_call h = *c;
	struct mtp_ref_io io;
	enum mtp_status st = MTP_OK;

	st = hyp_alloc(c, hyp);
	if (st)
		return st;
	if (d == MTP_DIAG_NORM_ROUNDING) {
		p.rounding = p.rounding == MTP_ROUNDING_EAGER
				     ? MTP_ROUNDING_FUSED
				     : MTP_ROUNDING_EAGER;
		return run_changed(c, &p, NULL, hyp);
	}
	if (d == MTP_DIAG_MISSING_POS0_MASK) {
		p.conv.pos0_mask = MTP_POS0_UNMASKED;
		return run_changed(c, &p, NULL, hyp);
	}
	if (mtp_diag_field_applies(d, c))
		return mtp_diag_field_hypothesis(d, c, hyp);
	if (mtp_diag_tp(d))
		return mtp_diag_tp_hypothesis(d, c, hyp);
	h.out = hyp;
	st = mtp_refio_open(&io, &h);
	if (st)
		return st;
	st = c->params->v2.captured ? mtp_captured_hypothesis(&io, d)
				    : run_steps(&io, d);
	if (!st)
		mtp_refio_store(&io);
	mtp_refio_close(&io);
	return st;
}
