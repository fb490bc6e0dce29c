/*
 * The CUDA runtime names that the CUDA backend's shared sources use
 * (nv_kernels.h, nv_internal.h, the .cu kernels, runtime.c, prims.c,
 * graph.c), mapped to their HIP equivalents, so that the HIP backend compiles
 * those sources unchanged. Found before any CUDA header only because this
 * folder is on the HIP module's include path; HIP's own NVIDIA headers do not
 * build against CUDA 13 (TOOLCHAIN-NOTES.md), so the layer is ours.
 */
#ifndef MTP_HIP_CUDA_RUNTIME_API_H
#define MTP_HIP_CUDA_RUNTIME_API_H

#include <hip/hip_runtime_api.h>

#define cudaError_t hipError_t
#define cudaStream_t hipStream_t
#define cudaEvent_t hipEvent_t
#define cudaGraph_t hipGraph_t
#define cudaGraphExec_t hipGraphExec_t
#define cudaDeviceProp hipDeviceProp_t

#define cudaSuccess hipSuccess
#define cudaStreamNonBlocking hipStreamNonBlocking
#define cudaErrorInvalidValue hipErrorInvalidValue
#define cudaStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define cudaFuncAttributeMaxDynamicSharedMemorySize                            \
	hipFuncAttributeMaxDynamicSharedMemorySize

#define cudaGetLastError hipGetLastError
#define cudaGetDeviceCount hipGetDeviceCount
#define cudaSetDevice hipSetDevice
#define cudaGetDevice hipGetDevice
#define cudaGetDeviceProperties hipGetDeviceProperties
#define cudaDriverGetVersion hipDriverGetVersion
#define cudaRuntimeGetVersion hipRuntimeGetVersion
#define cudaStreamCreateWithFlags hipStreamCreateWithFlags
#define cudaStreamDestroy hipStreamDestroy
#define cudaEventCreate hipEventCreate
#define cudaEventDestroy hipEventDestroy
#define cudaGetErrorString hipGetErrorString
#define cudaMalloc hipMalloc
#define cudaFree hipFree
#define cudaMemcpyAsync hipMemcpyAsync
#define cudaMemcpyHostToDevice hipMemcpyHostToDevice
#define cudaMemcpyDeviceToHost hipMemcpyDeviceToHost
#define cudaMemcpyDeviceToDevice hipMemcpyDeviceToDevice
#define cudaStreamSynchronize hipStreamSynchronize
#define cudaEventRecord hipEventRecord
#define cudaEventSynchronize hipEventSynchronize
#define cudaEventElapsedTime hipEventElapsedTime
#define cudaMallocAsync hipMallocAsync
#define cudaFreeAsync hipFreeAsync
#define cudaStreamBeginCapture hipStreamBeginCapture
#define cudaStreamEndCapture hipStreamEndCapture
#define cudaGraphInstantiate hipGraphInstantiateWithFlags
#define cudaGraphLaunch hipGraphLaunch
#define cudaGraphDestroy hipGraphDestroy
#define cudaGraphExecDestroy hipGraphExecDestroy

#ifdef __cplusplus
/* A kernel template's name has commas: a function, not a macro with args.
 * hc_pre.cu ignores the status, as on CUDA; a failure is still the sticky
 * hipGetLastError() that its launcher returns. */
template <typename F>
static inline void mtp_hip_func_set_attribute(F f, hipFuncAttribute a, int v)
{
	(void)hipFuncSetAttribute(reinterpret_cast<const void *>(f), a, v);
}
#define cudaFuncSetAttribute mtp_hip_func_set_attribute
#endif

#endif
