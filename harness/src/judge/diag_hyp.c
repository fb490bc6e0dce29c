/*
 * Bug hypotheses: the reference run as the buggy code would run it, by the
 * bug class's own change (mtp/bugclass.h, harness/src/bugs/): an edit of
 * the call's inputs or attributes, run through the reference; or a step
 * bug, the MTP steps run one by one with the row's after_step applied to
 * each step's outputs before the next step receives them (SPEC.md §8,
 * §10.2; refglue/bug_step.c); or an all-reduce bug, the reference rerun on
 * the partials the row's `partials` change gives (diag_tp.c). Also CONVENTION_MISMATCH, one hypothesis per
 * declared convention.
 */
#include "judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bugs/bugs.h"
#include "refglue/refglue.h"

static int64_t chain_layer(const struct mtp_params *p, int64_t s)
{
	return p->pass_step_idx ? s % p->num_layers : 0;
}

struct steps {
	struct mtp_ref_bug_step x;
	struct mtp_ref_v3_layer *v3;
	struct mtp_ref_v4_layer *v4;
	double *emb;
	int64_t *pos;
};

static void steps_fini(struct steps *s)
{
	free(s->v3);
	free(s->v4);
	free(s->emb);
	free(s->pos);
}

/* Every layer's weights, and the scratch of the steps. */
static enum mtp_status steps_init(struct steps *s, const struct mtp_ref_io *io,
				  struct mtp_ref_step_cfg *cfg,
				  struct mtp_ref_dims *d)
{
	const struct mtp_call *c = io->c;
	bool chain = c->op->id == MTP_OP_DRAFT_CHAIN;
	int64_t nl = chain ? c->params->num_layers : 1;
	char lp[32] = "";

	memset(s, 0, sizeof(*s));
	mtp_refio_cfg(c, cfg, d);
	s->v3 = calloc((size_t)nl, sizeof(*s->v3));
	s->v4 = calloc((size_t)nl, sizeof(*s->v4));
	s->emb = malloc((size_t)(d->t * d->h) * sizeof(double) + 1);
	s->pos = malloc((size_t)d->t * sizeof(int64_t) + 8);
	if (!s->v3 || !s->v4 || !s->emb || !s->pos)
		return MTP_ERR_NOMEM;
	for (int64_t l = 0; l < nl; l++) {
		if (chain)
			snprintf(lp, sizeof(lp), "layer.%lld/", (long long)l);
		mtp_refio_v3_layer(io, lp, &s->v3[l]);
		mtp_refio_v4_layer(io, lp, &s->v4[l]);
	}
	s->x = (struct mtp_ref_bug_step){
		.s = {.c = c, .mhc = mtp_family_mhc(c->params->family)},
		.d = d,
		.cfg = cfg,
		.v3 = s->v3,
		.v4 = s->v4};
	return MTP_OK;
}

/* Step s's inputs (a chain embeds its step's ids) and the step itself. */
static void run_step(struct steps *x, const struct mtp_ref_io *io, int64_t s,
		     const double *prev)
{
	const struct mtp_ref_dims *d = x->x.d;
	bool chain = io->c->op->id == MTP_OP_DRAFT_CHAIN;
	int64_t l = x->x.s.layer;
	struct mtp_ref_step_in in = {mtp_refio_in(io, "embeds"), x->pos, prev};
	char sp[32] = "";

	if (chain) {
		const int64_t *ids =
			s ? mtp_refio_iin(io, "next_tokens") + (s - 1) * d->t
			  : mtp_refio_iin(io, "input_ids");

		snprintf(sp, sizeof(sp), "step.%lld/", (long long)s);
		mtp_ref_embed(mtp_refio_in(io, "embed_table"), ids, d->t, d->h,
			      x->emb);
		in.embeds = x->emb;
	}
	for (int64_t t = 0; t < d->t; t++)
		x->pos[t] = mtp_refio_iin(io, "positions")[t] + s;
	mtp_refio_step_out(io, sp, &x->x.o);
	if (x->x.s.mhc)
		mtp_ref_mtp_step_v4(&in, &x->v4[l], d, x->x.cfg, &x->x.o);
	else
		mtp_ref_mtp_step_v3(&in, &x->v3[l], d, x->x.cfg, &x->x.o);
}

/* Runs K steps (1 for mtp_step) with the row's change after each. */
static enum mtp_status run_steps(const struct mtp_ref_io *io,
				 const struct mtp_bug_class *row)
{
	const struct mtp_call *c = io->c;
	const struct mtp_params *p = c->params;
	bool chain = c->op->id == MTP_OP_DRAFT_CHAIN;
	int64_t k = chain ? p->num_steps : 1;
	const double *prev = mtp_refio_in(io, "prev_hidden");
	struct mtp_ref_step_cfg cfg;
	struct mtp_ref_dims d;
	struct steps x;
	enum mtp_status st = steps_init(&x, io, &cfg, &d);

	for (int64_t s = 0; !st && s < k; s++) {
		x.x.s.step = s;
		x.x.s.layer = chain ? chain_layer(p, s) : 0;
		run_step(&x, io, s, prev);
		st = mtp_ref_bug_step_apply(&x.x, row);
		prev = x.x.o.recycled;
	}
	steps_fini(&x);
	return st;
}

/* The conventions a call exercises (mtp/conventions.h), one bit each. */
unsigned mtp_conv_exercised(const struct mtp_call *c)
{
	enum mtp_op_id op = c->op->id;
	bool v4 = mtp_family_mhc(c->params->family);
	bool step = op == MTP_OP_MTP_STEP || op == MTP_OP_DRAFT_CHAIN;
	unsigned m = 0;

	if (op == MTP_OP_ADD_RMSNORM || op == MTP_OP_TARGET_HANDOFF ||
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
	const struct mtp_bug_class *row = mtp_bug_get(d);

	return row->applies && row->applies(c);
}

/* Runs the reference on a copy of the call whose outputs are hyp, with
 * the params replaced. */
static enum mtp_status run_changed(const struct mtp_call *c,
				   const struct mtp_params *p,
				   struct mtp_tensor *hyp)
{
	struct mtp_call h = *c;

	h.params = p;
	h.out = hyp;
	return mtp_reference_run(&h);
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

bool mtp_diag_conv_mask_applies(unsigned mask, const struct mtp_call *c)
{
	for (int id = 0; id < MTP_CONV_COUNT; id++)
		if ((mask >> id) & 1u && !mtp_diag_conv_applies(id, c))
			return false;
	return mask != 0 && mask < (1u << MTP_CONV_COUNT);
}

enum mtp_status mtp_diag_conv_hypothesis(unsigned mask,
					 const struct mtp_call *c,
					 struct mtp_tensor *hyp)
{
	struct mtp_params p = *c->params;
	enum mtp_status st = hyp_alloc(c, hyp);

	if (st)
		return st;
	for (int id = 0; id < MTP_CONV_COUNT; id++)
		if ((mask >> id) & 1u)
			mtp_conv_set(&p.conv, id,
				     1 - mtp_conv_get(&p.conv, id));
	return run_changed(c, &p, hyp);
}

void mtp_diag_conv_describe(unsigned mask, const struct mtp_call *c, char *buf,
			    size_t n)
{
	size_t k = 0;
	int many = (mask & (mask - 1)) != 0;

	buf[0] = 0;
	for (int id = 0; id < MTP_CONV_COUNT && k < n; id++) {
		int v = mtp_conv_get(&c->params->conv, id);

		if (!((mask >> id) & 1u))
			continue;
		k += (size_t)snprintf(buf + k, n - k,
				      "%s%s declared %s, outputs match %s",
				      k ? "; " : "", mtp_conv_name(id),
				      mtp_conv_value_name(id, v),
				      mtp_conv_value_name(id, 1 - v));
	}
	if (many && k < n) /* the hint: every value, in one declaration */
		snprintf(buf + k, n - k, " (together)");
}

/* The reference on the call as the row's edit has it. */
static enum mtp_status run_edited(const struct mtp_call *c,
				  const struct mtp_bug_class *row,
				  struct mtp_tensor *hyp)
{
	struct mtp_params p = *c->params;
	struct mtp_call h = *c;
	size_t n = (size_t)c->n_in + 1;
	struct mtp_tensor *in = malloc(n * sizeof(*in));
	struct mtp_tensor *own = calloc(n, sizeof(*own));
	struct mtp_bug_edit e = {c, &p, in, own};
	enum mtp_status st = in && own ? MTP_OK : MTP_ERR_NOMEM;

	if (!st) {
		memcpy(in, c->in, (size_t)c->n_in * sizeof(*in));
		st = row->edit(&e);
	}
	if (!st) {
		h.in = in;
		h.params = &p;
		h.out = hyp;
		st = mtp_reference_run(&h);
	}
	for (int i = 0; own && i < c->n_in; i++)
		mtp_tensor_fini(&own[i]);
	free(own);
	free(in);
	return st;
}

enum mtp_status mtp_diag_hypothesis(enum mtp_diag d, const struct mtp_call *c,
				    struct mtp_tensor *hyp)
{
	const struct mtp_bug_class *row = mtp_bug_get(d);
	struct mtp_call h = *c;
	struct mtp_ref_io io;
	enum mtp_status st = hyp_alloc(c, hyp);

	if (st)
		return st;
	if (row->partials)
		return mtp_diag_partials(c, row, hyp);
	if (row->edit)
		return run_edited(c, row, hyp);
	if (!row->after_step)
		return MTP_ERR_INVALID;
	h.out = hyp;
	st = mtp_refio_open(&io, &h);
	if (st)
		return st;
	st = c->params->v2.captured ? mtp_captured_hypothesis(&io, row)
				    : run_steps(&io, row);
	if (!st)
		mtp_refio_store(&io);
	mtp_refio_close(&io);
	return st;
}
