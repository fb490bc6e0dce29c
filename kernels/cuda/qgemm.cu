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

/* One warp per (row, group): xq = e4m3(x / s), sa = s. */
template <typename T>
__global__ void fp8_quant_kernel(const T *x, float *xq, float *sa,
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
			if (c0 + k < in)
				xq[r * in + c0 + k] = fp8_round(v[k] / s);
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

/* X is the activation type T (weight-only) or float (W8A8); Y is T, or
 * float for the logits. */
template <typename T>
static void launch_fp8(const fp8_args &a, int logits, int e8m0,
		       float *xq, float eps)
{
	if (xq) {
		const int64_t warps = a.rows * a.ng, per = NV_BLOCK / MTP_GPU_WARP;
		const int64_t nb = (warps + per - 1) / per;
		fp8_args b = a;

		fp8_quant_kernel<T><<<(unsigned)(nb > 65535 * 8 ? 65535 * 8
								 : nb),
				      NV_BLOCK, 0, a.s>>>(
			(const T *)a.x, xq, xq + a.rows * a.in, a.rows, a.in,
			a.ng, eps);
		b.x = xq;
		b.sa = xq + a.rows * a.in;
		if (logits)
			launch_gemm<float, float>(b, e8m0);
		else
			launch_gemm<float, T>(b, e8m0);
	} else if (logits) {
		launch_gemm<T, float>(a, e8m0);
	} else {
		launch_gemm<T, T>(a, e8m0);
	}
}

extern "C" cudaError_t
mtp_nv_linear_fp8(enum mtp_nv_act act, int logits, const void *x,
		  const uint8_t *w, const void *scale, int e8m0, float *xq,
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
