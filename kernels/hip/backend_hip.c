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
	.alloc = mtp_nv_alloc,
	.free = mtp_nv_free,
	.upload = mtp_nv_upload,
	.download = mtp_nv_download,
	.supports = mtp_nv_supports_call,
	.launch = mtp_nv_launch,
	.synchronize = mtp_nv_synchronize,
	.timer_begin = mtp_nv_timer_begin,
	.timer_end = mtp_nv_timer_end,
	.device_info = amd_device_info,
	.copy = mtp_nv_copy,
	.graph_capture = mtp_nv_graph_capture,
	.graph_launch = mtp_nv_graph_launch,
	.graph_destroy = mtp_nv_graph_destroy,
	.graph_capture_calls = mtp_nv_graph_capture_calls,
};

__attribute__((visibility("default"))) const struct mtp_backend_iface *
mtp_backend_entry(void)
{
	return &amd_iface;
}
