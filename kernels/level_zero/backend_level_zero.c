/*
 * The level_zero backend (module mtp_backend_level_zero.so, loaded by the
 * registry with dlopen): the same OpenCL C kernels as the opencl backend,
 * compiled to SPIR-V at build time and run through Level Zero on Intel
 * GPUs. This file is the interface table, device memory and explicit
 * copies, the platform half of the shared host layer (enqueue a kernel,
 * scratch, copy) and the device timers; the ops themselves are the opencl
 * backend's host code (kernels/opencl/ops.c, block.c, step.c).
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

static ze_result_t set_arg(ze_kernel_handle_t k, uint32_t *i,
			   const struct ocl_arg *a)
{
	switch (a->kind) {
	case OCL_A_BUF: {
		void *p = a->v.b.mem; /* NULL: a NULL pointer in the kernel */
		int64_t off = (int64_t)a->v.b.off;
		ze_result_t r =
			zeKernelSetArgumentValue(k, (*i)++, sizeof(p), &p);

		return r ? r
			 : zeKernelSetArgumentValue(k, (*i)++, sizeof(off),
						    &off);
	}
	case OCL_A_I32:
		return zeKernelSetArgumentValue(k, (*i)++, sizeof(a->v.i),
						&a->v.i);
	case OCL_A_I64:
		return zeKernelSetArgumentValue(k, (*i)++, sizeof(a->v.l),
						&a->v.l);
	case OCL_A_LOCAL: /* a size and no value: local memory */
		return zeKernelSetArgumentValue(k, (*i)++, a->v.local, NULL);
	default:
		return zeKernelSetArgumentValue(k, (*i)++, sizeof(a->v.f),
						&a->v.f);
	}
}

static enum mtp_status l0_run(struct mtp_backend *be, enum ocl_kernel k,
			      const struct ocl_arg *a, int n,
			      const size_t gws[2], const size_t lws[2])
{
	struct l0_ctx *x = l0_ctx(be);
	ze_kernel_handle_t kern = x->kernels[k];
	const ze_group_count_t groups = {(uint32_t)(gws[0] / lws[0]),
					 (uint32_t)(gws[1] / lws[1]), 1};
	uint32_t idx = 0;

	if (gws[0] / lws[0] > UINT32_MAX || gws[1] / lws[1] > UINT32_MAX)
		return mtp_backend_fail(be, MTP_ERR_LIMIT,
					"%s: more than 2^32 work-groups",
					mtp_ocl_kernel_names[k]);
	for (int i = 0; i < n; i++)
		L0_ZE(be, mtp_ocl_kernel_names[k], set_arg(kern, &idx, &a[i]));
	L0_ZE(be, "zeKernelSetGroupSize",
	      zeKernelSetGroupSize(kern, (uint32_t)lws[0], (uint32_t)lws[1],
				   1));
	L0_ZE(be, mtp_ocl_kernel_names[k],
	      zeCommandListAppendLaunchKernel(x->list, kern, &groups, NULL, 0,
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

static enum mtp_status l0_scratch(struct mtp_backend *be, size_t bytes,
				  struct ocl_buf *out)
{
	struct l0_ctx *x = l0_ctx(be);

	out->mem = NULL;
	out->off = 0;
	if (!bytes)
		return MTP_OK;
	if (x->n_scratch == L0_SCRATCH_MAX)
		return mtp_backend_fail(
			be, MTP_ERR_LIMIT,
			"more than %d scratch buffers in one call",
			L0_SCRATCH_MAX);
	OCL_TRY(l0_alloc(be, bytes, &out->mem));
	x->scratch[x->n_scratch++] = out->mem;
	return MTP_OK;
}

/* The list is synchronous: nothing still uses the scratch. */
static enum mtp_status l0_scratch_release(struct mtp_backend *be)
{
	struct l0_ctx *x = l0_ctx(be);
	ze_result_t first = ZE_RESULT_SUCCESS;

	while (x->n_scratch > 0) {
		ze_result_t r =
			zeMemFree(x->context, x->scratch[--x->n_scratch]);

		if (first == ZE_RESULT_SUCCESS)
			first = r;
	}
	L0_ZE(be, "zeMemFree (scratch)", first);
	return MTP_OK;
}

static enum mtp_status l0_copy_buf(struct mtp_backend *be, struct ocl_buf dst,
				   struct ocl_buf src, size_t bytes)
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
	.scratch = l0_scratch,
	.scratch_release = l0_scratch_release,
	.copy = l0_copy_buf,
};

static void l0_close(struct mtp_backend *be)
{
	struct l0_ctx *x = l0_ctx(be);

	if (!x)
		return;
	l0_scratch_release(be);
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
	struct ocl_buf d = {dst, 0}, s = {(void *)src, 0};

	return l0_copy_buf(be, d, s, bytes);
}

static bool l0_supports(struct mtp_backend *be, const struct mtp_call *c)
{
	(void)be;
	return mtp_ocl_supports(c);
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
	uint64_t ticks;

	L0_ZE(be, "zeCommandListAppendWriteGlobalTimestamp",
	      zeCommandListAppendWriteGlobalTimestamp(x->list, &x->stamps[1],
						      NULL, 0, NULL));
	ticks = (x->stamps[1] - x->stamps[0]) & x->stamp_mask;
	*seconds = (double)ticks * x->ns_per_tick * 1e-9;
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
	.supports = l0_supports,
	.launch = mtp_ocl_launch,
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
