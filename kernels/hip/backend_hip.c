/*
 * The HIP backend (module mtp_backend_hip.so, loaded by the registry with
 * dlopen): the interface table and the device description. Everything else
 * is the CUDA backend's host code (runtime.c: device selection, memory,
 * copies, timers; prims.c: the kernel launchers; graph.c) and its kernels,
 * compiled for AMD GPUs through vendor/cuda_runtime_api.h and gpu_compat.cuh,
 * with the ops composed by kernels/gpu/; the GEMM is this folder's
 * (gemm.hip, linear.c). Every HIP status is checked and turned into
 * be->error; a machine without an AMD GPU is reported as
 * MTP_ERR_UNAVAILABLE with the runtime's message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nv_internal.h"

static const struct nv_platform amd_platform = {
	.api = "hip",
	.name = "HIP",
	.device_env = "MTP_HIP_DEVICE",
};

static enum mtp_status amd_open(struct mtp_backend *be)
{
	return mtp_nv_open(be, &amd_platform);
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
	MTP_NV_IFACE_SHARED,
	.name = "hip",
	.description = "HIP kernels (the CUDA sources built for gfx908/gfx90a/"
		       "gfx940) and an own GEMM (bf16/fp16/fp32 activations, "
		       "fp32 accumulation)",
	.open = amd_open,
	.close = mtp_nv_close,
	.device_info = amd_device_info,
};

__attribute__((visibility("default"))) const struct mtp_backend_iface *
mtp_backend_entry(void)
{
	return &amd_iface;
}
