/*
 * The mutant side of a row's edit and after_run (mtp/bugclass.h): the
 * call's inputs copied to the host, changed by the row's own edit (the
 * function the judge's hypothesis calls), and the changed ones uploaded as
 * new device tensors for the base; or the base's outputs copied to the
 * host, changed by the row's after_run and put back. Nothing is computed
 * with the reference.
 */
#include "mutant_int.h"

#include <stdlib.h>
#include <string.h>

struct host_call {
	struct mtp_call c;	    /* the call, its inputs on the host */
	struct mtp_tensor *host;    /* host copies of c's inputs */
	struct mtp_tensor *in;	    /* the edit's view */
	struct mtp_tensor *own;	    /* the edit's new tensors */
	struct mtp_tensor *dev;	    /* what the base is given */
	struct mtp_tensor *dev_own; /* uploads, freed on the base */
};

static void host_fini(struct mtp_backend *base, struct host_call *h, int n)
{
	for (int i = 0; i < n; i++) {
		if (h->host)
			mtp_tensor_fini(&h->host[i]);
		if (h->own)
			mtp_tensor_fini(&h->own[i]);
		if (h->dev_own)
			mtp_backend_free(base, h->dev_own[i].data);
	}
	free(h->host);
	free(h->in);
	free(h->own);
	free(h->dev);
	free(h->dev_own);
}

static enum mtp_status host_init(struct mtp_backend *base,
				 const struct mtp_call *c, struct host_call *h)
{
	size_t n = (size_t)c->n_in + 1;
	enum mtp_status st = MTP_OK;

	memset(h, 0, sizeof(*h));
	h->host = calloc(n, sizeof(*h->host));
	h->in = calloc(n, sizeof(*h->in));
	h->own = calloc(n, sizeof(*h->own));
	h->dev = calloc(n, sizeof(*h->dev));
	h->dev_own = calloc(n, sizeof(*h->dev_own));
	if (!h->host || !h->in || !h->own || !h->dev || !h->dev_own)
		return MTP_ERR_NOMEM;
	for (int i = 0; !st && i < c->n_in; i++) {
		const struct mtp_tensor *t = &c->in[i];

		h->host[i] = *t;
		h->host[i].data = NULL;
		if (!t->data)
			continue;
		st = mtp_tensor_alloc(&h->host[i], t->dtype, t->ndim, t->shape);
		if (!st)
			st = mtp_backend_download(base, h->host[i].data,
						  t->data,
						  mtp_tensor_nbytes(t));
	}
	h->c = *c;
	h->c.in = h->host;
	memcpy(h->in, h->host, (size_t)c->n_in * sizeof(*h->in));
	return st;
}

/* The device tensor for the edit's view of input i: the base's own input
 * the view points at, absent, or an upload of the edit's new tensor. */
static enum mtp_status to_device(struct mtp_backend *base,
				 const struct mtp_call *c, struct host_call *h,
				 int i)
{
	const struct mtp_tensor *v = &h->in[i];
	enum mtp_status st;

	h->dev[i] = c->in[i];
	if (!v->data) {
		h->dev[i].data = NULL;
		return MTP_OK;
	}
	for (int j = 0; j < c->n_in; j++) {
		if (v->data == h->host[j].data) {
			h->dev[i] = c->in[j];
			return MTP_OK;
		}
	}
	h->dev[i] = *v;
	h->dev[i].data = NULL;
	st = mtp_backend_alloc(base, mtp_tensor_nbytes(v), &h->dev[i].data);
	if (!st)
		st = mtp_backend_upload(base, h->dev[i].data, v->data,
					mtp_tensor_nbytes(v));
	h->dev_own[i] = h->dev[i];
	return st;
}

enum mtp_status mtp_mutant_edit_launch(struct mtp_backend *base,
				       const struct mtp_bug_class *row,
				       const struct mtp_call *c)
{
	struct mtp_params p = *c->params;
	struct mtp_call mc = *c;
	struct host_call h;
	struct mtp_bug_edit e;
	enum mtp_status st = host_init(base, c, &h);

	e = (struct mtp_bug_edit){&h.c, &p, h.in, h.own};
	if (!st)
		st = row->edit(&e);
	for (int i = 0; !st && i < c->n_in; i++)
		st = to_device(base, c, &h, i);
	if (!st) {
		mc.in = h.dev;
		mc.params = &p;
		st = mtp_backend_launch(base, &mc);
	}
	if (!st)
		st = mtp_backend_synchronize(base);
	host_fini(base, &h, c->n_in);
	return st;
}

enum mtp_status mtp_mutant_after_run(struct mtp_backend *base,
				     const struct mtp_bug_class *row,
				     const struct mtp_call *c)
{
	static uint32_t calls; /* a worker process runs one mutant */
	enum mtp_status st = MTP_OK;

	calls++;
	for (int k = 0; !st && k < c->n_out; k++) {
		const struct mtp_tensor *t = &c->out[k];
		struct mtp_tensor h = *t;
		size_t nb = mtp_tensor_nbytes(t);

		if (!t->data || !nb)
			continue;
		h.data = malloc(nb);
		if (!h.data)
			return MTP_ERR_NOMEM;
		st = mtp_backend_download(base, h.data, t->data, nb);
		if (!st)
			st = row->after_run(c, calls, &h);
		if (!st)
			st = mtp_backend_upload(base, t->data, h.data, nb);
		free(h.data);
	}
	return st;
}
