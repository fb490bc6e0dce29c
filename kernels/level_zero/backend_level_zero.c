/*
 * The level_zero backend (module mtp_backend_level_zero.so, loaded by the
 * registry with dlopen): the same OpenCL C kernels as the opencl backend,
 * compiled to SPIR-V at build time and run through Level Zero on Intel
 * GPUs. This file is the interface table, device memory and explicit
 * copies, the platform half of the shared host layer (enqueue a kernel,
 * scratch, copy) and the device timers; the primitives are the opencl
 * backend's (kernels/opencl/kernels.c) and the ops are composed by the GPU
 * composition layer (kernels/gpu/).
 *
 * Host copies go through a host (USM) staging buffer, since a plain
 * malloc'ed pointer need not be visible to the device.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l0_internal.h"

enum mtp_status mtp_l0_fail(struct mtp_backend *be, enum mtp_status st,
			    const char *what, ze_result_t r)
{
	return mtp_backend_fail(be, st, "%s: 0x%08x %s", what, (unsigned)r,
				mtp_l0_result_name(r));
}

static enum mtp_status l0_run(struct mtp_backend *be, enum ocl_kernel k,
			      const struct ocl_flat_arg *a, int n,
			      const uint32_t groups[2], const uint32_t lws[2])
{
	struct l0_ctx *x = l0_ctx(be);
	ze_kernel_handle_t kern = x->kernels[k];
	const ze_group_count_t count = {groups[0], groups[1], 1};

	for (int i = 0; i < n; i++)
		L0_ZE(be, mtp_ocl_kernel_names[k],
		      zeKernelSetArgumentValue(kern, (uint32_t)i, a[i].size,
					       a[i].value));
	L0_ZE(be, "zeKernelSetGroupSize",
	      zeKernelSetGroupSize(kern, lws[0], lws[1], 1));
	L0_ZE(be, mtp_ocl_kernel_names[k],
	      zeCommandListAppendLaunchKernel(x->list, kern, &count, NULL, 0,
					      NULL));
	return MTP_OK;
}

static enum mtp_status l0_alloc(struct mtp_backend *be, size_t bytes,
				void **ptr)
{
	struct l0_ctx *x = l0_ctx(be);
	ze_device_mem_alloc_desc_t d = {
		.stype = ZE_STRUCTURE_TYPE_DEVICE_MEM_ALLOC_DESC};

	*ptr = NULL;
	L0_ZE(be, "zeMemAllocDevice",
	      zeMemAllocDevice(x->context, &d, bytes, 64, x->device, ptr));
	return MTP_OK;
}

static void l0_free(struct mtp_backend *be, void *ptr)
{
	ze_result_t r = zeMemFree(l0_ctx(be)->context, ptr);

	if (r != ZE_RESULT_SUCCESS && !be->error[0]) /* the first one wins */
		mtp_l0_fail(be, MTP_ERR_DEVICE, "zeMemFree", r);
}

/* The list is synchronous: nothing still uses the memory. */
static enum mtp_status l0_release(struct mtp_backend *be, void *mem)
{
	L0_ZE(be, "zeMemFree", zeMemFree(l0_ctx(be)->context, mem));
	return MTP_OK;
}

static enum mtp_status l0_copy_buf(struct mtp_backend *be, struct gpu_buf dst,
				   struct gpu_buf src, size_t bytes)
{
	if (!bytes)
		return MTP_OK;
	L0_ZE(be, "zeCommandListAppendMemoryCopy",
	      zeCommandListAppendMemoryCopy(
		      l0_ctx(be)->list, (char *)dst.mem + dst.off,
		      (const char *)src.mem + src.off, bytes, NULL, 0, NULL));
	return MTP_OK;
}

static const struct ocl_dev_ops l0_dev_ops = {
	.run = l0_run,
	.alloc = l0_alloc,
	.release = l0_release,
	.copy = l0_copy_buf,
};

static void l0_close(struct mtp_backend *be)
{
	struct l0_ctx *x = l0_ctx(be);

	if (!x)
		return;
	mtp_gpu_scratch_release(be);
	for (int k = 0; k < OCL_K_COUNT; k++)
		if (x->kernels[k])
			zeKernelDestroy(x->kernels[k]);
	if (x->module)
		zeModuleDestroy(x->module);
	if (x->stamps)
		zeMemFree(x->context, x->stamps);
	if (x->list)
		zeCommandListDestroy(x->list);
	if (x->context)
		zeContextDestroy(x->context);
	free(x);
	be->ctx = NULL;
}

static enum mtp_status l0_open(struct mtp_backend *be)
{
	struct l0_ctx *x = calloc(1, sizeof(*x));

	if (!x)
		return mtp_backend_fail(be, MTP_ERR_NOMEM, "out of memory");
	x->dev.gpu.prims = &mtp_ocl_prims;
	x->dev.ops = &l0_dev_ops;
	be->ctx = x;
	if (mtp_l0_device_open(be, x) != MTP_OK) {
		l0_close(be);
		return MTP_ERR_UNAVAILABLE; /* be->error says why */
	}
	return MTP_OK;
}

/* A host copy through a staging buffer in host USM. */
static enum mtp_status stage_copy(struct mtp_backend *be, void *dst,
				  const void *src, size_t bytes, bool up)
{
	struct l0_ctx *x = l0_ctx(be);
	ze_host_mem_alloc_desc_t d = {
		.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};
	void *stage = NULL;
	ze_result_t r;

	L0_ZE(be, "zeMemAllocHost",
	      zeMemAllocHost(x->context, &d, bytes, 64, &stage));
	if (up)
		memcpy(stage, src, bytes);
	r = zeCommandListAppendMemoryCopy(x->list, up ? dst : stage,
					  up ? stage : src, bytes, NULL, 0,
					  NULL);
	if (r == ZE_RESULT_SUCCESS && !up)
		memcpy(dst, stage, bytes);
	zeMemFree(x->context, stage);
	L0_ZE(be, "zeCommandListAppendMemoryCopy", r);
	return MTP_OK;
}

static enum mtp_status l0_upload(struct mtp_backend *be, void *dst,
				 const void *src, size_t bytes)
{
	return stage_copy(be, dst, src, bytes, true);
}

static enum mtp_status l0_download(struct mtp_backend *be, void *dst,
				   const void *src, size_t bytes)
{
	return stage_copy(be, dst, src, bytes, false);
}

static enum mtp_status l0_copy(struct mtp_backend *be, void *dst,
			       const void *src, size_t bytes)
{
	struct gpu_buf d = {dst, 0}, s = {(void *)src, 0};

	return l0_copy_buf(be, d, s, bytes);
}

static enum mtp_status l0_timer_begin(struct mtp_backend *be)
{
	struct l0_ctx *x = l0_ctx(be);

	L0_ZE(be, "zeCommandListAppendWriteGlobalTimestamp",
	      zeCommandListAppendWriteGlobalTimestamp(x->list, &x->stamps[0],
						      NULL, 0, NULL));
	return MTP_OK;
}

static enum mtp_status l0_timer_end(struct mtp_backend *be, double *seconds)
{
	struct l0_ctx *x = l0_ctx(be);

	*seconds = 0.0;
	L0_ZE(be, "zeCommandListAppendWriteGlobalTimestamp",
	      zeCommandListAppendWriteGlobalTimestamp(x->list, &x->stamps[1],
						      NULL, 0, NULL));
	*seconds = mtp_ocl_span_seconds(x->stamps[0], x->stamps[1],
					x->stamp_bits, x->ns_per_tick);
	return MTP_OK;
}

static void l0_device_info(struct mtp_backend *be, char *buf, size_t n)
{
	snprintf(buf, n, "%s", l0_ctx(be)->info);
}

static const struct mtp_backend_iface l0_iface = {
	.api_version = MTP_BACKEND_API_VERSION,
	.opaque_buffers = true, /* guard zones not tried on a device yet */
	.name = "level_zero",
	.description = "OpenCL C kernels as SPIR-V through Level Zero (Intel "
		       "GPUs; bf16/fp16/fp32 activations, fp32 accumulation)",
	.open = l0_open,
	.close = l0_close,
	.alloc = l0_alloc,
	.free = l0_free,
	.upload = l0_upload,
	.download = l0_download,
	.supports = mtp_gpu_supports,
	.launch = mtp_gpu_launch,
	.timer_begin = l0_timer_begin,
	.timer_end = l0_timer_end,
	.device_info = l0_device_info,
	.copy = l0_copy,
};

__attribute__((visibility("default"))) const struct mtp_backend_iface *
mtp_backend_entry(void)
{
	return &l0_iface;
}
