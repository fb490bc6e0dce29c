/*
 * The reference's side of an all-reduce bug (SPEC.md §8.8, Step V3-8): the
 * operations a row's `partials` change asks for (mtp/bugclass.h struct
 * mtp_bug_tp_ops) on rank p's view (tp_rank) of an all_reduce or of a
 * tensor-parallel captured mtp_step: the reference rerun on changed
 * partials into the hypothesis, the declared all-reduce order, the call's
 * head. The rows themselves are bugs/allreduce.c.
 */
#include "judge.h"

#include <stdlib.h>
#include <string.h>

#include "bugs/bugs.h"
#include "mtp/conventions.h"

struct ref_tp {
	struct mtp_bug_tp t; /* first: the row sees this */
	struct mtp_tensor *hyp, parts;
};

#define R(t) ((const struct ref_tp *)(t))

static enum mtp_status run(const struct mtp_bug_tp *t, const double *parts)
{
	const struct mtp_call *c = t->c;
	const struct mtp_tensor *p = &R(t)->parts;
	struct mtp_call h = *c;
	struct mtp_tensor *in = malloc((size_t)c->n_in * sizeof(*in) + 1);
	enum mtp_status st;

	if (!in)
		return MTP_ERR_NOMEM;
	for (int64_t i = 0; i < t->np * t->n; i++)
		mtp_store(p->dtype, p->data, (size_t)i, parts[i]);
	memcpy(in, c->in, (size_t)c->n_in * sizeof(*in));
	in[mtp_bug_tp_parts(c)] = *p;
	h.in = in;
	h.out = R(t)->hyp;
	st = mtp_reference_run(&h);
	free(in);
	return st;
}

/* The declared order, rounded to the call's act dtype. */
static enum mtp_status reduce(const struct mtp_bug_tp *t, const double *parts,
			      double *out)
{
	const struct mtp_call *c = t->c;

	mtp_ref_all_reduce_order(parts, t->np, t->n / c->dims.h, c->dims.h,
				 c->params->tp.order, c->act, NULL, out);
	return MTP_OK;
}

static struct mtp_tensor *out_of(const struct mtp_bug_tp *t, const char *name)
{
	int k = mtp_call_out_index(t->c, name);

	return k >= 0 && mtp_tensor_numel(&R(t)->hyp[k]) == t->n ? &R(t)->hyp[k]
								 : NULL;
}

static enum mtp_status get(const struct mtp_bug_tp *t, const char *name,
			   double *v)
{
	const struct mtp_tensor *o = out_of(t, name);

	for (int64_t i = 0; o && i < t->n; i++)
		v[i] = mtp_load(o->dtype, o->data, (size_t)i);
	return o ? MTP_OK : MTP_ERR_INVALID;
}

static enum mtp_status put(const struct mtp_bug_tp *t, const char *name,
			   const double *v)
{
	struct mtp_tensor *o = out_of(t, name);

	for (int64_t i = 0; o && i < t->n; i++)
		mtp_store(o->dtype, o->data, (size_t)i, v[i]);
	return o ? MTP_OK : MTP_ERR_INVALID;
}

static double *widen(const struct mtp_tensor *t)
{
	int64_t n = mtp_tensor_numel(t);
	double *v = malloc((size_t)n * sizeof(double) + 8);

	for (int64_t i = 0; v && i < n; i++)
		v[i] = mtp_load(t->dtype, t->data, (size_t)i);
	return v;
}

/* logits, token = head(z) of the call's own head (Step V3-6). */
static enum mtp_status head(const struct mtp_bug_tp *t, const double *z)
{
	const struct mtp_call *c = t->c;
	int iw = mtp_call_in_index(c, "head_weight");
	int is = mtp_call_in_index(c, "head_scale_inv");
	int kl = mtp_call_out_index(c, "logits");
	int kt = mtp_call_out_index(c, "token");
	struct mtp_tensor *hyp = R(t)->hyp;
	const struct mtp_params *p = c->params;
	struct mtp_ref_quant q = {p->proj_quant, p->act_quant_eps};
	double *w = iw >= 0 ? widen(&c->in[iw]) : NULL;
	double *s = is >= 0 && c->in[is].data ? widen(&c->in[is]) : NULL;
	int64_t nl = kl >= 0 ? mtp_tensor_numel(&hyp[kl]) : 0;
	double *lg = malloc((size_t)nl * sizeof(double) + 8);
	enum mtp_status st =
		w && lg && kt >= 0 && kl >= 0 ? MTP_OK : MTP_ERR_INVALID;

	if (!st) {
		mtp_ref_lm_head_q(z, (struct mtp_ref_qweight){w, s}, c->dims.t,
				  c->dims.v, c->dims.h, &q,
				  mtp_conv_logits_dtype(&p->conv), lg,
				  (int64_t *)hyp[kt].data);
		for (int64_t i = 0; i < nl; i++)
			mtp_store(hyp[kl].dtype, hyp[kl].data, (size_t)i,
				  lg[i]);
	}
	free(w);
	free(s);
	free(lg);
	return st;
}

static const struct mtp_bug_tp_ops ref_ops = {run, reduce, get, put, head};

enum mtp_status mtp_diag_partials(const struct mtp_call *c,
				  const struct mtp_bug_class *row,
				  struct mtp_tensor *hyp)
{
	const struct mtp_tensor *x = &c->in[mtp_bug_tp_parts(c)];
	struct ref_tp r = {.hyp = hyp};
	double *xd = widen(x);
	enum mtp_status st =
		xd ? mtp_tensor_alloc(&r.parts, x->dtype, x->ndim, x->shape)
		   : MTP_ERR_NOMEM;

	mtp_bug_tp_view(&r.t, &ref_ops, c, xd);
	if (!st)
		st = row->partials(&r.t);
	mtp_tensor_fini(&r.parts);
	free(xd);
	return st;
}
