/*
 * What the RMSNorm kernels (rmsnorm.cu, add_rmsnorm.cu) share: one output
 * element in either rounding [SPEC.md §2.1, §2.2], and the layout of a row
 * held in registers: thread i owns the 16-byte vectors i, i + blockDim.x,
 * ..., at most NV_ROW_VECS of them, so every load is coalesced and a row is
 * read from memory once.
 */
#ifndef MTP_NV_NORM_COMMON_CUH
#define MTP_NV_NORM_COMMON_CUH

#include "nv_common.cuh"

/* 16-byte vectors per thread of a row held in registers. */
#define NV_ROW_VECS 4

/* One output element of RMSNorm: eager act(act(x*r)*w), fused act(x*r*w);
 * w is f32(1 + w) under MTP_NV_NORM_ONE_PLUS (SPEC.md §2.6). */
template <typename T>
static __device__ __forceinline__ float
norm_elem(float x, const struct nv_scale *r, float w, int rounding)
{
	if (rounding & MTP_NV_NORM_ONE_PLUS)
		w = 1.0f + w;
	rounding &= ~MTP_NV_NORM_ONE_PLUS;
	if (rounding == MTP_NV_EAGER)
		return nv_round<T>(nv_round<T>(nv_scaled(x, r)) * w);
	return nv_scaled(x, r) * w;
}

/* Threads for a register-held row of nvec vectors (0: too long). */
static inline unsigned nv_row_threads(int64_t nvec)
{
	int64_t t = (nvec + NV_ROW_VECS - 1) / NV_ROW_VECS;

	t = (t + MTP_GPU_WARP - 1) / MTP_GPU_WARP * MTP_GPU_WARP;
	return t > 1024 ? 0 : (unsigned)t;
}

#endif
