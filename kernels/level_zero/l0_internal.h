/*
 * Private to the level_zero backend (the platform half; the ops are the
 * opencl backend's shared host layer, kernels/opencl/ocl_internal.h): its
 * context (driver, device, context, one synchronous immediate command
 * list, the module made from the embedded SPIR-V and its kernels, the
 * timestamp buffer) and the check that turns a ze_result_t into
 * be->error. Nothing here aborts.
 */
#ifndef MTP_L0_INTERNAL_H
#define MTP_L0_INTERNAL_H

#include <level_zero/ze_api.h>

#include "ocl_internal.h"

struct l0_ctx {
	struct ocl_dev dev; /* first: the shared host code reads it */
	ze_driver_handle_t driver;
	ze_device_handle_t device;
	ze_context_handle_t context;
	ze_command_list_handle_t list; /* immediate, synchronous */
	ze_module_handle_t module;
	ze_kernel_handle_t kernels[OCL_K_COUNT];
	uint64_t *stamps; /* host memory: begin and end timestamps */
	unsigned stamp_bits;
	double ns_per_tick;
	char info[640];
};

static inline struct l0_ctx *l0_ctx(struct mtp_backend *be)
{
	return (struct l0_ctx *)be->ctx;
}

/* The name of a Level Zero result ("ZE_RESULT_ERROR_UNINITIALIZED"). */
const char *mtp_l0_result_name(ze_result_t r);

/* be->error = "<what>: 0x<code> <name>"; returns st. */
enum mtp_status mtp_l0_fail(struct mtp_backend *be, enum mtp_status st,
			    const char *what, ze_result_t r);

#define L0_ZE(be, what, call)                                                  \
	do {                                                                   \
		ze_result_t l0_r_ = (call);                                    \
		if (l0_r_ != ZE_RESULT_SUCCESS)                                \
			return mtp_l0_fail((be), MTP_ERR_DEVICE, (what),       \
					   l0_r_);                             \
	} while (0)

/* zeInit, the device (a GPU first; $MTP_L0_DEVICE=N picks the N-th),
 * context, command list, module and kernels (l0_device.c).
 * MTP_ERR_UNAVAILABLE with the reason when there is no driver or device,
 * or when this build has no SPIR-V. */
enum mtp_status mtp_l0_device_open(struct mtp_backend *be, struct l0_ctx *x);

#endif
