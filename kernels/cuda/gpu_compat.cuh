/*
 * The project's own small GPU portability header: the few vendor names the
 * kernel sources use (bf16 and fp16 types and conversions, warp shuffles,
 * the warp width), so that the same .cu sources can later be compiled by
 * hipcc for the HIP backend. HIP's NVIDIA headers do not build against CUDA 13
 * (TOOLCHAIN-NOTES.md), hence our own layer rather than theirs.
 */
#ifndef MTP_GPU_COMPAT_CUH
#define MTP_GPU_COMPAT_CUH

#if defined(__HIP_PLATFORM_AMD__) || defined(__HIPCC__)
/*
 * HIP on AMD (ROCm 5.2: no hip_bf16.h; hip_bfloat16 rounds to nearest even).
 * The wavefront is 64 lanes on every target built (gfx908, gfx90a, gfx940).
 * A block narrower than a wavefront (nv_threads_for() starts at 32 threads)
 * leaves the upper lanes inactive: a shuffle from such a lane reads 0, the
 * identity of the block sums, the only reductions run on such blocks.
 */
#include <hip/hip_runtime.h>
#include <hip/hip_bfloat16.h>
#include <hip/hip_fp16.h>
typedef hip_bfloat16 mtp_gpu_bf16;
typedef __half mtp_gpu_f16;
#define MTP_GPU_WARP 64
template <typename V>
static __device__ __forceinline__ V mtp_gpu_shfl_xor_amd(V v, int o)
{
	const V r = __shfl_xor(v, o);

	return (threadIdx.x ^ (unsigned)o) < blockDim.x ? r : (V)0;
}
#define mtp_gpu_shfl_xor(v, o) mtp_gpu_shfl_xor_amd((v), (o))
#define mtp_gpu_shfl(v, l) __shfl((v), (l))
static __device__ __forceinline__ float mtp_gpu_bf16_to_f32(mtp_gpu_bf16 v)
{
	return static_cast<float>(v);
}
static __device__ __forceinline__ mtp_gpu_bf16 mtp_gpu_f32_to_bf16(float v)
{
	return mtp_gpu_bf16(v); /* round to nearest even */
}
#else
#include <cuda_runtime.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
typedef __nv_bfloat16 mtp_gpu_bf16;
typedef __half mtp_gpu_f16;
#define MTP_GPU_WARP 32
#define mtp_gpu_shfl_xor(v, o) __shfl_xor_sync(0xffffffffu, (v), (o))
#define mtp_gpu_shfl(v, l) __shfl_sync(0xffffffffu, (v), (l))
static __device__ __forceinline__ float mtp_gpu_bf16_to_f32(mtp_gpu_bf16 v)
{
	return __bfloat162float(v);
}
static __device__ __forceinline__ mtp_gpu_bf16 mtp_gpu_f32_to_bf16(float v)
{
	return __float2bfloat16_rn(v);
}
#endif

static __device__ __forceinline__ float mtp_gpu_f16_to_f32(mtp_gpu_f16 v)
{
	return __half2float(v);
}
static __device__ __forceinline__ mtp_gpu_f16 mtp_gpu_f32_to_f16(float v)
{
	return __float2half_rn(v);
}

#endif
