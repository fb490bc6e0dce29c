/*
 * Device discovery and the program of the opencl backend. GPUs come first
 * in the device list (a CPU runtime such as PoCL is the fallback, which is
 * what CI has); $MTP_OPENCL_DEVICE=N picks the N-th device of that list.
 * The program is built once at open() from the embedded OpenCL C source
 * (PoCL 3.1 takes source, not SPIR-V), with correctly rounded float32
 * divide and sqrt where the device offers them.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_cl.h"

#define MAX_PLATFORMS 16
#define MAX_DEVICES 64

struct dev_list {
	int n;
	cl_platform_id p[MAX_DEVICES];
	cl_device_id d[MAX_DEVICES];
};

/* Appends the devices of platform p whose type is (gpu) or is not a GPU. */
static void list_add(struct dev_list *l, cl_platform_id p, bool gpu)
{
	cl_device_id ids[MAX_DEVICES];
	cl_uint n = 0;

	if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &n) !=
	    CL_SUCCESS)
		return;
	for (cl_uint i = 0; i < n && l->n < MAX_DEVICES; i++) {
		cl_device_type type = 0;

		clGetDeviceInfo(ids[i], CL_DEVICE_TYPE, sizeof(type), &type,
				NULL);
		if (((type & CL_DEVICE_TYPE_GPU) != 0) == gpu) {
			l->p[l->n] = p;
			l->d[l->n++] = ids[i];
		}
	}
}

static enum mtp_status pick_device(struct mtp_backend *be, struct ocl_ctx *x)
{
	cl_platform_id plats[MAX_PLATFORMS];
	cl_uint np = 0;
	cl_int e = clGetPlatformIDs(MAX_PLATFORMS, plats, &np);
	const char *env = getenv("MTP_OPENCL_DEVICE");
	struct dev_list l = {0};
	int pick = env && *env ? atoi(env) : 0;

	if (e != CL_SUCCESS || np == 0)
		return mtp_backend_fail(
			be, MTP_ERR_UNAVAILABLE,
			"no OpenCL platform (clGetPlatformIDs: %s, %u "
			"platforms; install an ICD such as pocl-opencl-icd or "
			"the vendor's driver)",
			e ? mtp_ocl_cl_error_name(e) : "CL_SUCCESS", np);
	for (int gpu = 1; gpu >= 0; gpu--)
		for (cl_uint i = 0; i < np && i < MAX_PLATFORMS; i++)
			list_add(&l, plats[i], gpu);
	if (l.n == 0)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"no OpenCL device on %u platform(s)",
					np);
	if (pick < 0 || pick >= l.n)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"MTP_OPENCL_DEVICE=%s: %d device(s)",
					env, l.n);
	x->platform = l.p[pick];
	x->device = l.d[pick];
	return MTP_OK;
}

/* "name (GPU, platform, OpenCL version, driver D, N CUs, G GiB)". */
static void describe(struct ocl_ctx *x)
{
	char name[128] = "", plat[128] = "", ver[128] = "", drv[64] = "";
	cl_device_type type = 0;
	cl_uint cus = 0;
	cl_ulong mem = 0;

	clGetDeviceInfo(x->device, CL_DEVICE_NAME, sizeof(name) - 1, name,
			NULL);
	clGetDeviceInfo(x->device, CL_DEVICE_VERSION, sizeof(ver) - 1, ver,
			NULL);
	clGetDeviceInfo(x->device, CL_DRIVER_VERSION, sizeof(drv) - 1, drv,
			NULL);
	clGetDeviceInfo(x->device, CL_DEVICE_TYPE, sizeof(type), &type, NULL);
	clGetDeviceInfo(x->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cus),
			&cus, NULL);
	clGetDeviceInfo(x->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem,
			NULL);
	clGetPlatformInfo(x->platform, CL_PLATFORM_NAME, sizeof(plat) - 1, plat,
			  NULL);
	snprintf(x->info, sizeof(x->info),
		 "%s (%s, %s, %s, driver %s, %u compute units, %.1f GiB)", name,
		 type & CL_DEVICE_TYPE_GPU   ? "GPU"
		 : type & CL_DEVICE_TYPE_CPU ? "CPU"
					     : "other",
		 plat, ver, drv, cus, (double)mem / (1024.0 * 1024.0 * 1024.0));
}

/* Puts the start of the build log after be->error's message. */
static void append_log(struct mtp_backend *be, struct ocl_ctx *x)
{
	char log[2048] = "";
	size_t used = strlen(be->error);

	clGetProgramBuildInfo(x->program, x->device, CL_PROGRAM_BUILD_LOG,
			      sizeof(log) - 1, log, NULL);
	for (char *p = log; *p; p++)
		if (*p == '\n')
			*p = ' ';
	snprintf(be->error + used, sizeof(be->error) - used, ": %s", log);
}

static enum mtp_status build_program(struct mtp_backend *be, struct ocl_ctx *x)
{
	const char *src = (const char *)mtp_ocl_source;
	const size_t len = mtp_ocl_source_len;
	cl_device_fp_config fp = 0;
	const char *opts;
	cl_int e;

	x->program = clCreateProgramWithSource(x->context, 1, &src, &len, &e);
	OCL_CL(be, "clCreateProgramWithSource", e);
	clGetDeviceInfo(x->device, CL_DEVICE_SINGLE_FP_CONFIG, sizeof(fp), &fp,
			NULL);
	opts = fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT
		       ? "-cl-std=CL1.2 -cl-fp32-correctly-rounded-divide-sqrt"
		       : "-cl-std=CL1.2";
	e = clBuildProgram(x->program, 1, &x->device, opts, NULL, NULL);
	if (e != CL_SUCCESS) {
		mtp_ocl_fail_cl(be, MTP_ERR_DEVICE, "clBuildProgram", e);
		append_log(be, x);
		return MTP_ERR_DEVICE;
	}
	for (int k = 0; k < OCL_K_COUNT; k++) {
		x->kernels[k] =
			clCreateKernel(x->program, mtp_ocl_kernel_names[k], &e);
		OCL_CL(be, mtp_ocl_kernel_names[k], e);
	}
	return MTP_OK;
}

/*
 * Keeps the ICD loader (and so the vendor runtime it loaded) mapped after
 * this module is unloaded: neither is made to be unloaded (PoCL keeps
 * worker threads and process-wide state), and unmapping them made that
 * state look leaked under LeakSanitizer. RTLD_NOLOAD: only the copy this
 * module already uses.
 */
static void pin_icd_loader(void)
{
	(void)dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
}

enum mtp_status mtp_ocl_device_open(struct mtp_backend *be, struct ocl_ctx *x)
{
	cl_int e;

	pin_icd_loader();
	OCL_TRY(pick_device(be, x));
	describe(x);
	x->context = clCreateContext(NULL, 1, &x->device, NULL, NULL, &e);
	OCL_CL(be, "clCreateContext", e);
	x->queue = clCreateCommandQueue(x->context, x->device,
					CL_QUEUE_PROFILING_ENABLE, &e);
	OCL_CL(be, "clCreateCommandQueue", e);
	return build_program(be, x);
}
