/*
 * The HIP backend's own device code, beside the kernels it shares with the
 * CUDA backend (nv_kernels.h): the GEMM that stands in for cuBLASLt, since
 * no BLAS with bf16 operands and fp32 accumulation is packaged for this
 * ROCm. A plain C launcher enqueuing on a stream and returning the launch
 * status.
 */
#ifndef MTP_AMD_KERNELS_H
#define MTP_AMD_KERNELS_H

#include <stdint.h>

#include <hip/hip_runtime_api.h>

#include "nv_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* y [rows,out] = x [rows,in] . w [out,in]^T: act operands, float32
 * accumulation in ascending k, one rounding to act (float32 when logits). */
hipError_t mtp_amd_linear(enum mtp_nv_act act, int logits, const void *x,
			  const void *w, void *y, int64_t rows, int64_t in,
			  int64_t out, hipStream_t s);

#ifdef __cplusplus
}
#endif

#endif
