/*
 * The HIP backend (module mtp_backend_hip.so, loaded by the registry with
 * dlopen): the interface table, device selection, memory and explicit
 * copies on one stream, event timers and the device description. The ops
 * are the CUDA backend's ops.c, block.c, step.c and graph.c and its kernels,
 * compiled for AMD GPUs through vendor/cuda_runtime_api.h and gpu_compat.cuh;
 * the GEMM is this folder's (gemm.hip, linear.c). Every HIP status is
 * checked and turned into be->error; a machine without an AMD GPU is
 * reported as MTP_ERR_UNAVAILABLE with the runtime's message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nv_internal.h"

enum mtp_status mtp_nv_fail_cuda(struct mtp_backend *be, const char *what,
				 hipError_t e)
{
	return mtp_backend_fail(be, MTP_ERR_DEVICE, "%s: %s", what,
				hipGetErrorString(e));
}

/* Picks the device ($MTP_HIP_DEVICE, default 0) and checks that it works. */
static enum mtp_status amd_device_open(struct mtp_backend *be, struct nv_ctx *x)
{
	const char *env = getenv("MTP_HIP_DEVICE");
	int n = 0;
	hipError_t e = hipGetDeviceCount(&n);

	if (e != hipSuccess)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"hipGetDeviceCount: %s",
					hipGetErrorString(e));
	if (n == 0)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"no HIP device");
	x->device = env && *env ? atoi(env) : 0;
	if (x->device < 0 || x->device >= n)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"MTP_HIP_DEVICE=%s: %d device(s)", env,
					n);
	e = hipSetDevice(x->device);
	if (e == hipSuccess)
		e = hipGetDeviceProperties(&x->prop, x->device);
	if (e == hipSuccess)
		e = hipDriverGetVersion(&x->driver_version);
	if (e == hipSuccess)
		e = hipRuntimeGetVersion(&x->runtime_version);
	if (e != hipSuccess)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"device %d: %s", x->device,
					hipGetErrorString(e));
	return MTP_OK;
}

static enum mtp_status amd_open_resources(struct mtp_backend *be,
					  struct nv_ctx *x)
{
	NV_CUDA(be, hipStreamCreateWithFlags(&x->stream, hipStreamNonBlocking));
	NV_CUDA(be, hipEventCreate(&x->ev_begin));
	NV_CUDA(be, hipEventCreate(&x->ev_end));
	return MTP_OK;
}

static void amd_close(struct mtp_backend *be)
{
	struct nv_ctx *x = nv_ctx(be);

	if (!x)
		return;
	/* statuses ignored: nothing more can be done while closing */
	if (x->stream)
		(void)hipStreamSynchronize(x->stream);
	if (x->ev_end)
		(void)hipEventDestroy(x->ev_end);
	if (x->ev_begin)
		(void)hipEventDestroy(x->ev_begin);
	if (x->stream)
		(void)hipStreamDestroy(x->stream);
	free(x);
	be->ctx = NULL;
}

static enum mtp_status amd_open(struct mtp_backend *be)
{
	struct nv_ctx *x = calloc(1, sizeof(*x));
	enum mtp_status st;

	if (!x)
		return mtp_backend_fail(be, MTP_ERR_NOMEM, "out of memory");
	be->ctx = x;
	st = amd_device_open(be, x);
	if (!st)
		st = amd_open_resources(be, x);
	if (st)
		goto fail;
	return MTP_OK;
fail:
	amd_close(be);
	return MTP_ERR_UNAVAILABLE; /* be->error says why */
}

static enum mtp_status amd_alloc(struct mtp_backend *be, size_t bytes,
				 void **ptr)
{
	NV_CUDA(be, hipMalloc(ptr, bytes));
	return MTP_OK;
}

static void amd_free(struct mtp_backend *be, void *ptr)
{
	hipError_t e = hipFree(ptr);

	if (e != hipSuccess && !be->error[0]) /* the first message wins */
		mtp_nv_fail_cuda(be, "hipFree", e);
}

static enum mtp_status amd_upload(struct mtp_backend *be, void *dst,
				  const void *src, size_t bytes)
{
	struct nv_ctx *x = nv_ctx(be);

	/* synchronous: the host buffer may be freed right after */
	NV_CUDA(be, hipMemcpyAsync(dst, src, bytes, hipMemcpyHostToDevice,
				   x->stream));
	NV_CUDA(be, hipStreamSynchronize(x->stream));
	return MTP_OK;
}

static enum mtp_status amd_download(struct mtp_backend *be, void *dst,
				    const void *src, size_t bytes)
{
	struct nv_ctx *x = nv_ctx(be);

	NV_CUDA(be, hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToHost,
				   x->stream));
	NV_CUDA(be, hipStreamSynchronize(x->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_copy(struct mtp_backend *be, void *dst, const void *src,
			    size_t bytes)
{
	if (!bytes)
		return MTP_OK;
	NV_CUDA(be, hipMemcpyAsync(dst, src, bytes, hipMemcpyDeviceToDevice,
				   nv_ctx(be)->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_scratch(struct mtp_backend *be, size_t bytes, void **ptr)
{
	struct nv_ctx *x = nv_ctx(be);

	*ptr = NULL;
	if (x->n_scratch == NV_SCRATCH_MAX)
		return mtp_backend_fail(
			be, MTP_ERR_LIMIT,
			"more than %d scratch buffers in one call",
			NV_SCRATCH_MAX);
	NV_CUDA(be, hipMallocAsync(ptr, bytes ? bytes : 1, x->stream));
	x->scratch[x->n_scratch++] = *ptr;
	return MTP_OK;
}

enum mtp_status mtp_nv_scratch_release(struct mtp_backend *be)
{
	struct nv_ctx *x = nv_ctx(be);
	hipError_t first = hipSuccess;

	while (x->n_scratch > 0) {
		hipError_t e =
			hipFreeAsync(x->scratch[--x->n_scratch], x->stream);

		if (first == hipSuccess)
			first = e;
	}
	NV_CUDA(be, first);
	return MTP_OK;
}

static bool amd_supports(struct mtp_backend *be, const struct mtp_call *c)
{
	(void)be;
	return mtp_nv_op_supported(c);
}

static enum mtp_status amd_launch(struct mtp_backend *be,
				  const struct mtp_call *c)
{
	enum mtp_status st, rel;

	switch (c->op->id) {
	case MTP_OP_MTP_BLOCK: st = mtp_nv_op_block(be, c); break;
	case MTP_OP_MTP_STEP: st = mtp_nv_op_step(be, c); break;
	case MTP_OP_DRAFT_CHAIN: st = mtp_nv_op_chain(be, c); break;
	default: st = mtp_nv_op_simple(be, c); break;
	}
	rel = mtp_nv_scratch_release(be);
	return st ? st : rel;
}

static enum mtp_status amd_synchronize(struct mtp_backend *be)
{
	NV_CUDA(be, hipStreamSynchronize(nv_ctx(be)->stream));
	return MTP_OK;
}

static enum mtp_status amd_timer_begin(struct mtp_backend *be)
{
	struct nv_ctx *x = nv_ctx(be);

	NV_CUDA(be, hipEventRecord(x->ev_begin, x->stream));
	return MTP_OK;
}

static enum mtp_status amd_timer_end(struct mtp_backend *be, double *seconds)
{
	struct nv_ctx *x = nv_ctx(be);
	float ms = 0.0f;

	NV_CUDA(be, hipEventRecord(x->ev_end, x->stream));
	NV_CUDA(be, hipEventSynchronize(x->ev_end));
	NV_CUDA(be, hipEventElapsedTime(&ms, x->ev_begin, x->ev_end));
	*seconds = ms * 1e-3;
	return MTP_OK;
}

static void amd_device_info(struct mtp_backend *be, char *buf, size_t n)
{
	struct nv_ctx *x = nv_ctx(be);
	const hipDeviceProp_t *p = &x->prop;

	snprintf(buf, n,
		 "%s (device %d, %s, %d CUs, wavefront %d, %.1f GiB), "
		 "driver %d, runtime %d, GEMM: own kernel",
		 p->name, x->device, p->gcnArchName, p->multiProcessorCount,
		 p->warpSize,
		 (double)p->totalGlobalMem / (1024.0 * 1024.0 * 1024.0),
		 x->driver_version, x->runtime_version);
}

static const struct mtp_backend_iface amd_iface = {
	.api_version = MTP_BACKEND_API_VERSION,
	.name = "hip",
	.description = "HIP kernels (the CUDA sources built for gfx908/gfx90a/"
		       "gfx940) and an own GEMM (bf16/fp16/fp32 activations, "
		       "fp32 accumulation)",
	.open = amd_open,
	.close = amd_close,
	.alloc = amd_alloc,
	.free = amd_free,
	.upload = amd_upload,
	.download = amd_download,
	.supports = amd_supports,
	.launch = amd_launch,
	.synchronize = amd_synchronize,
	.timer_begin = amd_timer_begin,
	.timer_end = amd_timer_end,
	.device_info = amd_device_info,
	.copy = mtp_nv_copy,
	.graph_capture = mtp_nv_graph_capture,
	.graph_launch = mtp_nv_graph_launch,
	.graph_destroy = mtp_nv_graph_destroy,
};

__attribute__((visibility("default"))) const struct mtp_backend_iface *
mtp_backend_entry(void)
{
	return &amd_iface;
}
