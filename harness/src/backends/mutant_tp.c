/*
 * Mutants of the all-reduce bugs (SPEC.md §8.8, Step V3-8) over any base
 * backend, on rank tp_rank's view of an all_reduce or of a tensor-parallel
 * captured mtp_step. Each changes the partials the base reduces, computed
 * by the base itself, never by the reference:
 *  - ALLREDUCE_MISSING: the rank's own partial alone;
 *  - ALLREDUCE_SCALED: P times it, alone;
 *  - ALLREDUCE_TWICE: P copies of the base's own reduced tensor;
 *  - ALLREDUCE_AFTER_NORM: the base's step on each rank's partial alone,
 *    then the base's all_reduce of their norms and its lm_head on that.
 */
#include "mutant_int.h"

#include <stdlib.h>
#include <string.h>

static int parts_index(const struct mtp_call *c)
{
	return mtp_call_in_index(c, c->op->id == MTP_OP_ALL_REDUCE
					    ? "parts"
					    : "block_out_parts");
}

static const struct mtp_tensor *out_of(const struct mtp_call *c,
				       const char *name)
{
	int k = mtp_call_out_index(c, name);

	return k >= 0 ? &c->out[k] : NULL;
}

/* A device tensor shaped like `like`, filled from host bytes (or not). */
static enum mtp_status dev_new(struct mtp_backend *base,
			       const struct mtp_tensor *like, const void *host,
			       struct mtp_tensor *t)
{
	enum mtp_status st;

	*t = *like;
	t->data = NULL;
	st = mtp_backend_alloc(base, mtp_tensor_nbytes(t), &t->data);
	if (!st && host)
		st = mtp_backend_upload(base, t->data, host,
					mtp_tensor_nbytes(t));
	return st;
}

/* The call on base with its partials replaced by host bytes `parts`. */
static enum mtp_status launch_parts(struct mtp_backend *base,
				    const struct mtp_call *c, const void *parts,
				    struct mtp_tensor *outs)
{
	struct mtp_call h = *c;
	struct mtp_tensor *in = malloc((size_t)c->n_in * sizeof(*in) + 1);
	int i = parts_index(c);
	enum mtp_status st = in ? MTP_OK : MTP_ERR_NOMEM;

	if (!st) {
		memcpy(in, c->in, (size_t)c->n_in * sizeof(*in));
		st = dev_new(base, &c->in[i], parts, &in[i]);
	}
	if (!st) {
		h.in = in;
		h.out = outs ? outs : c->out;
		st = mtp_backend_launch(base, &h);
		if (!st)
			st = mtp_backend_synchronize(base);
	}
	if (in && in[i].data != c->in[i].data)
		mtp_backend_free(base, in[i].data);
	free(in);
	return st;
}

/* host[k] = (k == 0 ? scale * x[q] : 0) per slice, or `fill` everywhere. */
static void set_parts(const struct mtp_call *c, void *host, const void *x,
		      int64_t q, double scale, const void *fill)
{
	enum mtp_dtype dt = c->in[parts_index(c)].dtype;
	size_t n =
		(size_t)(mtp_tensor_numel(&c->in[parts_index(c)]) / c->dims.p);

	for (int64_t k = 0; k < c->dims.p; k++)
		for (size_t i = 0; i < n; i++)
			mtp_store(
				dt, host, (size_t)k * n + i,
				fill	? mtp_load(dt, fill, i)
				: k > 0 ? 0
					: scale * mtp_load(dt, x,
							   (size_t)q * n + i));
}

/* The base's all_reduce of device parts into out (device). */
static enum mtp_status reduce(struct mtp_backend *base,
			      const struct mtp_call *c,
			      const struct mtp_tensor *parts,
			      const struct mtp_tensor *out)
{
	const struct mtp_sub_bind b[] = {{false, "parts", parts},
					 {true, "out", out}};

	return mtp_mutant_sub(base, MTP_OP_ALL_REDUCE, c, b, 2);
}

/* TWICE: the base's reduced tensor, P copies of it into host. */
static enum mtp_status reduced_copies(struct mtp_backend *base,
				      const struct mtp_call *c, void *host)
{
	const struct mtp_tensor *x = &c->in[parts_index(c)];
	struct mtp_tensor h = *x;
	size_t slice = mtp_tensor_nbytes(x) / (size_t)c->dims.p;
	void *one = malloc(slice + 1);
	enum mtp_status st;

	h.ndim = x->ndim - 1;
	memmove(h.shape, x->shape + 1, (size_t)h.ndim * sizeof(int64_t));
	if (c->op->id == MTP_OP_ALL_REDUCE) /* the call's own out */
		h = *out_of(c, "out");
	else
		h.data = NULL;
	st = !one     ? MTP_ERR_NOMEM
	     : h.data ? mtp_backend_launch(base, c)
		      : dev_new(base, &h, NULL, &h);
	if (!st && c->op->id != MTP_OP_ALL_REDUCE)
		st = reduce(base, c, x, &h);
	if (!st)
		st = mtp_backend_synchronize(base);
	if (!st)
		st = mtp_backend_download(base, one, h.data, slice);
	if (!st)
		set_parts(c, host, NULL, 0, 1.0, one);
	if (h.data && c->op->id != MTP_OP_ALL_REDUCE)
		mtp_backend_free(base, h.data);
	free(one);
	return st;
}

/* AFTER_NORM on a step: each rank's hidden_post of its partial alone into
 * norms (device [P,T,H]); rank p's own run writes the call's outputs. */
static enum mtp_status local_norms(struct mtp_backend *base,
				   const struct mtp_call *c, const void *x,
				   void *host, const struct mtp_tensor *norms)
{
	struct mtp_tensor *tmp = calloc((size_t)c->n_out + 1, sizeof(*tmp));
	int kp = mtp_call_out_index(c, "hidden_post");
	size_t slice = mtp_tensor_nbytes(norms) / (size_t)c->dims.p;
	char *coll = malloc(mtp_tensor_nbytes(norms) + 1);
	enum mtp_status st = tmp && coll && kp >= 0 ? MTP_OK : MTP_ERR_NOMEM;

	for (int i = 0; !st && i < c->n_out; i++)
		st = dev_new(base, &c->out[i], NULL, &tmp[i]);
	for (int64_t q = 0; !st && q < c->dims.p; q++) {
		set_parts(c, host, x, q, 1.0, NULL);
		st = launch_parts(base, c, host,
				  q == c->params->tp.rank ? NULL : tmp);
		if (!st)
			st = mtp_backend_download(
				base, coll + (size_t)q * slice,
				(q == c->params->tp.rank ? c->out : tmp)[kp]
					.data,
				slice);
	}
	if (!st)
		st = mtp_backend_upload(base, norms->data, coll,
					mtp_tensor_nbytes(norms));
	for (int i = 0; tmp && i < c->n_out; i++)
		if (tmp[i].data)
			mtp_backend_free(base, tmp[i].data);
	free(tmp);
	free(coll);
	return st;
}

static enum mtp_status after_norm(struct mtp_backend *base,
				  const struct mtp_call *c, const void *x,
				  void *host)
{
	const struct mtp_tensor *post = out_of(c, "hidden_post");
	const struct mtp_tensor *rec = out_of(c, "recycled");
	struct mtp_tensor norms = {0};
	enum mtp_status st = post && rec ? dev_new(base, &c->in[parts_index(c)],
						   NULL, &norms)
					 : MTP_ERR_INVALID;
	const struct mtp_sub_bind head[] = {
		{false, "x", post},
		{false, "weight", &c->in[mtp_call_in_index(c, "head_weight")]},
		{false, "weight_scale_inv",
		 mtp_call_in_index(c, "head_scale_inv") >= 0
			 ? &c->in[mtp_call_in_index(c, "head_scale_inv")]
			 : NULL},
		{true, "logits", out_of(c, "logits")},
		{true, "token", out_of(c, "token")}};

	if (!st)
		st = local_norms(base, c, x, host, &norms);
	if (!st)
		st = reduce(base, c, &norms, post);
	if (!st)
		st = mtp_backend_synchronize(base);
	if (!st)
		st = mtp_backend_download(base, host, post->data,
					  mtp_tensor_nbytes(post));
	if (!st)
		st = mtp_backend_upload(base, rec->data, host,
					mtp_tensor_nbytes(rec));
	if (!st)
		st = mtp_mutant_sub(base, MTP_OP_LM_HEAD, c, head, 5);
	if (!st)
		st = mtp_backend_synchronize(base);
	if (norms.data)
		mtp_backend_free(base, norms.data);
	return st;
}

enum mtp_status mtp_mutant_tp_launch(struct mtp_backend *base, enum mtp_diag d,
				     const struct mtp_call *c)
{
	const struct mtp_tensor *x;
	void *hx = NULL, *host = NULL;
	size_t nb;
	enum mtp_status st;

	if (!mtp_diag_tp_applies(d, c))
		return mtp_backend_launch(base, c);
	x = &c->in[parts_index(c)];
	nb = mtp_tensor_nbytes(x);
	hx = malloc(nb + 1);
	host = malloc(nb + 1);
	st = hx && host ? mtp_backend_download(base, hx, x->data, nb)
			: MTP_ERR_NOMEM;
	if (!st && d == MTP_DIAG_ALLREDUCE_AFTER_NORM)
		st = after_norm(base, c, hx, host);
	else if (!st) {
		if (d == MTP_DIAG_ALLREDUCE_TWICE)
			st = reduced_copies(base, c, host);
		else
			set_parts(c, host, hx, c->params->tp.rank,
				  d == MTP_DIAG_ALLREDUCE_SCALED
					  ? (double)c->dims.p
					  : 1.0,
				  NULL);
		if (!st)
			st = launch_parts(base, c, host, NULL);
	}
	free(hx);
	free(host);
	return st;
}
