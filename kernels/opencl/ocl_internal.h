/*
 * The host layer that the opencl and level_zero backends share: both run
 * the same OpenCL C kernels (the .cl files of this folder) and implement
 * the GPU composition layer's primitives (kernels/gpu/gpu.h) once, in
 * kernels.c, on top of four calls that each platform provides (struct
 * ocl_dev_ops): enqueue a kernel with flattened arguments, allocate and
 * release device memory, copy between buffers. The ops, blocks, steps and
 * chains themselves are kernels/gpu/'s, shared with cuda and hip.
 * Everything else that is not a vendor call (argument packing, launch
 * geometry, device pick, build log, timer arithmetic) is in dev_common.c
 * and kernels.c, and so runs under OpenCL in CI.
 *
 * A buffer is a handle and a byte offset (struct gpu_buf): a cl_mem cannot
 * be offset by pointer arithmetic, so every kernel takes (pointer, byte
 * offset) pairs; a Level Zero device pointer is passed the same way.
 */
#ifndef MTP_OCL_INTERNAL_H
#define MTP_OCL_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "gpu.h"
#include "mtp/backend.h"

/* Work-group size of the row kernels: MTP_WG of common.cl. */
#define OCL_WG 128
/* GEMM tile: GEMM_TILE of gemm.cl. */
#define OCL_TILE 16
/* Largest hc_mult of the mHC kernels: HC_MAX_M of hc_common.cl. */
#define OCL_HC_MAX_M 8
#define OCL_HC_MAX_MIX (2 * OCL_HC_MAX_M + OCL_HC_MAX_M * OCL_HC_MAX_M)
/* Work-group width of the element-wise kernels. */
#define OCL_EW 64

/* Local memory of each kernel (its last argument `lm`), in bytes. */
#define OCL_LM_ROW (OCL_WG * 4)
#define OCL_LM_HC_PRE ((OCL_WG + OCL_HC_MAX_MIX + 1 + OCL_HC_MAX_M) * 4)
#define OCL_LM_HC_HEAD ((OCL_WG + 2 * OCL_HC_MAX_M + 1) * 4)
#define OCL_LM_GEMM (2 * OCL_TILE * (OCL_TILE + 1) * 4)
#define OCL_LM_ARGMAX (OCL_WG * (4 + 8))

enum ocl_kernel {
	OCL_K_RMSNORM,
	OCL_K_ADD_RMSNORM,
	OCL_K_EMBED,
	OCL_K_POSITIONS_ADD,
	OCL_K_ALL_REDUCE,
	OCL_K_ADD_BCAST,
	OCL_K_SWIGLU,
	OCL_K_GEMM,
	OCL_K_ARGMAX,
	OCL_K_HC_PRE,
	OCL_K_HC_POST,
	OCL_K_HC_HEAD,
	OCL_K_FP8_QUANT,
	OCL_K_FP8_GEMM,
	OCL_K_CONVERT,
	OCL_K_REDUCE_ORDERED,
	OCL_K_HC_COLLAPSE,
	OCL_K_CONFIDENCE,
	OCL_K_HC_PRE_DELAYED,
	OCL_K_SCALE, /* dspark.cl */
	OCL_K_ROPE,
	OCL_K_BLOCK_SCORES,
	OCL_K_BLOCK_ATTEND,
	OCL_K_COUNT
};

/* The kernels' names in the program, indexed by enum ocl_kernel. */
extern const char *const mtp_ocl_kernel_names[OCL_K_COUNT];

enum ocl_arg_kind { OCL_A_BUF, OCL_A_I32, OCL_A_I64, OCL_A_F32, OCL_A_LOCAL };

/* One kernel argument; a buffer becomes two (pointer, long byte offset);
 * a local one is a size in bytes (the runtime allocates it). */
struct ocl_arg {
	enum ocl_arg_kind kind;
	union {
		struct gpu_buf b;
		int32_t i;
		int64_t l;
		float f;
		size_t local;
	} v;
};

/* clang-format off */
#define OA_BUF(x) {.kind = OCL_A_BUF, .v.b = (x)}
#define OA_I32(x) {.kind = OCL_A_I32, .v.i = (int32_t)(x)}
#define OA_I64(x) {.kind = OCL_A_I64, .v.l = (int64_t)(x)}
#define OA_F32(x) {.kind = OCL_A_F32, .v.f = (float)(x)}
#define OA_LOCAL(x) {.kind = OCL_A_LOCAL, .v.local = (size_t)(x)}
/* clang-format on */

/* One flattened kernel argument, as clSetKernelArg and
 * zeKernelSetArgumentValue take it: size bytes at value (NULL: local
 * memory of that size, or a NULL pointer); value points into v. */
struct ocl_flat_arg {
	size_t size;
	const void *value;
	union {
		void *p;
		int64_t l;
		int32_t i;
		float f;
	} v;
};

/* Flat arguments of the largest kernel (hc_pre: 27), with room. */
#define OCL_MAX_FLAT 48

/* What a platform provides to the shared host code: its vendor calls. */
struct ocl_dev_ops {
	/* Sets the arguments a[0..n) of kernel k and enqueues it over
	 * groups[0] x groups[1] work-groups of lws[0] x lws[1] items. */
	enum mtp_status (*run)(struct mtp_backend *be, enum ocl_kernel k,
			       const struct ocl_flat_arg *a, int n,
			       const uint32_t groups[2], const uint32_t lws[2]);
	/* Device memory (a buffer handle or device pointer), and its release
	 * once the commands queued so far no longer need it. */
	enum mtp_status (*alloc)(struct mtp_backend *be, size_t bytes,
				 void **mem);
	enum mtp_status (*release)(struct mtp_backend *be, void *mem);
	/* Device copy, in queue order. */
	enum mtp_status (*copy)(struct mtp_backend *be, struct gpu_buf dst,
				struct gpu_buf src, size_t bytes);
};

/* Every backend's context starts with this. */
struct ocl_dev {
	struct gpu_dev gpu; /* first: the composition layer reads it */
	const struct ocl_dev_ops *ops;
};

static inline struct ocl_dev *ocl_dev(struct mtp_backend *be)
{
	return (struct ocl_dev *)be->ctx;
}

static inline const struct ocl_dev_ops *ocl_ops(struct mtp_backend *be)
{
	return ocl_dev(be)->ops;
}

/* Propagates a status. */
#define OCL_TRY(call)                                                          \
	do {                                                                   \
		enum mtp_status ocl_st_ = (call);                              \
		if (ocl_st_ != MTP_OK)                                         \
			return ocl_st_;                                        \
	} while (0)

/* ---- device-neutral platform helpers (dev_common.c) -------------------- */

/* Flattens a[0..n) (a buffer becomes its pointer and its byte offset)
 * into out[0..max); the count, or -1 if more than max. */
int mtp_ocl_flatten(const struct ocl_arg *a, int n, struct ocl_flat_arg *out,
		    int max);
/* Of n devices, GPUs first (in order), then the others: the one that $env
 * (a decimal index into that order, default 0) names, as an index into
 * is_gpu. MTP_ERR_UNAVAILABLE ("no <what> device") when there is none. */
enum mtp_status mtp_ocl_pick(struct mtp_backend *be, const bool *is_gpu, int n,
			     const char *env, const char *what, int *pick);
/* Appends ": <log>" (on one line) to be->error. */
void mtp_ocl_append_log(struct mtp_backend *be, char *log);
/* Seconds from timestamp t0 to t1 of a counter of valid_bits bits. */
double mtp_ocl_span_seconds(uint64_t t0, uint64_t t1, unsigned valid_bits,
			    double ns_per_tick);
/* Whether b[0..n) starts like a SPIR-V module. */
bool mtp_ocl_spirv_magic(const unsigned char *b, size_t n);
/* "SPIR-V <origin> (N bytes, fnv1a64 H)" into buf. */
void mtp_ocl_spirv_describe(const unsigned char *b, size_t n,
			    const char *origin, char *buf, size_t len);

/* The kernels as one SPIR-V module (kernels/opencl/spirv.cmake; empty when
 * the build had no SPIR-V toolchain): what the level_zero backend submits
 * and `--backend opencl:spirv` loads. */
extern const unsigned char mtp_ocl_spirv[];
extern const size_t mtp_ocl_spirv_len;

/* ---- the primitives of the composition layer (kernels.c) -------------- */

/* The GPU composition layer's primitives (kernels/gpu/gpu.h) on the OpenCL
 * C kernels, over the platform's struct ocl_dev_ops: what the opencl and
 * level_zero backends put in their context's gpu.prims. */
extern const struct gpu_prims mtp_ocl_prims;

#endif
