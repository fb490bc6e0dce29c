/*
 * The all-reduce bug classes (SPEC.md §8.8, Step V3-8) as hypotheses on
 * rank p's view (tp_rank) of an all_reduce or of a tensor-parallel captured
 * mtp_step: the reference rerun with the partials changed as the bug
 * changes them, because each of these bugs is a wrong sum of the same
 * partials:
 *  - ALLREDUCE_MISSING: x_p alone (zeros elsewhere: exact in every order);
 *  - ALLREDUCE_SCALED: act(P * x_p) alone;
 *  - ALLREDUCE_TWICE: P copies of the reduced tensor, reduced again;
 *  - ALLREDUCE_AFTER_NORM (steps): every rank's add and norm on its own
 *    partial, the norms reduced into the recycled hidden and the head's
 *    input, rank p's own pre-norm sum as hidden_pre.
 */
#include "mtp/diagnose.h"

#include <stdlib.h>
#include <string.h>

#include "mtp/conventions.h"

bool mtp_diag_tp(enum mtp_diag d)
{
	return d >= MTP_DIAG_ALLREDUCE_MISSING &&
	       d <= MTP_DIAG_ALLREDUCE_AFTER_NORM;
}

static int parts_index(const struct mtp_call *c)
{
	return mtp_call_in_index(c, c->op->id == MTP_OP_ALL_REDUCE
					    ? "parts"
					    : "block_out_parts");
}

bool mtp_diag_tp_applies(enum mtp_diag d, const struct mtp_call *c)
{
	bool step = c->op->id == MTP_OP_MTP_STEP && c->params->tp.step;
	int i = parts_index(c);

	if (!mtp_diag_tp(d) || (!step && c->op->id != MTP_OP_ALL_REDUCE) ||
	    i < 0 || !c->in[i].data || c->dims.p < 2)
		return false;
	return d != MTP_DIAG_ALLREDUCE_AFTER_NORM || step;
}

/* The reference on the call with its partials replaced by `parts` (host,
 * the input's dtype and shape), into out. */
static enum mtp_status rerun(const struct mtp_call *c,
			     const struct mtp_tensor *parts,
			     struct mtp_tensor *out)
{
	struct mtp_call h = *c;
	struct mtp_tensor *in = malloc((size_t)c->n_in * sizeof(*in) + 1);
	enum mtp_status st;

	if (!in)
		return MTP_ERR_NOMEM;
	memcpy(in, c->in, (size_t)c->n_in * sizeof(*in));
	in[parts_index(c)] = *parts;
	h.in = in;
	h.out = out;
	st = mtp_reference_run(&h);
	free(in);
	return st;
}

/* parts' = [v, 0, ..., 0] where v is rank q's partial times `scale`
 * (rounded to the dtype), or every slice `fill` when fill is given. */
static void set_parts(const struct mtp_call *c, struct mtp_tensor *t, int64_t q,
		      double scale, const double *fill)
{
	const struct mtp_tensor *x = &c->in[parts_index(c)];
	size_t n = (size_t)(mtp_tensor_numel(x) / c->dims.p);

	for (int64_t k = 0; k < c->dims.p; k++) {
		for (size_t i = 0; i < n; i++) {
			double v =
				fill	? fill[i]
				: k > 0 ? 0
					: scale * mtp_load(x->dtype, x->data,
							   (size_t)q * n + i);

			mtp_store(t->dtype, t->data, (size_t)k * n + i, v);
		}
	}
}

/* The reduced partials as the call declares them (act dtype values). */
static void reduce(const struct mtp_call *c, const double *parts, double *out)
{
	int64_t rows = c->op->id == MTP_OP_ALL_REDUCE ? c->dims.r : c->dims.t;

	mtp_ref_all_reduce_order(parts, c->dims.p, rows, c->dims.h,
				 c->params->tp.order, c->act, NULL, out);
}

static double *widen(const struct mtp_tensor *t)
{
	int64_t n = mtp_tensor_numel(t);
	double *v = malloc((size_t)n * sizeof(double) + 8);

	for (int64_t i = 0; v && i < n; i++)
		v[i] = mtp_load(t->dtype, t->data, (size_t)i);
	return v;
}

static enum mtp_status hyp_alloc_like(const struct mtp_call *c,
				      struct mtp_tensor *t)
{
	enum mtp_status st = MTP_OK;

	memset(t, 0, (size_t)c->n_out * sizeof(*t));
	for (int i = 0; !st && i < c->n_out; i++)
		st = mtp_tensor_alloc(&t[i], c->out[i].dtype, c->out[i].ndim,
				      c->out[i].shape);
	return st;
}

static void put(const struct mtp_call *c, struct mtp_tensor *hyp,
		const char *name, const double *v)
{
	int k = mtp_call_out_index(c, name);

	for (int64_t i = 0; k >= 0 && i < mtp_tensor_numel(&hyp[k]); i++)
		mtp_store(hyp[k].dtype, hyp[k].data, (size_t)i, v[i]);
}

/* logits, token = head(z) of the call's own head (Step V3-6). */
static void head(const struct mtp_call *c, const double *z,
		 struct mtp_tensor *hyp)
{
	int iw = mtp_call_in_index(c, "head_weight");
	int is = mtp_call_in_index(c, "head_scale_inv");
	int kl = mtp_call_out_index(c, "logits");
	int kt = mtp_call_out_index(c, "token");
	const struct mtp_params *p = c->params;
	struct mtp_ref_quant q = {p->proj_quant, p->act_quant_eps};
	double *w = iw >= 0 ? widen(&c->in[iw]) : NULL;
	double *s = is >= 0 && c->in[is].data ? widen(&c->in[is]) : NULL;
	double *lg = kl >= 0 ? malloc((size_t)mtp_tensor_numel(&hyp[kl]) *
					      sizeof(double) +
				      8)
			     : NULL;

	if (w && lg && kt >= 0)
		mtp_ref_lm_head_q(z, (struct mtp_ref_qweight){w, s}, c->dims.t,
				  c->dims.v, c->dims.h, &q,
				  mtp_conv_logits_dtype(&p->conv), lg,
				  (int64_t *)hyp[kt].data);
	if (lg)
		put(c, hyp, "logits", lg);
	free(w);
	free(s);
	free(lg);
}

/* AFTER_NORM: hyp already holds rank p's outputs of its partial alone. */
static enum mtp_status after_norm(const struct mtp_call *c,
				  struct mtp_tensor *parts,
				  struct mtp_tensor *hyp)
{
	int64_t np = c->dims.p, n = c->dims.t * c->dims.h;
	int kp = mtp_call_out_index(c, "hidden_post");
	struct mtp_tensor *tmp = calloc((size_t)c->n_out + 1, sizeof(*tmp));
	double *norms = malloc((size_t)(np * n + 2 * n) * sizeof(double) + 8);
	enum mtp_status st = tmp && norms && kp >= 0 ? hyp_alloc_like(c, tmp)
						     : MTP_ERR_NOMEM;

	for (int64_t q = 0; !st && q < np; q++) {
		set_parts(c, parts, q, 1.0, NULL);
		st = rerun(c, parts, tmp);
		for (int64_t i = 0; !st && i < n; i++)
			norms[q * n + i] = mtp_load(tmp[kp].dtype, tmp[kp].data,
						    (size_t)i);
	}
	if (!st) {
		double *z = norms + np * n;

		reduce(c, norms, z);
		put(c, hyp, "hidden_post", z);
		put(c, hyp, "recycled", z);
		head(c, z, hyp);
	}
	for (int i = 0; tmp && i < c->n_out; i++)
		mtp_tensor_fini(&tmp[i]);
	free(tmp);
	free(norms);
	return st;
}

/* TWICE: P copies of the reduced partials in parts. */
static enum mtp_status twice(const struct mtp_call *c, struct mtp_tensor *parts)
{
	const struct mtp_tensor *x = &c->in[parts_index(c)];
	int64_t n = mtp_tensor_numel(x) / c->dims.p;
	double *all = widen(x), *h = malloc((size_t)n * sizeof(double) + 8);

	if (!all || !h) {
		free(all);
		free(h);
		return MTP_ERR_NOMEM;
	}
	reduce(c, all, h);
	set_parts(c, parts, 0, 1.0, h);
	free(all);
	free(h);
	return MTP_OK;
}

enum mtp_status mtp_diag_tp_hypothesis(enum mtp_diag d,
				       const struct mtp_call *c,
				       struct mtp_tensor *hyp)
{
	const struct mtp_tensor *x = &c->in[parts_index(c)];
	int64_t rank = c->params->tp.rank;
	struct mtp_tensor parts = {0};
	enum mtp_status st =
		mtp_tensor_alloc(&parts, x->dtype, x->ndim, x->shape);

	if (!st && d == MTP_DIAG_ALLREDUCE_TWICE)
		st = twice(c, &parts);
	else if (!st)
		set_parts(c, &parts, rank,
			  d == MTP_DIAG_ALLREDUCE_SCALED ? (double)c->dims.p
							 : 1.0,
			  NULL);
	if (!st)
		st = rerun(c, &parts, hyp);
	if (!st && d == MTP_DIAG_ALLREDUCE_AFTER_NORM)
		st = after_norm(c, &parts, hyp);
	mtp_tensor_fini(&parts);
	return st;
}
