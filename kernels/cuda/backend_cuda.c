/*
 * The CUDA backend (module mtp_backend_cuda.so, loaded by the registry with
 * dlopen): the interface table, what the CUDA module opens beyond the HIP
 * one (the cuBLASLt handle and workspace, the empty-kernel probe) and the
 * device description. Device selection, memory, copies, timers and graphs
 * are runtime.c and graph.c (shared with hip); kernels live in the .cu
 * files behind nv_kernels.h, launched by prims.c; the ops are composed by
 * kernels/gpu/. Every CUDA and cuBLASLt status is checked and turned into
 * be->error; a machine without a usable driver or device is reported as
 * MTP_ERR_UNAVAILABLE with the driver's message.
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

/* cuBLASLt and its workspace, then the optional empty-kernel timing. */
static enum mtp_status nv_open_more(struct mtp_backend *be, struct nv_ctx *x)
{
	NV_BLAS(be, cublasLtCreate(&x->lt));
	x->workspace_bytes = NV_WORKSPACE_BYTES;
	NV_CUDA(be, cudaMalloc(&x->workspace, x->workspace_bytes));
	return mtp_nv_bench_empty(be);
}

static void nv_close_more(struct nv_ctx *x)
{
	if (x->workspace)
		cudaFree(x->workspace);
	if (x->lt)
		cublasLtDestroy(x->lt);
}

static const struct nv_platform nv_platform = {
	.api = "cuda",
	.name = "CUDA",
	.device_env = "MTP_CUDA_DEVICE",
	.open_more = nv_open_more,
	.close_more = nv_close_more,
};

static enum mtp_status nv_open(struct mtp_backend *be)
{
	return mtp_nv_open(be, &nv_platform);
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
	MTP_NV_IFACE_SHARED,
	.name = "cuda",
	.description = "CUDA kernels and cuBLASLt GEMMs (bf16/fp16/fp32 "
		       "activations, fp32 accumulation)",
	.open = nv_open,
	.close = mtp_nv_close,
	.device_info = nv_device_info,
};

__attribute__((visibility("default"))) const struct mtp_backend_iface *
mtp_backend_entry(void)
{
	return &nv_iface;
}
