/*
 * mHC hc_post [SPEC.md §4.4.2]: the new streams after a sublayer,
 * out[t,j,:] = post[t,j] x[t,:] + sum_i C[t,i,j] R[t,i,:], row i of C the
 * source stream and column j the destination; float32 arithmetic in the
 * spec's order, one rounding on store. Each thread owns one 16-byte vector
 * (or one element) of a token's hidden and writes it for every stream j.
 */
#include "hc_common.cuh"

/* The 16-byte path for a compile-time M: x and the M source vectors are
 * loaded once, before any arithmetic (M + 1 loads in flight per thread),
 * and each destination stream is computed from registers. */
template <typename T, int M>
__global__ void hc_post_vec_kernel(const T *x, const T *res, const float *post,
				   const float *comb, T *out, int64_t t,
				   int64_t h)
{
	const int n = nv_vec<T>::n;
	const int64_t per_row = h / n, total = t * per_row;

	for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	     e < total; e += (int64_t)gridDim.x * blockDim.x) {
		const int64_t r = e / per_row, i = (e % per_row) * n;
		const float *c = comb + r * M * M;
		float xv[16], rv[M][16], acc[16];

		nv_load_vec(x + r * h + i, xv);
#pragma unroll
		for (int s = 0; s < M; s++)
			nv_load_vec(res + (r * M + s) * h + i, rv[s]);
#pragma unroll
		for (int j = 0; j < M; j++) {
			const float pj = post[r * M + j];

			for (int k = 0; k < n; k++)
				acc[k] = pj * xv[k];
#pragma unroll
			for (int s = 0; s < M; s++) {
				const float cs = c[s * M + j];

				for (int k = 0; k < n; k++)
					acc[k] += cs * rv[s][k];
			}
			nv_store_vec(out + (r * M + j) * h + i, acc);
		}
	}
}

template <typename T, int M>
static void launch_post_vec(const void *x, const void *res, const float *post,
			    const float *comb, void *out, int64_t t, int64_t h,
			    unsigned blocks, cudaStream_t s)
{
	hc_post_vec_kernel<T, M><<<blocks, NV_BLOCK, 0, s>>>(
		(const T *)x, (const T *)res, post, comb, (T *)out, t, h);
}

template <typename T, bool VEC>
__global__ void hc_post_kernel(const T *x, const T *res, const float *post,
			       const float *comb, T *out, int64_t t, int m,
			       int64_t h)
{
	const int n = VEC ? nv_vec<T>::n : 1;
	const int64_t per_row = h / n, total = t * per_row;
	float xv[16], rv[16], acc[16];

	for (int64_t e = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	     e < total; e += (int64_t)gridDim.x * blockDim.x) {
		const int64_t r = e / per_row, i = (e % per_row) * n;
		const float *c = comb + r * m * m;

		if (VEC)
			nv_load_vec(x + r * h + i, xv);
		else
			xv[0] = nv_f32(x[r * h + i]);
		for (int j = 0; j < m; j++) {
			const float pj = post[r * m + j];

			for (int k = 0; k < n; k++)
				acc[k] = pj * xv[k];
			for (int s = 0; s < m; s++) {
				const T *src = res + (r * m + s) * h + i;

				if (VEC)
					nv_load_vec(src, rv);
				else
					rv[0] = nv_f32(src[0]);
				for (int k = 0; k < n; k++)
					acc[k] += c[s * m + j] * rv[k];
			}
			T *dst = out + (r * m + j) * h + i;

			if (VEC) {
				nv_store_vec(dst, acc);
			} else {
				dst[0] = nv_from<T>(acc[0]);
			}
		}
	}
}

/* The M-specialised 16-byte kernel; cudaErrorInvalidValue for another m. */
template <typename T>
static cudaError_t post_vec(const void *x, const void *res, const float *post,
			    const float *comb, void *out, int64_t t, int m,
			    int64_t h, unsigned blocks, cudaStream_t s)
{
	NV_HC_DISPATCH(m, launch_post_vec, T, x, res, post, comb, out, t, h,
		       blocks, s);
	return cudaSuccess;
}

template <typename T>
static void launch_hc_post(const void *x, const void *res, const float *post,
			   const float *comb, void *out, int64_t t, int m,
			   int64_t h, cudaStream_t s)
{
	const bool vec = h % nv_vec<T>::n == 0 && nv_aligned16(x) &&
			 nv_aligned16(res) && nv_aligned16(out);
	const int64_t work = t * (vec ? h / nv_vec<T>::n : h);
	int64_t blocks = (work + NV_BLOCK - 1) / NV_BLOCK;

	blocks = blocks > 65535 * 8 ? 65535 * 8 : blocks;
	if (vec && post_vec<T>(x, res, post, comb, out, t, m, h,
			       (unsigned)blocks, s) == cudaSuccess)
		return;
	if (vec)
		hc_post_kernel<T, true><<<(unsigned)blocks, NV_BLOCK, 0, s>>>(
			(const T *)x, (const T *)res, post, comb, (T *)out, t,
			m, h);
	else
		hc_post_kernel<T, false><<<(unsigned)blocks, NV_BLOCK, 0, s>>>(
			(const T *)x, (const T *)res, post, comb, (T *)out, t,
			m, h);
}

extern "C" cudaError_t
mtp_nv_hc_post(enum mtp_nv_act act, const void *x, const void *residual,
	       const float *post_mix, const float *comb_mix, void *out,
	       int64_t t, int64_t m, int64_t h, cudaStream_t s)
{
	if (t * m * h == 0)
		return cudaSuccess;
	NV_DISPATCH_ACT(act, launch_hc_post, x, residual, post_mix, comb_mix,
			out, t, (int)m, h, s);
	return cudaGetLastError();
}
