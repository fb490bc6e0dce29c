/*
 * The HIP backend has no BLAS (hipBLASLt is not packaged for this ROCm): its
 * projections run on its own GEMM kernel (gemm.hip). The shared nv_internal.h
 * still names a cuBLASLt handle and status; these two types let it compile.
 * No cuBLASLt call is made by the HIP module.
 */
#ifndef MTP_HIP_CUBLASLT_H
#define MTP_HIP_CUBLASLT_H

typedef void *cublasLtHandle_t;
typedef int cublasStatus_t;

#define CUBLAS_STATUS_SUCCESS 0

#endif
