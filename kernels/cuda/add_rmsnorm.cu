/*
 * The residual-add RMSNorm [SPEC.md §2.3]: r' = act(x + residual) stored,
 * the variance from the unrounded float32 sum, y from r'. Single pass: a
 * row of up to NV_ROW_VECS * 1024 vectors is held in registers, so x and
 * residual are read once and y and residual_out written once
 * (add_norm_reg_kernel); longer or unaligned rows take the scalar kernel,
 * which reads its own residual_out back. MTP_NV_NORM_SUM or'ed into
 * rounding: y from the unrounded sum instead (SPEC.md §12.1 add_norm_input
 * = sum).
 */
#include "norm_common.cuh"

/* [§2.3] scalar loop: the sum is kept unrounded for the variance. */
template <typename T, typename A>
static __device__ A add_sumsq(const T *x, const T *res, int64_t h)
{
	A ss = 0;

	for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
		A a = (A)nv_f32(x[i]) + (A)nv_f32(res[i]);

		ss += a * a;
	}
	return ss;
}

template <typename T>
__global__ void add_rmsnorm_kernel(const T *x, const T *res, const T *w,
				   T *y, T *res_out, int64_t h, float eps,
				   int rounding)
{
	__shared__ float sh[NV_MAX_WARPS];
	__shared__ double shd[NV_MAX_WARPS];
	const int64_t o = (int64_t)blockIdx.x * h;
	struct nv_scale rr = {0.0f, 0.0, false};
	const bool on_sum = rounding & MTP_NV_NORM_SUM;
	float ss;

	rounding &= ~MTP_NV_NORM_SUM;
	x += o;
	res += o;
	for (int64_t i = threadIdx.x; i < h; i += blockDim.x)
		res_out[o + i] = nv_from<T>(nv_f32(x[i]) + nv_f32(res[i]));
	ss = nv_block_sum(add_sumsq<T, float>(x, res, h), sh);
	if (!nv_overflowed(ss)) {
		rr.r = nv_rms_inv(ss, h, eps);
	} else {
		double sd = nv_block_sum(add_sumsq<T, double>(x, res, h), shd);

		rr.wide = true;
		rr.rd = 1.0 / sqrt(sd / (double)h + (double)eps);
	}
	/* each thread re-reads only the elements it wrote itself */
	for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
		const float v = on_sum ? nv_f32(x[i]) + nv_f32(res[i])
				       : nv_f32(res_out[o + i]);

		y[o + i] = nv_from<T>(
			norm_elem<T>(v, &rr, nv_f32(w[i]), rounding));
	}
}

/* Loads the row's x and residual vectors (zeros past the row). */
template <typename T>
static __device__ void add_load(const T *x, const T *res, int64_t nvec,
				uint4 *xr, uint4 *rr)
{
	const int n = nv_vec<T>::n;

#pragma unroll
	for (int k = 0; k < NV_ROW_VECS; k++) {
		const int64_t i = threadIdx.x + (int64_t)k * blockDim.x;

		xr[k] = rr[k] = make_uint4(0, 0, 0, 0);
		if (i < nvec) {
			xr[k] = nv_load_raw(x + i * n);
			rr[k] = nv_load_raw(res + i * n);
		}
	}
}

/* Sum of (x + res)^2 over the register-held row, in A. */
template <typename T, typename A>
static __device__ A add_reg_sumsq(const uint4 *xr, const uint4 *rr)
{
	float a[16], b[16];
	A ss = 0;

#pragma unroll
	for (int k = 0; k < NV_ROW_VECS; k++) {
		nv_unpack<T>(xr[k], a);
		nv_unpack<T>(rr[k], b);
		for (int e = 0; e < nv_vec<T>::n; e++) {
			A s = (A)a[e] + (A)b[e];

			ss += s * s;
		}
	}
	return ss;
}

/* Single pass: x and residual read once, residual_out and y written once. */
template <typename T>
__global__ void add_norm_reg_kernel(const T *x, const T *res, const T *w,
				    T *y, T *res_out, int64_t h, float eps,
				    int rounding)
{
	__shared__ float sh[NV_MAX_WARPS];
	__shared__ double shd[NV_MAX_WARPS];
	const int n = nv_vec<T>::n;
	const int64_t o = (int64_t)blockIdx.x * h, nvec = h / n;
	struct nv_scale sc = {0.0f, 0.0, false};
	uint4 xr[NV_ROW_VECS], rr[NV_ROW_VECS];
	const bool on_sum = rounding & MTP_NV_NORM_SUM;

	rounding &= ~MTP_NV_NORM_SUM;
	add_load<T>(x + o, res + o, nvec, xr, rr);
	float ss = nv_block_sum(add_reg_sumsq<T, float>(xr, rr), sh);

	if (!nv_overflowed(ss)) {
		sc.r = nv_rms_inv(ss, h, eps);
	} else {
		double sd = nv_block_sum(add_reg_sumsq<T, double>(xr, rr), shd);

		sc.wide = true;
		sc.rd = 1.0 / sqrt(sd / (double)h + (double)eps);
	}
#pragma unroll
	for (int k = 0; k < NV_ROW_VECS; k++) {
		const int64_t i = threadIdx.x + (int64_t)k * blockDim.x;
		float a[16], b[16], wv[16];

		if (i >= nvec)
			break;
		nv_unpack<T>(xr[k], a);
		nv_unpack<T>(rr[k], b);
		nv_load_vec(w + i * n, wv);
		for (int e = 0; e < n; e++) {
			const float sum = a[e] + b[e];

			a[e] = nv_round<T>(sum); /* r', as stored */
			b[e] = on_sum ? sum : a[e];
		}
		nv_store_vec(res_out + o + i * n, a);
		for (int e = 0; e < n; e++)
			b[e] = norm_elem<T>(b[e], &sc, wv[e], rounding);
		nv_store_vec(y + o + i * n, b);
	}
}

template <typename T>
static void launch_add_rmsnorm(const void *x, const void *residual,
			       const void *w, void *y, void *residual_out,
			       int64_t rows, int64_t h, float eps, int rounding,
			       cudaStream_t s)
{
	const int64_t n = nv_vec<T>::n;
	const unsigned threads = nv_row_threads(h / n);

	if (threads && h % n == 0 && nv_aligned16(x) && nv_aligned16(residual) &&
	    nv_aligned16(w) && nv_aligned16(y) && nv_aligned16(residual_out)) {
		add_norm_reg_kernel<T><<<(unsigned)rows, threads, 0, s>>>(
			(const T *)x, (const T *)residual, (const T *)w,
			(T *)y, (T *)residual_out, h, eps, rounding);
		return;
	}
	add_rmsnorm_kernel<T><<<(unsigned)rows, nv_threads_for(h), 0, s>>>(
		(const T *)x, (const T *)residual, (const T *)w, (T *)y,
		(T *)residual_out, h, eps, rounding);
}

extern "C" cudaError_t mtp_nv_add_rmsnorm(enum mtp_nv_act act, const void *x,
					  const void *residual, const void *w,
					  void *y, void *residual_out,
					  int64_t rows, int64_t h, float eps,
					  int rounding, cudaStream_t s)
{
	if (rows == 0 || h == 0)
		return cudaSuccess;
	NV_DISPATCH_ACT(act, launch_add_rmsnorm, x, residual, w, y,
			residual_out, rows, h, eps, rounding, s);
	return cudaGetLastError();
}
