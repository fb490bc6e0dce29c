/*
 * Device helpers shared by the CUDA backend's kernels: activation loads and
 * stores with the one rounding (round to nearest even), 16-byte vector
 * loads, index loads of either width, and a deterministic block sum built on
 * warp shuffles. Everything accumulates in float32.
 */
#ifndef MTP_NV_COMMON_CUH
#define MTP_NV_COMMON_CUH

#include <stdint.h>

#include "gpu_compat.cuh"
#include "nv_kernels.h"

#define NV_BLOCK 256
#define NV_MAX_WARPS (1024 / MTP_GPU_WARP)

static __device__ __forceinline__ float nv_f32(mtp_gpu_bf16 v)
{
	return mtp_gpu_bf16_to_f32(v);
}

static __device__ __forceinline__ float nv_f32(mtp_gpu_f16 v)
{
	return mtp_gpu_f16_to_f32(v);
}

static __device__ __forceinline__ float nv_f32(float v)
{
	return v;
}

template <typename T> __device__ __forceinline__ T nv_from(float v);

template <> __device__ __forceinline__ mtp_gpu_bf16 nv_from(float v)
{
	return mtp_gpu_f32_to_bf16(v);
}

template <> __device__ __forceinline__ mtp_gpu_f16 nv_from(float v)
{
	return mtp_gpu_f32_to_f16(v);
}

template <> __device__ __forceinline__ float nv_from(float v)
{
	return v;
}

/* v rounded to T and widened back: a rounding point of the spec. */
template <typename T> __device__ __forceinline__ float nv_round(float v)
{
	return nv_f32(nv_from<T>(v));
}

/* Elements per 16-byte vector. */
template <typename T> struct nv_vec {
	static const int n = 16 / sizeof(T);
};

/* n = nv_vec<T>::n elements from a 16-byte aligned address. */
template <typename T>
__device__ __forceinline__ void nv_load_vec(const T *p, float *out)
{
	const int n = nv_vec<T>::n;
	uint4 u = *reinterpret_cast<const uint4 *>(p);
	const T *e = reinterpret_cast<const T *>(&u);

#pragma unroll
	for (int i = 0; i < n; i++)
		out[i] = nv_f32(e[i]);
}

template <typename T>
__device__ __forceinline__ void nv_store_vec(T *p, const float *in)
{
	const int n = nv_vec<T>::n;
	uint4 u;
	T *e = reinterpret_cast<T *>(&u);

#pragma unroll
	for (int i = 0; i < n; i++)
		e[i] = nv_from<T>(in[i]);
	*reinterpret_cast<uint4 *>(p) = u;
}

static __device__ __forceinline__ uint4 nv_load_raw(const void *p)
{
	return *reinterpret_cast<const uint4 *>(p);
}

/* The n = nv_vec<T>::n elements of a raw vector, widened. */
template <typename T>
__device__ __forceinline__ void nv_unpack(uint4 u, float *out)
{
	const T *e = reinterpret_cast<const T *>(&u);

#pragma unroll
	for (int i = 0; i < nv_vec<T>::n; i++)
		out[i] = nv_f32(e[i]);
}

static __device__ __forceinline__ int64_t nv_idx(const void *p, int is64,
						 int64_t i)
{
	return is64 ? ((const int64_t *)p)[i] : ((const int32_t *)p)[i];
}

template <typename A> static __device__ __forceinline__ A nv_warp_sum(A v)
{
#pragma unroll
	for (int o = MTP_GPU_WARP / 2; o > 0; o >>= 1)
		v += mtp_gpu_shfl_xor(v, o);
	return v;
}

/*
 * Sum of v over the block, returned to every thread. sh holds NV_MAX_WARPS
 * values; the warps' partial sums are added in warp order, so the result
 * does not depend on scheduling. A is float, or double for the overflow
 * fallbacks below.
 */
template <typename A>
static __device__ __forceinline__ A nv_block_sum(A v, A *sh)
{
	const int lane = threadIdx.x % MTP_GPU_WARP;
	const int wid = threadIdx.x / MTP_GPU_WARP;
	const int nw = (blockDim.x + MTP_GPU_WARP - 1) / MTP_GPU_WARP;
	A r = 0;

	v = nv_warp_sum(v);
	__syncthreads(); /* sh may still be read by a previous sum */
	if (lane == 0)
		sh[wid] = v;
	__syncthreads();
	for (int i = 0; i < nw; i++)
		r += sh[i];
	return r;
}

/*
 * Sums of squares are accumulated in float32, as the engines do. A row whose
 * float32 sum overflows (|x| above about 1.8e19, still representable in
 * bf16) is summed again in double: the rare path keeps the variance finite,
 * as the spec's math has it, instead of turning the row into 0 or NaN.
 */
static __device__ __forceinline__ bool nv_overflowed(float ss)
{
	return isinf(ss);
}

/* The RMS scale of a row: float32, or double after an overflow. */
struct nv_scale {
	float r;
	double rd;
	bool wide;
};

static __device__ __forceinline__ float nv_scaled(float x,
						  const struct nv_scale *s)
{
	return s->wide ? (float)((double)x * s->rd) : x * s->r;
}

static __device__ __forceinline__ float nv_sigmoid(float z)
{
	return 1.0f / (1.0f + expf(-z));
}

/* 1/sqrt(v + eps), correctly rounded steps rather than rsqrtf(). */
static __device__ __forceinline__ float nv_rms_inv(float ss, int64_t n,
						   float eps)
{
	return 1.0f / sqrtf(ss / (float)n + eps);
}

/* Threads per block for rows of n vectors. */
static inline unsigned nv_threads_for(int64_t n)
{
	unsigned t = 32;

	while (t < NV_BLOCK && (int64_t)t < n)
		t *= 2;
	return t;
}

static inline bool nv_aligned16(const void *p)
{
	return ((uintptr_t)p & 15u) == 0;
}

/* Blocks of NV_BLOCK threads for n elements of a grid-stride loop (capped:
 * the loop covers the rest). */
static inline unsigned grid_for(int64_t n)
{
	int64_t b = (n + NV_BLOCK - 1) / NV_BLOCK;

	return (unsigned)(b > 65535 * 8 ? 65535 * 8 : b);
}

#define GRID_STRIDE(i, n)                                                  \
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;   \
	     i < (n); i += (int64_t)gridDim.x * blockDim.x)

/* Calls the host launcher f<T>(...) for the activation type act. */
#define NV_DISPATCH_ACT(act, f, ...)                                   \
	do {                                                           \
		if ((act) == MTP_NV_BF16)                              \
			f<mtp_gpu_bf16>(__VA_ARGS__);                  \
		else if ((act) == MTP_NV_F16)                          \
			f<mtp_gpu_f16>(__VA_ARGS__);                   \
		else                                                   \
			f<float>(__VA_ARGS__);                         \
	} while (0)

#endif
