/*
 * The opencl backend (module mtp_backend_opencl.so, loaded by the registry
 * with dlopen): the interface table, buffers and explicit copies on one
 * in-order queue, the platform half of the shared host layer (enqueue a
 * kernel, scratch, copy), timers from event profiling, and the device
 * description. The ops are composed by kernels/gpu/ over the primitives of
 * kernels.c (the OpenCL C kernels of this folder, which the level_zero
 * backend also runs).
 * Every cl* status is checked and named in be->error; no platform or
 * device is MTP_ERR_UNAVAILABLE with the reason.
 */
#include <stdio.h>
#include <stdlib.h>

#include "ocl_cl.h"

enum mtp_status mtp_ocl_fail_cl(struct mtp_backend *be, enum mtp_status st,
				const char *what, cl_int e)
{
	return mtp_backend_fail(be, st, "%s: %s (%d)", what,
				mtp_ocl_cl_error_name(e), (int)e);
}

/* Keeps the first and the last command of a timed span (ev is ours). */
static enum mtp_status track(struct mtp_backend *be, cl_event ev)
{
	struct ocl_ctx *x = ocl_ctx(be);

	if (!ev)
		return MTP_OK;
	if (!x->ev_first) {
		x->ev_first = ev;
		OCL_CL(be, "clRetainEvent", clRetainEvent(ev));
	}
	if (x->ev_last)
		OCL_CL(be, "clReleaseEvent", clReleaseEvent(x->ev_last));
	x->ev_last = ev;
	return MTP_OK;
}

static cl_int events_drop(struct ocl_ctx *x)
{
	cl_int e = CL_SUCCESS, e2 = CL_SUCCESS;

	if (x->ev_first)
		e = clReleaseEvent(x->ev_first);
	if (x->ev_last)
		e2 = clReleaseEvent(x->ev_last);
	x->ev_first = x->ev_last = NULL;
	return e ? e : e2;
}

static enum mtp_status ocl_run(struct mtp_backend *be, enum ocl_kernel k,
			       const struct ocl_flat_arg *a, int n,
			       const uint32_t groups[2], const uint32_t lws[2])
{
	struct ocl_ctx *x = ocl_ctx(be);
	cl_kernel kern = x->kernels[k];
	const size_t l[2] = {lws[0], lws[1]};
	const size_t g[2] = {(size_t)groups[0] * lws[0],
			     (size_t)groups[1] * lws[1]};
	cl_event ev = NULL;

	for (int i = 0; i < n; i++)
		OCL_CL(be, mtp_ocl_kernel_names[k],
		       clSetKernelArg(kern, (cl_uint)i, a[i].size, a[i].value));
	OCL_CL(be, mtp_ocl_kernel_names[k],
	       clEnqueueNDRangeKernel(x->queue, kern, 2, NULL, g, l, 0, NULL,
				      x->timing ? &ev : NULL));
	return track(be, ev);
}

static enum mtp_status ocl_alloc(struct mtp_backend *be, size_t bytes,
				 void **ptr)
{
	cl_int e;

	*ptr = clCreateBuffer(ocl_ctx(be)->context, CL_MEM_READ_WRITE, bytes,
			      NULL, &e);
	OCL_CL(be, "clCreateBuffer", e);
	return MTP_OK;
}

/* OpenCL keeps a released buffer until the commands using it finish. */
static enum mtp_status ocl_release(struct mtp_backend *be, void *mem)
{
	OCL_CL(be, "clReleaseMemObject", clReleaseMemObject((cl_mem)mem));
	return MTP_OK;
}

static enum mtp_status ocl_copy_buf(struct mtp_backend *be, struct gpu_buf dst,
				    struct gpu_buf src, size_t bytes)
{
	struct ocl_ctx *x = ocl_ctx(be);
	cl_event ev = NULL;

	if (!bytes)
		return MTP_OK;
	OCL_CL(be, "clEnqueueCopyBuffer",
	       clEnqueueCopyBuffer(x->queue, (cl_mem)src.mem, (cl_mem)dst.mem,
				   src.off, dst.off, bytes, 0, NULL,
				   x->timing ? &ev : NULL));
	return track(be, ev);
}

static const struct ocl_dev_ops ocl_dev_ops = {
	.run = ocl_run,
	.alloc = ocl_alloc,
	.release = ocl_release,
	.copy = ocl_copy_buf,
};

/* Records the first failure of a teardown call in be->error. */
static void note(struct mtp_backend *be, const char *what, cl_int e)
{
	if (e != CL_SUCCESS && !be->error[0])
		mtp_ocl_fail_cl(be, MTP_ERR_DEVICE, what, e);
}

static void ocl_close(struct mtp_backend *be)
{
	struct ocl_ctx *x = ocl_ctx(be);

	if (!x)
		return;
	if (x->queue)
		note(be, "clFinish", clFinish(x->queue));
	note(be, "clReleaseEvent", events_drop(x));
	mtp_gpu_scratch_release(be);
	for (int k = 0; k < OCL_K_COUNT; k++)
		if (x->kernels[k])
			note(be, "clReleaseKernel",
			     clReleaseKernel(x->kernels[k]));
	if (x->program)
		note(be, "clReleaseProgram", clReleaseProgram(x->program));
	if (x->queue)
		note(be, "clReleaseCommandQueue",
		     clReleaseCommandQueue(x->queue));
	if (x->context)
		note(be, "clReleaseContext", clReleaseContext(x->context));
	free(x->il_file);
	free(x);
	be->ctx = NULL;
}

static enum mtp_status ocl_open(struct mtp_backend *be)
{
	struct ocl_ctx *x = calloc(1, sizeof(*x));
	enum mtp_status st;

	if (!x)
		return mtp_backend_fail(be, MTP_ERR_NOMEM, "out of memory");
	x->dev.gpu.prims = &mtp_ocl_prims;
	x->dev.ops = &ocl_dev_ops;
	be->ctx = x;
	st = mtp_ocl_device_open(be, x);
	if (st) {
		ocl_close(be);
		/* be->error says why; INVALID: a malformed backend name */
		return st == MTP_ERR_INVALID ? st : MTP_ERR_UNAVAILABLE;
	}
	return MTP_OK;
}

static void ocl_free(struct mtp_backend *be, void *ptr)
{
	/* the first message wins */
	note(be, "clReleaseMemObject", clReleaseMemObject((cl_mem)ptr));
}

/* Blocking: the host buffer may be freed right after. */
static enum mtp_status ocl_upload(struct mtp_backend *be, void *dst,
				  const void *src, size_t bytes)
{
	OCL_CL(be, "clEnqueueWriteBuffer",
	       clEnqueueWriteBuffer(ocl_ctx(be)->queue, (cl_mem)dst, CL_TRUE, 0,
				    bytes, src, 0, NULL, NULL));
	return MTP_OK;
}

static enum mtp_status ocl_download(struct mtp_backend *be, void *dst,
				    const void *src, size_t bytes)
{
	OCL_CL(be, "clEnqueueReadBuffer",
	       clEnqueueReadBuffer(ocl_ctx(be)->queue, (cl_mem)src, CL_TRUE, 0,
				   bytes, dst, 0, NULL, NULL));
	return MTP_OK;
}

static enum mtp_status ocl_copy(struct mtp_backend *be, void *dst,
				const void *src, size_t bytes)
{
	struct gpu_buf d = {dst, 0}, s = {(void *)src, 0};

	return ocl_copy_buf(be, d, s, bytes);
}

static enum mtp_status ocl_synchronize(struct mtp_backend *be)
{
	OCL_CL(be, "clFinish", clFinish(ocl_ctx(be)->queue));
	return MTP_OK;
}

static enum mtp_status ocl_timer_begin(struct mtp_backend *be)
{
	struct ocl_ctx *x = ocl_ctx(be);

	x->timing = true;
	OCL_CL(be, "clReleaseEvent", events_drop(x));
	return MTP_OK;
}

/* From the start of the first command since timer_begin to the end of the
 * last (markers carry no reliable timestamps on every runtime). */
static enum mtp_status ocl_timer_end(struct mtp_backend *be, double *seconds)
{
	struct ocl_ctx *x = ocl_ctx(be);
	cl_ulong t0 = 0, t1 = 0;
	cl_int e = CL_SUCCESS;

	x->timing = false;
	*seconds = 0.0;
	if (!x->ev_last)
		return MTP_OK;
	e = clWaitForEvents(1, &x->ev_last);
	if (!e)
		e = clGetEventProfilingInfo(x->ev_first,
					    CL_PROFILING_COMMAND_START,
					    sizeof(t0), &t0, NULL);
	if (!e)
		e = clGetEventProfilingInfo(x->ev_last,
					    CL_PROFILING_COMMAND_END,
					    sizeof(t1), &t1, NULL);
	OCL_CL(be, "clGetEventProfilingInfo", e);
	OCL_CL(be, "clReleaseEvent", events_drop(x));
	*seconds = mtp_ocl_span_seconds(t0, t1, 64, 1.0);
	return MTP_OK;
}

static void ocl_device_info(struct mtp_backend *be, char *buf, size_t n)
{
	snprintf(buf, n, "%s", ocl_ctx(be)->info);
}

static const struct mtp_backend_iface ocl_iface = {
	.api_version = MTP_BACKEND_API_VERSION,
	.opaque_buffers = true, /* handles: no offsets, no guard zones */
	.name = "opencl",
	.description = "OpenCL C kernels through OpenCL (bf16/fp16/fp32 "
		       "activations, fp32 accumulation)",
	.open = ocl_open,
	.close = ocl_close,
	.alloc = ocl_alloc,
	.free = ocl_free,
	.upload = ocl_upload,
	.download = ocl_download,
	.supports = mtp_gpu_supports,
	.launch = mtp_gpu_launch,
	.synchronize = ocl_synchronize,
	.timer_begin = ocl_timer_begin,
	.timer_end = ocl_timer_end,
	.device_info = ocl_device_info,
	.copy = ocl_copy,
};

__attribute__((visibility("default"))) const struct mtp_backend_iface *
mtp_backend_entry(void)
{
	return &ocl_iface;
}
