/*
 * Runs the scalar reference (reference/, harness/include/mtp/ref.h) on a call
 * whose tensors live in host memory: widens the inputs, calls the op's
 * reference function, and stores the outputs in their dtypes. This is the
 * judge's entry point and the `ref` backend's kernel.
 */
#include "captured.h"
#include "ref_io.h"

#include "mtp/quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PFX_MAX 32

static void run_step(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_dims d;
	struct mtp_ref_step_in in = {mtp_refio_in(io, "embeds"),
				     mtp_refio_iin(io, "positions"),
				     mtp_refio_in(io, "prev_hidden")};
	struct mtp_ref_step_out o;

	mtp_refio_cfg(c, &cfg, &d);
	mtp_refio_step_out(io, "", &o);
	if (mtp_family_mhc(c->params->family)) {
		struct mtp_ref_v4_layer w;

		mtp_refio_v4_layer(io, "", &w);
		mtp_ref_mtp_step_v4(&in, &w, &d, &cfg, &o);
	} else {
		struct mtp_ref_v3_layer w;

		mtp_refio_v3_layer(io, "", &w);
		mtp_ref_mtp_step_v3(&in, &w, &d, &cfg, &o);
	}
}

static enum mtp_status run_chain(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;
	bool v4 = mtp_family_mhc(p->family);
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_dims d;
	struct mtp_ref_chain_in in = {
		.k = p->num_steps,
		.l = p->num_layers,
		.pass_step_idx = p->pass_step_idx,
		.embed_table = mtp_refio_in(io, "embed_table"),
		.input_ids = mtp_refio_iin(io, "input_ids"),
		.positions = mtp_refio_iin(io, "positions"),
		.prev_hidden = mtp_refio_in(io, "prev_hidden"),
		.next_tokens = mtp_refio_iin(io, "next_tokens"),
	};
	struct mtp_ref_v3_layer *l3 =
		calloc((size_t)p->num_layers, sizeof(*l3));
	struct mtp_ref_v4_layer *l4 =
		calloc((size_t)p->num_layers, sizeof(*l4));
	struct mtp_ref_step_out *so = calloc((size_t)p->num_steps, sizeof(*so));
	enum mtp_status st = MTP_ERR_NOMEM;
	char pfx[PFX_MAX];

	if (!l3 || !l4 || !so)
		goto out_free;
	mtp_refio_cfg(c, &cfg, &d);
	for (int64_t l = 0; l < p->num_layers; l++) {
		snprintf(pfx, sizeof(pfx), "layer.%lld/", (long long)l);
		if (v4)
			mtp_refio_v4_layer(io, pfx, &l4[l]);
		else
			mtp_refio_v3_layer(io, pfx, &l3[l]);
	}
	for (int64_t s = 0; s < p->num_steps; s++) {
		snprintf(pfx, sizeof(pfx), "step.%lld/", (long long)s);
		mtp_refio_step_out(io, pfx, &so[s]);
	}
	in.v3 = v4 ? NULL : l3;
	in.v4 = v4 ? l4 : NULL;
	mtp_ref_draft_chain(&in, &d, &cfg, so);
	st = MTP_OK;
out_free:
	free(so);
	free(l4);
	free(l3);
	return st;
}

static enum mtp_status run_block(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_dims d;

	mtp_refio_cfg(c, &cfg, &d);
	if (!mtp_family_mhc(c->params->family)) {
		struct mtp_ref_v3_layer w;

		mtp_refio_v3_layer(io, "", &w);
		mtp_ref_v3_block(mtp_refio_in(io, "x"),
				 mtp_refio_in(io, "residual"), &w.block, &d,
				 &cfg, mtp_refio_out(io, "h"),
				 mtp_refio_out(io, "residual_out"));
		return MTP_OK;
	}
	struct mtp_ref_v4_block b;
	size_t tmh = (size_t)(d.t * d.m * d.h), tmm = (size_t)(d.t * d.m * d.m);
	/* the internal contract returns only x_out; the rest is scratch */
	double *scratch =
		calloc(tmh + tmm + (size_t)(d.t * d.m) + 1, sizeof(double));
	double *r1 = mtp_refio_out(io, "residual_out"),
	       *pm = mtp_refio_out(io, "post_mix_out");
	double *cm = mtp_refio_out(io, "res_mix_out");

	if (!scratch)
		return MTP_ERR_NOMEM;
	mtp_refio_v4_block(io, "", &b);
	mtp_ref_v4_block(mtp_refio_in(io, "x"), mtp_refio_in(io, "post_mix"),
			 mtp_refio_in(io, "res_mix"),
			 mtp_refio_in(io, "residual"), &b, &d, &cfg,
			 mtp_refio_out(io, "x_out"), r1 ? r1 : scratch,
			 pm ? pm : scratch + tmh,
			 cm ? cm : scratch + tmh + (size_t)(d.t * d.m));
	free(scratch);
	return MTP_OK;
}

/* A weight input and its block scale, if it has one [§12.2]. */
static struct mtp_ref_qweight qweight(const struct mtp_ref_io *io,
				      const char *name)
{
	char sname[MTP_NAME_MAX];
	struct mtp_ref_qweight w = {mtp_refio_in(io, name), NULL};

	if (mtp_quant_scale_name(name, sname, sizeof(sname)))
		w.scale_inv = mtp_refio_in(io, sname);
	return w;
}

/* The DSpark primitives [SPEC.md §13]. */
static enum mtp_status run_dspark(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_dims *d = &c->dims;
	const struct mtp_ref_quant q = {c->params->proj_quant,
					c->params->act_quant_eps};

	switch (c->op->id) {
	case MTP_OP_MAIN_PROJ_NORM:
		mtp_ref_main_proj_norm(mtp_refio_in(io, "aux"),
				       qweight(io, "main_proj_weight"), &q,
				       mtp_refio_in(io, "main_norm_weight"),
				       d->t, d->p, d->h, c->params->eps,
				       c->params->rounding, c->act,
				       mtp_refio_out(io, "main_proj_out"),
				       mtp_refio_out(io, "main_x"));
		return MTP_OK;
	case MTP_OP_HC_COLLAPSE:
		mtp_ref_hc_collapse(mtp_refio_in(io, "x"),
				    mtp_refio_in(io, "pre_mix"), d->t, d->m,
				    d->h, c->act, mtp_refio_out(io, "y"));
		return MTP_OK;
	case MTP_OP_MARKOV_BIAS:
		mtp_ref_markov_bias(mtp_refio_in(io, "logits_in"),
				    mtp_refio_iin(io, "prev_ids"),
				    mtp_refio_in(io, "markov_w1"),
				    mtp_refio_in(io, "markov_w2"), d->t, d->v,
				    d->r, c->act,
				    mtp_refio_out(io, "markov_embed"),
				    mtp_refio_out(io, "logits"),
				    mtp_refio_iout(io, "token"));
		return MTP_OK;
	case MTP_OP_HC_PRE_DELAYED:
		mtp_ref_hc_pre_delayed(
			mtp_refio_in(io, "residual"), mtp_refio_in(io, "fn"),
			mtp_refio_in(io, "scale"), mtp_refio_in(io, "base"),
			mtp_refio_in(io, "norm_weight"),
			mtp_refio_in(io, "pre_mix_in"), &c->params->hc, d->t,
			d->m, d->h, c->act, mtp_refio_out(io, "post_mix"),
			mtp_refio_out(io, "comb_mix"),
			mtp_refio_out(io, "layer_input"),
			mtp_refio_out(io, "pre_mix"));
		return MTP_OK;
	case MTP_OP_CONFIDENCE:
		mtp_ref_confidence(mtp_refio_in(io, "hidden"),
				   mtp_refio_in(io, "markov_embed"),
				   mtp_refio_in(io, "weight"),
				   mtp_refio_in(io, "bias"), d->t, d->h, d->r,
				   mtp_refio_out(io, "confidence"));
		return MTP_OK;
	default: return MTP_ERR_UNSUPPORTED;
	}
}

static enum mtp_status run_op(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;
	const struct mtp_dims *d = &c->dims;
	enum mtp_dtype act = c->act;
	const double *x = mtp_refio_in(io, "x");
	const struct mtp_ref_quant q = {p->proj_quant, p->act_quant_eps};

	switch (c->op->id) {
	case MTP_OP_RMSNORM:
		mtp_ref_rmsnorm(x, mtp_refio_in(io, "weight"), d->r, d->h,
				p->eps, p->rounding, act,
				mtp_refio_out(io, "y"));
		break;
	case MTP_OP_ADD_RMSNORM:
		mtp_ref_add_rmsnorm_conv(x, mtp_refio_in(io, "residual"),
					 mtp_refio_in(io, "weight"), d->r, d->h,
					 p->eps, p->rounding,
					 p->conv.add_norm_input, act,
					 mtp_refio_out(io, "y"),
					 mtp_refio_out(io, "residual_out"));
		break;
	case MTP_OP_EMBED:
		mtp_ref_embed(mtp_refio_in(io, "embed_table"),
			      mtp_refio_iin(io, "input_ids"), d->t, d->h,
			      mtp_refio_out(io, "out"));
		break;
	case MTP_OP_FUSED_EH_NORM:
		mtp_ref_fused_eh_norm(mtp_refio_iin(io, "positions"),
				      mtp_refio_in(io, "embeds"),
				      mtp_refio_in(io, "prev_hidden"),
				      mtp_refio_in(io, "enorm_weight"),
				      mtp_refio_in(io, "hnorm_weight"), d->t,
				      d->h, p->eps, act,
				      mtp_refio_out(io, "out"));
		break;
	case MTP_OP_FUSED_EMBED_EH_NORM:
		mtp_ref_fused_embed_eh_norm(mtp_refio_iin(io, "positions"),
					    mtp_refio_iin(io, "input_ids"),
					    mtp_refio_in(io, "embed_table"),
					    mtp_refio_in(io, "prev_hidden"),
					    mtp_refio_in(io, "enorm_weight"),
					    mtp_refio_in(io, "hnorm_weight"),
					    d->t, d->h, p->eps, act,
					    mtp_refio_out(io, "out"));
		break;
	case MTP_OP_EH_PROJ:
		mtp_ref_eh_proj_q(x, qweight(io, "weight"), d->t, d->h, &q, act,
				  mtp_refio_out(io, "y"));
		break;
	case MTP_OP_FUSED_MTP_INPUT_RMSNORM:
		mtp_ref_fused_mtp_input_rmsnorm(
			mtp_refio_in(io, "embeds"),
			mtp_refio_iin(io, "positions"),
			mtp_refio_in(io, "prev_hidden"),
			mtp_refio_in(io, "enorm_weight"),
			mtp_refio_in(io, "hnorm_weight"), d->t, d->m, d->h,
			p->eps, act, mtp_refio_out(io, "enorm_out"),
			mtp_refio_out(io, "hnorm_out"));
		break;
	case MTP_OP_EH_PROJ_HC:
		mtp_ref_eh_proj_hc_q(mtp_refio_in(io, "e"),
				     mtp_refio_in(io, "p"),
				     qweight(io, "e_proj_weight"),
				     qweight(io, "h_proj_weight"), d->t, d->m,
				     d->h, &q, act, mtp_refio_out(io, "x"));
		break;
	case MTP_OP_HC_PRE:
		mtp_ref_hc_pre(
			mtp_refio_in(io, "residual"), mtp_refio_in(io, "fn"),
			mtp_refio_in(io, "scale"), mtp_refio_in(io, "base"),
			mtp_refio_in(io, "norm_weight"), &p->hc, d->t, d->m,
			d->h, act, mtp_refio_out(io, "post_mix"),
			mtp_refio_out(io, "comb_mix"),
			mtp_refio_out(io, "layer_input"));
		break;
	case MTP_OP_HC_POST:
		mtp_ref_hc_post(x, mtp_refio_in(io, "residual"),
				mtp_refio_in(io, "post_mix"),
				mtp_refio_in(io, "comb_mix"), d->t, d->m, d->h,
				act, mtp_refio_out(io, "out"));
		break;
	case MTP_OP_HC_FUSED_POST_PRE:
		mtp_ref_hc_fused_post_pre(
			x, mtp_refio_in(io, "residual"),
			mtp_refio_in(io, "post_mix"),
			mtp_refio_in(io, "comb_mix"), mtp_refio_in(io, "fn"),
			mtp_refio_in(io, "scale"), mtp_refio_in(io, "base"),
			mtp_refio_in(io, "norm_weight"), &p->hc, d->t, d->m,
			d->h, act, mtp_refio_out(io, "residual_out"),
			mtp_refio_out(io, "post_mix_out"),
			mtp_refio_out(io, "comb_mix_out"),
			mtp_refio_out(io, "layer_input"));
		break;
	case MTP_OP_HC_HEAD:
		mtp_ref_hc_head(x, mtp_refio_in(io, "fn"),
				mtp_refio_in(io, "scale"),
				mtp_refio_in(io, "base"), d->t, d->m, d->h,
				p->hc.rms_eps, p->hc_eps, p->variant, act,
				mtp_refio_out(io, "y"));
		break;
	case MTP_OP_MTP_SHARED_HEAD_RMSNORM:
		mtp_ref_mtp_shared_head_rmsnorm(x, mtp_refio_in(io, "weight"),
						d->t, d->h, p->eps, act,
						mtp_refio_out(io, "y"));
		break;
	case MTP_OP_LM_HEAD:
		mtp_ref_lm_head_q(x, qweight(io, "weight"), d->t, d->v, d->h,
				  &q, mtp_conv_logits_dtype(&p->conv),
				  mtp_refio_out(io, "logits"),
				  mtp_refio_iout(io, "token"));
		break;
	case MTP_OP_ALL_REDUCE:
		mtp_ref_all_reduce_order(mtp_refio_in(io, "parts"), d->p, d->r,
					 d->h, p->tp.order, act, NULL,
					 mtp_refio_out(io, "out"));
		break;
	case MTP_OP_MTP_BLOCK: return run_block(io);
	case MTP_OP_MTP_STEP:
		if (p->v2.captured)
			return mtp_captured_run(io);
		run_step(io);
		break;
	case MTP_OP_DRAFT_CHAIN:
		return p->v2.captured ? mtp_captured_run(io) : run_chain(io);
	default: return run_dspark(io);
	}
	return MTP_OK;
}

/* pos0_mask = 0 [§12.1] for the fused input kernels, which read positions
 * only for the mask: they see positions with no 0 (the steps take the
 * convention through their cfg). */
static void unmask_positions(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;
	int i = mtp_call_in_index(c, "positions");
	bool fused = c->op->id == MTP_OP_FUSED_EH_NORM ||
		     c->op->id == MTP_OP_FUSED_EMBED_EH_NORM ||
		     c->op->id == MTP_OP_FUSED_MTP_INPUT_RMSNORM;

	if (!fused || i < 0 || !io->iin[i] ||
	    c->params->conv.pos0_mask != MTP_POS0_UNMASKED)
		return;
	for (int64_t k = 0; k < mtp_tensor_numel(&c->in[i]); k++)
		if (io->iin[i][k] == 0)
			io->iin[i][k] = 1;
}

enum mtp_status mtp_reference_run(const struct mtp_call *c)
{
	struct mtp_ref_io io;
	enum mtp_status st;

	/* an empty batch: no output to compute, and the widened array of an
	 * empty tensor is NULL, which the reference reads as an absent input */
	if (mtp_call_empty(c))
		return MTP_OK;
	st = mtp_refio_open(&io, c);
	if (st)
		return st;
	unmask_positions(&io);
	st = run_op(&io);
	if (st == MTP_OK)
		mtp_refio_store(&io);
	mtp_refio_close(&io);
	return st;
}
