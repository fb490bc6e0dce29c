/*
 * GEMMs of the CUDA backend through cuBLASLt [SPEC.md §10: bf16 (fp16, fp32) operands,
 * fp32 accumulation, one rounding of the result]: nn.Linear layout
 * y [rows,out] = x [rows,in] . W [out,in]^T. Split-K reductions are allowed
 * only in the compute type (fp32 workspace), never in the output type, so
 * that a bf16 result is rounded exactly once; the LM head stores fp32
 * logits. TF32 is never used (compute type CUBLAS_COMPUTE_32F).
 */
#include <stdint.h>

#include "nv_internal.h"

/* Largest power of two (at most 256) that divides the address. */
static uint32_t align_of(const void *p)
{
	uintptr_t a = (uintptr_t)p;
	uint32_t al = 256;

	while (al > 1 && (a & (al - 1)))
		al >>= 1;
	return al;
}

struct nv_gemm {
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t a, b, d;
	cublasLtMatmulPreference_t pref;
};

static void gemm_fini(struct nv_gemm *g)
{
	if (g->pref)
		cublasLtMatmulPreferenceDestroy(g->pref);
	if (g->d)
		cublasLtMatrixLayoutDestroy(g->d);
	if (g->b)
		cublasLtMatrixLayoutDestroy(g->b);
	if (g->a)
		cublasLtMatrixLayoutDestroy(g->a);
	if (g->op)
		cublasLtMatmulDescDestroy(g->op);
}

/*
 * Column-major view: D [out x rows] = op(A) [out x in] . B [in x rows] with
 * A = W (column-major [in x out], transposed) and B = x ([in x rows]).
 */
static enum mtp_status gemm_describe(struct mtp_backend *be, struct nv_gemm *g,
				     cudaDataType_t in_t, cudaDataType_t out_t,
				     int64_t rows, int64_t in, int64_t out)
{
	const cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;

	NV_BLAS(be, cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F,
					     CUDA_R_32F));
	NV_BLAS(be, cublasLtMatmulDescSetAttribute(g->op,
						   CUBLASLT_MATMUL_DESC_TRANSA,
						   &ta, sizeof(ta)));
	NV_BLAS(be, cublasLtMatmulDescSetAttribute(g->op,
						   CUBLASLT_MATMUL_DESC_TRANSB,
						   &tb, sizeof(tb)));
	NV_BLAS(be, cublasLtMatrixLayoutCreate(&g->a, in_t, (uint64_t)in,
					       (uint64_t)out, in));
	NV_BLAS(be, cublasLtMatrixLayoutCreate(&g->b, in_t, (uint64_t)in,
					       (uint64_t)rows, in));
	NV_BLAS(be, cublasLtMatrixLayoutCreate(&g->d, out_t, (uint64_t)out,
					       (uint64_t)rows, out));
	return MTP_OK;
}

static enum mtp_status gemm_prefer(struct mtp_backend *be, struct nv_gemm *g,
				   const void *x, const void *w, void *y)
{
	const uint64_t ws = nv_ctx(be)->workspace_bytes;
	const uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
	const uint32_t al_a = align_of(w), al_b = align_of(x),
		       al_d = align_of(y);

	NV_BLAS(be, cublasLtMatmulPreferenceCreate(&g->pref));
	NV_BLAS(be, cublasLtMatmulPreferenceSetAttribute(
			    g->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
			    &ws, sizeof(ws)));
	NV_BLAS(be, cublasLtMatmulPreferenceSetAttribute(
			    g->pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
			    &scheme, sizeof(scheme)));
	NV_BLAS(be, cublasLtMatmulPreferenceSetAttribute(
			    g->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES,
			    &al_a, sizeof(al_a)));
	NV_BLAS(be, cublasLtMatmulPreferenceSetAttribute(
			    g->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
			    &al_b, sizeof(al_b)));
	NV_BLAS(be, cublasLtMatmulPreferenceSetAttribute(
			    g->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES,
			    &al_d, sizeof(al_d)));
	NV_BLAS(be, cublasLtMatmulPreferenceSetAttribute(
			    g->pref, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES,
			    &al_d, sizeof(al_d)));
	return MTP_OK;
}

static enum mtp_status gemm_run(struct mtp_backend *be, struct nv_gemm *g,
				const void *x, const void *w, void *y)
{
	struct nv_ctx *c = nv_ctx(be);
	cublasLtMatmulHeuristicResult_t heur;
	const float alpha = 1.0f, beta = 0.0f;
	int found = 0;

	NV_BLAS(be, cublasLtMatmulAlgoGetHeuristic(c->lt, g->op, g->a, g->b,
						   g->d, g->d, g->pref, 1,
						   &heur, &found));
	if (found < 1)
		return mtp_backend_fail(
			be, MTP_ERR_DEVICE,
			"cublasLtMatmulAlgoGetHeuristic: no algorithm");
	NV_BLAS(be,
		cublasLtMatmul(c->lt, g->op, &alpha, w, g->a, x, g->b, &beta, y,
			       g->d, y, g->d, &heur.algo, c->workspace,
			       c->workspace_bytes, c->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_linear(struct mtp_backend *be, enum mtp_nv_act act,
			      bool logits, const void *x, const void *w,
			      void *y, int64_t rows, int64_t in, int64_t out)
{
	const cudaDataType_t in_t = act == MTP_NV_F32	? CUDA_R_32F
				    : act == MTP_NV_F16 ? CUDA_R_16F
							: CUDA_R_16BF;
	const cudaDataType_t out_t = logits ? CUDA_R_32F : in_t;
	struct nv_gemm g = {0};
	enum mtp_status st;

	if (rows == 0 || out == 0)
		return MTP_OK;
	if (in == 0) /* an empty sum */
		return mtp_backend_fail(be, MTP_ERR_UNSUPPORTED,
					"GEMM with an empty inner dimension");
	st = gemm_describe(be, &g, in_t, out_t, rows, in, out);
	if (!st)
		st = gemm_prefer(be, &g, x, w, y);
	if (!st)
		st = gemm_run(be, &g, x, w, y);
	gemm_fini(&g);
	return st;
}
