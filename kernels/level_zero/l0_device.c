/*
 * Driver and device discovery of the level_zero backend, its context and
 * command list, and the module built from the embedded SPIR-V (the OpenCL
 * C kernels of kernels/opencl/, compiled by clang-14 and llvm-spirv-14 at
 * build time). With no Level Zero driver installed, zeInit returns
 * ZE_RESULT_ERROR_UNINITIALIZED: that is the clean "no device" path.
 *
 * The command list is immediate and synchronous: every append has finished
 * when it returns, so queue order, scratch lifetime and the host copies
 * need no events. Simple rather than fast; the kernels' time is still
 * measured on the device (global timestamps).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "l0_internal.h"

#define MAX_DRIVERS 8
#define MAX_DEVICES 64

struct dev_list {
	int n;
	ze_driver_handle_t drv[MAX_DEVICES];
	ze_device_handle_t dev[MAX_DEVICES];
	bool gpu[MAX_DEVICES];
};

static void list_add(struct dev_list *l, ze_driver_handle_t drv)
{
	ze_device_handle_t ids[MAX_DEVICES];
	uint32_t n = MAX_DEVICES;

	if (zeDeviceGet(drv, &n, ids) != ZE_RESULT_SUCCESS)
		return;
	for (uint32_t i = 0; i < n && l->n < MAX_DEVICES; i++) {
		ze_device_properties_t p = {
			.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};

		if (zeDeviceGetProperties(ids[i], &p) != ZE_RESULT_SUCCESS)
			continue;
		l->drv[l->n] = drv;
		l->gpu[l->n] = p.type == ZE_DEVICE_TYPE_GPU;
		l->dev[l->n++] = ids[i];
	}
}

static enum mtp_status pick_device(struct mtp_backend *be, struct l0_ctx *x)
{
	ze_driver_handle_t drivers[MAX_DRIVERS];
	uint32_t nd = 0;
	int pick = 0;
	struct dev_list l = {0};
	ze_result_t r = zeInit(0);

	if (r == ZE_RESULT_ERROR_UNINITIALIZED)
		return mtp_backend_fail(
			be, MTP_ERR_UNAVAILABLE,
			"zeInit: 0x%08x ZE_RESULT_ERROR_UNINITIALIZED (no "
			"Level Zero driver)",
			(unsigned)r);
	if (r != ZE_RESULT_SUCCESS)
		return mtp_l0_fail(be, MTP_ERR_UNAVAILABLE, "zeInit", r);
	r = zeDriverGet(&nd, NULL);
	if (r != ZE_RESULT_SUCCESS || nd == 0)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"zeDriverGet: %u drivers (0x%08x %s)",
					nd, (unsigned)r, mtp_l0_result_name(r));
	nd = nd > MAX_DRIVERS ? MAX_DRIVERS : nd;
	if (zeDriverGet(&nd, drivers) != ZE_RESULT_SUCCESS)
		return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
					"zeDriverGet failed");
	for (uint32_t i = 0; i < nd; i++)
		list_add(&l, drivers[i]);
	OCL_TRY(mtp_ocl_pick(be, l.gpu, l.n, "MTP_L0_DEVICE", "Level Zero",
			     &pick));
	x->driver = l.drv[pick];
	x->device = l.dev[pick];
	return MTP_OK;
}

/* The device's name and size for reports, and its timestamp scale. */
static enum mtp_status describe(struct mtp_backend *be, struct l0_ctx *x)
{
	ze_device_properties_t p = {
		.stype = ZE_STRUCTURE_TYPE_DEVICE_PROPERTIES};
	ze_driver_properties_t d = {
		.stype = ZE_STRUCTURE_TYPE_DRIVER_PROPERTIES};

	L0_ZE(be, "zeDeviceGetProperties",
	      zeDeviceGetProperties(x->device, &p));
	L0_ZE(be, "zeDriverGetProperties",
	      zeDriverGetProperties(x->driver, &d));
	x->ns_per_tick = (double)p.timerResolution;
	x->stamp_bits = p.timestampValidBits;
	snprintf(x->info, sizeof(x->info),
		 "%s (%s, vendor 0x%04x device 0x%04x, %u EUs, %.1f GHz), "
		 "Level Zero driver 0x%08x",
		 p.name,
		 p.type == ZE_DEVICE_TYPE_GPU	? "GPU"
		 : p.type == ZE_DEVICE_TYPE_CPU ? "CPU"
						: "other",
		 p.vendorId, p.deviceId,
		 p.numSlices * p.numSubslicesPerSlice * p.numEUsPerSubslice,
		 p.coreClockRate / 1000.0, d.driverVersion);
	return MTP_OK;
}

/* The ordinal of the first command queue group that can run kernels. */
static enum mtp_status compute_ordinal(struct mtp_backend *be, struct l0_ctx *x,
				       uint32_t *ord)
{
	ze_command_queue_group_properties_t g[16];
	uint32_t n = 0;

	L0_ZE(be, "zeDeviceGetCommandQueueGroupProperties",
	      zeDeviceGetCommandQueueGroupProperties(x->device, &n, NULL));
	n = n > 16 ? 16 : n;
	for (uint32_t i = 0; i < n; i++)
		g[i] = (ze_command_queue_group_properties_t){
			.stype =
				ZE_STRUCTURE_TYPE_COMMAND_QUEUE_GROUP_PROPERTIES};
	L0_ZE(be, "zeDeviceGetCommandQueueGroupProperties",
	      zeDeviceGetCommandQueueGroupProperties(x->device, &n, g));
	for (uint32_t i = 0; i < n; i++) {
		if (g[i].flags & ZE_COMMAND_QUEUE_GROUP_PROPERTY_FLAG_COMPUTE) {
			*ord = i;
			return MTP_OK;
		}
	}
	return mtp_backend_fail(be, MTP_ERR_UNAVAILABLE,
				"the Level Zero device has no compute queue");
}

static enum mtp_status make_list(struct mtp_backend *be, struct l0_ctx *x)
{
	ze_context_desc_t cd = {.stype = ZE_STRUCTURE_TYPE_CONTEXT_DESC};
	ze_command_queue_desc_t qd = {
		.stype = ZE_STRUCTURE_TYPE_COMMAND_QUEUE_DESC,
		.mode = ZE_COMMAND_QUEUE_MODE_SYNCHRONOUS,
		.priority = ZE_COMMAND_QUEUE_PRIORITY_NORMAL,
	};
	ze_host_mem_alloc_desc_t hd = {
		.stype = ZE_STRUCTURE_TYPE_HOST_MEM_ALLOC_DESC};

	L0_ZE(be, "zeContextCreate",
	      zeContextCreate(x->driver, &cd, &x->context));
	OCL_TRY(compute_ordinal(be, x, &qd.ordinal));
	L0_ZE(be, "zeCommandListCreateImmediate",
	      zeCommandListCreateImmediate(x->context, x->device, &qd,
					   &x->list));
	L0_ZE(be, "zeMemAllocHost (timestamps)",
	      zeMemAllocHost(x->context, &hd, 2 * sizeof(uint64_t), 8,
			     (void **)&x->stamps));
	return MTP_OK;
}

/* Puts the module's build log after be->error's message. */
static void append_log(struct mtp_backend *be, ze_module_build_log_handle_t log)
{
	size_t n = 0;
	char *text = NULL;

	if (!log)
		return;
	if (zeModuleBuildLogGetString(log, &n, NULL) == ZE_RESULT_SUCCESS &&
	    n > 0)
		text = calloc(1, n + 1);
	if (text &&
	    zeModuleBuildLogGetString(log, &n, text) == ZE_RESULT_SUCCESS)
		mtp_ocl_append_log(be, text);
	else
		mtp_ocl_append_log(be, (char[]){"(no build log)"});
	free(text);
}

static enum mtp_status make_module(struct mtp_backend *be, struct l0_ctx *x)
{
	const char *flags = getenv("MTP_L0_BUILD_FLAGS");
	ze_module_desc_t md = {
		.stype = ZE_STRUCTURE_TYPE_MODULE_DESC,
		.format = ZE_MODULE_FORMAT_IL_SPIRV,
		.inputSize = mtp_ocl_spirv_len,
		.pInputModule = mtp_ocl_spirv,
		/* correctly rounded float32 divide and sqrt, as the opencl
		 * backend asks for (Intel's name for the OpenCL option) */
		.pBuildFlags = flags ? flags
				     : "-ze-fp32-correctly-rounded-divide-sqrt",
	};
	ze_module_build_log_handle_t log = NULL;
	ze_result_t r =
		zeModuleCreate(x->context, x->device, &md, &x->module, &log);

	if (r != ZE_RESULT_SUCCESS) {
		mtp_l0_fail(be, MTP_ERR_DEVICE, "zeModuleCreate", r);
		append_log(be, log);
	}
	if (log)
		zeModuleBuildLogDestroy(log);
	if (r != ZE_RESULT_SUCCESS)
		return MTP_ERR_DEVICE;
	for (int k = 0; k < OCL_K_COUNT; k++) {
		ze_kernel_desc_t kd = {.stype = ZE_STRUCTURE_TYPE_KERNEL_DESC,
				       .pKernelName = mtp_ocl_kernel_names[k]};

		L0_ZE(be, mtp_ocl_kernel_names[k],
		      zeKernelCreate(x->module, &kd, &x->kernels[k]));
	}
	return MTP_OK;
}

enum mtp_status mtp_l0_device_open(struct mtp_backend *be, struct l0_ctx *x)
{
	char id[160];
	size_t used;

	OCL_TRY(pick_device(be, x));
	if (mtp_ocl_spirv_len == 0)
		return mtp_backend_fail(
			be, MTP_ERR_UNAVAILABLE,
			"this build has no SPIR-V of the kernels (configured "
			"without clang-14 and llvm-spirv-14)");
	OCL_TRY(describe(be, x));
	used = strlen(x->info);
	mtp_ocl_spirv_describe(mtp_ocl_spirv, mtp_ocl_spirv_len,
			       "mtp_kernels.spv (embedded, " MTP_SPIRV_OPT_NAME
			       ")",
			       id, sizeof(id));
	snprintf(x->info + used, sizeof(x->info) - used, ", from %s", id);
	OCL_TRY(make_list(be, x));
	return make_module(be, x);
}
