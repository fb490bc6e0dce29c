/*
 * The GPU composition layer's primitives (kernels/gpu/gpu.h) on the CUDA
 * kernels of nv_kernels.h, shared by the cuda and hip modules (hip compiles
 * this file through kernels/hip/vendor/, CUDA runtime names mapped to HIP):
 * stream-ordered scratch and copies, and one thin launcher per kernel
 * family that turns a buffer into its address and the launch status into
 * be->error. The GEMM is each module's own mtp_nv_linear (gemm.c on
 * cuBLASLt, kernels/hip/linear.c on the HIP GEMM kernel); the FP8 GEMM
 * (linear_fp8) is qgemm.cu's, in the CUDA build only (MTP_NV_FP8).
 */
#include "nv_internal.h"

_Static_assert((int)GPU_BF16 == (int)MTP_NV_BF16 &&
		       (int)GPU_F32 == (int)MTP_NV_F32 &&
		       (int)GPU_F16 == (int)MTP_NV_F16,
	       "gpu.h and nv_kernels.h number the activation types alike");
_Static_assert(GPU_EAGER == MTP_NV_EAGER && GPU_FUSED == MTP_NV_FUSED,
	       "gpu.h and nv_kernels.h number the roundings alike");
_Static_assert(GPU_NORM_SUM == MTP_NV_NORM_SUM &&
		       GPU_NORM_ONE_PLUS == MTP_NV_NORM_ONE_PLUS &&
		       GPU_REDUCE_MAX_P == MTP_NV_REDUCE_MAX_P,
	       "gpu.h and nv_kernels.h number the norm input and the most "
	       "partials alike");
_Static_assert(GPU_NORM_JOBS <= MTP_NV_NORM_JOBS,
	       "one rmsnorm launch takes every job of a call");

#define ACT(a) ((enum mtp_nv_act)(a))
#define P(b) gpu_ptr(b)
/* The stream of the backend. */
#define S(be) (nv_ctx(be)->stream)

/* A size-0 scratch is still an allocation: every pointer is a real one. */
static enum mtp_status scratch_alloc(struct mtp_backend *be, size_t bytes,
				     void **mem)
{
	*mem = NULL;
	NV_CHECK(be, "cudaMallocAsync",
		 cudaMallocAsync(mem, bytes ? bytes : 1, S(be)));
	return MTP_OK;
}

static enum mtp_status scratch_free(struct mtp_backend *be, void *mem)
{
	NV_CHECK(be, "cudaFreeAsync", cudaFreeAsync(mem, S(be)));
	return MTP_OK;
}

static enum mtp_status copy(struct mtp_backend *be, struct gpu_buf dst,
			    struct gpu_buf src, size_t bytes)
{
	return mtp_nv_copy(be, P(dst), P(src), bytes);
}

static enum mtp_status rmsnorm(struct mtp_backend *be, enum gpu_act act,
			       const struct gpu_norm_job *j, int njobs,
			       int64_t h, float eps, int rounding)
{
	struct mtp_nv_norm_job nj[MTP_NV_NORM_JOBS];

	if (njobs < 1 || njobs > MTP_NV_NORM_JOBS)
		return mtp_backend_fail(be, MTP_ERR_LIMIT,
					"rmsnorm: %d jobs in one launch",
					njobs);
	for (int i = 0; i < njobs; i++)
		nj[i] = (struct mtp_nv_norm_job){
			.x = P(j[i].x),
			.x_stride = j[i].x_stride,
			.ids = P(j[i].ids),
			.ids64 = j[i].ids64,
			.pos = P(j[i].pos),
			.pos64 = j[i].pos64,
			.w = P(j[i].w),
			.y = P(j[i].y),
			.y_stride = j[i].y_stride,
			.rows = j[i].rows,
		};
	NV_CHECK(be, "mtp_nv_rmsnorm",
		 mtp_nv_rmsnorm(ACT(act), nj, njobs, h, eps, rounding, S(be)));
	return MTP_OK;
}

static enum mtp_status add_rmsnorm(struct mtp_backend *be, enum gpu_act act,
				   struct gpu_buf x, struct gpu_buf res,
				   struct gpu_buf w, struct gpu_buf y,
				   struct gpu_buf rout, int64_t rows, int64_t h,
				   float eps, int rounding)
{
	NV_CHECK(be, "mtp_nv_add_rmsnorm",
		 mtp_nv_add_rmsnorm(ACT(act), P(x), P(res), P(w), P(y), P(rout),
				    rows, h, eps, rounding, S(be)));
	return MTP_OK;
}

static enum mtp_status embed(struct mtp_backend *be, enum gpu_act act,
			     struct gpu_buf table, struct gpu_buf ids,
			     bool ids64, struct gpu_buf out, int64_t t,
			     int64_t h)
{
	NV_CHECK(be, "mtp_nv_embed",
		 mtp_nv_embed(ACT(act), P(table), P(ids), ids64, P(out), t, h,
			      S(be)));
	return MTP_OK;
}

static enum mtp_status positions_add(struct mtp_backend *be, struct gpu_buf pos,
				     bool pos64, int64_t add,
				     struct gpu_buf out, int64_t t)
{
	NV_CHECK(be, "mtp_nv_positions_add",
		 mtp_nv_positions_add(P(pos), pos64, add, P(out), t, S(be)));
	return MTP_OK;
}

static enum mtp_status all_reduce(struct mtp_backend *be, enum gpu_act act,
				  struct gpu_buf parts, int64_t p, int64_t n,
				  struct gpu_buf out)
{
	NV_CHECK(be, "mtp_nv_all_reduce",
		 mtp_nv_all_reduce(ACT(act), P(parts), p, n, P(out), S(be)));
	return MTP_OK;
}

static enum mtp_status add_bcast(struct mtp_backend *be, enum gpu_act act,
				 struct gpu_buf a, struct gpu_buf b,
				 struct gpu_buf out, int64_t rows, int64_t rep,
				 int64_t h)
{
	NV_CHECK(be, "mtp_nv_add_bcast",
		 mtp_nv_add_bcast(ACT(act), P(a), P(b), P(out), rows, rep, h,
				  S(be)));
	return MTP_OK;
}

static enum mtp_status swiglu(struct mtp_backend *be, enum gpu_act act,
			      struct gpu_buf gate, struct gpu_buf up,
			      struct gpu_buf g, int64_t n)
{
	NV_CHECK(be, "mtp_nv_swiglu",
		 mtp_nv_swiglu(ACT(act), P(gate), P(up), P(g), n, S(be)));
	return MTP_OK;
}

static enum mtp_status linear(struct mtp_backend *be, enum gpu_act act,
			      bool logits, struct gpu_buf x, struct gpu_buf w,
			      struct gpu_buf y, int64_t rows, int64_t in,
			      int64_t out)
{
	return mtp_nv_linear(be, ACT(act), logits, P(x), P(w), P(y), rows, in,
			     out);
}

#ifdef MTP_NV_FP8
/* [§12.2] Under W8A8 the quantized rows and their scales go to scratch of
 * the launch. */
static enum mtp_status linear_fp8(struct mtp_backend *be, enum gpu_act act,
				  bool logits, struct gpu_buf x,
				  struct gpu_buf w, const struct gpu_fp8 *q,
				  struct gpu_buf y, int64_t rows, int64_t in,
				  int64_t out)
{
	struct gpu_buf xq = {0};

	if (q->w8a8 && rows > 0 && out > 0)
		GPU_TRY(mtp_gpu_scratch(be, MTP_NV_FP8_SCRATCH(rows, in), &xq));
	NV_CHECK(be, "mtp_nv_linear_fp8",
		 mtp_nv_linear_fp8(ACT(act), logits, P(x), P(w), P(q->scale),
				   q->e8m0, P(xq), q->act_eps, P(y), rows, in,
				   out, S(be)));
	return MTP_OK;
}
#endif

static enum mtp_status argmax(struct mtp_backend *be, struct gpu_buf logits,
			      struct gpu_buf token, bool tok64, int64_t rows,
			      int64_t v)
{
	NV_CHECK(be, "mtp_nv_argmax",
		 mtp_nv_argmax(P(logits), P(token), tok64, rows, v, S(be)));
	return MTP_OK;
}

static struct mtp_nv_hc_pre_args nv_hc_pre_args(const struct gpu_hc_pre_args *a)
{
	const struct mtp_nv_hc_pre_args na = {
		.residual = P(a->residual),
		.fn = P(a->fn),
		.scale = P(a->scale),
		.base = P(a->base),
		.norm_w = P(a->norm_w),
		.post_mix = P(a->post_mix),
		.comb_mix = P(a->comb_mix),
		.layer_input = P(a->layer_input),
		.t = a->t,
		.m = a->m,
		.h = a->h,
		.rms_eps = a->rms_eps,
		.pre_eps = a->pre_eps,
		.sinkhorn_eps = a->sinkhorn_eps,
		.post_mult = a->post_mult,
		.norm_eps = a->norm_eps,
		.sinkhorn_iters = a->sinkhorn_iters,
		.post_x = a->post_x.mem ? P(a->post_x) : NULL,
		.post_res = a->post_x.mem ? P(a->post_res) : NULL,
		.post_in = a->post_x.mem ? P(a->post_in) : NULL,
		.comb_in = a->post_x.mem ? P(a->comb_in) : NULL,
	};

	return na;
}

static enum mtp_status hc_pre(struct mtp_backend *be, enum gpu_act act,
			      const struct gpu_hc_pre_args *a)
{
	const struct mtp_nv_hc_pre_args na = nv_hc_pre_args(a);

	NV_CHECK(be, "mtp_nv_hc_pre", mtp_nv_hc_pre(ACT(act), &na, S(be)));
	return MTP_OK;
}

static enum mtp_status hc_post(struct mtp_backend *be, enum gpu_act act,
			       struct gpu_buf x, struct gpu_buf res,
			       struct gpu_buf post, struct gpu_buf comb,
			       struct gpu_buf out, int64_t t, int64_t m,
			       int64_t h)
{
	NV_CHECK(be, "mtp_nv_hc_post",
		 mtp_nv_hc_post(ACT(act), P(x), P(res), P(post), P(comb),
				P(out), t, m, h, S(be)));
	return MTP_OK;
}

static enum mtp_status hc_head(struct mtp_backend *be, enum gpu_act act,
			       struct gpu_buf x, struct gpu_buf fn,
			       struct gpu_buf scale, struct gpu_buf base,
			       struct gpu_buf y, int64_t t, int64_t m,
			       int64_t h, float rms_eps, float hc_eps,
			       bool rocm)
{
	NV_CHECK(be, "mtp_nv_hc_head",
		 mtp_nv_hc_head(ACT(act), P(x), P(fn), P(scale), P(base), P(y),
				t, m, h, rms_eps, hc_eps,
				rocm ? MTP_NV_HEAD_ROCM : MTP_NV_HEAD_CUDA,
				S(be)));
	return MTP_OK;
}

#ifdef MTP_NV_STEPS /* steps.cu: the CUDA build only */
static enum mtp_status convert(struct mtp_backend *be, enum gpu_act from,
			       enum gpu_act to, struct gpu_buf x,
			       struct gpu_buf y, int64_t n)
{
	NV_CHECK(be, "mtp_nv_convert",
		 mtp_nv_convert(ACT(from), ACT(to), P(x), P(y), n, S(be)));
	return MTP_OK;
}

static enum mtp_status reduce_ordered(struct mtp_backend *be, enum gpu_act act,
				      struct gpu_buf parts, int64_t p,
				      int64_t rows, int64_t h, int order,
				      struct gpu_buf out)
{
	NV_CHECK(be, "mtp_nv_reduce_ordered",
		 mtp_nv_reduce_ordered(ACT(act), P(parts), p, rows, h, order,
				       P(out), S(be)));
	return MTP_OK;
}

static enum mtp_status hc_pre_delayed(struct mtp_backend *be, enum gpu_act act,
				      const struct gpu_hc_pre_args *a,
				      struct gpu_buf pre_in,
				      struct gpu_buf pre_out)
{
	const struct mtp_nv_hc_pre_args na = nv_hc_pre_args(a);

	NV_CHECK(be, "mtp_nv_hc_pre_delayed",
		 mtp_nv_hc_pre_delayed(ACT(act), &na, P(pre_in), P(pre_out),
				       S(be)));
	return MTP_OK;
}

static enum mtp_status hc_collapse(struct mtp_backend *be, enum gpu_act act,
				   struct gpu_buf x, struct gpu_buf pre,
				   struct gpu_buf y, int64_t t, int64_t m,
				   int64_t h)
{
	NV_CHECK(be, "mtp_nv_hc_collapse",
		 mtp_nv_hc_collapse(ACT(act), P(x), P(pre), P(y), t, m, h,
				    S(be)));
	return MTP_OK;
}

static enum mtp_status confidence(struct mtp_backend *be, enum gpu_act act,
				  struct gpu_buf hidden, struct gpu_buf embed,
				  struct gpu_buf w, struct gpu_buf bias,
				  struct gpu_buf conf, int64_t t, int64_t h,
				  int64_t r)
{
	NV_CHECK(be, "mtp_nv_confidence",
		 mtp_nv_confidence(ACT(act), P(hidden), P(embed), P(w), P(bias),
				   P(conf), t, h, r, S(be)));
	return MTP_OK;
}

static enum mtp_status scale(struct mtp_backend *be, enum gpu_act act,
			     struct gpu_buf x, struct gpu_buf y, int64_t n,
			     float s)
{
	NV_CHECK(be, "mtp_nv_scale",
		 mtp_nv_scale(ACT(act), P(x), P(y), n, s, S(be)));
	return MTP_OK;
}

static enum mtp_status rope(struct mtp_backend *be, enum gpu_act act,
			    struct gpu_buf x, struct gpu_buf pos, bool pos64,
			    struct gpu_buf y, int64_t rows, int64_t h)
{
	NV_CHECK(be, "mtp_nv_rope",
		 mtp_nv_rope(ACT(act), P(x), P(pos), pos64, P(y), rows, h,
			     S(be)));
	return MTP_OK;
}

static enum mtp_status block_attention(struct mtp_backend *be, enum gpu_act act,
				       struct gpu_buf q, struct gpu_buf kc,
				       struct gpu_buf vc, struct gpu_buf kb,
				       struct gpu_buf vb, struct gpu_buf scores,
				       struct gpu_buf o, int64_t c, int64_t t,
				       int64_t h, bool causal)
{
	NV_CHECK(be, "mtp_nv_block_attention",
		 mtp_nv_block_attention(ACT(act), P(q), P(kc), P(vc), P(kb),
					P(vb), (float *)P(scores), P(o), c, t,
					h, causal, S(be)));
	return MTP_OK;
}
#endif

const struct gpu_prims mtp_nv_prims = {
	.max_m = MTP_NV_HC_MAX_M,
	.hc_pre_fuses_post = true,
	.max_rows =
		1LL << 31, /* every kernel indexes rows with a 32-bit grid */
	.scratch_alloc = scratch_alloc,
	.scratch_free = scratch_free,
	.copy = copy,
	.rmsnorm = rmsnorm,
	.add_rmsnorm = add_rmsnorm,
	.embed = embed,
	.positions_add = positions_add,
	.all_reduce = all_reduce,
	.add_bcast = add_bcast,
	.swiglu = swiglu,
	.linear = linear,
#ifdef MTP_NV_FP8
	.linear_fp8 = linear_fp8, /* qgemm.cu: not in the HIP build */
#endif
	.argmax = argmax,
	.hc_pre = hc_pre,
	.hc_post = hc_post,
	.hc_head = hc_head,
#ifdef MTP_NV_STEPS
	.convert = convert,
	.reduce_ordered = reduce_ordered,
	.hc_collapse = hc_collapse,
	.confidence = confidence,
	.hc_pre_delayed = hc_pre_delayed,
	.scale = scale, /* dspark.cu */
	.rope = rope,
	.block_attention = block_attention,
#endif
};
