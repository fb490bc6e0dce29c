/*
 * The CUDA backend (module mtp_backend_cuda.so, loaded by the registry with
 * dlopen): the interface table, device selection, memory and explicit
 * copies on one stream, event timers, graph replay (graph.c) and the device
 * description. Kernels
 * live in the .cu files behind nv_kernels.h; the ops are composed in ops.c,
 * block.c and step.c. Every CUDA and cuBLASLt status is checked and turned
 * into be->error; a machine without a usable driver or device is reported
 * as MTP_ERR_UNAVAILABLE with the driver's message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nv_internal.h"

#define NV_WORKSPACE_BYTES (32u << 20)

enum mtp_status mtp_nv_fail_blas(struct mtp_backend *be, const char *what,
				 cublasStatus_t e)
{
	return mtp_backend_fail(be, MTP_ERR_DEVICE, "%s: %s", what,
				cublasLtGetStatusString(e));
}

/* Picks the device ($MTP_CUDA_DEVICE, default 0) and checks that it works. */
static enum mtp_status nv_device_open(struct mtp_backend *be, struct nv_ctx *x)
{
	const char *env = getenv("MTP_CUDA_DEVICE");
	int n = 0;
	cudaError_t e = cudaGetDeviceCount(&n);

	if (e != cudaSuccess)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"cudaGetDeviceCount: %s",
					cudaGetErrorString(e));
	if (n == 0)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"no CUDA device");
	x->device = env && *env ? atoi(env) : 0;
	if (x->device < 0 || x->device >= n)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"MTP_CUDA_DEVICE=%s: %d device(s)", env,
					n);
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

static enum mtp_status nv_open_resources(struct mtp_backend *be,
					 struct nv_ctx *x)
{
	NV_CUDA(be,
		cudaStreamCreateWithFlags(&x->stream, cudaStreamNonBlocking));
	NV_CUDA(be, cudaEventCreate(&x->ev_begin));
	NV_CUDA(be, cudaEventCreate(&x->ev_end));
	NV_BLAS(be, cublasLtCreate(&x->lt));
	x->workspace_bytes = NV_WORKSPACE_BYTES;
	NV_CUDA(be, cudaMalloc(&x->workspace, x->workspace_bytes));
	return MTP_OK;
}

static void nv_close(struct mtp_backend *be)
{
	struct nv_ctx *x = nv_ctx(be);

	if (!x)
		return;
	if (x->stream)
		cudaStreamSynchronize(x->stream);
	if (x->workspace)
		cudaFree(x->workspace);
	if (x->lt)
		cublasLtDestroy(x->lt);
	if (x->ev_end)
		cudaEventDestroy(x->ev_end);
	if (x->ev_begin)
		cudaEventDestroy(x->ev_begin);
	if (x->stream)
		cudaStreamDestroy(x->stream);
	free(x);
	be->ctx = NULL;
}

static enum mtp_status nv_open(struct mtp_backend *be)
{
	struct nv_ctx *x = calloc(1, sizeof(*x));
	enum mtp_status st;

	if (!x)
		return mtp_backend_fail(be, MTP_ERR_NOMEM, "out of memory");
	be->ctx = x;
	st = nv_device_open(be, x);
	if (st)
		goto fail;
	st = nv_open_resources(be, x);
	if (!st)
		st = mtp_nv_bench_empty(be);
	if (st)
		goto fail;
	return MTP_OK;
fail:
	nv_close(be);
	return MTP_ERR_UNAVAILABLE; /* be->error says why */
}

static void nv_device_info(struct mtp_backend *be, char *buf, size_t n)
{
	struct nv_ctx *x = nv_ctx(be);
	const struct cudaDeviceProp *p = &x->prop;

	snprintf(buf, n,
		 "%s (device %d, sm_%d%d, %d SMs, %.1f GiB), driver %d.%d, "
		 "runtime %d.%d, cuBLASLt %zu",
		 p->name, x->device, p->major, p->minor, p->multiProcessorCount,
		 (double)p->totalGlobalMem / (1024.0 * 1024.0 * 1024.0),
		 x->driver_version / 1000, x->driver_version % 1000 / 10,
		 x->runtime_version / 1000, x->runtime_version % 1000 / 10,
		 cublasLtGetVersion());
}

static const struct mtp_backend_iface nv_iface = {
	.api_version = MTP_BACKEND_API_VERSION,
	.name = "cuda",
	.description = "CUDA kernels and cuBLASLt GEMMs (bf16/fp16/fp32 "
		       "activations, fp32 accumulation)",
	.open = nv_open,
	.close = nv_close,
	.alloc = mtp_nv_alloc,
	.free = mtp_nv_free,
	.upload = mtp_nv_upload,
	.download = mtp_nv_download,
	.supports = mtp_nv_supports_call,
	.launch = mtp_nv_launch,
	.synchronize = mtp_nv_synchronize,
	.timer_begin = mtp_nv_timer_begin,
	.timer_end = mtp_nv_timer_end,
	.device_info = nv_device_info,
	.copy = mtp_nv_copy,
	.graph_capture = mtp_nv_graph_capture,
	.graph_launch = mtp_nv_graph_launch,
	.graph_destroy = mtp_nv_graph_destroy,
	.graph_capture_calls = mtp_nv_graph_capture_calls,
};

__attribute__((visibility("default"))) const struct mtp_backend_iface *
mtp_backend_entry(void)
{
	return &nv_iface;
}
