/*
 * Thin wrappers around a backend's table, and the one routine that moves a
 * call's tensors to the device, runs it and brings the outputs back. Every
 * backend is called through here, so this is where checks (and, later,
 * fault injection) live.
 */
#include "mtp/backend.h"
#include "mtp/quant.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum mtp_status mtp_backend_fail(struct mtp_backend *be, enum mtp_status st,
				 const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(be->error, sizeof(be->error), fmt, ap);
	va_end(ap);
	return st;
}

enum mtp_status mtp_backend_alloc(struct mtp_backend *be, size_t bytes,
				  void **ptr)
{
	*ptr = NULL;
	if (bytes == 0)
		return MTP_OK;
	return be->iface->alloc(be, bytes, ptr);
}

void mtp_backend_free(struct mtp_backend *be, void *ptr)
{
	if (ptr)
		be->iface->free(be, ptr);
}

enum mtp_status mtp_backend_upload(struct mtp_backend *be, void *dst,
				   const void *src, size_t bytes)
{
	return bytes ? be->iface->upload(be, dst, src, bytes) : MTP_OK;
}

enum mtp_status mtp_backend_download(struct mtp_backend *be, void *dst,
				     const void *src, size_t bytes)
{
	return bytes ? be->iface->download(be, dst, src, bytes) : MTP_OK;
}

bool mtp_backend_supports(struct mtp_backend *be, const struct mtp_call *c)
{
	if (mtp_call_has_fp8(c) && !mtp_backend_reads_fp8(be->iface->name))
		return false; /* a backend that predates FP8 [§12.2] */
	return be->iface->supports(be, c);
}

enum mtp_status mtp_backend_launch(struct mtp_backend *be,
				   const struct mtp_call *c)
{
	return be->iface->launch(be, c);
}

enum mtp_status mtp_backend_synchronize(struct mtp_backend *be)
{
	return be->iface->synchronize ? be->iface->synchronize(be) : MTP_OK;
}

void mtp_backend_device_info(struct mtp_backend *be, char *buf, size_t n)
{
	if (be->iface->device_info)
		be->iface->device_info(be, buf, n);
	else
		snprintf(buf, n, "%s", be->iface->description);
}

static void free_device(struct mtp_backend *be, struct mtp_tensor *t, int n)
{
	for (int i = 0; i < n; i++)
		mtp_backend_free(be, t[i].data);
}

enum mtp_status mtp_backend_execute(struct mtp_backend *be,
				    const struct mtp_call *host_call,
				    struct mtp_tensor *out)
{
	struct mtp_call dc = *host_call;
	struct mtp_tensor *din = calloc((size_t)dc.n_in + 1, sizeof(*din));
	struct mtp_tensor *dout = calloc((size_t)dc.n_out + 1, sizeof(*dout));
	enum mtp_status st = MTP_ERR_NOMEM;
	int i;

	if (!din || !dout)
		goto out_free;
	dc.in = din;
	dc.out = dout;
	for (i = 0; i < dc.n_in; i++) {
		const struct mtp_tensor *h = &host_call->in[i];

		din[i] = *h;
		din[i].data = NULL;
		if (!h->data)
			continue; /* absent optional input */
		size_t n = mtp_tensor_nbytes(h);

		st = mtp_backend_alloc(be, n, &din[i].data);
		if (!st)
			st = mtp_backend_upload(be, din[i].data, h->data, n);
		if (st)
			goto out_dev;
	}
	for (i = 0; i < dc.n_out; i++) {
		dout[i] = host_call->out[i];
		dout[i].data = NULL;
		st = mtp_backend_alloc(be, mtp_tensor_nbytes(&dout[i]),
				       &dout[i].data);
		if (st)
			goto out_dev;
	}
	st = mtp_backend_launch(be, &dc);
	if (!st)
		st = mtp_backend_synchronize(be);
	for (i = 0; !st && i < dc.n_out; i++) {
		out[i] = host_call->out[i];
		out[i].data = NULL;
		st = mtp_tensor_alloc(&out[i], dout[i].dtype, dout[i].ndim,
				      dout[i].shape);
		if (!st)
			st = mtp_backend_download(be, out[i].data, dout[i].data,
						  mtp_tensor_nbytes(&out[i]));
	}
out_dev:
	free_device(be, din, dc.n_in);
	free_device(be, dout, dc.n_out);
out_free:
	free(din);
	free(dout);
	return st;
}

/* Index of pfx+name in a list of specs, or -1. */
static int find_spec(const struct mtp_tspec *s, int n, const char *pfx,
		     const char *name)
{
	size_t lp = pfx ? strlen(pfx) : 0;

	for (int i = 0; i < n; i++)
		if ((!lp || strncmp(s[i].name, pfx, lp) == 0) &&
		    strcmp(s[i].name + lp, name) == 0)
			return i;
	return -1;
}

int mtp_call_in_index(const struct mtp_call *c, const char *name)
{
	return find_spec(c->sig->in, c->sig->n_in, NULL, name);
}

int mtp_call_out_index(const struct mtp_call *c, const char *name)
{
	return find_spec(c->sig->out, c->sig->n_out, NULL, name);
}

const struct mtp_tensor *mtp_call_tensor(const struct mtp_call *c, bool out,
					 const char *pfx, const char *name)
{
	int i = out ? find_spec(c->sig->out, c->n_out, pfx, name)
		    : find_spec(c->sig->in, c->n_in, pfx, name);

	return i < 0 ? NULL : out ? &c->out[i] : &c->in[i];
}
