/*
 * The GPU composition layer: the ops of the op table, the synthetic blocks,
 * the MTP step, the draft chain and the DSpark step, written once (ops.c,
 * block.c, step.c, dspark.c, dspark_step.c of this folder) over a small
 * device-neutral set of primitives that each GPU backend implements
 * (struct gpu_prims): scratch memory, a device copy, and
 * one launcher per kernel family. The cuda and hip modules implement it in
 * kernels/cuda/prims.c (CUDA kernels, cuBLASLt or the HIP GEMM); the opencl
 * and level_zero modules in kernels/opencl/kernels.c (the OpenCL C
 * kernels). The backend interface's own members (alloc, free, upload,
 * download, synchronize, timers, graphs) stay the backend's: the harness
 * calls them, the composition never does.
 *
 * The contract of every primitive: it enqueues its work in stream or queue
 * order and returns MTP_OK, or it returns a status with the vendor's
 * message in be->error (mtp_backend_fail), which the harness turns into the
 * case's verdict. The composition checks every status and returns the
 * first failure; it never aborts and never touches device memory itself.
 *
 * A buffer is a handle and a byte offset (struct gpu_buf): an OpenCL cl_mem
 * cannot be offset by pointer arithmetic, so offsets travel beside it; for
 * CUDA, HIP and Level Zero the handle is the device pointer.
 *
 * Dependencies: mtp/backend.h and mtp/op.h (harness/include), nothing of
 * any vendor.
 */
#ifndef MTP_GPU_H
#define MTP_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtp/backend.h"

/* Activation types; the same values as MTP_NV_* (nv_kernels.h) and ACT_*
 * of kernels/opencl/common.cl, so a backend passes them on as they are. */
enum gpu_act { GPU_BF16 = 0, GPU_F32 = 1, GPU_F16 = 2 };

/* Rounding of the norms: the values of enum mtp_rounding. */
#define GPU_EAGER 0
#define GPU_FUSED 1
/* Or'ed into add_rmsnorm's rounding: y normalises the unrounded float32
 * sum rather than the stored residual (SPEC.md §12.1 add_norm_input =
 * sum). */
#define GPU_NORM_SUM 2
/* Or'ed into a norm's rounding (rmsnorm, add_rmsnorm): the weight multiplies
 * as f32(1 + w), a zero-centred family's norm (SPEC.md §2.6). Every norm of
 * the composition carries it (gpu_cfg.norm_form). */
#define GPU_NORM_ONE_PLUS 4

/* The most partials of a reduction in a declared order (a tree's levels
 * live in registers). */
#define GPU_REDUCE_MAX_P 64

/* A device buffer at a byte offset; mem == NULL is an absent input. */
struct gpu_buf {
	void *mem;
	size_t off;
};

static inline struct gpu_buf gpu_at(struct gpu_buf b, size_t bytes)
{
	b.off += bytes;
	return b;
}

/* The address of b for a backend whose handles are pointers. */
static inline void *gpu_ptr(struct gpu_buf b)
{
	return b.mem ? (char *)b.mem + b.off : NULL;
}

/*
 * One set of rows to RMS-normalise: row r reads x + r * x_stride, or
 * x + ids[r] * x_stride when ids is given (an embedding gather); it reads
 * as zeros when pos is given and pos[r] == 0 (the position-0 mask); it
 * writes y + r * y_stride. Strides in elements.
 */
struct gpu_norm_job {
	struct gpu_buf x, ids, pos, w, y;
	int64_t x_stride, y_stride, rows;
	bool ids64, pos64;
};

/* The most jobs one rmsnorm call carries. */
#define GPU_NORM_JOBS 2

/* [§4.4.1] hc_pre of t tokens; norm_w is optional. */
struct gpu_hc_pre_args {
	struct gpu_buf residual, fn, scale, base, norm_w;
	struct gpu_buf post_mix, comb_mix, layer_input;
	int64_t t, m, h;
	float rms_eps, pre_eps, sinkhorn_eps, post_mult, norm_eps;
	int sinkhorn_iters;
	/* hc_fused_post_pre [§4.4.3], where the backend fuses it
	 * (hc_pre_fuses_post): residual is first written as hc_post(post_x,
	 * post_res, post_in, comb_in); post_x.mem NULL otherwise. */
	struct gpu_buf post_x, post_res, post_in, comb_in;
};

/* [§12.2] How linear_fp8 reads its float8_e4m3fn weight [out,in]: the
 * block scales [ceil(out/128), ceil(in/128)] (float32, or power-of-two
 * e8m0 bytes); weight-only, or with w8a8 each activation row quantized per
 * group of 128 inputs (scale max(amax, act_eps) / 448, e4m3 saturating). */
struct gpu_fp8 {
	struct gpu_buf scale;
	bool e8m0, w8a8;
	float act_eps;
};

/* What a GPU backend provides to the composition. */
struct gpu_prims {
	/* supports(): the largest hc_mult of the mHC kernels, and the bound
	 * that T and R must stay below (a 32-bit grid: 1 << 31). */
	int64_t max_m, max_rows;
	/* Whether hc_pre takes gpu_hc_pre_args' hc_post inputs (else the
	 * composition runs hc_post, then hc_pre). */
	bool hc_pre_fuses_post;

	/* Scratch memory for the current launch; *mem = NULL (nothing to
	 * release) is allowed for bytes == 0. Released in queue order once
	 * the work enqueued so far no longer needs it. */
	enum mtp_status (*scratch_alloc)(struct mtp_backend *be, size_t bytes,
					 void **mem);
	enum mtp_status (*scratch_free)(struct mtp_backend *be, void *mem);
	/* Device copy in queue order (bytes may be 0). */
	enum mtp_status (*copy)(struct mtp_backend *be, struct gpu_buf dst,
				struct gpu_buf src, size_t bytes);

	/* The kernels; the math of each is SPEC.md's and nv_kernels.h's. */
	/* Up to GPU_NORM_JOBS jobs of width h [§2.1, §2.2]. */
	enum mtp_status (*rmsnorm)(struct mtp_backend *be, enum gpu_act act,
				   const struct gpu_norm_job *j, int njobs,
				   int64_t h, float eps, int rounding);
	/* [§2.3] rout = act(x + res); y = RMSNorm(rout). */
	enum mtp_status (*add_rmsnorm)(struct mtp_backend *be, enum gpu_act act,
				       struct gpu_buf x, struct gpu_buf res,
				       struct gpu_buf w, struct gpu_buf y,
				       struct gpu_buf rout, int64_t rows,
				       int64_t h, float eps, int rounding);
	/* out[t,:] = table[ids[t],:]. */
	enum mtp_status (*embed)(struct mtp_backend *be, enum gpu_act act,
				 struct gpu_buf table, struct gpu_buf ids,
				 bool ids64, struct gpu_buf out, int64_t t,
				 int64_t h);
	/* out[t] = pos[t] + add, as int64. */
	enum mtp_status (*positions_add)(struct mtp_backend *be,
					 struct gpu_buf pos, bool pos64,
					 int64_t add, struct gpu_buf out,
					 int64_t t);
	/* out[i] = act(sum_p parts[p * n + i]). */
	enum mtp_status (*all_reduce)(struct mtp_backend *be, enum gpu_act act,
				      struct gpu_buf parts, int64_t p,
				      int64_t n, struct gpu_buf out);
	/* out[(r*rep + k)*h + i] = act(a[same] + b[r*h + i]), r < rows. */
	enum mtp_status (*add_bcast)(struct mtp_backend *be, enum gpu_act act,
				     struct gpu_buf a, struct gpu_buf b,
				     struct gpu_buf out, int64_t rows,
				     int64_t rep, int64_t h);
	/* g[i] = act(silu(gate[i]) * up[i]). */
	enum mtp_status (*swiglu)(struct mtp_backend *be, enum gpu_act act,
				  struct gpu_buf gate, struct gpu_buf up,
				  struct gpu_buf g, int64_t n);
	/* y [rows,out] = x [rows,in] . w [out,in]^T, float32 accumulation,
	 * one rounding to act (float32 when logits). */
	enum mtp_status (*linear)(struct mtp_backend *be, enum gpu_act act,
				  bool logits, struct gpu_buf x,
				  struct gpu_buf w, struct gpu_buf y,
				  int64_t rows, int64_t in, int64_t out);
	/* linear with a float8 weight (q): per 128-input block, the products
	 * summed in float32 and scaled by the block's scales, the blocks
	 * added in float32, one rounding. NULL: the backend has none (its
	 * FP8 calls are refused). */
	enum mtp_status (*linear_fp8)(struct mtp_backend *be, enum gpu_act act,
				      bool logits, struct gpu_buf x,
				      struct gpu_buf w, const struct gpu_fp8 *q,
				      struct gpu_buf y, int64_t rows,
				      int64_t in, int64_t out);
	/* token[r] = the first NaN of logits[r,:], else its first maximum. */
	enum mtp_status (*argmax)(struct mtp_backend *be, struct gpu_buf logits,
				  struct gpu_buf token, bool tok64,
				  int64_t rows, int64_t v);
	enum mtp_status (*hc_pre)(struct mtp_backend *be, enum gpu_act act,
				  const struct gpu_hc_pre_args *a);
	/* [§4.4.2] out[t,j,:] = act(post x + sum_i C[t,i,j] R[t,i,:]). */
	enum mtp_status (*hc_post)(struct mtp_backend *be, enum gpu_act act,
				   struct gpu_buf x, struct gpu_buf res,
				   struct gpu_buf post, struct gpu_buf comb,
				   struct gpu_buf out, int64_t t, int64_t m,
				   int64_t h);
	/* [§4.4.4] y [T,H] from x [T,M,H]; rocm: the ROCm variant. */
	enum mtp_status (*hc_head)(struct mtp_backend *be, enum gpu_act act,
				   struct gpu_buf x, struct gpu_buf fn,
				   struct gpu_buf scale, struct gpu_buf base,
				   struct gpu_buf y, int64_t t, int64_t m,
				   int64_t h, float rms_eps, float hc_eps,
				   bool rocm);

	/* Optional: NULL where a backend has no kernel for it, and every op
	 * that needs it is then declined by supports() (UNIMPLEMENTED). */
	/* y[i] = to(x[i]) for activation types from and to, rounded to
	 * nearest even (bf16 logits, SPEC.md §12.1 logits_dtype). */
	enum mtp_status (*convert)(struct mtp_backend *be, enum gpu_act from,
				   enum gpu_act to, struct gpu_buf x,
				   struct gpu_buf y, int64_t n);
	/* [§2.5] out [rows,h] = parts [p,rows,h] summed in the declared
	 * order (enum mtp_reduce_order), p <= GPU_REDUCE_MAX_P. */
	enum mtp_status (*reduce_ordered)(struct mtp_backend *be,
					  enum gpu_act act,
					  struct gpu_buf parts, int64_t p,
					  int64_t rows, int64_t h, int order,
					  struct gpu_buf out);
	/* [§13 Step DS-5] y[t,:] = act(sum_s pre[t,s] x[t,s,:]), streams in
	 * order, float32. */
	enum mtp_status (*hc_collapse)(struct mtp_backend *be, enum gpu_act act,
				       struct gpu_buf x, struct gpu_buf pre,
				       struct gpu_buf y, int64_t t, int64_t m,
				       int64_t h);
	/* [§13 Step DS-4] hc_pre's mixes, this sublayer's pre-mix into
	 * pre_out [T,M] (float32), the layer input collapsed with pre_in
	 * [T,M] (absent: stream 0 as it is). */
	enum mtp_status (*hc_pre_delayed)(struct mtp_backend *be,
					  enum gpu_act act,
					  const struct gpu_hc_pre_args *a,
					  struct gpu_buf pre_in,
					  struct gpu_buf pre_out);
	/* [§13 Step DS-7] conf[t] = sigmoid(w . [hidden[t,:]; embed[t,:]]
	 * + bias[0]), float32; embed absent when r == 0, bias optional. */
	enum mtp_status (*confidence)(struct mtp_backend *be, enum gpu_act act,
				      struct gpu_buf hidden,
				      struct gpu_buf embed, struct gpu_buf w,
				      struct gpu_buf bias, struct gpu_buf conf,
				      int64_t t, int64_t h, int64_t r);
	/* [§13 Step DS-6] y[i] = act(s * x[i]), the float32 product rounded
	 * once (markov_bias's logit_scale); y may be x. */
	enum mtp_status (*scale)(struct mtp_backend *be, enum gpu_act act,
				 struct gpu_buf x, struct gpu_buf y, int64_t n,
				 float s);
	/* [§13.9] y [rows,h] = rope(x [rows,h], pos[r]): the pair (i, i +
	 * h/2) rotated by pos * 10000^(-2i/h), each element rounded once, an
	 * odd h's last element as it is; y may be x. */
	enum mtp_status (*rope)(struct mtp_backend *be, enum gpu_act act,
				struct gpu_buf x, struct gpu_buf pos,
				bool pos64, struct gpu_buf y, int64_t rows,
				int64_t h);
	/* [§13.9] o [t,h] = act(softmax(q . k^T / sqrt(h)) v) of one head
	 * over the c context keys kc/vc [c,h], then the t block keys kb/vb
	 * [t,h] (those up to the query's own under causal); scores is
	 * scratch of t * (c + t) floats. Float32 throughout. */
	enum mtp_status (*block_attention)(struct mtp_backend *be,
					   enum gpu_act act, struct gpu_buf q,
					   struct gpu_buf kc, struct gpu_buf vc,
					   struct gpu_buf kb, struct gpu_buf vb,
					   struct gpu_buf scores,
					   struct gpu_buf o, int64_t c,
					   int64_t t, int64_t h, bool causal);
};

#define GPU_SCRATCH_MAX 96

/* Every GPU backend's context (be->ctx) starts with this. */
struct gpu_dev {
	const struct gpu_prims *prims;
	void *scratch[GPU_SCRATCH_MAX]; /* of the current launch */
	int n_scratch;
};

static inline struct gpu_dev *gpu_dev(struct mtp_backend *be)
{
	return (struct gpu_dev *)be->ctx;
}

static inline const struct gpu_prims *gpu_prims(struct mtp_backend *be)
{
	return gpu_dev(be)->prims;
}

/* Propagates a status. */
#define GPU_TRY(call)                                                          \
	do {                                                                   \
		enum mtp_status gpu_st_ = (call);                              \
		if (gpu_st_ != MTP_OK)                                         \
			return gpu_st_;                                        \
	} while (0)

/* The interface members a GPU backend takes from this layer as they are:
 * supports() (bf16, fp16 and fp32 activations, float8 projection weights
 * where the backend has linear_fp8, index tensors int32
 * or int64, parameters float32, the prims' limits; reads no data) and
 * launch() (every op of the table; releases the call's scratch). */
bool mtp_gpu_supports(struct mtp_backend *be, const struct mtp_call *c);
enum mtp_status mtp_gpu_launch(struct mtp_backend *be,
			       const struct mtp_call *c);

/* Scratch of the current launch (bytes == 0 may give a NULL buffer), and
 * the release of all of it (the first failure; every buffer is freed). */
enum mtp_status mtp_gpu_scratch(struct mtp_backend *be, size_t bytes,
				struct gpu_buf *out);
enum mtp_status mtp_gpu_scratch_release(struct mtp_backend *be);

#endif
