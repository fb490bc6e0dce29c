/*
 * The GPU composition layer's primitives (kernels/gpu/gpu.h) on the OpenCL
 * C kernels, shared by the opencl and level_zero backends: each launcher
 * packs its arguments in the kernel's order (a buffer is a pointer and a
 * byte offset) and picks the range: one work-group of OCL_WG per row for
 * the reductions, 16 x 16 tiles for the GEMM, OCL_EW-wide groups for the
 * element-wise kernels. An empty range enqueues nothing. Scratch and
 * copies go to the platform's struct ocl_dev_ops.
 */
#include <stdint.h>
#include <string.h>

#include "ocl_internal.h"

#define N_ARGS(a) ((int)(sizeof(a) / sizeof((a)[0])))

const char *const mtp_ocl_kernel_names[OCL_K_COUNT] = {
	[OCL_K_RMSNORM] = "mtp_rmsnorm",
	[OCL_K_ADD_RMSNORM] = "mtp_add_rmsnorm",
	[OCL_K_EMBED] = "mtp_embed",
	[OCL_K_POSITIONS_ADD] = "mtp_positions_add",
	[OCL_K_ALL_REDUCE] = "mtp_all_reduce",
	[OCL_K_ADD_BCAST] = "mtp_add_bcast",
	[OCL_K_SWIGLU] = "mtp_swiglu",
	[OCL_K_GEMM] = "mtp_gemm",
	[OCL_K_ARGMAX] = "mtp_argmax",
	[OCL_K_HC_PRE] = "mtp_hc_pre",
	[OCL_K_HC_POST] = "mtp_hc_post",
	[OCL_K_HC_HEAD] = "mtp_hc_head",
	[OCL_K_FP8_QUANT] = "mtp_fp8_quant",
	[OCL_K_FP8_GEMM] = "mtp_fp8_gemm",
	[OCL_K_CONVERT] = "mtp_convert",
	[OCL_K_REDUCE_ORDERED] = "mtp_reduce_ordered",
	[OCL_K_HC_COLLAPSE] = "mtp_hc_collapse",
	[OCL_K_CONFIDENCE] = "mtp_confidence",
	[OCL_K_HC_PRE_DELAYED] = "mtp_hc_pre_delayed",
	[OCL_K_SCALE] = "mtp_scale",
	[OCL_K_ROPE] = "mtp_rope",
	[OCL_K_BLOCK_SCORES] = "mtp_block_scores",
	[OCL_K_BLOCK_ATTEND] = "mtp_block_attend",
};

static size_t round_up(int64_t n, size_t m)
{
	return ((size_t)n + m - 1) / m * m;
}

/* Enqueues k over n0 x n1 items in groups of l0 x l1 (ranges rounded up;
 * the kernels check their bounds). */
static enum mtp_status run(struct mtp_backend *be, enum ocl_kernel k,
			   const struct ocl_arg *a, int n, int64_t n0,
			   int64_t n1, size_t l0, size_t l1)
{
	const uint32_t lws[2] = {(uint32_t)l0, (uint32_t)l1};
	struct ocl_flat_arg flat[OCL_MAX_FLAT];
	uint32_t groups[2];
	int nf;

	if (n0 <= 0 || n1 <= 0)
		return MTP_OK;
	if (round_up(n0, l0) / l0 > UINT32_MAX ||
	    round_up(n1, l1) / l1 > UINT32_MAX)
		return mtp_backend_fail(be, MTP_ERR_LIMIT,
					"%s: more than 2^32 work-groups",
					mtp_ocl_kernel_names[k]);
	groups[0] = (uint32_t)(round_up(n0, l0) / l0);
	groups[1] = (uint32_t)(round_up(n1, l1) / l1);
	nf = mtp_ocl_flatten(a, n, flat, OCL_MAX_FLAT);
	if (nf < 0)
		return mtp_backend_fail(be, MTP_ERR_LIMIT,
					"%s: more than %d kernel arguments",
					mtp_ocl_kernel_names[k], OCL_MAX_FLAT);
	return ocl_ops(be)->run(be, k, flat, nf, groups, lws);
}

/* One work-group per row. */
static enum mtp_status run_rows(struct mtp_backend *be, enum ocl_kernel k,
				const struct ocl_arg *a, int n, int64_t rows)
{
	return run(be, k, a, n, rows * OCL_WG, 1, OCL_WG, 1);
}

static enum mtp_status norm_one(struct mtp_backend *be, enum gpu_act act,
				const struct gpu_norm_job *j, int64_t h,
				float eps, int rounding)
{
	const struct ocl_arg a[] = {
		OA_BUF(j->x),	     OA_I64(j->x_stride),
		OA_BUF(j->ids),	     OA_I32(j->ids.mem ? j->ids64 : -1),
		OA_BUF(j->pos),	     OA_I32(j->pos.mem ? j->pos64 : -1),
		OA_BUF(j->w),	     OA_BUF(j->y),
		OA_I64(j->y_stride), OA_I64(h),
		OA_F32(eps),	     OA_I32(rounding),
		OA_I32(act),	     OA_LOCAL(OCL_LM_ROW),
	};

	return h ? run_rows(be, OCL_K_RMSNORM, a, N_ARGS(a), j->rows) : MTP_OK;
}

/* One launch per job. */
static enum mtp_status k_rmsnorm(struct mtp_backend *be, enum gpu_act act,
				 const struct gpu_norm_job *j, int njobs,
				 int64_t h, float eps, int rounding)
{
	for (int i = 0; i < njobs; i++)
		OCL_TRY(norm_one(be, act, &j[i], h, eps, rounding));
	return MTP_OK;
}

static enum mtp_status k_add_rmsnorm(struct mtp_backend *be, enum gpu_act act,
				     struct gpu_buf x, struct gpu_buf res,
				     struct gpu_buf w, struct gpu_buf y,
				     struct gpu_buf rout, int64_t rows,
				     int64_t h, float eps, int rounding)
{
	const struct ocl_arg a[] = {
		OA_BUF(x),    OA_BUF(res),
		OA_BUF(w),    OA_BUF(y),
		OA_BUF(rout), OA_I64(h),
		OA_F32(eps),  OA_I32(rounding),
		OA_I32(act),  OA_LOCAL(OCL_LM_ROW),
	};

	return h ? run_rows(be, OCL_K_ADD_RMSNORM, a, N_ARGS(a), rows) : MTP_OK;
}

static enum mtp_status k_embed(struct mtp_backend *be, enum gpu_act act,
			       struct gpu_buf table, struct gpu_buf ids,
			       bool ids64, struct gpu_buf out, int64_t t,
			       int64_t h)
{
	const struct ocl_arg a[] = {
		OA_BUF(table), OA_BUF(ids), OA_I32(ids64), OA_BUF(out),
		OA_I64(t),     OA_I64(h),   OA_I32(act),
	};

	return run(be, OCL_K_EMBED, a, N_ARGS(a), h, t, OCL_EW, 1);
}

static enum mtp_status k_positions_add(struct mtp_backend *be,
				       struct gpu_buf pos, bool pos64,
				       int64_t add, struct gpu_buf out,
				       int64_t t)
{
	const struct ocl_arg a[] = {
		OA_BUF(pos), OA_I32(pos64), OA_I64(add), OA_BUF(out), OA_I64(t),
	};

	return run(be, OCL_K_POSITIONS_ADD, a, N_ARGS(a), t, 1, OCL_EW, 1);
}

static enum mtp_status k_all_reduce(struct mtp_backend *be, enum gpu_act act,
				    struct gpu_buf parts, int64_t p, int64_t n,
				    struct gpu_buf out)
{
	const struct ocl_arg a[] = {
		OA_BUF(parts), OA_I64(p), OA_I64(n), OA_BUF(out), OA_I32(act),
	};

	return run(be, OCL_K_ALL_REDUCE, a, N_ARGS(a), n, 1, OCL_EW, 1);
}

static enum mtp_status k_add_bcast(struct mtp_backend *be, enum gpu_act act,
				   struct gpu_buf x, struct gpu_buf b,
				   struct gpu_buf out, int64_t rows,
				   int64_t rep, int64_t h)
{
	const struct ocl_arg a[] = {
		OA_BUF(x),   OA_BUF(b), OA_BUF(out), OA_I64(rows * rep),
		OA_I64(rep), OA_I64(h), OA_I32(act),
	};

	return run(be, OCL_K_ADD_BCAST, a, N_ARGS(a), h, rows * rep, OCL_EW, 1);
}

static enum mtp_status k_swiglu(struct mtp_backend *be, enum gpu_act act,
				struct gpu_buf gate, struct gpu_buf up,
				struct gpu_buf g, int64_t n)
{
	const struct ocl_arg a[] = {
		OA_BUF(gate), OA_BUF(up), OA_BUF(g), OA_I64(n), OA_I32(act),
	};

	return run(be, OCL_K_SWIGLU, a, N_ARGS(a), n, 1, OCL_EW, 1);
}

static enum mtp_status k_linear(struct mtp_backend *be, enum gpu_act act,
				bool logits, struct gpu_buf x, struct gpu_buf w,
				struct gpu_buf y, int64_t rows, int64_t in,
				int64_t out)
{
	const struct ocl_arg a[] = {
		OA_BUF(x),	OA_BUF(w),   OA_BUF(y),
		OA_I64(rows),	OA_I64(in),  OA_I64(out),
		OA_I32(logits), OA_I32(act), OA_LOCAL(OCL_LM_GEMM),
	};

	return run(be, OCL_K_GEMM, a, N_ARGS(a), out, rows, OCL_TILE, OCL_TILE);
}

/* [§12.2] W8A8: the rows quantized per group of 128 into scratch *xs
 * (float32 values [rows,in], then the scales [rows,ng]). */
static enum mtp_status fp8_quant(struct mtp_backend *be, enum gpu_act act,
				 struct gpu_buf x, float eps, int64_t rows,
				 int64_t in, struct gpu_buf *xs)
{
	const int64_t ng = (in + 127) / 128;

	GPU_TRY(mtp_gpu_scratch(be, (size_t)(rows * (in + ng)) * sizeof(float),
				xs));
	const struct ocl_arg a[] = {
		OA_BUF(x),  OA_BUF(*xs), OA_I64(rows),
		OA_I64(in), OA_F32(eps), OA_I32(act),
	};

	return run(be, OCL_K_FP8_QUANT, a, N_ARGS(a), rows * ng, 1, OCL_EW, 1);
}

/* [§12.2] linear with a float8 weight, its activations quantized first
 * under W8A8. */
static enum mtp_status k_linear_fp8(struct mtp_backend *be, enum gpu_act act,
				    bool logits, struct gpu_buf x,
				    struct gpu_buf w, const struct gpu_fp8 *q,
				    struct gpu_buf y, int64_t rows, int64_t in,
				    int64_t out)
{
	struct gpu_buf xs = x;

	if (rows <= 0 || out <= 0)
		return MTP_OK;
	if (q->w8a8)
		OCL_TRY(fp8_quant(be, act, x, q->act_eps, rows, in, &xs));

	const struct ocl_arg a[] = {
		OA_BUF(xs),	OA_BUF(w),	 OA_BUF(q->scale),
		OA_BUF(y),	OA_I64(rows),	 OA_I64(in),
		OA_I64(out),	OA_I32(q->e8m0), OA_I32(q->w8a8),
		OA_I32(logits), OA_I32(act),
	};

	return run(be, OCL_K_FP8_GEMM, a, N_ARGS(a), out, rows, OCL_TILE,
		   OCL_TILE);
}

static enum mtp_status k_argmax(struct mtp_backend *be, struct gpu_buf logits,
				struct gpu_buf token, bool tok64, int64_t rows,
				int64_t v)
{
	const struct ocl_arg a[] = {
		OA_BUF(logits), OA_BUF(token),		 OA_I32(tok64),
		OA_I64(v),	OA_LOCAL(OCL_LM_ARGMAX),
	};

	return v ? run_rows(be, OCL_K_ARGMAX, a, N_ARGS(a), rows) : MTP_OK;
}

/* hc_pre, or with pre_out given DSpark's delayed form (pre_in may be
 * absent). */
static enum mtp_status hc_pre_run(struct mtp_backend *be, enum gpu_act act,
				  const struct gpu_hc_pre_args *p,
				  struct gpu_buf pre_in, struct gpu_buf pre_out)
{
	const struct ocl_arg head[] = {
		OA_BUF(p->residual), OA_BUF(p->fn),
		OA_BUF(p->scale),    OA_BUF(p->base),
		OA_BUF(p->norm_w),   OA_BUF(p->post_mix),
		OA_BUF(p->comb_mix), OA_BUF(p->layer_input),
	};
	const struct ocl_arg delayed[] = {
		OA_BUF(pre_in),
		OA_I32(pre_in.mem != NULL),
		OA_BUF(pre_out),
	};
	const struct ocl_arg tail[] = {
		OA_I32(p->m),
		OA_I64(p->h),
		OA_F32(p->rms_eps),
		OA_F32(p->pre_eps),
		OA_F32(p->sinkhorn_eps),
		OA_F32(p->post_mult),
		OA_F32(p->norm_eps),
		OA_I32(p->sinkhorn_iters),
		OA_I32(p->norm_w.mem != NULL),
		OA_I32(act),
		OA_LOCAL(OCL_LM_HC_PRE),
	};
	const int nh = N_ARGS(head), nd = pre_out.mem ? N_ARGS(delayed) : 0;
	struct ocl_arg a[N_ARGS(head) + N_ARGS(delayed) + N_ARGS(tail)];

	memcpy(a, head, sizeof(head));
	memcpy(a + nh, delayed, (size_t)nd * sizeof(a[0]));
	memcpy(a + nh + nd, tail, sizeof(tail));
	return p->h ? run_rows(be,
			       pre_out.mem ? OCL_K_HC_PRE_DELAYED
					   : OCL_K_HC_PRE,
			       a, nh + nd + N_ARGS(tail), p->t)
		    : MTP_OK;
}

static enum mtp_status k_hc_pre(struct mtp_backend *be, enum gpu_act act,
				const struct gpu_hc_pre_args *p)
{
	const struct gpu_buf none = {0};

	return hc_pre_run(be, act, p, none, none);
}

static enum mtp_status k_hc_pre_delayed(struct mtp_backend *be,
					enum gpu_act act,
					const struct gpu_hc_pre_args *p,
					struct gpu_buf pre_in,
					struct gpu_buf pre_out)
{
	return hc_pre_run(be, act, p, pre_in, pre_out);
}

static enum mtp_status k_hc_post(struct mtp_backend *be, enum gpu_act act,
				 struct gpu_buf x, struct gpu_buf res,
				 struct gpu_buf post, struct gpu_buf comb,
				 struct gpu_buf out, int64_t t, int64_t m,
				 int64_t h)
{
	const struct ocl_arg a[] = {
		OA_BUF(x), OA_BUF(res), OA_BUF(post), OA_BUF(comb), OA_BUF(out),
		OA_I64(t), OA_I32(m),	OA_I64(h),    OA_I32(act),
	};

	return m ? run(be, OCL_K_HC_POST, a, N_ARGS(a), h, t, OCL_EW, 1)
		 : MTP_OK;
}

static enum mtp_status k_hc_head(struct mtp_backend *be, enum gpu_act act,
				 struct gpu_buf x, struct gpu_buf fn,
				 struct gpu_buf scale, struct gpu_buf base,
				 struct gpu_buf y, int64_t t, int64_t m,
				 int64_t h, float rms_eps, float hc_eps,
				 bool rocm)
{
	const struct ocl_arg a[] = {
		OA_BUF(x),    OA_BUF(fn),      OA_BUF(scale),
		OA_BUF(base), OA_BUF(y),       OA_I32(m),
		OA_I64(h),    OA_F32(rms_eps), OA_F32(hc_eps),
		OA_I32(rocm), OA_I32(act),     OA_LOCAL(OCL_LM_HC_HEAD),
	};

	return h ? run_rows(be, OCL_K_HC_HEAD, a, N_ARGS(a), t) : MTP_OK;
}

static enum mtp_status k_convert(struct mtp_backend *be, enum gpu_act from,
				 enum gpu_act to, struct gpu_buf x,
				 struct gpu_buf y, int64_t n)
{
	const struct ocl_arg a[] = {
		OA_BUF(x), OA_BUF(y), OA_I64(n), OA_I32(from), OA_I32(to),
	};

	return run(be, OCL_K_CONVERT, a, N_ARGS(a), n, 1, OCL_EW, 1);
}

static enum mtp_status k_reduce_ordered(struct mtp_backend *be,
					enum gpu_act act, struct gpu_buf parts,
					int64_t p, int64_t rows, int64_t h,
					int order, struct gpu_buf out)
{
	const struct ocl_arg a[] = {
		OA_BUF(parts), OA_I64(p),     OA_I64(rows * h), OA_I64(h),
		OA_BUF(out),   OA_I32(order), OA_I32(act),
	};

	if (p > GPU_REDUCE_MAX_P)
		return mtp_backend_fail(be, MTP_ERR_LIMIT,
					"reduce_ordered: %lld parts",
					(long long)p);
	return h ? run(be, OCL_K_REDUCE_ORDERED, a, N_ARGS(a), rows * h, 1,
		       OCL_EW, 1)
		 : MTP_OK;
}

static enum mtp_status k_hc_collapse(struct mtp_backend *be, enum gpu_act act,
				     struct gpu_buf x, struct gpu_buf pre,
				     struct gpu_buf y, int64_t t, int64_t m,
				     int64_t h)
{
	const struct ocl_arg a[] = {
		OA_BUF(x), OA_BUF(pre), OA_BUF(y),   OA_I64(t),
		OA_I32(m), OA_I64(h),	OA_I32(act),
	};

	return m ? run(be, OCL_K_HC_COLLAPSE, a, N_ARGS(a), h, t, OCL_EW, 1)
		 : MTP_OK;
}

static enum mtp_status k_confidence(struct mtp_backend *be, enum gpu_act act,
				    struct gpu_buf hidden, struct gpu_buf embed,
				    struct gpu_buf w, struct gpu_buf bias,
				    struct gpu_buf conf, int64_t t, int64_t h,
				    int64_t r)
{
	const struct ocl_arg a[] = {
		OA_BUF(hidden),
		OA_BUF(embed),
		OA_BUF(w),
		OA_BUF(bias),
		OA_I32(bias.mem != NULL),
		OA_BUF(conf),
		OA_I64(h),
		OA_I64(r),
		OA_I32(act),
		OA_LOCAL(OCL_LM_ROW),
	};

	return run_rows(be, OCL_K_CONFIDENCE, a, N_ARGS(a), t);
}

static enum mtp_status k_scale(struct mtp_backend *be, enum gpu_act act,
			       struct gpu_buf x, struct gpu_buf y, int64_t n,
			       float s)
{
	const struct ocl_arg a[] = {
		OA_BUF(x), OA_BUF(y), OA_I64(n), OA_F32(s), OA_I32(act),
	};

	return run(be, OCL_K_SCALE, a, N_ARGS(a), n, 1, OCL_EW, 1);
}

/* Item (i, r) for i < h - h/2: a rotated pair, or an odd h's last one. */
static enum mtp_status k_rope(struct mtp_backend *be, enum gpu_act act,
			      struct gpu_buf x, struct gpu_buf pos, bool pos64,
			      struct gpu_buf y, int64_t rows, int64_t h)
{
	const struct ocl_arg a[] = {
		OA_BUF(x),    OA_BUF(pos), OA_I32(pos64), OA_BUF(y),
		OA_I64(rows), OA_I64(h),   OA_I32(act),
	};

	return run(be, OCL_K_ROPE, a, N_ARGS(a), h - h / 2, rows, OCL_EW, 1);
}

/* The scores, item (key, query); then one work-group per query. */
static enum mtp_status
k_block_attention(struct mtp_backend *be, enum gpu_act act, struct gpu_buf q,
		  struct gpu_buf kc, struct gpu_buf vc, struct gpu_buf kb,
		  struct gpu_buf vb, struct gpu_buf scores, struct gpu_buf o,
		  int64_t c, int64_t t, int64_t h, bool causal)
{
	const struct ocl_arg s[] = {
		OA_BUF(q),	OA_BUF(kc),	OA_BUF(kb),
		OA_BUF(scores), OA_I64(c),	OA_I64(t),
		OA_I64(h),	OA_I32(causal), OA_I32(act),
	};
	const struct ocl_arg a[] = {
		OA_BUF(scores), OA_BUF(vc),
		OA_BUF(vb),	OA_BUF(o),
		OA_I64(c),	OA_I64(t),
		OA_I64(h),	OA_I32(causal),
		OA_I32(act),	OA_LOCAL(OCL_LM_ROW),
	};

	if (h == 0)
		return MTP_OK;
	OCL_TRY(run(be, OCL_K_BLOCK_SCORES, s, N_ARGS(s), c + t, t, OCL_EW, 1));
	return run_rows(be, OCL_K_BLOCK_ATTEND, a, N_ARGS(a), t);
}

/* Scratch: nothing for an empty buffer, else a device buffer of the
 * platform's, released in queue order. */
static enum mtp_status scratch_alloc(struct mtp_backend *be, size_t bytes,
				     void **mem)
{
	*mem = NULL;
	return bytes ? ocl_ops(be)->alloc(be, bytes, mem) : MTP_OK;
}

static enum mtp_status scratch_free(struct mtp_backend *be, void *mem)
{
	return ocl_ops(be)->release(be, mem);
}

static enum mtp_status copy(struct mtp_backend *be, struct gpu_buf dst,
			    struct gpu_buf src, size_t bytes)
{
	return ocl_ops(be)->copy(be, dst, src, bytes);
}

const struct gpu_prims mtp_ocl_prims = {
	.max_m = OCL_HC_MAX_M, /* the mHC kernels keep a token's mixes */
	.max_rows = INT64_MAX, /* run() refuses more than 2^32 groups */
	.scratch_alloc = scratch_alloc,
	.scratch_free = scratch_free,
	.copy = copy,
	.rmsnorm = k_rmsnorm,
	.add_rmsnorm = k_add_rmsnorm,
	.embed = k_embed,
	.positions_add = k_positions_add,
	.all_reduce = k_all_reduce,
	.add_bcast = k_add_bcast,
	.swiglu = k_swiglu,
	.linear = k_linear,
	.linear_fp8 = k_linear_fp8,
	.argmax = k_argmax,
	.hc_pre = k_hc_pre,
	.hc_post = k_hc_post,
	.hc_head = k_hc_head,
	.convert = k_convert,
	.reduce_ordered = k_reduce_ordered,
	.hc_collapse = k_hc_collapse,
	.confidence = k_confidence,
	.hc_pre_delayed = k_hc_pre_delayed,
	.scale = k_scale,
	.rope = k_rope,
	.block_attention = k_block_attention,
};
