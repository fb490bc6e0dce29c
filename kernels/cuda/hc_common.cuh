/*
 * What the mHC kernels (hc_pre, hc_head) share: the per-token mix GEMV
 * over the M*H flattened streams, q = sum x^2 and dot[o] = sum_k x_k fn[o,k]
 * in float32 [SPEC.md §4.4.1, §4.4.4], reduced over one block of NV_BLOCK
 * threads with warp shuffles, and the dispatch on hc_mult. Every hc kernel
 * runs one block of NV_BLOCK threads per token.
 */
#ifndef MTP_NV_HC_COMMON_CUH
#define MTP_NV_HC_COMMON_CUH

#include "nv_common.cuh"

#define NV_HC_WARPS (NV_BLOCK / MTP_GPU_WARP)

/*
 * mix[o] = sum_k xv_k fn[o*K + k] for o < NMIX and mix[NMIX] = sum_k x_k^2,
 * accumulated in A (float32; double in the overflow fallback), where
 * xv_k = x_k, or act(x_k * rho) when xs is given (the ROCm hc_head input).
 * red is shared scratch of NV_HC_WARPS * (NMIX + 1) values of A; mix is
 * shared. Ends with a barrier, so every thread may read mix.
 */
template <typename T, int NMIX, typename A>
static __device__ void hc_mix_dots(const T *x, const float *fn, int64_t k_len,
				   bool vec, const struct nv_scale *xs, A *red,
				   double *mix)
{
	const int n = nv_vec<T>::n;
	const int lane = threadIdx.x % MTP_GPU_WARP;
	const int wid = threadIdx.x / MTP_GPU_WARP;
	A acc[NMIX], q = 0;
	float xv[16];

#pragma unroll
	for (int o = 0; o < NMIX; o++)
		acc[o] = 0;
	if (vec) {
		for (int64_t i = threadIdx.x * n; i < k_len;
		     i += NV_BLOCK * n) {
			nv_load_vec(x + i, xv);
#pragma unroll
			for (int k = 0; k < n; k++) {
				q += (A)xv[k] * xv[k];
				if (xs)
					xv[k] = nv_round<T>(
						nv_scaled(xv[k], xs));
			}
#pragma unroll
			for (int o = 0; o < NMIX; o++) {
				const float *f = fn + o * k_len + i;
#pragma unroll
				for (int k = 0; k < n; k += 4) {
					float4 w = *reinterpret_cast<
						const float4 *>(f + k);

					acc[o] += (A)xv[k] * w.x;
					acc[o] += (A)xv[k + 1] * w.y;
					acc[o] += (A)xv[k + 2] * w.z;
					acc[o] += (A)xv[k + 3] * w.w;
				}
			}
		}
	} else {
		for (int64_t i = threadIdx.x; i < k_len; i += NV_BLOCK) {
			float a = nv_f32(x[i]);

			q += (A)a * a;
			if (xs)
				a = nv_round<T>(nv_scaled(a, xs));
#pragma unroll
			for (int o = 0; o < NMIX; o++)
				acc[o] += (A)a * fn[o * k_len + i];
		}
	}
#pragma unroll
	for (int o = 0; o < NMIX; o++) {
		A v = nv_warp_sum(acc[o]);

		if (lane == 0)
			red[wid * (NMIX + 1) + o] = v;
	}
	q = nv_warp_sum(q);
	if (lane == 0)
		red[wid * (NMIX + 1) + NMIX] = q;
	__syncthreads();
	if (threadIdx.x <= NMIX) {
		A s = 0;

		for (int w = 0; w < NV_HC_WARPS; w++)
			s += red[w * (NMIX + 1) + threadIdx.x];
		mix[threadIdx.x] = s;
	}
	__syncthreads();
}

/*
 * The float32 mix GEMV, redone in double when q or a dot overflowed float32
 * (rows near the format maximum; SPEC.md's math keeps them finite).
 * Returns whether the double path was taken. Block-uniform.
 */
template <typename T, int NMIX>
static __device__ bool hc_mix(const T *x, const float *fn, int64_t k_len,
			      bool vec, const struct nv_scale *xs, double *mix)
{
	__shared__ float redf[NV_HC_WARPS * (NMIX + 1)];
	__shared__ double redd[NV_HC_WARPS * (NMIX + 1)];
	bool wide = false;

	hc_mix_dots<T, NMIX, float>(x, fn, k_len, vec, xs, redf, mix);
	for (int o = 0; o <= NMIX; o++)
		wide = wide || isinf(mix[o]);
	if (wide)
		hc_mix_dots<T, NMIX, double>(x, fn, k_len, vec, xs, redd, mix);
	return wide;
}

/* hc_head's pre weights [SPEC.md §4.4.4] from mix (M dots, then sum x^2;
 * `wide`: they are double sums) to shared pre; rocm: the dots already saw
 * x * rho. Ends with a barrier. */
template <int M>
static __device__ void hc_head_pre(const double *mix, bool wide, bool rocm,
				   const float *scale, const float *base,
				   int64_t h, float rms_eps, float hc_eps,
				   float *pre)
{
	const int64_t k_len = M * h;

	if (threadIdx.x < M) {
		const int s = threadIdx.x;
		float mu = (float)mix[s];

		if (!rocm && !wide)
			mu *= nv_rms_inv((float)mix[M], k_len, rms_eps);
		else if (!rocm)
			mu = (float)(mix[s] / sqrt(mix[M] / (double)k_len +
						   (double)rms_eps));
		pre[s] = nv_sigmoid(mu * scale[0] + base[s]) + hc_eps;
	}
	__syncthreads();
}

/* The end of hc_head [SPEC.md §4.4.4] for token row x (M*h values) into
 * y: pre_m from mix (M dots, then sum x^2; `wide`: they are double sums),
 * then y = act(sum_m pre_m x[m]). rocm: the dots already saw x * rho.
 * vec_out: x and y 16-byte aligned and h a multiple of the vector. */
template <typename T, int M>
static __device__ void hc_head_out(const T *x, T *y, const double *mix,
				   bool wide, bool rocm, const float *scale,
				   const float *base, int64_t h, float rms_eps,
				   float hc_eps, bool vec_out)
{
	__shared__ float pre[M];

	hc_head_pre<M>(mix, wide, rocm, scale, base, h, rms_eps, hc_eps, pre);
	if (vec_out) { /* 16-byte loads and stores, M of them in flight */
		const int n = nv_vec<T>::n;

#pragma unroll 2
		for (int64_t i = threadIdx.x * n; i < h; i += NV_BLOCK * n) {
			float acc[16] = {0}, xv[M][16];

#pragma unroll
			for (int s = 0; s < M; s++)
				nv_load_vec(x + s * h + i, xv[s]);
#pragma unroll
			for (int s = 0; s < M; s++)
				for (int k = 0; k < n; k++)
					acc[k] += pre[s] * xv[s][k];
			nv_store_vec(y + i, acc);
		}
		return;
	}
	for (int64_t i = threadIdx.x; i < h; i += NV_BLOCK) {
		float acc = 0.0f;

		for (int s = 0; s < M; s++)
			acc += pre[s] * nv_f32(x[s * h + i]);
		y[i] = nv_from<T>(acc);
	}
}

/* Whether x rows of k_len activations and fn rows allow 16-byte loads. */
template <typename T>
static bool hc_vec_ok(const void *x, const float *fn, int64_t k_len)
{
	return k_len % nv_vec<T>::n == 0 && nv_aligned16(x) && nv_aligned16(fn);
}

/* The cases m = 1..5 of a dispatch on hc_mult: F<T, m>(args...). */
#define NV_HC_CASES_TO_5(F, T, ...)                                            \
	case 1: F<T, 1>(__VA_ARGS__); break;                                   \
	case 2: F<T, 2>(__VA_ARGS__); break;                                   \
	case 3: F<T, 3>(__VA_ARGS__); break;                                   \
	case 4: F<T, 4>(__VA_ARGS__); break;                                   \
	case 5: F<T, 5>(__VA_ARGS__); break;

/* Calls F<T, M>(args...) for the runtime m in 1..5, else returns fail. */
#define NV_HC_DISPATCH_TO_5(m, fail, F, T, ...)                                \
	switch (m) {                                                           \
		NV_HC_CASES_TO_5(F, T, __VA_ARGS__)                            \
	default: return fail;                                                  \
	}

/* Calls F<T, M>(args...) for the runtime m in 1..MTP_NV_HC_MAX_M, else
 * returns fail. */
#define NV_HC_DISPATCH_OR(m, fail, F, T, ...)                                  \
	switch (m) {                                                           \
		NV_HC_CASES_TO_5(F, T, __VA_ARGS__)                            \
	case 6: F<T, 6>(__VA_ARGS__); break;                                   \
	case 7: F<T, 7>(__VA_ARGS__); break;                                   \
	case 8: F<T, 8>(__VA_ARGS__); break;                                   \
	default: return fail;                                                  \
	}

#define NV_HC_DISPATCH(m, F, T, ...)                                           \
	NV_HC_DISPATCH_OR(m, cudaErrorInvalidValue, F, T, __VA_ARGS__)

#endif
