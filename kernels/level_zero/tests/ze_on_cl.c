/*
 * A test stand-in for a Level Zero driver: the ze* calls that the
 * level_zero backend makes, implemented on an OpenCL device that takes
 * SPIR-V and has Intel's unified shared memory (Intel's CPU runtime in
 * CI). Preloaded (LD_PRELOAD) in front of the Level Zero loader, it lets
 * the real mtp_backend_level_zero.so run its module creation, argument
 * setting, group sizes, launches, copies, memory and timestamps on the
 * real SPIR-V:
 *   LD_PRELOAD=build/libmtp_ze_on_cl.so mtpcheck run --backend level_zero
 * It is not a driver: what it proves is that the backend's calls are made
 * in an order and with arguments that a driver with these semantics runs
 * correctly; Intel's GPU driver and compiler are still untested
 * (docs/BACKENDS.md). Immediate command lists are synchronous here.
 * Only what the backend uses is implemented; the rest is not exported.
 */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <level_zero/ze_api.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define EXPORT __attribute__((visibility("default")))
#define FAIL ZE_RESULT_ERROR_UNKNOWN

struct _ze_driver_handle_t {
	cl_platform_id platform;
	cl_device_id device;
	clHostMemAllocINTEL_fn host_alloc;
	clDeviceMemAllocINTEL_fn dev_alloc;
	clMemBlockingFreeINTEL_fn free;
	clGetMemAllocInfoINTEL_fn info;
	clSetKernelArgMemPointerINTEL_fn set_ptr;
	clEnqueueMemcpyINTEL_fn memcpy;
};
struct _ze_device_handle_t {
	int unused;
};
struct _ze_context_handle_t {
	cl_context cl;
	cl_command_queue queue;
};
struct _ze_command_list_handle_t {
	ze_context_handle_t ctx;
};
struct _ze_module_handle_t {
	cl_program program;
};
struct _ze_module_build_log_handle_t {
	char *text;
};
struct _ze_kernel_handle_t {
	ze_context_handle_t ctx;
	cl_kernel kernel;
	size_t lws[3];
};

static struct _ze_driver_handle_t drv;
static struct _ze_device_handle_t dev;

static int fn(const char *name, void **out)
{
	*out = clGetExtensionFunctionAddressForPlatform(drv.platform, name);
	return *out != NULL;
}

/* The first device whose platform has the USM functions and takes IL. */
static int find_device(void)
{
	cl_platform_id p[16];
	cl_uint n = 0;
	char il[128];

	if (clGetPlatformIDs(16, p, &n) != CL_SUCCESS)
		return 0;
	for (cl_uint i = 0; i < n && i < 16; i++) {
		drv.platform = p[i];
		if (clGetDeviceIDs(p[i], CL_DEVICE_TYPE_ALL, 1, &drv.device,
				   NULL) != CL_SUCCESS ||
		    clGetDeviceInfo(drv.device, CL_DEVICE_IL_VERSION,
				    sizeof(il), il, NULL) != CL_SUCCESS ||
		    !strstr(il, "SPIR-V"))
			continue;
		if (fn("clHostMemAllocINTEL", (void **)&drv.host_alloc) &&
		    fn("clDeviceMemAllocINTEL", (void **)&drv.dev_alloc) &&
		    fn("clMemBlockingFreeINTEL", (void **)&drv.free) &&
		    fn("clGetMemAllocInfoINTEL", (void **)&drv.info) &&
		    fn("clSetKernelArgMemPointerINTEL",
		       (void **)&drv.set_ptr) &&
		    fn("clEnqueueMemcpyINTEL", (void **)&drv.memcpy))
			return 1;
	}
	return 0;
}

EXPORT ze_result_t zeInit(ze_init_flags_t flags)
{
	(void)flags;
	return drv.device || find_device() ? ZE_RESULT_SUCCESS
					   : ZE_RESULT_ERROR_UNINITIALIZED;
}

EXPORT ze_result_t zeDriverGet(uint32_t *count, ze_driver_handle_t *out)
{
	if (*count && out)
		out[0] = &drv;
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeDeviceGet(ze_driver_handle_t d, uint32_t *count,
			       ze_device_handle_t *out)
{
	(void)d;
	if (*count && out)
		out[0] = &dev;
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeDeviceGetProperties(ze_device_handle_t d,
					 ze_device_properties_t *p)
{
	char name[ZE_MAX_DEVICE_NAME] = "";
	cl_uint cus = 1;

	(void)d;
	if (clGetDeviceInfo(drv.device, CL_DEVICE_NAME, sizeof(name) - 1, name,
			    NULL) ||
	    clGetDeviceInfo(drv.device, CL_DEVICE_MAX_COMPUTE_UNITS,
			    sizeof(cus), &cus, NULL))
		return FAIL;
	p->type = ZE_DEVICE_TYPE_CPU;
	p->vendorId = 0x8086;
	p->numSlices = 1;
	p->numSubslicesPerSlice = 1;
	p->numEUsPerSubslice = cus;
	p->timerResolution = 1;	    /* ns per tick */
	p->timestampValidBits = 40; /* narrower than 64, as on GPUs */
	snprintf(p->name, sizeof(p->name), "ze_on_cl: %s", name);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeDriverGetProperties(ze_driver_handle_t d,
					 ze_driver_properties_t *p)
{
	(void)d;
	p->driverVersion = 0;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t
zeDeviceGetCommandQueueGroupProperties(ze_device_handle_t d, uint32_t *count,
				       ze_command_queue_group_properties_t *g)
{
	(void)d;
	if (*count && g) {
		g[0].flags = ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COPY |
			     ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE;
		g[0].numQueues = 1;
	}
	*count = 1;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeContextCreate(ze_driver_handle_t d,
				   const ze_context_desc_t *desc,
				   ze_context_handle_t *out)
{
	ze_context_handle_t c = calloc(1, sizeof(*c));
	cl_int e = CL_SUCCESS;

	(void)d;
	(void)desc;
	if (!c)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	c->cl = clCreateContext(NULL, 1, &drv.device, NULL, NULL, &e);
	if (!e)
		c->queue = clCreateCommandQueueWithProperties(c->cl, drv.device,
							      NULL, &e);
	*out = c;
	return e ? FAIL : ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeContextDestroy(ze_context_handle_t c)
{
	if (c->queue)
		clReleaseCommandQueue(c->queue);
	if (c->cl)
		clReleaseContext(c->cl);
	free(c);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeCommandListCreateImmediate(
	ze_context_handle_t c, ze_device_handle_t d,
	const ze_command_queue_desc_t *q, ze_command_list_handle_t *out)
{
	(void)d;
	if (q->mode != ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	*out = calloc(1, sizeof(**out));
	if (!*out)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	(*out)->ctx = c;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeCommandListDestroy(ze_command_list_handle_t l)
{
	free(l);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeMemAllocHost(ze_context_handle_t c,
				  const ze_host_mem_alloc_desc_t *d, size_t n,
				  size_t align, void **out)
{
	cl_int e = CL_SUCCESS;

	(void)d;
	*out = drv.host_alloc(c->cl, NULL, n, (cl_uint)align, &e);
	return e || !*out ? ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY
			  : ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeMemAllocDevice(ze_context_handle_t c,
				    const ze_device_mem_alloc_desc_t *d,
				    size_t n, size_t align,
				    ze_device_handle_t device, void **out)
{
	cl_int e = CL_SUCCESS;

	(void)d;
	(void)device;
	*out = drv.dev_alloc(c->cl, drv.device, NULL, n, (cl_uint)align, &e);
	return e || !*out ? ZE_RESULT_ERROR_OUT_OF_DEVICE_MEMORY
			  : ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeMemFree(ze_context_handle_t c, void *p)
{
	return drv.free(c->cl, p) ? ZE_RESULT_ERROR_INVALID_ARGUMENT
				  : ZE_RESULT_SUCCESS;
}

/* Level Zero build flags as OpenCL build options: -ze-X becomes -cl-X for
 * the two that have one; the rest pass as they are. */
static void cl_options(const char *ze, char *out, size_t n)
{
	static const char *const map[][2] = {
		{"-ze-fp32-correctly-rounded-divide-sqrt",
		 "-cl-fp32-correctly-rounded-divide-sqrt"},
		{"-ze-opt-disable", "-cl-opt-disable"},
	};
	size_t used = 0;

	out[0] = 0;
	while (ze && *ze && used + 1 < n) {
		size_t len = strcspn(ze, " ");
		const char *word = ze;
		size_t wlen = len;

		for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
			if (strlen(map[i][0]) == len &&
			    strncmp(ze, map[i][0], len) == 0) {
				word = map[i][1];
				wlen = strlen(word);
			}
		used += (size_t)snprintf(out + used, n - used, "%.*s ",
					 (int)wlen, word);
		ze += len;
		ze += strspn(ze, " ");
	}
}

/* The program's build log as a Level Zero build log. */
static ze_module_build_log_handle_t make_log(cl_program p)
{
	ze_module_build_log_handle_t l = calloc(1, sizeof(*l));
	size_t n = 0;

	if (!l)
		return NULL;
	if (p && clGetProgramBuildInfo(p, drv.device, CL_PROGRAM_BUILD_LOG, 0,
				       NULL, &n) == CL_SUCCESS)
		l->text = calloc(1, n + 1);
	if (l->text)
		clGetProgramBuildInfo(p, drv.device, CL_PROGRAM_BUILD_LOG, n,
				      l->text, NULL);
	return l;
}

EXPORT ze_result_t zeModuleCreate(ze_context_handle_t c, ze_device_handle_t d,
				  const ze_module_desc_t *desc,
				  ze_module_handle_t *out,
				  ze_module_build_log_handle_t *log)
{
	ze_module_handle_t m = calloc(1, sizeof(*m));
	cl_int e = CL_SUCCESS;
	char opts[512];

	(void)d;
	cl_options(desc->pBuildFlags, opts, sizeof(opts));
	if (!m)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	if (desc->format != ZE_MODULE_FORMAT_IL_SPIRV)
		e = CL_INVALID_VALUE;
	if (!e)
		m->program = clCreateProgramWithIL(c->cl, desc->pInputModule,
						   desc->inputSize, &e);
	if (!e)
		e = clBuildProgram(m->program, 1, &drv.device, opts, NULL,
				   NULL);
	if (log)
		*log = make_log(m->program);
	*out = m;
	return e ? ZE_RESULT_ERROR_MODULE_BUILD_FAILURE : ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeModuleDestroy(ze_module_handle_t m)
{
	if (m->program)
		clReleaseProgram(m->program);
	free(m);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeModuleBuildLogGetString(ze_module_build_log_handle_t l,
					     size_t *size, char *text)
{
	const char *s = l->text ? l->text : "";

	if (text)
		snprintf(text, *size, "%s", s);
	*size = strlen(s) + 1;
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeModuleBuildLogDestroy(ze_module_build_log_handle_t l)
{
	free(l->text);
	free(l);
	return ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeKernelCreate(ze_module_handle_t m,
				  const ze_kernel_desc_t *desc,
				  ze_kernel_handle_t *out)
{
	ze_kernel_handle_t k = calloc(1, sizeof(*k));
	cl_int e = CL_SUCCESS;

	if (!k)
		return ZE_RESULT_ERROR_OUT_OF_HOST_MEMORY;
	k->kernel = clCreateKernel(m->program, desc->pKernelName, &e);
	*out = k;
	return e ? ZE_RESULT_ERROR_INVALID_KERNEL_NAME : ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeKernelDestroy(ze_kernel_handle_t k)
{
	if (k->kernel)
		clReleaseKernel(k->kernel);
	free(k);
	return ZE_RESULT_SUCCESS;
}

/* A pointer-sized value that is a USM allocation goes in as a pointer;
 * a NULL value is a NULL pointer or local memory, as in OpenCL. */
EXPORT ze_result_t zeKernelSetArgumentValue(ze_kernel_handle_t k, uint32_t i,
					    size_t size, const void *value)
{
	cl_unified_shared_memory_type_intel type = CL_MEM_TYPE_UNKNOWN_INTEL;
	cl_context ctx = NULL;
	void *p = NULL;

	if (value && size == sizeof(void *)) {
		memcpy(&p, value, sizeof(p));
		if (clGetKernelInfo(k->kernel, CL_KERNEL_CONTEXT, sizeof(ctx),
				    &ctx, NULL) == CL_SUCCESS &&
		    p)
			drv.info(ctx, p, CL_MEM_ALLOC_TYPE_INTEL, sizeof(type),
				 &type, NULL);
	}
	if (type != CL_MEM_TYPE_UNKNOWN_INTEL)
		return drv.set_ptr(k->kernel, i, p)
			       ? ZE_RESULT_ERROR_INVALID_ARGUMENT
			       : ZE_RESULT_SUCCESS;
	return clSetKernelArg(k->kernel, i, size, value)
		       ? ZE_RESULT_ERROR_INVALID_KERNEL_ARGUMENT_SIZE
		       : ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeKernelSetGroupSize(ze_kernel_handle_t k, uint32_t x,
					uint32_t y, uint32_t z)
{
	k->lws[0] = x;
	k->lws[1] = y;
	k->lws[2] = z;
	return x && y && z ? ZE_RESULT_SUCCESS
			   : ZE_RESULT_ERROR_INVALID_GROUP_SIZE_DIMENSION;
}

/* Synchronous: the command has finished when the call returns. */
static ze_result_t finish(ze_command_list_handle_t l, cl_int e)
{
	if (!e)
		e = clFinish(l->ctx->queue);
	return e ? FAIL : ZE_RESULT_SUCCESS;
}

EXPORT ze_result_t zeCommandListAppendLaunchKernel(ze_command_list_handle_t l,
						   ze_kernel_handle_t k,
						   const ze_group_count_t *g,
						   ze_event_handle_t signal,
						   uint32_t nwait,
						   ze_event_handle_t *wait)
{
	const size_t gws[3] = {g->groupCountX * k->lws[0],
			       g->groupCountY * k->lws[1],
			       g->groupCountZ * k->lws[2]};

	if (signal || nwait || wait)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	return finish(l,
		      clEnqueueNDRangeKernel(l->ctx->queue, k->kernel, 3, NULL,
					     gws, k->lws, 0, NULL, NULL));
}

EXPORT ze_result_t zeCommandListAppendMemoryCopy(ze_command_list_handle_t l,
						 void *dst, const void *src,
						 size_t n, ze_event_handle_t s,
						 uint32_t nwait,
						 ze_event_handle_t *wait)
{
	if (s || nwait || wait)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	return finish(l, drv.memcpy(l->ctx->queue, CL_TRUE, dst, src, n, 0,
				    NULL, NULL));
}

/* Nanoseconds of the monotonic clock, on a 40-bit counter like the
 * device's (the backend must handle its wrap). */
EXPORT ze_result_t zeCommandListAppendWriteGlobalTimestamp(
	ze_command_list_handle_t l, uint64_t *dst, ze_event_handle_t s,
	uint32_t nwait, ze_event_handle_t *wait)
{
	struct timespec ts;

	if (s || nwait || wait)
		return ZE_RESULT_ERROR_UNSUPPORTED_FEATURE;
	if (finish(l, CL_SUCCESS) != ZE_RESULT_SUCCESS ||
	    clock_gettime(CLOCK_MONOTONIC, &ts))
		return FAIL;
	*dst = ((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec) &
	       ((1ull << 40) - 1);
	return ZE_RESULT_SUCCESS;
}
