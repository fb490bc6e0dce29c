/*
 * The program of the opencl backend and the name that chooses it:
 *   opencl          the embedded OpenCL C source, built at open() (PoCL 3.1
 *                   takes only source);
 *   opencl:spirv    the embedded SPIR-V module, byte for byte the one the
 *                   level_zero backend submits (clCreateProgramWithIL);
 *   opencl:spirv=F  the SPIR-V module in file F (to compare builds);
 * each optionally followed by @PLATFORM (a part of the platform's name or
 * vendor, any case; else $MTP_OPENCL_PLATFORM). The device line ends with
 * where the program came from, the SPIR-V with its size and hash.
 * Float32 divide and sqrt are correctly rounded where the device offers it;
 * $MTP_OPENCL_BUILD_FLAGS replaces these build options.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ocl_cl.h"

#define IL_FILE_MAX (64u << 20)

static enum mtp_status bad_name(struct mtp_backend *be, const char *why)
{
	return mtp_backend_fail(
		be, MTP_ERR_INVALID,
		"%s (opencl, opencl:source, opencl:spirv or "
		"opencl:spirv=FILE.spv, each optionally @PLATFORM)",
		why);
}

/* Reads spirv_path whole and checks that it is SPIR-V. */
static enum mtp_status read_il(struct mtp_backend *be, struct ocl_ctx *x)
{
	FILE *f = fopen(x->spirv_path, "rb");
	long n = -1;

	if (f && fseek(f, 0, SEEK_END) == 0)
		n = ftell(f);
	if (!f || n < 0 || fseek(f, 0, SEEK_SET) != 0) {
		int err = errno;

		if (f)
			fclose(f);
		return mtp_backend_fail(be, MTP_ERR_INVALID, "%s: %s",
					x->spirv_path, strerror(err));
	}
	x->il_file = n > 0 && (unsigned long)n <= IL_FILE_MAX
			     ? malloc((size_t)n)
			     : NULL;
	if (x->il_file)
		x->il_file_len = fread(x->il_file, 1, (size_t)n, f);
	fclose(f);
	if (!x->il_file || x->il_file_len != (size_t)n ||
	    !mtp_ocl_spirv_magic(x->il_file, x->il_file_len))
		return mtp_backend_fail(
			be, MTP_ERR_INVALID,
			"%s: not a SPIR-V module (%ld bytes; expected the "
			"magic number 0x07230203, at most %u MiB)",
			x->spirv_path, n, IL_FILE_MAX >> 20);
	return MTP_OK;
}

enum mtp_status mtp_ocl_parse_name(struct mtp_backend *be, struct ocl_ctx *x)
{
	const char *rest = be->name, *at, *env = getenv("MTP_OPENCL_PLATFORM");
	size_t len;

	if (strncmp(rest, "opencl", 6) == 0)
		rest += 6;
	else if (strchr(rest, ':') || strchr(rest, '@'))
		return bad_name(be, "not an opencl name");
	else
		rest = ""; /* --backend-lib under another name */
	at = strrchr(rest, '@');
	len = at ? (size_t)(at - rest) : strlen(rest);
	if (at && !at[1])
		return bad_name(be, "nothing after '@'");
	snprintf(x->want_platform, sizeof(x->want_platform), "%s",
		 at    ? at + 1
		 : env ? env
		       : "");
	if (len == 0 || (len == 7 && strncmp(rest, ":source", 7) == 0))
		return MTP_OK;
	if (len == 6 && strncmp(rest, ":spirv", 6) == 0) {
		x->spirv = true;
		return MTP_OK;
	}
	if (len > 7 && strncmp(rest, ":spirv=", 7) == 0) {
		if (len - 7 >= sizeof(x->spirv_path))
			return bad_name(be, "the SPIR-V path is too long");
		x->spirv = true;
		memcpy(x->spirv_path, rest + 7, len - 7);
		x->spirv_path[len - 7] = 0;
		return read_il(be, x);
	}
	return bad_name(be, "unknown variant");
}

typedef cl_program (*il_fn)(cl_context, const void *, size_t, cl_int *);

/* clCreateProgramWithIL (OpenCL 2.1) of the loader, or the extension's
 * clCreateProgramWithILKHR on an older platform: looked up at run time so
 * that the module still loads with a 1.2 loader. */
static il_fn il_entry(struct ocl_ctx *x)
{
	char ver[64] = "";
	int major = 0, minor = 0;
	il_fn f = NULL;

	if (clGetPlatformInfo(x->platform, CL_PLATFORM_VERSION, sizeof(ver) - 1,
			      ver, NULL) == CL_SUCCESS &&
	    sscanf(ver, "OpenCL %d.%d", &major, &minor) == 2 &&
	    major * 10 + minor >= 21) {
		void *h = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_NOLOAD);

		if (h) {
			*(void **)&f = dlsym(h, "clCreateProgramWithIL");
			dlclose(h);
		}
	}
	if (!f)
		*(void **)&f = clGetExtensionFunctionAddressForPlatform(
			x->platform, "clCreateProgramWithILKHR");
	return f;
}

/* The program from SPIR-V; appends its identity to x->info. */
static enum mtp_status create_from_il(struct mtp_backend *be, struct ocl_ctx *x)
{
	const unsigned char *il = x->il_file ? x->il_file : mtp_ocl_spirv;
	size_t n = x->il_file ? x->il_file_len : mtp_ocl_spirv_len;
	char id[320], origin[300];
	il_fn create = il_entry(x);
	size_t used = strlen(x->info);
	cl_int e = CL_SUCCESS;

	if (n == 0)
		return mtp_backend_fail(
			be, MTP_ERR_UNAVAILABLE,
			"this build has no SPIR-V of the kernels (configured "
			"without clang-14, llvm-spirv-14 or spirv-val)");
	if (!create)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"the OpenCL loader has neither "
					"clCreateProgramWithIL nor "
					"clCreateProgramWithILKHR");
	snprintf(origin, sizeof(origin), "%s",
		 x->il_file ? x->spirv_path
			    : "mtp_kernels.spv (embedded, " MTP_SPIRV_OPT_NAME
			      ")");
	mtp_ocl_spirv_describe(il, n, origin, id, sizeof(id));
	snprintf(x->info + used, sizeof(x->info) - used, ", from %s", id);
	x->program = create(x->context, il, n, &e);
	OCL_CL(be, "clCreateProgramWithIL", e);
	return MTP_OK;
}

static enum mtp_status create_from_source(struct mtp_backend *be,
					  struct ocl_ctx *x)
{
	const char *src = (const char *)mtp_ocl_source;
	const size_t len = mtp_ocl_source_len;
	size_t used = strlen(x->info);
	cl_int e;

	snprintf(x->info + used, sizeof(x->info) - used,
		 ", from OpenCL C source");
	x->program = clCreateProgramWithSource(x->context, 1, &src, &len, &e);
	OCL_CL(be, "clCreateProgramWithSource", e);
	return MTP_OK;
}

/* Puts the start of the build log after be->error's message. */
static void append_log(struct mtp_backend *be, struct ocl_ctx *x)
{
	char log[2048] = "";

	if (clGetProgramBuildInfo(x->program, x->device, CL_PROGRAM_BUILD_LOG,
				  sizeof(log) - 1, log, NULL) != CL_SUCCESS)
		snprintf(log, sizeof(log), "(no build log)");
	mtp_ocl_append_log(be, log);
}

enum mtp_status mtp_ocl_build_program(struct mtp_backend *be, struct ocl_ctx *x)
{
	const char *env = getenv("MTP_OPENCL_BUILD_FLAGS");
	cl_device_fp_config fp = 0;
	char opts[256];
	cl_int e;

	OCL_TRY(x->spirv ? create_from_il(be, x) : create_from_source(be, x));
	OCL_CL(be, "clGetDeviceInfo",
	       clGetDeviceInfo(x->device, CL_DEVICE_SINGLE_FP_CONFIG,
			       sizeof(fp), &fp, NULL));
	/* -cl-std applies to source only */
	snprintf(opts, sizeof(opts), "%s%s", x->spirv ? "" : "-cl-std=CL1.2 ",
		 fp & CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT
			 ? "-cl-fp32-correctly-rounded-divide-sqrt"
			 : "");
	if (env) /* instead of ours, as $MTP_L0_BUILD_FLAGS for Level Zero */
		snprintf(opts, sizeof(opts), "%s", env);
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
