/*
 * Runs the scalar reference (reference/, harness/include/mtp/ref.h) on a call
 * whose tensors live in host memory: widens the inputs to double (indices to
 * int64), calls the op's reference function, and stores the outputs in their
 * dtypes. This is the judge's entry point and the `ref` backend's kernel.
 */
#include "mtp/op.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ref_io {
	const struct mtp_call *c;
	double **fin;    /* float inputs, NULL where absent or integer */
	int64_t **iin;   /* integer inputs */
	double **fout;   /* float outputs */
	int64_t **iout;  /* integer outputs */
};

static const double *IN(const struct ref_io *io, const char *name)
{
	int i = mtp_call_in_index(io->c, name);

	return i < 0 ? NULL : io->fin[i];
}

static const int64_t *IIN(const struct ref_io *io, const char *name)
{
	int i = mtp_call_in_index(io->c, name);

	return i < 0 ? NULL : io->iin[i];
}

static double *OUT(const struct ref_io *io, const char *name)
{
	int i = mtp_call_out_index(io->c, name);

	return i < 0 ? NULL : io->fout[i];
}

static int64_t *IOUT(const struct ref_io *io, const char *name)
{
	int i = mtp_call_out_index(io->c, name);

	return i < 0 ? NULL : io->iout[i];
}

static void fill_cfg(const struct mtp_call *c, struct mtp_ref_step_cfg *cfg,
		     struct mtp_ref_dims *d)
{
	const struct mtp_params *p = c->params;

	memset(cfg, 0, sizeof(*cfg));
	cfg->family = p->family;
	cfg->eps = p->eps;
	cfg->rounding = p->rounding;
	cfg->act = c->act;
	cfg->hc_eps = p->hc_eps;
	cfg->sinkhorn_iters = p->hc.sinkhorn_iters;
	cfg->post_mult = p->hc.post_mult;
	cfg->contract = p->contract;
	cfg->hc_head_variant = p->variant;
	d->t = c->dims.t;
	d->h = c->dims.h;
	d->m = c->dims.m ? c->dims.m : 1;
	d->v = c->dims.v;
	d->f = c->dims.f;
}

#define PFX_MAX 32

static const double *INP(const struct ref_io *io, const char *pfx,
			 const char *name)
{
	char full[MTP_NAME_MAX];

	strcpy(full, pfx);
	strncat(full, name, sizeof(full) - strlen(full) - 1);
	return IN(io, full);
}

static void v3_layer(const struct ref_io *io, const char *pfx,
		     struct mtp_ref_v3_layer *w)
{
	w->enorm_w = INP(io, pfx, "enorm_weight");
	w->hnorm_w = INP(io, pfx, "hnorm_weight");
	w->eh_proj_w = INP(io, pfx, "eh_proj_weight");
	w->block.w_in = INP(io, pfx, "block.w_in");
	w->block.W_a = INP(io, pfx, "block.W_a");
	w->block.w_post = INP(io, pfx, "block.w_post");
	w->block.W_gate = INP(io, pfx, "block.W_gate");
	w->block.W_up = INP(io, pfx, "block.W_up");
	w->block.W_down = INP(io, pfx, "block.W_down");
	w->shared_head_norm_w = INP(io, pfx, "shared_head_norm_weight");
	w->head_w = INP(io, pfx, "head_weight");
}

static void v4_block(const struct ref_io *io, const char *pfx,
		     struct mtp_ref_v4_block *b)
{
	b->hc_attn_fn = INP(io, pfx, "block.hc_attn_fn");
	b->hc_attn_scale = INP(io, pfx, "block.hc_attn_scale");
	b->hc_attn_base = INP(io, pfx, "block.hc_attn_base");
	b->hc_ffn_fn = INP(io, pfx, "block.hc_ffn_fn");
	b->hc_ffn_scale = INP(io, pfx, "block.hc_ffn_scale");
	b->hc_ffn_base = INP(io, pfx, "block.hc_ffn_base");
	b->attn_norm_w = INP(io, pfx, "block.attn_norm_w");
	b->ffn_norm_w = INP(io, pfx, "block.ffn_norm_w");
	b->W_a = INP(io, pfx, "block.W_a");
	b->W_gate = INP(io, pfx, "block.W_gate");
	b->W_up = INP(io, pfx, "block.W_up");
	b->W_down = INP(io, pfx, "block.W_down");
}

static void v4_layer(const struct ref_io *io, const char *pfx,
		     struct mtp_ref_v4_layer *w)
{
	w->enorm_w = INP(io, pfx, "enorm_weight");
	w->hnorm_w = INP(io, pfx, "hnorm_weight");
	w->e_proj_w = INP(io, pfx, "e_proj_weight");
	w->h_proj_w = INP(io, pfx, "h_proj_weight");
	v4_block(io, pfx, &w->block);
	w->hc_head_fn = INP(io, pfx, "hc_head_fn");
	w->hc_head_scale = INP(io, pfx, "hc_head_scale");
	w->hc_head_base = INP(io, pfx, "hc_head_base");
	w->shared_head_norm_w = INP(io, pfx, "shared_head_norm_weight");
	w->head_w = INP(io, pfx, "head_weight");
}

static void step_out(const struct ref_io *io, const char *pfx,
		     struct mtp_ref_step_out *o)
{
	static const char *const names[] = {
		"block_out", "block_residual", "hidden_pre", "hidden_post",
		"post_mix", "comb_mix", "streams", "head_hidden", "recycled",
		"logits"};
	double **slots[] = {&o->block_out, &o->block_residual, &o->hidden_pre,
			    &o->hidden_post, &o->post_mix, &o->comb_mix,
			    &o->streams, &o->head_hidden, &o->recycled,
			    &o->logits};
	char full[MTP_NAME_MAX];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		strcpy(full, pfx);
		strncat(full, names[i], sizeof(full) - strlen(full) - 1);
		*slots[i] = OUT(io, full);
	}
	strcpy(full, pfx);
	strncat(full, "token", sizeof(full) - strlen(full) - 1);
	o->token = IOUT(io, full);
}

static void run_step(const struct ref_io *io)
{
	const struct mtp_call *c = io->c;
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_dims d;
	struct mtp_ref_step_in in = {IN(io, "embeds"), IIN(io, "positions"),
				     IN(io, "prev_hidden")};
	struct mtp_ref_step_out o;

	fill_cfg(c, &cfg, &d);
	step_out(io, "", &o);
	if (c->params->family == MTP_FAMILY_DEEPSEEK_V4) {
		struct mtp_ref_v4_layer w;

		v4_layer(io, "", &w);
		mtp_ref_mtp_step_v4(&in, &w, &d, &cfg, &o);
	} else {
		struct mtp_ref_v3_layer w;

		v3_layer(io, "", &w);
		mtp_ref_mtp_step_v3(&in, &w, &d, &cfg, &o);
	}
}

static enum mtp_status run_chain(const struct ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;
	bool v4 = p->family == MTP_FAMILY_DEEPSEEK_V4;
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_dims d;
	struct mtp_ref_chain_in in = {
		.k = p->num_steps, .l = p->num_layers,
		.pass_step_idx = p->pass_step_idx,
		.embed_table = IN(io, "embed_table"),
		.input_ids = IIN(io, "input_ids"),
		.positions = IIN(io, "positions"),
		.prev_hidden = IN(io, "prev_hidden"),
		.next_tokens = IIN(io, "next_tokens"),
	};
	struct mtp_ref_v3_layer *l3 = calloc((size_t)p->num_layers, sizeof(*l3));
	struct mtp_ref_v4_layer *l4 = calloc((size_t)p->num_layers, sizeof(*l4));
	struct mtp_ref_step_out *so = calloc((size_t)p->num_steps, sizeof(*so));
	enum mtp_status st = MTP_ERR_NOMEM;
	char pfx[PFX_MAX];

	if (!l3 || !l4 || !so)
		goto out_free;
	fill_cfg(c, &cfg, &d);
	for (int64_t l = 0; l < p->num_layers; l++) {
		snprintf(pfx, sizeof(pfx), "layer.%lld/", (long long)l);
		if (v4)
			v4_layer(io, pfx, &l4[l]);
		else
			v3_layer(io, pfx, &l3[l]);
	}
	for (int64_t s = 0; s < p->num_steps; s++) {
		snprintf(pfx, sizeof(pfx), "step.%lld/", (long long)s);
		step_out(io, pfx, &so[s]);
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

static enum mtp_status run_block(const struct ref_io *io)
{
	const struct mtp_call *c = io->c;
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_dims d;

	fill_cfg(c, &cfg, &d);
	if (c->params->family != MTP_FAMILY_DEEPSEEK_V4) {
		struct mtp_ref_v3_layer w;

		v3_layer(io, "", &w);
		mtp_ref_v3_block(IN(io, "x"), IN(io, "residual"), &w.block, &d,
				 &cfg, OUT(io, "h"), OUT(io, "residual_out"));
		return MTP_OK;
	}
	struct mtp_ref_v4_block b;
	size_t tmh = (size_t)(d.t * d.m * d.h), tmm = (size_t)(d.t * d.m * d.m);
	/* the internal contract returns only x_out; the rest is scratch */
	double *scratch = calloc(tmh + tmm + (size_t)(d.t * d.m) + 1,
				 sizeof(double));
	double *r1 = OUT(io, "residual_out"), *pm = OUT(io, "post_mix_out");
	double *cm = OUT(io, "res_mix_out");

	if (!scratch)
		return MTP_ERR_NOMEM;
	v4_block(io, "", &b);
	mtp_ref_v4_block(IN(io, "x"), IN(io, "post_mix"), IN(io, "res_mix"),
			 IN(io, "residual"), &b, &d, &cfg, OUT(io, "x_out"),
			 r1 ? r1 : scratch, pm ? pm : scratch + tmh,
			 cm ? cm : scratch + tmh + (size_t)(d.t * d.m));
	free(scratch);
	return MTP_OK;
}

static enum mtp_status run_op(const struct ref_io *io)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;
	const struct mtp_dims *d = &c->dims;
	enum mtp_dtype act = c->act;
	const double *x = IN(io, "x");

	switch (c->op->id) {
	case MTP_OP_RMSNORM:
		mtp_ref_rmsnorm(x, IN(io, "weight"), d->r, d->h, p->eps,
				p->rounding, act, OUT(io, "y"));
		break;
	case MTP_OP_ADD_RMSNORM:
		mtp_ref_add_rmsnorm(x, IN(io, "residual"), IN(io, "weight"),
				    d->r, d->h, p->eps, p->rounding, act,
				    OUT(io, "y"), OUT(io, "residual_out"));
		break;
	case MTP_OP_EMBED:
		mtp_ref_embed(IN(io, "embed_table"), IIN(io, "input_ids"), d->t,
			      d->h, OUT(io, "out"));
		break;
	case MTP_OP_FUSED_EH_NORM:
		mtp_ref_fused_eh_norm(IIN(io, "positions"), IN(io, "embeds"),
				      IN(io, "prev_hidden"),
				      IN(io, "enorm_weight"),
				      IN(io, "hnorm_weight"), d->t, d->h,
				      p->eps, act, OUT(io, "out"));
		break;
	case MTP_OP_FUSED_EMBED_EH_NORM:
		mtp_ref_fused_embed_eh_norm(
			IIN(io, "positions"), IIN(io, "input_ids"),
			IN(io, "embed_table"), IN(io, "prev_hidden"),
			IN(io, "enorm_weight"), IN(io, "hnorm_weight"), d->t,
			d->h, p->eps, act, OUT(io, "out"));
		break;
	case MTP_OP_EH_PROJ:
		mtp_ref_eh_proj(x, IN(io, "weight"), d->t, d->h, act,
				OUT(io, "y"));
		break;
	case MTP_OP_FUSED_MTP_INPUT_RMSNORM:
		mtp_ref_fused_mtp_input_rmsnorm(
			IN(io, "embeds"), IIN(io, "positions"),
			IN(io, "prev_hidden"), IN(io, "enorm_weight"),
			IN(io, "hnorm_weight"), d->t, d->m, d->h, p->eps, act,
			OUT(io, "enorm_out"), OUT(io, "hnorm_out"));
		break;
	case MTP_OP_EH_PROJ_HC:
		mtp_ref_eh_proj_hc(IN(io, "e"), IN(io, "p"),
				   IN(io, "e_proj_weight"),
				   IN(io, "h_proj_weight"), d->t, d->m, d->h,
				   act, OUT(io, "x"));
		break;
	case MTP_OP_HC_PRE:
		mtp_ref_hc_pre(IN(io, "residual"), IN(io, "fn"),
			       IN(io, "scale"), IN(io, "base"),
			       IN(io, "norm_weight"), &p->hc, d->t, d->m, d->h,
			       act, OUT(io, "post_mix"), OUT(io, "comb_mix"),
			       OUT(io, "layer_input"));
		break;
	case MTP_OP_HC_POST:
		mtp_ref_hc_post(x, IN(io, "residual"), IN(io, "post_mix"),
				IN(io, "comb_mix"), d->t, d->m, d->h, act,
				OUT(io, "out"));
		break;
	case MTP_OP_HC_FUSED_POST_PRE:
		mtp_ref_hc_fused_post_pre(
			x, IN(io, "residual"), IN(io, "post_mix"),
			IN(io, "comb_mix"), IN(io, "fn"), IN(io, "scale"),
			IN(io, "base"), IN(io, "norm_weight"), &p->hc, d->t,
			d->m, d->h, act, OUT(io, "residual_out"),
			OUT(io, "post_mix_out"), OUT(io, "comb_mix_out"),
			OUT(io, "layer_input"));
		break;
	case MTP_OP_HC_HEAD:
		mtp_ref_hc_head(x, IN(io, "fn"), IN(io, "scale"), IN(io, "base"),
				d->t, d->m, d->h, p->hc.rms_eps, p->hc_eps,
				p->variant, act, OUT(io, "y"));
		break;
	case MTP_OP_MTP_SHARED_HEAD_RMSNORM:
		mtp_ref_mtp_shared_head_rmsnorm(x, IN(io, "weight"), d->t, d->h,
						p->eps, act, OUT(io, "y"));
		break;
	case MTP_OP_LM_HEAD:
		mtp_ref_lm_head(x, IN(io, "weight"), d->t, d->v, d->h,
				OUT(io, "logits"), IOUT(io, "token"));
		break;
	case MTP_OP_ALL_REDUCE:
		mtp_ref_all_reduce(IN(io, "parts"), d->p, d->r, d->h, act,
				   OUT(io, "out"));
		break;
	case MTP_OP_MTP_BLOCK:
		return run_block(io);
	case MTP_OP_MTP_STEP:
		run_step(io);
		break;
	case MTP_OP_DRAFT_CHAIN:
		return run_chain(io);
	default:
		return MTP_ERR_UNSUPPORTED;
	}
	return MTP_OK;
}

static bool is_int(enum mtp_dtype dt)
{
	return dt == MTP_I64 || dt == MTP_I32;
}

/* Widens one tensor into a fresh double or int64 array. */
static enum mtp_status widen(const struct mtp_tensor *t, double **f,
			     int64_t **i)
{
	int64_t n = mtp_tensor_numel(t);

	if (!t->data)
		return MTP_OK;
	if (!is_int(t->dtype))
		return mtp_tensor_to_double(t, f);
	*i = malloc((size_t)(n ? n : 1) * sizeof(int64_t));
	if (!*i)
		return MTP_ERR_NOMEM;
	for (int64_t k = 0; k < n; k++)
		(*i)[k] = t->dtype == MTP_I64 ? ((const int64_t *)t->data)[k]
					      : ((const int32_t *)t->data)[k];
	return MTP_OK;
}

static void narrow_outputs(const struct mtp_call *c, struct ref_io *io)
{
	for (int k = 0; k < c->n_out; k++) {
		struct mtp_tensor *t = &c->out[k];
		int64_t n = mtp_tensor_numel(t);

		if (io->fout[k])
			mtp_tensor_from_double(t, io->fout[k]);
		for (int64_t j = 0; io->iout[k] && j < n; j++)
			mtp_store(t->dtype, t->data, (size_t)j,
				  (double)io->iout[k][j]);
	}
}

enum mtp_status mtp_reference_run(const struct mtp_call *c)
{
	struct ref_io io = {c, NULL, NULL, NULL, NULL};
	enum mtp_status st = MTP_ERR_NOMEM;

	io.fin = calloc((size_t)c->n_in + 1, sizeof(*io.fin));
	io.iin = calloc((size_t)c->n_in + 1, sizeof(*io.iin));
	io.fout = calloc((size_t)c->n_out + 1, sizeof(*io.fout));
	io.iout = calloc((size_t)c->n_out + 1, sizeof(*io.iout));
	if (!io.fin || !io.iin || !io.fout || !io.iout)
		goto out_free;
	for (int k = 0; k < c->n_in; k++)
		if (widen(&c->in[k], &io.fin[k], &io.iin[k]))
			goto out_free;
	for (int k = 0; k < c->n_out; k++) {
		size_t n = (size_t)mtp_tensor_numel(&c->out[k]) + 1;

		if (is_int(c->out[k].dtype))
			io.iout[k] = calloc(n, sizeof(int64_t));
		else
			io.fout[k] = calloc(n, sizeof(double));
		if (!io.iout[k] && !io.fout[k])
			goto out_free;
	}
	st = run_op(&io);
	if (st == MTP_OK)
		narrow_outputs(c, &io);
out_free:
	for (int k = 0; io.fin && k < c->n_in; k++) {
		free(io.fin[k]);
		free(io.iin[k]);
	}
	for (int k = 0; io.fout && k < c->n_out; k++) {
		free(io.fout[k]);
		free(io.iout[k]);
	}
	free(io.fin);
	free(io.iin);
	free(io.fout);
	free(io.iout);
	return st;
}
