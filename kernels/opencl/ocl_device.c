/*
 * Platform and device discovery of the opencl backend. Several runtimes
 * may be installed at once (CI has PoCL and Intel's CPU runtime): a
 * platform is picked by a part of its name or vendor (`opencl@intel`,
 * $MTP_OPENCL_PLATFORM), then a device of the platforms kept, GPUs first
 * ($MTP_OPENCL_DEVICE=N picks the N-th of that list). `opencl:spirv` keeps
 * only the devices that take SPIR-V (PoCL 3.1 takes none). Every cl* call
 * is checked; no platform or device is MTP_ERR_UNAVAILABLE with the names
 * of the platforms there are.
 */
#include <ctype.h>
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_cl.h"

#define MAX_PLATFORMS 16
#define MAX_DEVICES 64
#define OCL_DEVICE_IL_VERSION 0x105B /* CL_DEVICE_IL_VERSION(_KHR), 2.1 */

struct dev_list {
	int n;
	cl_platform_id p[MAX_DEVICES];
	cl_device_id d[MAX_DEVICES];
	bool gpu[MAX_DEVICES];
	char seen[256];	  /* the platforms there are, for messages */
	cl_int first_err; /* of a platform or device query */
	const char *first_what;
};

static void note_err(struct dev_list *l, const char *what, cl_int e)
{
	if (e != CL_SUCCESS && l->first_err == CL_SUCCESS) {
		l->first_err = e;
		l->first_what = what;
	}
}

/* Whether hay contains needle, in any case. */
static bool contains_nocase(const char *hay, const char *needle)
{
	size_t n = strlen(needle);

	for (; *hay; hay++) {
		size_t i = 0;

		while (i < n && hay[i] &&
		       tolower((unsigned char)hay[i]) ==
			       tolower((unsigned char)needle[i]))
			i++;
		if (i == n)
			return true;
	}
	return n == 0;
}

bool mtp_ocl_device_takes_spirv(cl_device_id d)
{
	char il[256] = "";

	return clGetDeviceInfo(d, OCL_DEVICE_IL_VERSION, sizeof(il) - 1, il,
			       NULL) == CL_SUCCESS &&
	       strstr(il, "SPIR-V") != NULL;
}

/* Whether platform p is the one asked for; adds its name to l->seen. */
static bool platform_wanted(struct dev_list *l, cl_platform_id p,
			    const char *want)
{
	char name[128] = "", vendor[128] = "";
	size_t used = strlen(l->seen);
	cl_int e = clGetPlatformInfo(p, CL_PLATFORM_NAME, sizeof(name) - 1,
				     name, NULL);

	if (!e)
		e = clGetPlatformInfo(p, CL_PLATFORM_VENDOR, sizeof(vendor) - 1,
				      vendor, NULL);
	note_err(l, "clGetPlatformInfo", e);
	if (e)
		return false;
	snprintf(l->seen + used, sizeof(l->seen) - used, "%s%s",
		 used ? "; " : "", name);
	return contains_nocase(name, want) || contains_nocase(vendor, want);
}

/* Appends the devices of platform p (with spirv, those that take it). */
static void list_add(struct dev_list *l, cl_platform_id p, bool spirv)
{
	cl_device_id ids[MAX_DEVICES];
	cl_uint n = 0;
	cl_int e = clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, MAX_DEVICES, ids, &n);

	if (e == CL_DEVICE_NOT_FOUND)
		return;
	note_err(l, "clGetDeviceIDs", e);
	for (cl_uint i = 0; !e && i < n && i < MAX_DEVICES; i++) {
		cl_device_type type = 0;
		cl_int e2 = clGetDeviceInfo(ids[i], CL_DEVICE_TYPE,
					    sizeof(type), &type, NULL);

		note_err(l, "clGetDeviceInfo", e2);
		if (e2 || l->n == MAX_DEVICES ||
		    (spirv && !mtp_ocl_device_takes_spirv(ids[i])))
			continue;
		l->p[l->n] = p;
		l->gpu[l->n] = (type & CL_DEVICE_TYPE_GPU) != 0;
		l->d[l->n++] = ids[i];
	}
}

static enum mtp_status no_device(struct mtp_backend *be, struct ocl_ctx *x,
				 const struct dev_list *l, int kept)
{
	char why[160] = "";

	if (l->first_err)
		snprintf(why, sizeof(why), "; %s: %s", l->first_what,
			 mtp_ocl_cl_error_name(l->first_err));
	if (kept == 0)
		return mtp_backend_fail(
			be, MTP_ERR_UNAVAILABLE,
			"no OpenCL platform matches '%s' (platforms: %s)%s",
			x->want_platform, l->seen, why);
	return mtp_backend_fail(
		be, MTP_ERR_UNAVAILABLE,
		"no OpenCL device%s on the %d platform(s) matching '%s' "
		"(platforms: %s)%s",
		x->spirv ? " that takes SPIR-V (PoCL 3.1 takes none; Intel's "
			   "runtime does)"
			 : "",
		kept, x->want_platform, l->seen, why);
}

static enum mtp_status pick_device(struct mtp_backend *be, struct ocl_ctx *x)
{
	cl_platform_id plats[MAX_PLATFORMS];
	cl_uint np = 0;
	cl_int e = clGetPlatformIDs(MAX_PLATFORMS, plats, &np);
	struct dev_list l = {0};
	int kept = 0, pick = 0;

	if (e != CL_SUCCESS || np == 0)
		return mtp_backend_fail(
			be, MTP_ERR_UNAVAILABLE,
			"no OpenCL platform (clGetPlatformIDs: %s, %u "
			"platforms; install an ICD such as pocl-opencl-icd or "
			"the vendor's driver)",
			e ? mtp_ocl_cl_error_name(e) : "CL_SUCCESS", np);
	for (cl_uint i = 0; i < np && i < MAX_PLATFORMS; i++) {
		if (!platform_wanted(&l, plats[i], x->want_platform))
			continue;
		kept++;
		list_add(&l, plats[i], x->spirv);
	}
	if (l.n == 0)
		return no_device(be, x, &l, kept);
	OCL_TRY(mtp_ocl_pick(be, l.gpu, l.n, "MTP_OPENCL_DEVICE", "OpenCL",
			     &pick));
	x->platform = l.p[pick];
	x->device = l.d[pick];
	return MTP_OK;
}

/* A string property of the device, checked. */
static enum mtp_status dev_str(struct mtp_backend *be, struct ocl_ctx *x,
			       cl_device_info what, char *buf, size_t n)
{
	buf[0] = 0;
	OCL_CL(be, "clGetDeviceInfo",
	       clGetDeviceInfo(x->device, what, n - 1, buf, NULL));
	buf[n - 1] = 0;
	return MTP_OK;
}

/* "name (GPU, platform, OpenCL version, driver D, N CUs, G GiB)". */
static enum mtp_status describe(struct mtp_backend *be, struct ocl_ctx *x)
{
	char name[128], plat[128] = "", ver[128], drv[64];
	cl_device_type type = 0;
	cl_uint cus = 0;
	cl_ulong mem = 0;

	OCL_TRY(dev_str(be, x, CL_DEVICE_NAME, name, sizeof(name)));
	OCL_TRY(dev_str(be, x, CL_DEVICE_VERSION, ver, sizeof(ver)));
	OCL_TRY(dev_str(be, x, CL_DRIVER_VERSION, drv, sizeof(drv)));
	OCL_CL(be, "clGetDeviceInfo",
	       clGetDeviceInfo(x->device, CL_DEVICE_TYPE, sizeof(type), &type,
			       NULL));
	OCL_CL(be, "clGetDeviceInfo",
	       clGetDeviceInfo(x->device, CL_DEVICE_MAX_COMPUTE_UNITS,
			       sizeof(cus), &cus, NULL));
	OCL_CL(be, "clGetDeviceInfo",
	       clGetDeviceInfo(x->device, CL_DEVICE_GLOBAL_MEM_SIZE,
			       sizeof(mem), &mem, NULL));
	OCL_CL(be, "clGetPlatformInfo",
	       clGetPlatformInfo(x->platform, CL_PLATFORM_NAME,
				 sizeof(plat) - 1, plat, NULL));
	snprintf(x->info, sizeof(x->info),
		 "%s (%s, %s, %s, driver %s, %u compute units, %.1f GiB)", name,
		 type & CL_DEVICE_TYPE_GPU   ? "GPU"
		 : type & CL_DEVICE_TYPE_CPU ? "CPU"
					     : "other",
		 plat, ver, drv, cus, (double)mem / (1024.0 * 1024.0 * 1024.0));
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
	OCL_TRY(mtp_ocl_parse_name(be, x));
	OCL_TRY(pick_device(be, x));
	OCL_TRY(describe(be, x));
	x->context = clCreateContext(NULL, 1, &x->device, NULL, NULL, &e);
	OCL_CL(be, "clCreateContext", e);
	x->queue = clCreateCommandQueue(x->context, x->device,
					CL_QUEUE_PROFILING_ENABLE, &e);
	OCL_CL(be, "clCreateCommandQueue", e);
	return mtp_ocl_build_program(be, x);
}
