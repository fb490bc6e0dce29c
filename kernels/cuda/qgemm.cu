/*
 * FP8 block-scaled projections on CUDA cores [SPEC.md §12.2]: the
 * float8_e4m3fn weight [out,in] is read as it is stored (one byte an
 * element) and decoded in registers, never dequantized into memory. Under
 * W8A8 a first kernel quantizes each activation row per group of 128
 * (scale max(amax, act_eps) / 448 in float32, e4m3 round-to-nearest-even
 * with saturation: the reference's steps, so the quantized values are the
 * reference's bit for bit) into float32 scratch.
 *
 * The GEMM has the structure of a block-scaled tensor-core GEMM (DeepGEMM's
 * promotion): within a 128-input block the products are summed in float32
 * without scales, and each block's sum is scaled by its scales
 * (w_scale, times a_scale under W8A8) and added to a float32 accumulator;
 * the result is rounded once. One warp per output column, its lanes
 * spanning a block, QG_ROWS activation rows per pass so each weight byte
 * is read once per pass; a fixed lane order and a shuffle tree make the sum
 * deterministic. Its rounding differs from the reference's double sums
 * only by float32 sums of K terms: the error of a plain fp32 GEMM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_fp8.h>

#include "nv_common.cuh"

#define QB 128				  /* the block of the scales */
#define QL (QB / MTP_GPU_WARP)		  /* inputs per lane per block */
#define QG_WARPS 8			  /* output columns per CUDA block */
#define QG_ROWS 4			  /* activation rows per pass */
#define QG_MAX_GRID_Y 65535

/* float8_e4m3fn -> float32, exact (S.1111.111 is NaN, no infinities). */
static __device__ __forceinline__ float fp8_e4m3(uint8_t b)
{
	const uint32_t s = (uint32_t)(b & 0x80u) << 24;
	const uint32_t e = (b >> 3) & 0xfu, m = b & 7u;

	if ((b & 0x7fu) == 0x7fu)
		return __uint_as_float(s | 0x7fc00000u);
	if (e == 0) /* subnormal: m * 2^-9 */
		return (s ? -0.001953125f : 0.001953125f) * (float)m;
	return __uint_as_float(s | ((e + 120u) << 23) | (m << 20));
}

/* float8_e8m0fnu -> float32: 2^(b - 127), 0xFF is NaN. */
static __device__ __forceinline__ float fp8_e8m0(uint8_t b)
{
	if (b == 0xffu)
		return __uint_as_float(0x7fc00000u);
	return __uint_as_float(b ? (uint32_t)b << 23 : 0x00400000u);
}

/* v rounded to e4m3 (nearest even, saturating to +-448), as float32. */
static __device__ __forceinline__ float fp8_round(float v)
{
	float a = fabsf(v), q;
	int e;

	if (isnan(v))
		return v;
	if (a >= 448.0f) {
		q = 448.0f;
	} else {
		(void)frexpf(a, &e); /* a = f 2^e, f in [0.5, 1) */
		e = (e - 1 < -6 ? -6 : e - 1) - 3; /* the spacing's exponent */
		q = ldexpf(rintf(ldexpf(a, -e)), e);
	}
	return copysignf(q, v);
}

static __device__ __forceinline__ float warp_max(float v)
{
#pragma unroll
	for (int o = MTP_GPU_WARP / 2; o > 0; o >>= 1)
		v = fmaxf(v, mtp_gpu_shfl_xor(v, o));
	return v;
}

/* One warp per (row, group): xq = e4m3(x / s) as float32 values, or as
 * e4m3 bytes when BYTES (exact: the value is an e4m3 value); sa = s. */
template <typename T, bool BYTES>
__global__ void fp8_quant_kernel(const T *x, void *xq, float *sa,
				 int64_t rows, int64_t in, int64_t ng,
				 float eps)
{
	const int lane = threadIdx.x % MTP_GPU_WARP;
	const int64_t warps = (int64_t)gridDim.x * (blockDim.x / MTP_GPU_WARP);

	for (int64_t wid = (int64_t)blockIdx.x * (blockDim.x / MTP_GPU_WARP) +
			   threadIdx.x / MTP_GPU_WARP;
	     wid < rows * ng; wid += warps) {
		const int64_t r = wid / ng, c0 = wid % ng * QB + lane * QL;
		float v[QL], amax = 0.0f, s;
		int nan = 0;

#pragma unroll
		for (int k = 0; k < QL; k++) {
			v[k] = c0 + k < in ? nv_f32(x[r * in + c0 + k]) : 0.0f;
			nan |= isnan(v[k]);
			amax = fmaxf(amax, fabsf(v[k]));
		}
		amax = warp_max(amax);
		nan = __any_sync(0xffffffffu, nan);
		s = nan ? __uint_as_float(0x7fc00000u)
			: fmaxf(amax, eps) / 448.0f;
#pragma unroll
		for (int k = 0; k < QL; k++)
			if (c0 + k < in && BYTES)
				((uint8_t *)xq)[r * in + c0 + k] =
					__nv_cvt_float_to_fp8(fp8_round(v[k] / s),
							      __NV_SATFINITE,
							      __NV_E4M3);
			else if (c0 + k < in)
				((float *)xq)[r * in + c0 + k] =
					fp8_round(v[k] / s);
		if (lane == 0)
			sa[wid] = s;
	}
}

/* sa == NULL: weight-only (x in the activation type X); else x = xq. */
template <typename X, typename Y, bool E8M0>
__global__ void fp8_gemm_kernel(const X *x, const uint8_t *w, const void *ws,
				const float *sa, Y *y, int64_t rows, int64_t in,
				int64_t out, int64_t ng)
{
	const int lane = threadIdx.x % MTP_GPU_WARP;
	const int64_t o =
		(int64_t)blockIdx.x * QG_WARPS + threadIdx.x / MTP_GPU_WARP;
	const uint8_t *wr = w + o * in;

	if (o >= out)
		return;
	for (int64_t r0 = (int64_t)blockIdx.y * QG_ROWS; r0 < rows;
	     r0 += (int64_t)gridDim.y * QG_ROWS) {
		float acc[QG_ROWS] = {0.0f};

		for (int64_t g = 0; g < ng; g++) {
			const int64_t si = o / QB * ng + g, c = g * QB + lane * QL;
			const float sw =
				E8M0 ? fp8_e8m0(((const uint8_t *)ws)[si])
				     : ((const float *)ws)[si];
			float wv[QL];

#pragma unroll
			for (int k = 0; k < QL; k++)
				wv[k] = c + k < in ? fp8_e4m3(wr[c + k]) : 0.0f;
#pragma unroll
			for (int rr = 0; rr < QG_ROWS; rr++) {
				const int64_t r = r0 + rr;
				float p = 0.0f;

				if (r >= rows)
					break;
#pragma unroll
				for (int k = 0; k < QL; k++)
					if (c + k < in)
						p = fmaf(nv_f32(x[r * in + c + k]),
							 wv[k], p);
				acc[rr] = fmaf(p, sa ? sa[r * ng + g] * sw : sw,
					       acc[rr]);
			}
		}
#pragma unroll
		for (int rr = 0; rr < QG_ROWS; rr++) {
			const float v = nv_warp_sum(acc[rr]);

			if (lane == 0 && r0 + rr < rows)
				y[(r0 + rr) * out + o] = nv_from<Y>(v);
		}
	}
}

struct fp8_args {
	const void *x;
	const uint8_t *w;
	const void *scale;
	const float *sa;
	void *y;
	int64_t rows, in, out, ng;
	cudaStream_t s;
};

template <typename X, typename Y>
static void launch_gemm(const fp8_args &a, bool e8m0)
{
	int64_t gy = (a.rows + QG_ROWS - 1) / QG_ROWS;
	const dim3 grid((unsigned)((a.out + QG_WARPS - 1) / QG_WARPS),
			(unsigned)(gy > QG_MAX_GRID_Y ? QG_MAX_GRID_Y : gy));
	const unsigned block = QG_WARPS * MTP_GPU_WARP;

	if (e8m0)
		fp8_gemm_kernel<X, Y, true><<<grid, block, 0, a.s>>>(
			(const X *)a.x, a.w, a.scale, a.sa, (Y *)a.y, a.rows,
			a.in, a.out, a.ng);
	else
		fp8_gemm_kernel<X, Y, false><<<grid, block, 0, a.s>>>(
			(const X *)a.x, a.w, a.scale, a.sa, (Y *)a.y, a.rows,
			a.in, a.out, a.ng);
}

/* ---- the tensor-core path (W8A8, sm_90 and later) ------------------------ */

#define TC_WARPS 4 /* 16-output tiles per CUDA block */

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
/* Bytes [k, k+4) of a row of `in` bytes, zeros past its end; vec: in is a
 * multiple of 4 and the row 4-byte aligned. */
static __device__ __forceinline__ uint32_t ld4(const uint8_t *p, int64_t k,
					       int64_t in, bool vec)
{
	uint32_t v = 0;

	if (!p)
		return 0;
	if (vec)
		return k < in ? *(const uint32_t *)(p + k) : 0u;
	for (int i = 0; i < 4; i++)
		if (k + i < in)
			v |= (uint32_t)p[k + i] << (8 * i);
	return v;
}
#endif

/*
 * One warp per 16 outputs x 8 rows: per 128-input block four
 * mma.m16n8k32 e4m3 x e4m3 -> f32 (A = the weight rows, B = the quantized
 * activation rows), then the block's sums scaled by a_scale * w_scale and
 * added to float32 accumulators on the CUDA cores (the promotion of
 * DeepGEMM), the result rounded once. Fragments as PTX's m16n8k32 .e4m3:
 * a0/a2 row gid, a1/a3 row gid + 8, columns tig*4 (+16); b0/b1 column
 * gid, k tig*4 (+16); d0/d1 row gid, d2/d3 row gid + 8, columns tig*2 + j.
 */
template <typename Y, bool E8M0>
__global__ void fp8_tc_kernel(const uint8_t *xq, const float *sa,
			      const uint8_t *w, const void *ws, Y *y,
			      int64_t rows, int64_t in, int64_t out,
			      int64_t ng, int vec)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
	const int lane = threadIdx.x % 32, gid = lane / 4, tig = lane % 4;
	const int64_t o0 =
		((int64_t)blockIdx.x * TC_WARPS + threadIdx.x / 32) * 16;
	const int64_t r0 = (int64_t)blockIdx.y * 8, oa = o0 + gid,
		      ob = oa + 8, rb = r0 + gid;
	const uint8_t *wa = oa < out ? w + oa * in : NULL,
		      *wb = ob < out ? w + ob * in : NULL,
		      *xb = rb < rows ? xq + rb * in : NULL;
	float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};

	if (o0 >= out)
		return; /* the whole warp */
	for (int64_t g = 0; g < ng; g++) {
		float d[4] = {0.0f, 0.0f, 0.0f, 0.0f};

#pragma unroll
		for (int kk = 0; kk < 4; kk++) {
			const int64_t k = g * QB + kk * 32 + tig * 4;
			const uint32_t a0 = ld4(wa, k, in, vec),
				       a1 = ld4(wb, k, in, vec),
				       a2 = ld4(wa, k + 16, in, vec),
				       a3 = ld4(wb, k + 16, in, vec),
				       b0 = ld4(xb, k, in, vec),
				       b1 = ld4(xb, k + 16, in, vec);

			asm volatile("mma.sync.aligned.m16n8k32.row.col.f32."
				     "e4m3.e4m3.f32 {%0,%1,%2,%3}, "
				     "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"
				     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]),
				       "+f"(d[3])
				     : "r"(a0), "r"(a1), "r"(a2), "r"(a3),
				       "r"(b0), "r"(b1));
		}
#pragma unroll
		for (int i = 0; i < 4; i++) {
			const int64_t o = i < 2 ? oa : ob,
				      r = r0 + tig * 2 + (i & 1);

			if (o < out && r < rows) {
				const int64_t si = o / QB * ng + g;
				const float sw =
					E8M0 ? fp8_e8m0(
						       ((const uint8_t *)ws)[si])
					     : ((const float *)ws)[si];

				acc[i] = fmaf(d[i], sa[r * ng + g] * sw,
					      acc[i]);
			}
		}
	}
#pragma unroll
	for (int i = 0; i < 4; i++) {
		const int64_t o = i < 2 ? oa : ob, r = r0 + tig * 2 + (i & 1);

		if (o < out && r < rows)
			y[r * out + o] = nv_from<Y>(acc[i]);
	}
#else
	__trap(); /* the host launches it on sm_90 and later only */
#endif
}

/* MTP_CUDA_FP8_PATH: "cuda" (CUDA cores), "tc" (tensor cores for W8A8
 * where the GPU has them) or "auto" (the default: cuda, the path run on the
 * H200; tc has not run on a GPU yet). */
static bool fp8_use_tc(void)
{
	static int tc = -1;
	int dev = 0, major = 0;

	if (tc < 0) {
		const char *e = getenv("MTP_CUDA_FP8_PATH");

		tc = e && !strcmp(e, "tc");
		if (e && *e && strcmp(e, "cuda") && strcmp(e, "tc") &&
		    strcmp(e, "auto"))
			fprintf(stderr,
				"mtpcheck: MTP_CUDA_FP8_PATH=%s is not cuda, "
				"tc or auto: auto\n",
				e);
	}
	/* the sm_80 build of the kernel has no e4m3 mma (it traps) */
	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor,
				   dev) != cudaSuccess)
		return false;
	return tc && major >= 9;
}

template <typename Y>
static void launch_tc(const fp8_args &a, const uint8_t *xq, bool e8m0)
{
	const dim3 grid((unsigned)((a.out + 16 * TC_WARPS - 1) /
				   (16 * TC_WARPS)),
			(unsigned)((a.rows + 7) / 8));
	const int vec = a.in % 4 == 0 && (uintptr_t)a.w % 4 == 0 &&
			(uintptr_t)xq % 4 == 0;

	if (e8m0)
		fp8_tc_kernel<Y, true><<<grid, TC_WARPS * 32, 0, a.s>>>(
			xq, a.sa, a.w, a.scale, (Y *)a.y, a.rows, a.in, a.out,
			a.ng, vec);
	else
		fp8_tc_kernel<Y, false><<<grid, TC_WARPS * 32, 0, a.s>>>(
			xq, a.sa, a.w, a.scale, (Y *)a.y, a.rows, a.in, a.out,
			a.ng, vec);
}

/* W8A8: the rows quantized into xq (e4m3 bytes for the tensor cores,
 * float32 values for the CUDA cores; the scales 16-byte aligned after
 * them), then the GEMM. */
template <typename T>
static void launch_w8a8(const fp8_args &a, int logits, int e8m0, void *xq,
			float eps)
{
	const bool tc = fp8_use_tc() && a.rows <= 65535 * 8;
	const int64_t warps = a.rows * a.ng, per = NV_BLOCK / MTP_GPU_WARP;
	const int64_t nb = (warps + per - 1) / per;
	const unsigned grid = (unsigned)(nb > 65535 * 8 ? 65535 * 8 : nb);
	const size_t qbytes =
		((size_t)(a.rows * a.in) * (tc ? 1 : sizeof(float)) + 15) /
		16 * 16;
	fp8_args b = a;

	b.sa = (const float *)((char *)xq + qbytes);
	if (tc)
		fp8_quant_kernel<T, true><<<grid, NV_BLOCK, 0, a.s>>>(
			(const T *)a.x, xq, (float *)b.sa, a.rows, a.in, a.ng,
			eps);
	else
		fp8_quant_kernel<T, false><<<grid, NV_BLOCK, 0, a.s>>>(
			(const T *)a.x, xq, (float *)b.sa, a.rows, a.in, a.ng,
			eps);
	b.x = xq;
	if (tc && logits)
		launch_tc<float>(b, (const uint8_t *)xq, e8m0);
	else if (tc)
		launch_tc<T>(b, (const uint8_t *)xq, e8m0);
	else if (logits)
		launch_gemm<float, float>(b, e8m0);
	else
		launch_gemm<float, T>(b, e8m0);
}

/* X is the activation type T (weight-only) or float (W8A8); Y is T, or
 * float for the logits. */
template <typename T>
static void launch_fp8(const fp8_args &a, int logits, int e8m0, void *xq,
		       float eps)
{
	if (xq)
		launch_w8a8<T>(a, logits, e8m0, xq, eps);
	else if (logits)
		launch_gemm<T, float>(a, e8m0);
	else
		launch_gemm<T, T>(a, e8m0);
}

extern "C" cudaError_t
mtp_nv_linear_fp8(enum mtp_nv_act act, int logits, const void *x,
		  const uint8_t *w, const void *scale, int e8m0, void *xq,
		  float act_eps, void *y, int64_t rows, int64_t in, int64_t out,
		  cudaStream_t s)
{
	const fp8_args a = {x,	 w,   scale, NULL,		      y,
			    rows, in, out,   (in + QB - 1) / QB, s};

	if (rows == 0 || out == 0)
		return cudaSuccess;
	NV_DISPATCH_ACT(act, launch_fp8, a, logits, e8m0, xq, act_eps);
	return cudaGetLastError();
}
