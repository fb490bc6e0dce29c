/*
 * Private to the CUDA backend's host code: its context (device, stream,
 * events, cuBLASLt handle and workspace, the per-launch scratch list), the
 * checks that turn a vendor status into be->error and a status return,
 * tensor lookup in a call, and the op entry points of ops.c, block.c and
 * step.c. Nothing here aborts.
 */
#ifndef MTP_NV_INTERNAL_H
#define MTP_NV_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include "mtp/backend.h"
#include "nv_kernels.h"

#define NV_SCRATCH_MAX 96

struct nv_ctx {
	int device;
	cudaStream_t stream;
	cudaEvent_t ev_begin, ev_end;
	cublasLtHandle_t lt;
	void *workspace;
	size_t workspace_bytes;
	struct cudaDeviceProp prop;
	int driver_version, runtime_version;
	void *scratch[NV_SCRATCH_MAX];
	int n_scratch;
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

#define NV_CUDA(be, call)                                                      \
	do {                                                                   \
		cudaError_t nv_e_ = (call);                                    \
		if (nv_e_ != cudaSuccess)                                      \
			return mtp_nv_fail_cuda((be), #call, nv_e_);           \
	} while (0)

#define NV_BLAS(be, call)                                                      \
	do {                                                                   \
		cublasStatus_t nv_s_ = (call);                                 \
		if (nv_s_ != CUBLAS_STATUS_SUCCESS)                            \
			return mtp_nv_fail_blas((be), #call, nv_s_);           \
	} while (0)

/* Propagates a status. */
#define NV_TRY(call)                                                           \
	do {                                                                   \
		enum mtp_status nv_st_ = (call);                               \
		if (nv_st_ != MTP_OK)                                          \
			return nv_st_;                                         \
	} while (0)

/* Stream-ordered scratch of the current launch; all of it is released by
 * mtp_nv_scratch_release() (also stream-ordered) when the launch ends. */
enum mtp_status mtp_nv_scratch(struct mtp_backend *be, size_t bytes,
			       void **ptr);
enum mtp_status mtp_nv_scratch_release(struct mtp_backend *be);

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

/* ---- tensors of a call -------------------------------------------------- */

const struct mtp_tensor *mtp_nv_in(const struct mtp_call *c, const char *name);
const struct mtp_tensor *mtp_nv_out(const struct mtp_call *c, const char *name);
/* Data pointer of the input/output `prefix name`, or NULL. */
void *mtp_nv_in_ptr(const struct mtp_call *c, const char *prefix,
		    const char *name);
void *mtp_nv_out_ptr(const struct mtp_call *c, const char *prefix,
		     const char *name);

static inline enum mtp_nv_act mtp_nv_act_of(enum mtp_dtype dt)
{
	return dt == MTP_F32   ? MTP_NV_F32
	       : dt == MTP_F16 ? MTP_NV_F16
			       : MTP_NV_BF16;
}

/* ---- GEMM (gemm.c) ------------------------------------------------------ */

/* y [rows,out] = x [rows,in] . w[out,in]^T with float32 accumulation and one
 * rounding to y's type: act, or float32 when logits is set. */
enum mtp_status mtp_nv_linear(struct mtp_backend *be, enum mtp_nv_act act,
			      bool logits, const void *x, const void *w,
			      void *y, int64_t rows, int64_t in, int64_t out);

/* ---- ops ----------------------------------------------------------------- */

/* Settings of one block or step, from the call's parameters. */
struct nv_cfg {
	enum mtp_nv_act act;
	size_t es; /* bytes per activation */
	int64_t t, h, m, v, f;
	float eps;
	int rounding;
	float hc_eps, post_mult;
	int sinkhorn_iters;
	int contract; /* enum mtp_contract */
	int variant;  /* enum mtp_hc_head_variant */
};

void mtp_nv_cfg_init(const struct mtp_call *c, struct nv_cfg *cfg);

bool mtp_nv_op_supported(const struct mtp_call *c);
enum mtp_status mtp_nv_op_simple(struct mtp_backend *be,
				 const struct mtp_call *c);
enum mtp_status mtp_nv_op_block(struct mtp_backend *be,
				const struct mtp_call *c);
enum mtp_status mtp_nv_op_step(struct mtp_backend *be,
			       const struct mtp_call *c);
enum mtp_status mtp_nv_op_chain(struct mtp_backend *be,
				const struct mtp_call *c);

/* Building blocks shared by block.c and step.c. */
enum mtp_status mtp_nv_rmsnorm_rows(struct mtp_backend *be,
				    const struct nv_cfg *cfg, const void *x,
				    const void *pos, int pos64, const void *w,
				    void *y, int64_t rows);
enum mtp_status mtp_nv_swiglu_ffn(struct mtp_backend *be,
				  const struct nv_cfg *cfg, const void *x,
				  const void *w_gate, const void *w_up,
				  const void *w_down, void *out);
/* [Step V4-3] x [T,M,H] = act(act(h_proj(p)) + act(e_proj(e))). */
enum mtp_status mtp_nv_eh_proj_hc(struct mtp_backend *be,
				  const struct nv_cfg *cfg, const void *e,
				  const void *p, const void *we, const void *wh,
				  void *x);
enum mtp_status mtp_nv_lm_head(struct mtp_backend *be, enum mtp_nv_act act,
			       const void *x, const void *w, float *logits,
			       void *token, int tok64, int64_t t, int64_t v,
			       int64_t h);

struct nv_v3_block {
	const void *w_in, *W_a, *w_post, *W_gate, *W_up, *W_down;
};

struct nv_v4_block {
	const float *attn_fn, *attn_scale, *attn_base;
	const float *ffn_fn, *ffn_scale, *ffn_base;
	const void *attn_norm_w, *ffn_norm_w, *W_a, *W_gate, *W_up, *W_down;
};

void mtp_nv_v3_block_get(const struct mtp_call *c, const char *pfx,
			 struct nv_v3_block *b);
void mtp_nv_v4_block_get(const struct mtp_call *c, const char *pfx,
			 struct nv_v4_block *b);

/* [§10.1] (h, r1) = block(x, residual or NULL). */
enum mtp_status mtp_nv_v3_block(struct mtp_backend *be,
				const struct nv_cfg *cfg, const void *x,
				const void *residual,
				const struct nv_v3_block *b, void *h_out,
				void *r_out);

/* [§10.2] Deferred form from the streams r0 [T,M,H]: f [T,H], R1 [T,M,H],
 * post_f [T,M], C_f [T,M,M]. */
enum mtp_status mtp_nv_v4_block(struct mtp_backend *be,
				const struct nv_cfg *cfg, const void *r0,
				const struct nv_v4_block *b, void *f_out,
				void *r1_out, float *post_out, float *comb_out);

/* runtime.c: the interface methods the CUDA and HIP backends share. */
enum mtp_status mtp_nv_alloc(struct mtp_backend *be, size_t bytes, void **ptr);
void mtp_nv_free(struct mtp_backend *be, void *ptr);
enum mtp_status mtp_nv_upload(struct mtp_backend *be, void *dst,
			      const void *src, size_t bytes);
enum mtp_status mtp_nv_download(struct mtp_backend *be, void *dst,
				const void *src, size_t bytes);
bool mtp_nv_supports_call(struct mtp_backend *be, const struct mtp_call *c);
enum mtp_status mtp_nv_launch(struct mtp_backend *be, const struct mtp_call *c);
enum mtp_status mtp_nv_synchronize(struct mtp_backend *be);
enum mtp_status mtp_nv_timer_begin(struct mtp_backend *be);
enum mtp_status mtp_nv_timer_end(struct mtp_backend *be, double *seconds);

#endif
