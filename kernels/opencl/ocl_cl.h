/*
 * Private to the opencl backend's host code (the platform half; the ops
 * are in ocl_internal.h): its context (platform, device, context, the
 * in-order profiling queue, the program built at open() from OpenCL C
 * source or SPIR-V and its kernels, the events a timer spans) and the
 * check that turns an OpenCL status into be->error. Nothing here aborts.
 */
#ifndef MTP_OCL_CL_H
#define MTP_OCL_CL_H

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "ocl_internal.h"

struct ocl_ctx {
	struct ocl_dev dev; /* first: the shared host code reads it */
	cl_platform_id platform;
	cl_device_id device;
	cl_context context;
	cl_command_queue queue;
	cl_program program;
	cl_kernel kernels[OCL_K_COUNT];
	bool timing;
	cl_event ev_first, ev_last;
	/* from the backend's name (ocl_program.c) */
	bool spirv;		/* the SPIR-V module, not the OpenCL C source */
	char spirv_path[256];	/* "": the embedded module */
	char want_platform[64]; /* "": any platform */
	unsigned char *il_file; /* the bytes of spirv_path */
	size_t il_file_len;
	char info[640];
};

static inline struct ocl_ctx *ocl_ctx(struct mtp_backend *be)
{
	return (struct ocl_ctx *)be->ctx;
}

/* The name of an OpenCL status ("CL_INVALID_VALUE"). */
const char *mtp_ocl_cl_error_name(cl_int e);

/* be->error = "<what>: <name> (<code>)"; returns st. */
enum mtp_status mtp_ocl_fail_cl(struct mtp_backend *be, enum mtp_status st,
				const char *what, cl_int e);

#define OCL_CL(be, what, call)                                                 \
	do {                                                                   \
		cl_int ocl_e_ = (call);                                        \
		if (ocl_e_ != CL_SUCCESS)                                      \
			return mtp_ocl_fail_cl((be), MTP_ERR_DEVICE, (what),   \
					       ocl_e_);                        \
	} while (0)

/* Reads the variant and platform from the backend's name:
 *   opencl[:source | :spirv | :spirv=FILE.spv][@PLATFORM]
 * ($MTP_OPENCL_PLATFORM when there is no @), and for :spirv=FILE the
 * module's bytes. MTP_ERR_INVALID with one line on a malformed name or an
 * unreadable or non-SPIR-V file (ocl_program.c). */
enum mtp_status mtp_ocl_parse_name(struct mtp_backend *be, struct ocl_ctx *x);

/* Builds x->program from the source or SPIR-V, and its kernels; appends
 * where the program came from to x->info (ocl_program.c). */
enum mtp_status mtp_ocl_build_program(struct mtp_backend *be,
				      struct ocl_ctx *x);

/* Whether the device takes SPIR-V (CL_DEVICE_IL_VERSION names it). */
bool mtp_ocl_device_takes_spirv(cl_device_id d);

/* Picks the platform (the first whose name or vendor contains
 * want_platform, any case) and device (a GPU if there is one;
 * $MTP_OPENCL_DEVICE=N picks the N-th; with :spirv only devices that take
 * SPIR-V), creates the context and queue, builds the program and its
 * kernels (ocl_device.c). MTP_ERR_UNAVAILABLE with the reason when there
 * is no such platform or device. */
enum mtp_status mtp_ocl_device_open(struct mtp_backend *be, struct ocl_ctx *x);

/* The embedded OpenCL C sources (generated at build time). */
extern const unsigned char mtp_ocl_source[];
extern const size_t mtp_ocl_source_len;

#endif
