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
	/* The captured-block form (SPEC.md §12.3): only backends whose
	 * registry row reads it are asked (the python backend asks its
	 * adapter); a mutant asks its base. */
	if (c->params && c->params->v2.captured && !be->reads_v2)
		return false;
	if (mtp_call_has_fp8(c) && !be->reads_v2)
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
	if (!n)
		return;
	buf[0] = 0;
	if (be->iface->device_info)
		be->iface->device_info(be, buf, n);
	else
		snprintf(buf, n, "%s", be->iface->description);
	buf[n - 1] = 0; /* a backend may fill it without a NUL */
}

/* Whether the harness may offset this backend's buffers (guard zones):
 * every backend in the chain (mutants wrap one) must say its buffers are
 * addresses, which version 2 could not. */
static bool guarded(const struct mtp_backend *be)
{
	for (; be; be = be->base)
		if (be->iface->api_version < 3 || be->iface->opaque_buffers)
			return false;
	return true;
}

static unsigned char guard_byte(size_t i)
{
	return (unsigned char)(0xA5u ^ (i * 0x3Bu));
}

void mtp_guard_fill(unsigned char *g)
{
	for (size_t i = 0; i < MTP_BACKEND_GUARD_BYTES; i++)
		g[i] = guard_byte(i);
}

size_t mtp_guard_reach(const unsigned char *g, bool before)
{
	const size_t gn = MTP_BACKEND_GUARD_BYTES;

	for (size_t i = 0; before && i < gn; i++)
		if (g[i] != guard_byte(i))
			return gn - i;
	for (size_t i = gn; !before && i > 0; i--)
		if (g[i - 1] != guard_byte(i - 1))
			return i;
	return 0;
}

enum mtp_status mtp_guard_fail(struct mtp_backend *be, size_t before,
			       size_t past, const char *name)
{
	if (past)
		return mtp_backend_fail(be, MTP_ERR_CORRUPT,
					"wrote %zu bytes past output %s "
					"(guard zone)",
					past, name);
	return mtp_backend_fail(be, MTP_ERR_CORRUPT,
				"wrote %zu bytes before output %s (guard zone)",
				before, name);
}

/* An output buffer: with guards, base is the allocation and data sits
 * MTP_BACKEND_GUARD_BYTES into it. */
static enum mtp_status alloc_output(struct mtp_backend *be, size_t n,
				    bool guard, void **base, void **data)
{
	unsigned char g[MTP_BACKEND_GUARD_BYTES];
	enum mtp_status st;

	*data = NULL;
	if (!guard || n == 0) {
		st = mtp_backend_alloc(be, n, base);
		*data = *base;
		return st;
	}
	st = mtp_backend_alloc(be, n + 2 * sizeof(g), base);
	if (st)
		return st;
	mtp_guard_fill(g);
	st = mtp_backend_upload(be, *base, g, sizeof(g));
	if (!st)
		st = mtp_backend_upload(be, (char *)*base + sizeof(g) + n, g,
					sizeof(g));
	*data = (char *)*base + sizeof(g);
	return st;
}

/* Reads both guard zones of an output back; a changed byte is a write
 * outside the buffer, reported with how far it reached. */
static enum mtp_status check_guards(struct mtp_backend *be, void *base,
				    size_t n, const char *name)
{
	unsigned char g[MTP_BACKEND_GUARD_BYTES];
	size_t gn = sizeof(g), before = 0, past = 0;
	enum mtp_status st = mtp_backend_download(be, g, base, gn);

	if (!st)
		before = mtp_guard_reach(g, true);
	if (!st)
		st = mtp_backend_download(be, g, (char *)base + gn + n, gn);
	if (!st)
		past = mtp_guard_reach(g, false);
	if (st || (!past && !before))
		return st;
	return mtp_guard_fail(be, before, past, name);
}

static void free_device(struct mtp_backend *be, struct mtp_tensor *t, int n)
{
	for (int i = 0; i < n; i++)
		mtp_backend_free(be, t[i].data);
}

static enum mtp_status upload_inputs(struct mtp_backend *be,
				     const struct mtp_call *host_call,
				     struct mtp_tensor *din)
{
	enum mtp_status st = MTP_OK;

	for (int i = 0; !st && i < host_call->n_in; i++) {
		const struct mtp_tensor *h = &host_call->in[i];
		size_t n = mtp_tensor_nbytes(h);

		din[i] = *h;
		din[i].data = NULL;
		if (!h->data)
			continue; /* absent optional input */
		st = mtp_backend_alloc(be, n, &din[i].data);
		if (!st)
			st = mtp_backend_upload(be, din[i].data, h->data, n);
	}
	return st;
}

/* Launches, waits, checks the guard zones and brings the outputs home. */
static enum mtp_status launch_and_fetch(struct mtp_backend *be,
					const struct mtp_call *host_call,
					const struct mtp_call *dc, void **base,
					bool guard, struct mtp_tensor *out)
{
	enum mtp_status st = mtp_backend_launch(be, dc);

	if (!st)
		st = mtp_backend_synchronize(be);
	for (int i = 0; guard && !st && i < dc->n_out; i++) {
		size_t n = mtp_tensor_nbytes(&dc->out[i]);

		if (n)
			st = check_guards(be, base[i], n,
					  dc->sig ? dc->sig->out[i].name : "?");
	}
	for (int i = 0; !st && i < dc->n_out; i++) {
		out[i] = host_call->out[i];
		out[i].data = NULL;
		st = mtp_tensor_alloc(&out[i], dc->out[i].dtype,
				      dc->out[i].ndim, dc->out[i].shape);
		if (!st)
			st = mtp_backend_download(be, out[i].data,
						  dc->out[i].data,
						  mtp_tensor_nbytes(&out[i]));
	}
	return st;
}

enum mtp_status mtp_backend_execute(struct mtp_backend *be,
				    const struct mtp_call *host_call,
				    struct mtp_tensor *out)
{
	struct mtp_call dc = *host_call;
	struct mtp_tensor *din = calloc((size_t)dc.n_in + 1, sizeof(*din));
	struct mtp_tensor *dout = calloc((size_t)dc.n_out + 1, sizeof(*dout));
	void **base = calloc((size_t)dc.n_out + 1, sizeof(*base));
	bool guard = guarded(be);
	enum mtp_status st = MTP_ERR_NOMEM;

	if (!din || !dout || !base)
		goto out_free;
	dc.in = din;
	dc.out = dout;
	st = upload_inputs(be, host_call, din);
	for (int i = 0; !st && i < dc.n_out; i++) {
		dout[i] = host_call->out[i];
		st = alloc_output(be, mtp_tensor_nbytes(&dout[i]), guard,
				  &base[i], &dout[i].data);
	}
	if (!st)
		st = launch_and_fetch(be, host_call, &dc, base, guard, out);
	free_device(be, din, dc.n_in);
	for (int i = 0; i < dc.n_out; i++)
		mtp_backend_free(be, base[i]);
out_free:
	be->error[sizeof(be->error) - 1] = 0;
	free(din);
	free(dout);
	free(base);
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

bool mtp_call_in_is_norm_weight(const struct mtp_call *c, int k)
{
	return k >= 0 && k < c->sig->n_in && c->sig->in[k].cls == MTP_TC_ACT &&
	       strcmp(c->sig->in[k].shape, "H") == 0;
}

double mtp_call_norm_offset(const struct mtp_call *c)
{
	return mtp_family_norm_offset(c->params->family);
}

const struct mtp_tensor *mtp_call_tensor(const struct mtp_call *c, bool out,
					 const char *pfx, const char *name)
{
	int i = out ? find_spec(c->sig->out, c->n_out, pfx, name)
		    : find_spec(c->sig->in, c->n_in, pfx, name);

	return i < 0 ? NULL : out ? &c->out[i] : &c->in[i];
}

bool mtp_call_empty(const struct mtp_call *c)
{
	for (int i = 0; i < c->n_out; i++)
		if (mtp_tensor_numel(&c->out[i]) > 0)
			return false;
	return true;
}

enum mtp_status mtp_host_alloc(struct mtp_backend *be, size_t bytes, void **ptr)
{
	*ptr = malloc(bytes);
	if (!*ptr)
		return mtp_backend_fail(be, MTP_ERR_NOMEM,
					"cannot allocate %zu bytes", bytes);
	return MTP_OK;
}

void mtp_host_free(struct mtp_backend *be, void *ptr)
{
	(void)be;
	free(ptr);
}

enum mtp_status mtp_host_copy(struct mtp_backend *be, void *dst,
			      const void *src, size_t bytes)
{
	(void)be;
	memcpy(dst, src, bytes);
	return MTP_OK;
}
