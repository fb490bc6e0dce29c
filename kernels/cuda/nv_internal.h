/*
 * Private to the host code of the CUDA and HIP backends (both compile
 * runtime.c, prims.c and graph.c; HIP through kernels/hip/vendor/): the
 * context (the composition layer's header, device, stream, events, the
 * cuBLASLt handle and workspace), the platform hooks that tell the two
 * apart, the checks that turn a vendor status into be->error and a status
 * return, and the interface methods they share. The ops, blocks, steps
 * and chains are kernels/gpu/'s, over mtp_nv_prims (prims.c). Nothing here
 * aborts.
 */
#ifndef MTP_NV_INTERNAL_H
#define MTP_NV_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "gpu.h"
#include "mtp/backend.h"
#include "nv_kernels.h"

struct nv_ctx;

/* What tells the cuda and hip modules apart when opening a device. */
struct nv_platform {
	const char *api;	/* "cuda" or "hip": runtime calls in messages */
	const char *name;	/* "CUDA" or "HIP" */
	const char *device_env; /* "MTP_CUDA_DEVICE": the device's index */
	/* What the module opens after the stream and events (NULL: nothing;
	 * its failure fails open()), and closes before them (NULL). */
	enum mtp_status (*open_more)(struct mtp_backend *be, struct nv_ctx *x);
	void (*close_more)(struct nv_ctx *x);
};

struct nv_ctx {
	struct gpu_dev gpu; /* first: the composition layer reads it */
	const struct nv_platform *pf;
	int device;
	cudaStream_t stream;
	cudaEvent_t ev_begin, ev_end;
	cublasLtHandle_t lt;
	void *workspace;
	size_t workspace_bytes;
	struct cudaDeviceProp prop;
	int driver_version, runtime_version;
};

static inline struct nv_ctx *nv_ctx(struct mtp_backend *be)
{
	return (struct nv_ctx *)be->ctx;
}

/* be->error = "<what>: <CUDA's message>"; returns MTP_ERR_DEVICE. */
enum mtp_status mtp_nv_fail_cuda(struct mtp_backend *be, const char *what,
				 cudaError_t e);
enum mtp_status mtp_nv_fail_blas(struct mtp_backend *be, const char *what,
				 cublasStatus_t e);

/* Returns the failure of a runtime or launcher call named what. */
#define NV_CHECK(be, what, call)                                               \
	do {                                                                   \
		cudaError_t nv_e_ = (call);                                    \
		if (nv_e_ != cudaSuccess)                                      \
			return mtp_nv_fail_cuda((be), (what), nv_e_);          \
	} while (0)

#define NV_CUDA(be, call) NV_CHECK(be, #call, call)

#define NV_BLAS(be, call)                                                      \
	do {                                                                   \
		cublasStatus_t nv_s_ = (call);                                 \
		if (nv_s_ != CUBLAS_STATUS_SUCCESS)                            \
			return mtp_nv_fail_blas((be), #call, nv_s_);           \
	} while (0)

/* Propagates a status. */
#define NV_TRY(call) GPU_TRY(call)

/* The composition layer's primitives on the kernels (prims.c). */
extern const struct gpu_prims mtp_nv_prims;

/* Device copy on the backend's stream. */
enum mtp_status mtp_nv_copy(struct mtp_backend *be, void *dst, const void *src,
			    size_t bytes);

/* Graph replay of one launch (graph.c). */
enum mtp_status mtp_nv_graph_capture(struct mtp_backend *be,
				     const struct mtp_call *call, void **graph);
enum mtp_status mtp_nv_graph_capture_calls(struct mtp_backend *be,
					   const struct mtp_call *calls, int n,
					   void **graph);
enum mtp_status mtp_nv_graph_launch(struct mtp_backend *be, void *graph);
void mtp_nv_graph_destroy(struct mtp_backend *be, void *graph);

/* With MTP_CUDA_EMPTY_BENCH=1: prints the empty kernel's launch and graph
 * replay times (bench_empty.c); otherwise does nothing. */
enum mtp_status mtp_nv_bench_empty(struct mtp_backend *be);

/* y [rows,out] = x [rows,in] . w[out,in]^T with float32 accumulation and one
 * rounding to y's type: act, or float32 when logits is set (gemm.c for
 * cuda, kernels/hip/linear.c for hip). */
enum mtp_status mtp_nv_linear(struct mtp_backend *be, enum mtp_nv_act act,
			      bool logits, const void *x, const void *w,
			      void *y, int64_t rows, int64_t in, int64_t out);

/* runtime.c: open() and close() of both modules (the device that
 * $pf->device_env names, default 0; its stream and events; then
 * pf->open_more), and the interface methods they share. No driver or
 * device is MTP_ERR_UNAVAILABLE with the runtime's message. */
enum mtp_status mtp_nv_open(struct mtp_backend *be,
			    const struct nv_platform *pf);
void mtp_nv_close(struct mtp_backend *be);
enum mtp_status mtp_nv_alloc(struct mtp_backend *be, size_t bytes, void **ptr);
void mtp_nv_free(struct mtp_backend *be, void *ptr);
enum mtp_status mtp_nv_upload(struct mtp_backend *be, void *dst,
			      const void *src, size_t bytes);
enum mtp_status mtp_nv_download(struct mtp_backend *be, void *dst,
				const void *src, size_t bytes);
enum mtp_status mtp_nv_synchronize(struct mtp_backend *be);
enum mtp_status mtp_nv_timer_begin(struct mtp_backend *be);
enum mtp_status mtp_nv_timer_end(struct mtp_backend *be, double *seconds);

/* The members of struct mtp_backend_iface that cuda and hip share: all but
 * the names, open, close and device_info. */
#define MTP_NV_IFACE_SHARED                                                    \
	.api_version = MTP_BACKEND_API_VERSION, .alloc = mtp_nv_alloc,         \
	.free = mtp_nv_free, .upload = mtp_nv_upload,                          \
	.download = mtp_nv_download, .supports = mtp_gpu_supports,             \
	.launch = mtp_gpu_launch, .synchronize = mtp_nv_synchronize,           \
	.timer_begin = mtp_nv_timer_begin, .timer_end = mtp_nv_timer_end,      \
	.copy = mtp_nv_copy, .graph_capture = mtp_nv_graph_capture,            \
	.graph_launch = mtp_nv_graph_launch,                                   \
	.graph_destroy = mtp_nv_graph_destroy,                                 \
	.graph_capture_calls = mtp_nv_graph_capture_calls

#endif
