/*
 * The boundary between the C host code of the CUDA backend and its device
 * code: plain C launchers, one per kernel family, each enqueuing on a stream
 * and returning the launch status (cudaGetLastError). Activations are
 * bfloat16, float16 or float32 (enum mtp_nv_act); mHC parameters and mixes float32;
 * index tensors int32 or int64 (the *64 flags). Every kernel accumulates in
 * float32 and rounds to the activation type exactly where SPEC.md stores.
 */
#ifndef MTP_NV_KERNELS_H
#define MTP_NV_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#ifdef __cplusplus
extern "C" {
#endif

enum mtp_nv_act { MTP_NV_BF16, MTP_NV_F32, MTP_NV_F16 };

/* Values of enum mtp_rounding / mtp_hc_head_variant (mtp/ref.h). */
#define MTP_NV_EAGER 0
#define MTP_NV_FUSED 1
/* Or'ed into add_rmsnorm's rounding: y from the unrounded sum (gpu.h's
 * GPU_NORM_SUM, SPEC.md §12.1 add_norm_input = sum). */
#define MTP_NV_NORM_SUM 2
/* Or'ed into a norm's rounding: w multiplies as f32(1 + w) (gpu.h's
 * GPU_NORM_ONE_PLUS, SPEC.md §2.6 zero-centred norms). */
#define MTP_NV_NORM_ONE_PLUS 4
/* The most partials of mtp_nv_reduce_ordered (gpu.h's GPU_REDUCE_MAX_P). */
#define MTP_NV_REDUCE_MAX_P 64
#define MTP_NV_HEAD_CUDA 0
#define MTP_NV_HEAD_ROCM 1

/* Largest hc_mult the mHC kernels are built for. */
#define MTP_NV_HC_MAX_M 8

/*
 * One set of rows to RMS-normalise: row r reads x + r * x_stride, or
 * x + ids[r] * x_stride when ids is given (an embedding gather); it reads as
 * zeros when pos is given and pos[r] == 0 (the position-0 mask, a select);
 * it writes y + r * y_stride. Strides are in elements.
 */
struct mtp_nv_norm_job {
	const void *x;
	int64_t x_stride;
	const void *ids;
	int ids64;
	const void *pos;
	int pos64;
	const void *w;
	void *y;
	int64_t y_stride;
	int64_t rows;
};

#define MTP_NV_NORM_JOBS 2

/* Up to MTP_NV_NORM_JOBS jobs of width h in one launch [§2.1/§2.2]. */
cudaError_t mtp_nv_rmsnorm(enum mtp_nv_act act,
			   const struct mtp_nv_norm_job *jobs, int njobs,
			   int64_t h, float eps, int rounding, cudaStream_t s);

/* [§2.3] residual_out = act(x + residual); y = RMSNorm(residual_out) with
 * the variance of the unrounded sum. */
cudaError_t mtp_nv_add_rmsnorm(enum mtp_nv_act act, const void *x,
			       const void *residual, const void *w, void *y,
			       void *residual_out, int64_t rows, int64_t h,
			       float eps, int rounding, cudaStream_t s);

/* out[t,:] = table[ids[t],:]. */
cudaError_t mtp_nv_embed(enum mtp_nv_act act, const void *table,
			 const void *ids, int ids64, void *out, int64_t t,
			 int64_t h, cudaStream_t s);

/* out[t] = pos[t] + add, as int64. */
cudaError_t mtp_nv_positions_add(const void *pos, int pos64, int64_t add,
				 int64_t *out, int64_t t, cudaStream_t s);

/* out[i] = act(sum_p parts[p * n + i]). */
cudaError_t mtp_nv_all_reduce(enum mtp_nv_act act, const void *parts, int64_t p,
			      int64_t n, void *out, cudaStream_t s);

/* out[(r*rep + k)*h + i] = act(a[(r*rep + k)*h + i] + b[r*h + i]) for
 * r < rows, k < rep: a bf16 add, b broadcast over rep. */
cudaError_t mtp_nv_add_bcast(enum mtp_nv_act act, const void *a, const void *b,
			     void *out, int64_t rows, int64_t rep, int64_t h,
			     cudaStream_t s);

/* g[i] = act(silu(gate[i]) * up[i]), silu in float32 [§10]. */
cudaError_t mtp_nv_swiglu(enum mtp_nv_act act, const void *gate, const void *up,
			  void *g, int64_t n, cudaStream_t s);

/* [§4.4.1] hc_pre for t tokens (one block each). */
struct mtp_nv_hc_pre_args {
	const void *residual; /* [T,M,H] act */
	const float *fn, *scale, *base;
	const void *norm_w; /* [H] act, or NULL */
	float *post_mix, *comb_mix;
	void *layer_input; /* [T,H] act */
	int64_t t, m, h;
	float rms_eps, pre_eps, sinkhorn_eps, post_mult, norm_eps;
	int sinkhorn_iters;
	/* hc_fused_post_pre [§4.4.3]: with post_x, residual is first written
	 * as hc_post(post_x, post_res, post_in, comb_in); NULL otherwise. */
	const void *post_x, *post_res;
	const float *post_in, *comb_in;
};

cudaError_t mtp_nv_hc_pre(enum mtp_nv_act act,
			  const struct mtp_nv_hc_pre_args *a, cudaStream_t s);

/* [§4.4.2] out[t,j,:] = act(post[t,j] x[t,:] + sum_i C[t,i,j] R[t,i,:]). */
cudaError_t mtp_nv_hc_post(enum mtp_nv_act act, const void *x,
			   const void *residual, const float *post_mix,
			   const float *comb_mix, void *out, int64_t t,
			   int64_t m, int64_t h, cudaStream_t s);

/* [§4.4.4] y [T,H] from x [T,M,H], variant MTP_NV_HEAD_*. */
cudaError_t mtp_nv_hc_head(enum mtp_nv_act act, const void *x, const float *fn,
			   const float *scale, const float *base, void *y,
			   int64_t t, int64_t m, int64_t h, float rms_eps,
			   float hc_eps, int variant, cudaStream_t s);

/* [§12.2] y [rows,out] = x . w^T with w float8_e4m3fn [out,in] and its
 * block scales [ceil(out/128), ceil(in/128)] (float32, or e8m0 bytes);
 * weight-only when xq is NULL, else W8A8: xq is scratch of
 * MTP_NV_FP8_SCRATCH(rows, in) bytes for the quantized rows and their
 * scales. logits: y is float32. CUDA only (qgemm.cu). */
#define MTP_NV_FP8_SCRATCH(rows, in)                                           \
	((size_t)(rows) * (size_t)((in) + ((in) + 127) / 128) * 4 + 16)
cudaError_t mtp_nv_linear_fp8(enum mtp_nv_act act, int logits, const void *x,
			      const uint8_t *w, const void *scale, int e8m0,
			      void *xq, float act_eps, void *y, int64_t rows,
			      int64_t in, int64_t out, cudaStream_t s);

/* An empty kernel of one warp (the launch floor, for the benchmark). */
cudaError_t mtp_nv_empty(cudaStream_t s);

/* token[r] = torch.argmax(logits[r,:]): the first NaN, else the first
 * maximum. */
cudaError_t mtp_nv_argmax(const float *logits, void *token, int tok64,
			  int64_t rows, int64_t v, cudaStream_t s);

/* steps.cu (CUDA only, not in the HIP build): the captured and
 * tensor-parallel steps' and the DSpark ops' kernels (gpu.h's optional
 * primitives). */
/* y[i] = to(from(x[i])). */
cudaError_t mtp_nv_convert(enum mtp_nv_act from, enum mtp_nv_act to,
			   const void *x, void *y, int64_t n, cudaStream_t s);
/* [§2.5] out [rows,h] = parts [p,rows,h] summed in order (enum
 * mtp_reduce_order), p <= MTP_NV_REDUCE_MAX_P. */
cudaError_t mtp_nv_reduce_ordered(enum mtp_nv_act act, const void *parts,
				  int64_t p, int64_t rows, int64_t h, int order,
				  void *out, cudaStream_t s);
/* [§13 Step DS-4] hc_pre's mixes, the pre-mix into pre_out [T,M], the
 * layer input collapsed with pre_in [T,M] (NULL: stream 0) (hc_pre_delayed.cu). */
cudaError_t mtp_nv_hc_pre_delayed(enum mtp_nv_act act,
				  const struct mtp_nv_hc_pre_args *a,
				  const float *pre_in, float *pre_out,
				  cudaStream_t s);
/* [§13 Step DS-5] y[t,:] = act(sum_s pre[t,s] x[t,s,:]). */
cudaError_t mtp_nv_hc_collapse(enum mtp_nv_act act, const void *x,
			       const float *pre, void *y, int64_t t, int64_t m,
			       int64_t h, cudaStream_t s);
/* [§13 Step DS-7] conf[t] = sigmoid(w . [hidden[t]; embed[t]] + bias). */
cudaError_t mtp_nv_confidence(enum mtp_nv_act act, const void *hidden,
			      const void *embed, const float *w,
			      const float *bias, float *conf, int64_t t,
			      int64_t h, int64_t r, cudaStream_t s);

/* dspark.cu (CUDA only): the synthetic DSpark step's kernels [§13.9]. */
/* [Step DS-6] y[i] = act(s * x[i]). */
cudaError_t mtp_nv_scale(enum mtp_nv_act act, const void *x, void *y, int64_t n,
			 float s, cudaStream_t st);
/* y [rows,h] = rope(x, pos[r]) (theta_i = 10000^(-2i/h), an odd h's last
 * element as it is); y may be x. */
cudaError_t mtp_nv_rope(enum mtp_nv_act act, const void *x, const void *pos,
			int pos64, void *y, int64_t rows, int64_t h,
			cudaStream_t s);
/* o [t,h] = act(softmax(q . k^T / sqrt(h)) v) over the c context keys and
 * the t block keys (those up to i under causal); scores: t * (c + t)
 * floats of scratch. */
cudaError_t mtp_nv_block_attention(enum mtp_nv_act act, const void *q,
				   const void *kc, const void *vc,
				   const void *kb, const void *vb,
				   float *scores, void *o, int64_t c, int64_t t,
				   int64_t h, int causal, cudaStream_t s);

#ifdef __cplusplus
}
#endif

#endif
