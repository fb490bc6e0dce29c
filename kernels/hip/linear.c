/*
 * The projections of the HIP backend [SPEC.md §10]: mtp_nv_linear, which
 * the shared prims.c calls for the composition layer, on the backend's own GEMM
 * kernel (gemm.hip) instead of cuBLASLt: act operands, float32
 * accumulation, one rounding of the result; the LM head stores fp32 logits.
 */
#include "amd_kernels.h"
#include "nv_internal.h"

enum mtp_status mtp_nv_linear(struct mtp_backend *be, enum mtp_nv_act act,
			      bool logits, const void *x, const void *w,
			      void *y, int64_t rows, int64_t in, int64_t out)
{
	if (rows == 0 || out == 0)
		return MTP_OK;
	if (in == 0) /* an empty sum, as the CUDA backend refuses it */
		return mtp_backend_fail(be, MTP_ERR_UNSUPPORTED,
					"GEMM with an empty inner dimension");
	NV_CUDA(be, mtp_amd_linear(act, logits, x, w, y, rows, in, out,
				   nv_ctx(be)->stream));
	return MTP_OK;
}
