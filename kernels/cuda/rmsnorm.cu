/*
 * RMSNorm rows [SPEC.md §2.1 eager, §2.2 fused] and the residual-add
 * RMSNorm [§2.3]. One kernel serves rmsnorm, the shared-head norm and the
 * fused MTP input norms (fused_eh_norm, fused_embed_eh_norm,
 * fused_mtp_input_rmsnorm): a launch carries up to two jobs (enorm and
 * hnorm), each with an optional embedding gather and position-0 mask, one
 * block per row. Variance and scale in float32. Rows of up to
 * NV_ROW_VECS * 1024 vectors are held in registers, so x is read from
 * memory once (norm_reg_kernel); longer or unaligned rows take the two-pass
 * norm_kernel. The residual-add norm is in add_rmsnorm.cu.
 */
#include "norm_common.cuh"

struct norm_jobs {
	struct mtp_nv_norm_job j[MTP_NV_NORM_JOBS];
};

/* Sum of squares of one row of h activations (zero when masked). */
template <typename T, bool VEC, typename A>
static __device__ A row_sumsq(const T *x, int64_t h, bool zero)
{
	const int n = nv_vec<T>::n;
	float v[16];
	A ss = 0;

	if (zero)
		return 0;
	if (VEC) {
		for (int64_t i = threadIdx.x * n; i < h; i += blockDim.x * n) {
			nv_load_vec(x + i, v);
			for (int k = 0; k < n; k++)
				ss += (A)v[k] * v[k];
		}
	} else {
		for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
			A a = nv_f32(x[i]);

			ss += a * a;
		}
	}
	return ss;
}

/* The row's scale, with the double fallback of an overflowed sum. */
template <typename T, bool VEC>
static __device__ struct nv_scale row_scale(const T *x, int64_t h, bool zero,
					    float eps)
{
	__shared__ float sh[NV_MAX_WARPS];
	__shared__ double shd[NV_MAX_WARPS];
	struct nv_scale s = {0.0f, 0.0, false};
	float ss = nv_block_sum(row_sumsq<T, VEC, float>(x, h, zero), sh);

	if (!nv_overflowed(ss)) {
		s.r = nv_rms_inv(ss, h, eps);
		return s;
	}
	double sd = nv_block_sum(row_sumsq<T, VEC, double>(x, h, zero), shd);

	s.wide = true;
	s.rd = 1.0 / sqrt(sd / (double)h + (double)eps);
	return s;
}

template <typename T, bool VEC>
__global__ void norm_kernel(struct norm_jobs jobs, int64_t h, float eps,
			    int rounding)
{
	const struct mtp_nv_norm_job *j = &jobs.j[blockIdx.y];
	const int64_t r = blockIdx.x;
	const int n = nv_vec<T>::n;

	if (r >= j->rows)
		return;
	const bool zero = j->pos && nv_idx(j->pos, j->pos64, r) == 0;
	const int64_t src = j->ids ? nv_idx(j->ids, j->ids64, r) : r;
	const T *x = (const T *)j->x + src * j->x_stride;
	const T *w = (const T *)j->w;
	T *y = (T *)j->y + r * j->y_stride;
	const struct nv_scale rr = row_scale<T, VEC>(x, h, zero, eps);
	float v[16], wv[16], o[16];

	if (VEC) {
		for (int64_t i = threadIdx.x * n; i < h; i += blockDim.x * n) {
			if (zero) {
				for (int k = 0; k < n; k++)
					v[k] = 0.0f;
			} else {
				nv_load_vec(x + i, v);
			}
			nv_load_vec(w + i, wv);
			for (int k = 0; k < n; k++)
				o[k] = norm_elem<T>(v[k], &rr, wv[k], rounding);
			nv_store_vec(y + i, o);
		}
	} else {
		for (int64_t i = threadIdx.x; i < h; i += blockDim.x) {
			float a = zero ? 0.0f : nv_f32(x[i]);

			y[i] = nv_from<T>(norm_elem<T>(a, &rr, nv_f32(w[i]),
						       rounding));
		}
	}
}

/* The row's scale from the register-held row xr (nvec vectors). */
template <typename T>
static __device__ struct nv_scale reg_scale(const uint4 *xr, int64_t nvec,
					    int64_t h, float eps)
{
	__shared__ float sh[NV_MAX_WARPS];
	__shared__ double shd[NV_MAX_WARPS];
	const int n = nv_vec<T>::n;
	struct nv_scale s = {0.0f, 0.0, false};
	float v[16], ss = 0.0f;
	double sd = 0.0;

#pragma unroll
	for (int k = 0; k < NV_ROW_VECS; k++) {
		nv_unpack<T>(xr[k], v); /* vectors past the row are zeros */
		for (int e = 0; e < n; e++)
			ss += v[e] * v[e];
	}
	ss = nv_block_sum(ss, sh);
	if (!nv_overflowed(ss)) {
		s.r = nv_rms_inv(ss, h, eps);
		return s;
	}
#pragma unroll
	for (int k = 0; k < NV_ROW_VECS; k++) {
		nv_unpack<T>(xr[k], v);
		for (int e = 0; e < n; e++)
			sd += (double)v[e] * v[e];
	}
	sd = nv_block_sum(sd, shd);
	s.wide = true;
	s.rd = 1.0 / sqrt(sd / (double)h + (double)eps);
	return s;
}

/* One row per block, held in registers: x read once (all loads issued
 * before the first use), y written once. */
template <typename T>
__global__ void norm_reg_kernel(struct norm_jobs jobs, int64_t h, float eps,
				int rounding)
{
	const struct mtp_nv_norm_job *j = &jobs.j[blockIdx.y];
	const int64_t r = blockIdx.x, n = nv_vec<T>::n, nvec = h / n;

	if (r >= j->rows)
		return;
	const bool zero = j->pos && nv_idx(j->pos, j->pos64, r) == 0;
	const int64_t src = j->ids ? nv_idx(j->ids, j->ids64, r) : r;
	const T *x = (const T *)j->x + src * j->x_stride;
	const T *w = (const T *)j->w;
	T *y = (T *)j->y + r * j->y_stride;
	uint4 xr[NV_ROW_VECS];

#pragma unroll
	for (int k = 0; k < NV_ROW_VECS; k++) {
		const int64_t i = threadIdx.x + (int64_t)k * blockDim.x;

		xr[k] = make_uint4(0, 0, 0, 0);
		if (i < nvec && !zero)
			xr[k] = nv_load_raw(x + i * n);
	}
	const struct nv_scale rr = reg_scale<T>(xr, nvec, h, eps);

#pragma unroll
	for (int k = 0; k < NV_ROW_VECS; k++) {
		const int64_t i = threadIdx.x + (int64_t)k * blockDim.x;
		float v[16], wv[16], o[16];

		if (i >= nvec)
			break;
		nv_unpack<T>(xr[k], v);
		nv_load_vec(w + i * n, wv);
		for (int e = 0; e < n; e++)
			o[e] = norm_elem<T>(v[e], &rr, wv[e], rounding);
		nv_store_vec(y + i * n, o);
	}
}

template <typename T>
static bool job_vec_ok(const struct mtp_nv_norm_job *j, int64_t h)
{
	const int64_t n = nv_vec<T>::n;

	return h % n == 0 && j->x_stride % n == 0 && j->y_stride % n == 0 &&
	       nv_aligned16(j->x) && nv_aligned16(j->y) && nv_aligned16(j->w);
}

template <typename T>
static void launch_norm(const struct mtp_nv_norm_job *jobs, int njobs,
			int64_t h, float eps, int rounding, cudaStream_t s)
{
	struct norm_jobs nj = {};
	int64_t rows = 0;
	bool vec = true;

	for (int i = 0; i < njobs; i++) {
		nj.j[i] = jobs[i];
		rows = jobs[i].rows > rows ? jobs[i].rows : rows;
		vec = vec && job_vec_ok<T>(&jobs[i], h);
	}
	if (rows == 0 || h == 0)
		return;
	dim3 grid((unsigned)rows, (unsigned)njobs);
	unsigned threads = nv_threads_for(vec ? h / nv_vec<T>::n : h);
	const unsigned reg_threads = nv_row_threads(h / nv_vec<T>::n);

	if (vec && reg_threads)
		norm_reg_kernel<T><<<grid, reg_threads, 0, s>>>(nj, h, eps,
								rounding);
	else if (vec)
		norm_kernel<T, true><<<grid, threads, 0, s>>>(nj, h, eps,
							     rounding);
	else
		norm_kernel<T, false><<<grid, threads, 0, s>>>(nj, h, eps,
							      rounding);
}

extern "C" cudaError_t mtp_nv_rmsnorm(enum mtp_nv_act act,
				      const struct mtp_nv_norm_job *jobs,
				      int njobs, int64_t h, float eps,
				      int rounding, cudaStream_t s)
{
	if (njobs < 1 || njobs > MTP_NV_NORM_JOBS)
		return cudaErrorInvalidValue;
	NV_DISPATCH_ACT(act, launch_norm, jobs, njobs, h, eps, rounding, s);
	return cudaGetLastError();
}

