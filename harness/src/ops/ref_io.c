/*
 * A call's host tensors widened for the reference and narrowed back; see
 * ref_io.h.
 */
#include "ref_io.h"

#include "mtp/quant.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PFX_MAX 32

const double *mtp_refio_in(const struct mtp_ref_io *io, const char *name)
{
	int i = mtp_call_in_index(io->c, name);

	return i < 0 ? NULL : io->fin[i];
}

const int64_t *mtp_refio_iin(const struct mtp_ref_io *io, const char *name)
{
	int i = mtp_call_in_index(io->c, name);

	return i < 0 ? NULL : io->iin[i];
}

double *mtp_refio_out(const struct mtp_ref_io *io, const char *name)
{
	int i = mtp_call_out_index(io->c, name);

	return i < 0 ? NULL : io->fout[i];
}

int64_t *mtp_refio_iout(const struct mtp_ref_io *io, const char *name)
{
	int i = mtp_call_out_index(io->c, name);

	return i < 0 ? NULL : io->iout[i];
}

void mtp_refio_cfg(const struct mtp_call *c, struct mtp_ref_step_cfg *cfg,
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
	cfg->conv = p->conv;
	cfg->quant.scheme = p->proj_quant;
	cfg->quant.act_eps = p->act_quant_eps;
	cfg->logits_mup = p->logits_mup;
	d->t = c->dims.t;
	d->h = c->dims.h;
	d->m = c->dims.m ? c->dims.m : 1;
	d->v = c->dims.v;
	d->f = c->dims.f;
}

struct mtp_ref_qweight mtp_refio_qweight(const struct mtp_ref_io *io,
					 const char *name)
{
	char sname[MTP_NAME_MAX];
	struct mtp_ref_qweight w = {mtp_refio_in(io, name), NULL};

	if (mtp_quant_scale_name(name, sname, sizeof(sname)))
		w.scale_inv = mtp_refio_in(io, sname);
	return w;
}

const double *mtp_refio_inp(const struct mtp_ref_io *io, const char *pfx,
			    const char *name)
{
	char full[MTP_NAME_MAX];

	strcpy(full, pfx);
	strncat(full, name, sizeof(full) - strlen(full) - 1);
	return mtp_refio_in(io, full);
}

void mtp_refio_v3_layer(const struct mtp_ref_io *io, const char *pfx,
			struct mtp_ref_v3_layer *w)
{
	w->enorm_w = mtp_refio_inp(io, pfx, "enorm_weight");
	w->hnorm_w = mtp_refio_inp(io, pfx, "hnorm_weight");
	w->eh_proj_w = mtp_refio_inp(io, pfx, "eh_proj_weight");
	w->block.w_in = mtp_refio_inp(io, pfx, "block.w_in");
	w->block.W_a = mtp_refio_inp(io, pfx, "block.W_a");
	w->block.w_post = mtp_refio_inp(io, pfx, "block.w_post");
	w->block.W_gate = mtp_refio_inp(io, pfx, "block.W_gate");
	w->block.W_up = mtp_refio_inp(io, pfx, "block.W_up");
	w->block.W_down = mtp_refio_inp(io, pfx, "block.W_down");
	w->shared_head_norm_w =
		mtp_refio_inp(io, pfx, "shared_head_norm_weight");
	w->head_w = mtp_refio_inp(io, pfx, "head_weight");
	w->eh_proj_scale = mtp_refio_inp(io, pfx, "eh_proj_scale_inv");
	w->head_scale = mtp_refio_inp(io, pfx, "head_scale_inv");
	w->embed_pre_norm_w = mtp_refio_inp(io, pfx, "embed_pre_norm_weight");
}

void mtp_refio_v4_block(const struct mtp_ref_io *io, const char *pfx,
			struct mtp_ref_v4_block *b)
{
	b->hc_attn_fn = mtp_refio_inp(io, pfx, "block.hc_attn_fn");
	b->hc_attn_scale = mtp_refio_inp(io, pfx, "block.hc_attn_scale");
	b->hc_attn_base = mtp_refio_inp(io, pfx, "block.hc_attn_base");
	b->hc_ffn_fn = mtp_refio_inp(io, pfx, "block.hc_ffn_fn");
	b->hc_ffn_scale = mtp_refio_inp(io, pfx, "block.hc_ffn_scale");
	b->hc_ffn_base = mtp_refio_inp(io, pfx, "block.hc_ffn_base");
	b->attn_norm_w = mtp_refio_inp(io, pfx, "block.attn_norm_w");
	b->ffn_norm_w = mtp_refio_inp(io, pfx, "block.ffn_norm_w");
	b->W_a = mtp_refio_inp(io, pfx, "block.W_a");
	b->W_gate = mtp_refio_inp(io, pfx, "block.W_gate");
	b->W_up = mtp_refio_inp(io, pfx, "block.W_up");
	b->W_down = mtp_refio_inp(io, pfx, "block.W_down");
}

void mtp_refio_v4_layer(const struct mtp_ref_io *io, const char *pfx,
			struct mtp_ref_v4_layer *w)
{
	w->enorm_w = mtp_refio_inp(io, pfx, "enorm_weight");
	w->hnorm_w = mtp_refio_inp(io, pfx, "hnorm_weight");
	w->e_proj_w = mtp_refio_inp(io, pfx, "e_proj_weight");
	w->h_proj_w = mtp_refio_inp(io, pfx, "h_proj_weight");
	mtp_refio_v4_block(io, pfx, &w->block);
	w->hc_head_fn = mtp_refio_inp(io, pfx, "hc_head_fn");
	w->hc_head_scale = mtp_refio_inp(io, pfx, "hc_head_scale");
	w->hc_head_base = mtp_refio_inp(io, pfx, "hc_head_base");
	w->shared_head_norm_w =
		mtp_refio_inp(io, pfx, "shared_head_norm_weight");
	w->head_w = mtp_refio_inp(io, pfx, "head_weight");
	w->e_proj_scale = mtp_refio_inp(io, pfx, "e_proj_scale_inv");
	w->h_proj_scale = mtp_refio_inp(io, pfx, "h_proj_scale_inv");
	w->head_scale = mtp_refio_inp(io, pfx, "head_scale_inv");
}

void mtp_refio_step_out(const struct mtp_ref_io *io, const char *pfx,
			struct mtp_ref_step_out *o)
{
	static const char *const names[] = {
		"block_out", "block_residual", "hidden_pre", "hidden_post",
		"post_mix",  "comb_mix",       "streams",    "head_hidden",
		"recycled",  "logits"};
	double **slots[] = {&o->block_out,   &o->block_residual, &o->hidden_pre,
			    &o->hidden_post, &o->post_mix,	 &o->comb_mix,
			    &o->streams,     &o->head_hidden,	 &o->recycled,
			    &o->logits};
	char full[MTP_NAME_MAX];

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		strcpy(full, pfx);
		strncat(full, names[i], sizeof(full) - strlen(full) - 1);
		*slots[i] = mtp_refio_out(io, full);
	}
	strcpy(full, pfx);
	strncat(full, "token", sizeof(full) - strlen(full) - 1);
	o->token = mtp_refio_iout(io, full);
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

/* [SPEC.md §2.6] A zero-centred family's norm weight multiplies as
 * f32(1 + w): formed here once, so every norm of the reference reads it. */
static void offset_norm_weight(double *w, int64_t n, double offset)
{
	for (int64_t k = 0; offset != 0.0 && k < n; k++)
		w[k] = mtp_round(MTP_F32, offset + w[k]);
}

void mtp_refio_store(const struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;

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

void mtp_refio_close(struct mtp_ref_io *io)
{
	const struct mtp_call *c = io->c;

	for (int k = 0; io->fin && k < c->n_in; k++) {
		free(io->fin[k]);
		free(io->iin[k]);
	}
	for (int k = 0; io->fout && k < c->n_out; k++) {
		free(io->fout[k]);
		free(io->iout[k]);
	}
	free(io->fin);
	free(io->iin);
	free(io->fout);
	free(io->iout);
	memset(io, 0, sizeof(*io));
}

enum mtp_status mtp_refio_open(struct mtp_ref_io *io, const struct mtp_call *c)
{
	memset(io, 0, sizeof(*io));
	io->c = c;
	io->fin = calloc((size_t)c->n_in + 1, sizeof(*io->fin));
	io->iin = calloc((size_t)c->n_in + 1, sizeof(*io->iin));
	io->fout = calloc((size_t)c->n_out + 1, sizeof(*io->fout));
	io->iout = calloc((size_t)c->n_out + 1, sizeof(*io->iout));
	if (!io->fin || !io->iin || !io->fout || !io->iout)
		goto fail;
	for (int k = 0; k < c->n_in; k++) {
		if (widen(&c->in[k], &io->fin[k], &io->iin[k]))
			goto fail;
		if (io->fin[k] && mtp_call_in_is_norm_weight(c, k))
			offset_norm_weight(io->fin[k],
					   mtp_tensor_numel(&c->in[k]),
					   mtp_call_norm_offset(c));
	}
	for (int k = 0; k < c->n_out; k++) {
		size_t n = (size_t)mtp_tensor_numel(&c->out[k]) + 1;

		if (is_int(c->out[k].dtype))
			io->iout[k] = calloc(n, sizeof(int64_t));
		else
			io->fout[k] = calloc(n, sizeof(double));
		if (!io->iout[k] && !io->fout[k])
			goto fail;
	}
	return MTP_OK;
fail:
	mtp_refio_close(io);
	return MTP_ERR_NOMEM;
}
