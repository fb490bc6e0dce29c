/*
 * RMSNorm rows [MTP-SPEC §2.1 eager, §2.2 fused] and the residual-add
 * RMSNorm [§2.3]. One kernel serves rmsnorm, the shared-head norm and the
 * fused MTP input norms (fused_eh_norm, fused_embed_eh_norm,
 * fused_mtp_input_rmsnorm): a launch carries up to two jobs (enorm and
 * hnorm), each with an optional embedding gather and position-0 mask, one
 * block per row. Variance and scale in float32.
 */
#include "nv_common.cuh"

struct norm_jobs {
	struct mtp_nv_norm_job j[MTP_NV_NORM_JOBS];
};

/* One output element of RMSNorm: eager act(act(x*r)*w), fused act(x*r*w). */
template <typename T>
static __device__ __forceinline__ float norm_elem(float x,
						  const struct nv_scale *r,
						  float w, int rounding)
{
	if (rounding == MTP_NV_EAGER)
		return nv_round<T>(nv_round<T>(nv_scaled(x, r)) * w);
	return nv_scaled(x, r) * w;
}

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

	if (vec)
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
	float ss;

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
	for (int64_t i = threadIdx.x; i < h; i += blockDim.x)
		y[o + i] = nv_from<T>(norm_elem<T>(nv_f32(res_out[o + i]), &rr,
						   nv_f32(w[i]), rounding));
}

template <typename T>
static void launch_add_rmsnorm(const void *x, const void *residual,
			       const void *w, void *y, void *residual_out,
			       int64_t rows, int64_t h, float eps, int rounding,
			       cudaStream_t s)
{
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
