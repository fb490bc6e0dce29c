/*
 * Launchers of the OpenCL C kernels, shared by the opencl and level_zero
 * backends: each packs its arguments in the kernel's order (a buffer is a
 * pointer and a byte offset) and picks the range: one work-group of OCL_WG
 * per row for the reductions, 16 x 16 tiles for the GEMM, OCL_EW-wide
 * groups for the element-wise kernels. An empty range enqueues nothing.
 */
#include <stdint.h>

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

enum mtp_status mtp_ocl_rmsnorm(struct mtp_backend *be, enum ocl_act act,
				const struct ocl_norm_job *j, int64_t h,
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

enum mtp_status mtp_ocl_add_rmsnorm(struct mtp_backend *be, enum ocl_act act,
				    struct ocl_buf x, struct ocl_buf res,
				    struct ocl_buf w, struct ocl_buf y,
				    struct ocl_buf rout, int64_t rows,
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

enum mtp_status mtp_ocl_embed(struct mtp_backend *be, enum ocl_act act,
			      struct ocl_buf table, struct ocl_buf ids,
			      bool ids64, struct ocl_buf out, int64_t t,
			      int64_t h)
{
	const struct ocl_arg a[] = {
		OA_BUF(table), OA_BUF(ids), OA_I32(ids64), OA_BUF(out),
		OA_I64(t),     OA_I64(h),   OA_I32(act),
	};

	return run(be, OCL_K_EMBED, a, N_ARGS(a), h, t, OCL_EW, 1);
}

enum mtp_status mtp_ocl_positions_add(struct mtp_backend *be,
				      struct ocl_buf pos, bool pos64,
				      int64_t add, struct ocl_buf out,
				      int64_t t)
{
	const struct ocl_arg a[] = {
		OA_BUF(pos), OA_I32(pos64), OA_I64(add), OA_BUF(out), OA_I64(t),
	};

	return run(be, OCL_K_POSITIONS_ADD, a, N_ARGS(a), t, 1, OCL_EW, 1);
}

enum mtp_status mtp_ocl_all_reduce(struct mtp_backend *be, enum ocl_act act,
				   struct ocl_buf parts, int64_t p, int64_t n,
				   struct ocl_buf out)
{
	const struct ocl_arg a[] = {
		OA_BUF(parts), OA_I64(p), OA_I64(n), OA_BUF(out), OA_I32(act),
	};

	return run(be, OCL_K_ALL_REDUCE, a, N_ARGS(a), n, 1, OCL_EW, 1);
}

enum mtp_status mtp_ocl_add_bcast(struct mtp_backend *be, enum ocl_act act,
				  struct ocl_buf x, struct ocl_buf b,
				  struct ocl_buf out, int64_t rows, int64_t rep,
				  int64_t h)
{
	const struct ocl_arg a[] = {
		OA_BUF(x),   OA_BUF(b), OA_BUF(out), OA_I64(rows * rep),
		OA_I64(rep), OA_I64(h), OA_I32(act),
	};

	return run(be, OCL_K_ADD_BCAST, a, N_ARGS(a), h, rows * rep, OCL_EW, 1);
}

enum mtp_status mtp_ocl_swiglu(struct mtp_backend *be, enum ocl_act act,
			       struct ocl_buf gate, struct ocl_buf up,
			       struct ocl_buf g, int64_t n)
{
	const struct ocl_arg a[] = {
		OA_BUF(gate), OA_BUF(up), OA_BUF(g), OA_I64(n), OA_I32(act),
	};

	return run(be, OCL_K_SWIGLU, a, N_ARGS(a), n, 1, OCL_EW, 1);
}

enum mtp_status mtp_ocl_linear(struct mtp_backend *be, enum ocl_act act,
			       bool logits, struct ocl_buf x, struct ocl_buf w,
			       struct ocl_buf y, int64_t rows, int64_t in,
			       int64_t out)
{
	const struct ocl_arg a[] = {
		OA_BUF(x),	OA_BUF(w),   OA_BUF(y),
		OA_I64(rows),	OA_I64(in),  OA_I64(out),
		OA_I32(logits), OA_I32(act), OA_LOCAL(OCL_LM_GEMM),
	};

	return run(be, OCL_K_GEMM, a, N_ARGS(a), out, rows, OCL_TILE, OCL_TILE);
}

enum mtp_status mtp_ocl_argmax(struct mtp_backend *be, struct ocl_buf logits,
			       struct ocl_buf token, bool tok64, int64_t rows,
			       int64_t v)
{
	const struct ocl_arg a[] = {
		OA_BUF(logits), OA_BUF(token),		 OA_I32(tok64),
		OA_I64(v),	OA_LOCAL(OCL_LM_ARGMAX),
	};

	return v ? run_rows(be, OCL_K_ARGMAX, a, N_ARGS(a), rows) : MTP_OK;
}

enum mtp_status mtp_ocl_hc_pre(struct mtp_backend *be, enum ocl_act act,
			       const struct ocl_hc_pre_args *p)
{
	const struct ocl_arg a[] = {
		OA_BUF(p->residual),
		OA_BUF(p->fn),
		OA_BUF(p->scale),
		OA_BUF(p->base),
		OA_BUF(p->norm_w),
		OA_BUF(p->post_mix),
		OA_BUF(p->comb_mix),
		OA_BUF(p->layer_input),
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

	return p->h ? run_rows(be, OCL_K_HC_PRE, a, N_ARGS(a), p->t) : MTP_OK;
}

enum mtp_status mtp_ocl_hc_post(struct mtp_backend *be, enum ocl_act act,
				struct ocl_buf x, struct ocl_buf res,
				struct ocl_buf post, struct ocl_buf comb,
				struct ocl_buf out, int64_t t, int64_t m,
				int64_t h)
{
	const struct ocl_arg a[] = {
		OA_BUF(x), OA_BUF(res), OA_BUF(post), OA_BUF(comb), OA_BUF(out),
		OA_I64(t), OA_I32(m),	OA_I64(h),    OA_I32(act),
	};

	return m ? run(be, OCL_K_HC_POST, a, N_ARGS(a), h, t, OCL_EW, 1)
		 : MTP_OK;
}

enum mtp_status mtp_ocl_hc_head(struct mtp_backend *be, enum ocl_act act,
				struct ocl_buf x, struct ocl_buf fn,
				struct ocl_buf scale, struct ocl_buf base,
				struct ocl_buf y, int64_t t, int64_t m,
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
