/*
 * The runtime half of the CUDA backend's interface, shared with the HIP
 * backend (which compiles it through kernels/hip/vendor/, CUDA runtime names
 * mapped to HIP): opening and closing the device, its stream and events,
 * device memory, copies, synchronisation and event timers. Every runtime
 * call is checked; an error is the backend's message, never an abort.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nv_internal.h"

enum mtp_status mtp_nv_fail_cuda(struct mtp_backend *be, const char *what,
				 cudaError_t e)
{
	return mtp_backend_fail(be, MTP_ERR_DEVICE, "%s: %s", what,
				cudaGetErrorString(e));
}

/* Picks the device ($device_env, default 0) and checks that it works. */
static enum mtp_status device_open(struct mtp_backend *be, struct nv_ctx *x)
{
	const struct nv_platform *pf = x->pf;
	const char *env = getenv(pf->device_env);
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"%sGetDeviceCount: %s", pf->api,
					cudaGetErrorString(e));
	if (n == 0)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE, "no %s device",
					pf->name);
	x->device = env && *env ? atoi(env) : 0;
	if (x->device < 0 || x->device >= n)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"%s=%s: %d device(s)", pf->device_env,
					env, n);
	e = cudaSetDevice(x->device);
	if (e == cudaSuccess)
		e = cudaGetDeviceProperties(&x->prop, x->device);
	if (e == cudaSuccess)
		e = cudaDriverGetVersion(&x->driver_version);
	if (e == cudaSuccess)
		e = cudaRuntimeGetVersion(&x->runtime_version);
	if (e != cudaSuccess)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"device %d: %s", x->device,
					cudaGetErrorString(e));
	return MTP_OK;
}

/* "<api><call>: <message>", the runtime's own name ("hipEventCreate"). */
static enum mtp_status rt_fail(struct mtp_backend *be, const struct nv_ctx *x,
			       const char *call, cudaError_t e)
{
	return mtp_backend_fail(be, MTP_ERR_DEVICE, "%s%s: %s", x->pf->api,
				call, cudaGetErrorString(e));
}

static enum mtp_status open_stream(struct mtp_backend *be, struct nv_ctx *x)
{
	cudaError_t e =
		cudaStreamCreateWithFlags(&x->stream, cudaStreamNonBlocking);

	if (e != cudaSuccess)
		return rt_fail(be, x, "StreamCreateWithFlags", e);
	e = cudaEventCreate(&x->ev_begin);
	if (e == cudaSuccess)
		e = cudaEventCreate(&x->ev_end);
	if (e != cudaSuccess)
		return rt_fail(be, x, "EventCreate", e);
	return MTP_OK;
}

void mtp_nv_close(struct mtp_backend *be)
{
	struct nv_ctx *x = nv_ctx(be);

	if (!x)
		return;
	/* statuses ignored: nothing more can be done while closing */
	if (x->stream)
		(void)cudaStreamSynchronize(x->stream);
	if (x->pf->close_more)
		x->pf->close_more(x);
	if (x->ev_end)
		(void)cudaEventDestroy(x->ev_end);
	if (x->ev_begin)
		(void)cudaEventDestroy(x->ev_begin);
	if (x->stream)
		(void)cudaStreamDestroy(x->stream);
	free(x);
	be->ctx = NULL;
}

enum mtp_status mtp_nv_open(struct mtp_backend *be,
			    const struct nv_platform *pf)
{
	struct nv_ctx *x = calloc(1, sizeof(*x));
	enum mtp_status st;

	if (!x)
		return mtp_backend_fail(be, MTP_ERR_NOMEM, "out of memory");
	x->gpu.prims = &mtp_nv_prims;
	x->pf = pf;
	be->ctx = x;
	st = device_open(be, x);
	if (!st)
		st = open_stream(be, x);
	if (!st && pf->open_more)
		st = pf->open_more(be, x);
	if (st) {
		mtp_nv_close(be);
		return MTP_ERR_UNAVAILABLE; /* be->error says why */
	}
	return MTP_OK;
}

enum mtp_status mtp_nv_alloc(struct mtp_backend *be, size_t bytes, void **ptr)
{
	NV_CUDA(be, cudaMalloc(ptr, bytes));
	return MTP_OK;
}

void mtp_nv_free(struct mtp_backend *be, void *ptr)
{
	cudaError_t e = cudaFree(ptr);

	if (e != cudaSuccess && !be->error[0])
		mtp_nv_fail_cuda(be, "cudaFree",
				 e); /* the first message wins */
}

enum mtp_status mtp_nv_upload(struct mtp_backend *be, void *dst,
			      const void *src, size_t bytes)
{
	struct nv_ctx *x = nv_ctx(be);

	/* synchronous: the host buffer may be freed right after */
	NV_CUDA(be, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice,
				    x->stream));
	NV_CUDA(be, cudaStreamSynchronize(x->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_download(struct mtp_backend *be, void *dst,
				const void *src, size_t bytes)
{
	struct nv_ctx *x = nv_ctx(be);

	NV_CUDA(be, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost,
				    x->stream));
	NV_CUDA(be, cudaStreamSynchronize(x->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_copy(struct mtp_backend *be, void *dst, const void *src,
			    size_t bytes)
{
	if (!bytes)
		return MTP_OK;
	NV_CUDA(be, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
				    nv_ctx(be)->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_synchronize(struct mtp_backend *be)
{
	NV_CUDA(be, cudaStreamSynchronize(nv_ctx(be)->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_timer_begin(struct mtp_backend *be)
{
	struct nv_ctx *x = nv_ctx(be);

	NV_CUDA(be, cudaEventRecord(x->ev_begin, x->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_timer_end(struct mtp_backend *be, double *seconds)
{
	struct nv_ctx *x = nv_ctx(be);
	float ms = 0.0f;

	NV_CUDA(be, cudaEventRecord(x->ev_end, x->stream));
	NV_CUDA(be, cudaEventSynchronize(x->ev_end));
	NV_CUDA(be, cudaEventElapsedTime(&ms, x->ev_begin, x->ev_end));
	*seconds = ms * 1e-3;
	return MTP_OK;
}
