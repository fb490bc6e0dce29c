/*
 * The mutant's side of an all-reduce bug (SPEC.md §8.8, Step V3-8): the
 * operations a row's `partials` change asks for (mtp/bugclass.h struct
 * mtp_bug_tp_ops) on rank tp_rank's view of an all_reduce or of a
 * tensor-parallel captured mtp_step, done by the base backend itself: the
 * call run on changed partials, the base's all_reduce in the declared order,
 * its lm_head. The values cross to the host only to be changed, never to be
 * computed by the reference. The rows are bugs/allreduce.c.
 */
#include "mutant_int.h"

#include <stdlib.h>
#include <string.h>

struct dev_tp {
	struct mtp_bug_tp t; /* first: the row sees this */
	struct mtp_backend *base;
	struct mtp_tensor parts; /* device, like the call's partials */
	void *host;		 /* its bytes on the host */
};

#define D(t) ((const struct dev_tp *)(t))

/* The device partials <- parts (rounded to their dtype). */
static enum mtp_status upload_parts(const struct mtp_bug_tp *t,
				    const double *parts)
{
	const struct mtp_tensor *p = &D(t)->parts;

	for (int64_t i = 0; i < t->np * t->n; i++)
		mtp_store(p->dtype, D(t)->host, (size_t)i, parts[i]);
	return mtp_backend_upload(D(t)->base, p->data, D(t)->host,
				  mtp_tensor_nbytes(p));
}

static enum mtp_status run(const struct mtp_bug_tp *t, const double *parts)
{
	const struct mtp_call *c = t->c;
	struct mtp_call h = *c;
	struct mtp_tensor *in = malloc((size_t)c->n_in * sizeof(*in) + 1);
	enum mtp_status st = in ? upload_parts(t, parts) : MTP_ERR_NOMEM;

	if (!st) {
		memcpy(in, c->in, (size_t)c->n_in * sizeof(*in));
		in[mtp_bug_tp_parts(c)] = D(t)->parts;
		h.in = in;
		st = mtp_backend_launch(D(t)->base, &h);
	}
	if (!st)
		st = mtp_backend_synchronize(D(t)->base);
	free(in);
	return st;
}

/* The device tensor's n values, as doubles. */
static enum mtp_status download(const struct mtp_bug_tp *t,
				const struct mtp_tensor *x, double *v)
{
	enum mtp_status st = mtp_backend_download(
		D(t)->base, D(t)->host, x->data, mtp_tensor_nbytes(x));

	for (int64_t i = 0; !st && i < t->n; i++)
		v[i] = mtp_load(x->dtype, D(t)->host, (size_t)i);
	return st;
}

/* The base's all_reduce of parts into out, its own op on the call's
 * attributes (the declared order). */
static enum mtp_status reduce(const struct mtp_bug_tp *t, const double *parts,
			      double *out)
{
	const struct mtp_tensor *p = &D(t)->parts;
	struct mtp_subcall *s = malloc(sizeof(*s));
	struct mtp_tensor sum = {0};
	enum mtp_status st = s ? upload_parts(t, parts) : MTP_ERR_NOMEM;

	if (!st)
		st = mtp_mutant_scratch(D(t)->base, &sum, p->dtype, p->ndim - 1,
					p->shape + 1);
	if (!st)
		st = mtp_mutant_sub_init(s, MTP_OP_ALL_REDUCE, t->c);
	if (!st) {
		s->c.dims.r = t->n / t->c->dims.h;
		mtp_mutant_sub_set(s, false, "parts", p);
		mtp_mutant_sub_set(s, true, "out", &sum);
		st = mtp_mutant_sub_run(D(t)->base, s);
	}
	if (!st)
		st = download(t, &sum, out);
	if (sum.data)
		mtp_backend_free(D(t)->base, sum.data);
	free(s);
	return st;
}

static const struct mtp_tensor *out_of(const struct mtp_bug_tp *t,
				       const char *name)
{
	int k = mtp_call_out_index(t->c, name);

	return k >= 0 && mtp_tensor_numel(&t->c->out[k]) == t->n ? &t->c->out[k]
								 : NULL;
}

static enum mtp_status get(const struct mtp_bug_tp *t, const char *name,
			   double *v)
{
	const struct mtp_tensor *o = out_of(t, name);

	return o ? download(t, o, v) : MTP_ERR_INVALID;
}

/* x (device) <- v, rounded to its dtype. */
static enum mtp_status upload(const struct mtp_bug_tp *t,
			      const struct mtp_tensor *x, const double *v)
{
	for (int64_t i = 0; i < t->n; i++)
		mtp_store(x->dtype, D(t)->host, (size_t)i, v[i]);
	return mtp_backend_upload(D(t)->base, x->data, D(t)->host,
				  mtp_tensor_nbytes(x));
}

static enum mtp_status put(const struct mtp_bug_tp *t, const char *name,
			   const double *v)
{
	const struct mtp_tensor *o = out_of(t, name);

	return o ? upload(t, o, v) : MTP_ERR_INVALID;
}

/* The base's lm_head of z with the call's own head. */
static enum mtp_status head(const struct mtp_bug_tp *t, const double *z)
{
	const struct mtp_call *c = t->c;
	int is = mtp_call_in_index(c, "head_scale_inv");
	int iw = mtp_call_in_index(c, "head_weight");
	int kl = mtp_call_out_index(c, "logits");
	int kt = mtp_call_out_index(c, "token");
	int64_t th[2] = {c->dims.t, c->dims.h};
	struct mtp_tensor x = {0};
	enum mtp_status st =
		iw >= 0 && kl >= 0 && kt >= 0 && c->dims.t * c->dims.h == t->n
			? mtp_mutant_scratch(D(t)->base, &x, c->act, 2, th)
			: MTP_ERR_INVALID;
	const struct mtp_sub_bind b[] = {
		{false, "x", &x},
		{false, "weight", iw >= 0 ? &c->in[iw] : NULL},
		{false, "weight_scale_inv", is >= 0 ? &c->in[is] : NULL},
		{true, "logits", kl >= 0 ? &c->out[kl] : NULL},
		{true, "token", kt >= 0 ? &c->out[kt] : NULL}};

	if (!st)
		st = upload(t, &x, z);
	if (!st)
		st = mtp_mutant_sub(D(t)->base, MTP_OP_LM_HEAD, c, b, 5);
	if (x.data)
		mtp_backend_free(D(t)->base, x.data);
	return st;
}

static const struct mtp_bug_tp_ops dev_ops = {run, reduce, get, put, head};

enum mtp_status mtp_mutant_partials(struct mtp_backend *base,
				    const struct mtp_bug_class *row,
				    const struct mtp_call *c)
{
	const struct mtp_tensor *x = &c->in[mtp_bug_tp_parts(c)];
	size_t nb = mtp_tensor_nbytes(x);
	int64_t n = mtp_tensor_numel(x);
	struct dev_tp d = {.base = base, .host = malloc(nb + 8)};
	double *xd = malloc((size_t)n * sizeof(double) + 8);
	enum mtp_status st =
		d.host && xd ? mtp_mutant_scratch(base, &d.parts, x->dtype,
						  x->ndim, x->shape)
			     : MTP_ERR_NOMEM;

	if (!st)
		st = mtp_backend_download(base, d.host, x->data, nb);
	for (int64_t i = 0; !st && i < n; i++)
		xd[i] = mtp_load(x->dtype, d.host, (size_t)i);
	mtp_bug_tp_view(&d.t, &dev_ops, c, xd);
	if (!st)
		st = row->partials(&d.t);
	if (d.parts.data)
		mtp_backend_free(base, d.parts.data);
	free(d.host);
	free(xd);
	return st;
}
