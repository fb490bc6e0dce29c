/*
 * What the hc_pre kernels share [SPEC.md §4.4.1]: the mixes and Sinkhorn of
 * one token (one thread, or one warp over the M x M matrix for the decode
 * kernels of hc_decode.cu; both sum in the reference's order, so they agree
 * bit for bit), and the sublayer input sum_m pre_m R[m] with the optional
 * with_norm RMSNorm (variance from the unrounded sum, applied to the
 * rounded sum).
 */
#ifndef MTP_NV_HC_PRE_COMMON_CUH
#define MTP_NV_HC_PRE_COMMON_CUH

#include "hc_tile.cuh"

/* c[a][b] /= (sum over the row a, or the column a) + eps, for M x M c. */
template <int M>
static __device__ void normalise(float *c, bool rows, float eps)
{
	for (int a = 0; a < M; a++) {
		float s = 0.0f;

		for (int b = 0; b < M; b++)
			s += rows ? c[a * M + b] : c[b * M + a];
		for (int b = 0; b < M; b++) {
			if (rows)
				c[a * M + b] /= s + eps;
			else
				c[b * M + a] /= s + eps;
		}
	}
}

template <int M> static __device__ void sinkhorn(float *c, int iters, float eps)
{
	for (int i = 0; i < M; i++) {
		float *row = c + i * M, mx = row[0], s = 0.0f;

		for (int j = 1; j < M; j++)
			mx = row[j] > mx ? row[j] : mx;
		for (int j = 0; j < M; j++) {
			row[j] = expf(row[j] - mx);
			s += row[j];
		}
		for (int j = 0; j < M; j++)
			row[j] = row[j] / s + eps;
	}
	normalise<M>(c, false, eps);
	for (int it = 1; it < iters; it++) {
		normalise<M>(c, true, eps);
		normalise<M>(c, false, eps);
	}
}

/* mu_o = rho * mix[o], rho = rsqrt(mix[nmix] / k_len + rms_eps) [§4.4.1]; in
 * double when the sums were (wide). */
static __device__ __forceinline__ float hc_mu(const double *mix, int o,
					      int nmix, int64_t k_len,
					      float rms_eps, bool wide)
{
	if (!wide)
		return nv_rms_inv((float)mix[nmix], k_len, rms_eps) *
		       (float)mix[o];
	return (float)(1.0 / sqrt(mix[nmix] / (double)k_len + (double)rms_eps) *
		       mix[o]);
}

/* One thread: pre (to shared), post_mix and comb_mix of token t. */
template <int M>
static __device__ void hc_pre_mixes(const struct mtp_nv_hc_pre_args *a,
				    int64_t t, const double *mix, bool wide,
				    float *pre)
{
	const int NMIX = 2 * M + M * M;
	const int64_t k_len = M * a->h;
	const float *sc = a->scale, *b = a->base;
	float mu[NMIX], c[M * M];

	for (int o = 0; o < NMIX; o++)
		mu[o] = hc_mu(mix, o, NMIX, k_len, a->rms_eps, wide);
	for (int s = 0; s < M; s++) {
		pre[s] = nv_sigmoid(mu[s] * sc[0] + b[s]) + a->pre_eps;
		a->post_mix[t * M + s] =
			nv_sigmoid(mu[M + s] * sc[1] + b[M + s]) * a->post_mult;
	}
	for (int k = 0; k < M * M; k++)
		c[k] = mu[2 * M + k] * sc[2] + b[2 * M + k];
	sinkhorn<M>(c, a->sinkhorn_iters, a->sinkhorn_eps);
	for (int k = 0; k < M * M; k++)
		a->comb_mix[t * M * M + k] = c[k];
}

/* u[k] = sum_m pre_m x[m, i + k] in A, for one vector (or one element). */
template <typename T, int M, typename A>
static __device__ void layer_sum(const T *x, int64_t h, int64_t i, bool vec,
				 const float *pre, A *u)
{
	const int n = vec ? nv_vec<T>::n : 1;
	float xv[16];

	for (int k = 0; k < n; k++)
		u[k] = 0;
	for (int s = 0; s < M; s++) {
		if (vec)
			nv_load_vec(x + s * h + i, xv);
		else
			xv[0] = nv_f32(x[s * h + i]);
		for (int k = 0; k < n; k++)
			u[k] += (A)pre[s] * xv[k];
	}
}

/* Sum of u^2 over the row of this token, in A. */
template <typename T, int M, typename A>
static __device__ A layer_sumsq(const T *x, int64_t h, bool vec,
				const float *pre)
{
	const int n = vec ? nv_vec<T>::n : 1;
	A u[16], ss = 0;

	for (int64_t i = threadIdx.x * n; i < h; i += NV_BLOCK * n) {
		layer_sum<T, M, A>(x, h, i, vec, pre, u);
		for (int k = 0; k < n; k++)
			ss += u[k] * u[k];
	}
	return ss;
}

/* layer_input with the with_norm RMSNorm: variance of the unrounded u,
 * applied to the rounded u. */
template <typename T, int M>
static __device__ void layer_input_norm(const T *x, const T *w, T *out,
					int64_t h, bool vec, const float *pre,
					float eps)
{
	__shared__ float sh[NV_MAX_WARPS];
	__shared__ double shd[NV_MAX_WARPS];
	const int n = vec ? nv_vec<T>::n : 1;
	float ss = nv_block_sum(layer_sumsq<T, M, float>(x, h, vec, pre), sh);

	if (!nv_overflowed(ss)) {
		const float rr = nv_rms_inv(ss, h, eps);
		float u[16];

		for (int64_t i = threadIdx.x * n; i < h; i += NV_BLOCK * n) {
			layer_sum<T, M, float>(x, h, i, vec, pre, u);
			for (int k = 0; k < n; k++)
				out[i + k] = nv_from<T>(nv_round<T>(u[k]) * rr *
							nv_f32(w[i + k]));
		}
		return;
	}
	const double sd =
		nv_block_sum(layer_sumsq<T, M, double>(x, h, vec, pre), shd);
	const double rr = 1.0 / sqrt(sd / (double)h + (double)eps);
	double u[16];

	for (int64_t i = threadIdx.x * n; i < h; i += NV_BLOCK * n) {
		layer_sum<T, M, double>(x, h, i, vec, pre, u);
		for (int k = 0; k < n; k++)
			out[i + k] = nv_from<T>(
				(float)(nv_round<T>((float)u[k]) * rr) *
				nv_f32(w[i + k]));
	}
}

/* layer_input of token t from its pre weights (shared): every thread of the
 * block takes part. */
template <typename T, int M>
static __device__ void hc_pre_layer_input(const struct mtp_nv_hc_pre_args *a,
					  int64_t t, bool vec, const float *pre)
{
	const int64_t h = a->h;
	const T *x = (const T *)a->residual + t * M * h;
	T *out = (T *)a->layer_input + t * h;
	const int n = vec ? nv_vec<T>::n : 1;

	if (a->norm_w) {
		layer_input_norm<T, M>(x, (const T *)a->norm_w, out, h, vec,
				       pre, a->norm_eps);
		return;
	}
	for (int64_t i = threadIdx.x * n; i < h; i += NV_BLOCK * n) {
		float u[16];

		layer_sum<T, M, float>(x, h, i, vec, pre, u);
		for (int k = 0; k < n; k++)
			out[i + k] = nv_from<T>(u[k]);
	}
}

/* The Sinkhorn normalisation over one warp: lane l < M*M holds c[l] (row
 * l / M, column l % M). Every sum runs over b = 0..M-1 in order, as
 * sinkhorn() does, so the two agree bit for bit. All lanes must call it. */
template <int M>
static __device__ float sinkhorn_warp(float v, int iters, float eps)
{
	const int lane = threadIdx.x % MTP_GPU_WARP;
	const int i = lane < M * M ? lane / M : 0, j = lane % M;
	float mx = mtp_gpu_shfl(v, i * M), s = 0.0f;

	for (int b = 1; b < M; b++) {
		const float w = mtp_gpu_shfl(v, i * M + b);

		mx = w > mx ? w : mx;
	}
	v = expf(v - mx);
	for (int b = 0; b < M; b++)
		s += mtp_gpu_shfl(v, i * M + b);
	v = v / s + eps;
	for (int it = 0; it < (iters > 1 ? iters : 1); it++) {
		if (it) { /* rows */
			s = 0.0f;
			for (int b = 0; b < M; b++)
				s += mtp_gpu_shfl(v, i * M + b);
			v /= s + eps;
		}
		s = 0.0f; /* columns */
		for (int b = 0; b < M; b++)
			s += mtp_gpu_shfl(v, b * M + j);
		v /= s + eps;
	}
	return v;
}

/* pre_s of hc_pre [§4.4.1] from the mixes (the decode path's output blocks
 * and hc_pre_mixes_warp: the same expression, so the same bits). */
template <int M>
static __device__ __forceinline__ float
hc_pre_weight(const struct mtp_nv_hc_pre_args *a, const double *mix, bool wide,
	      int s)
{
	const int NMIX = 2 * M + M * M;

	return nv_sigmoid(hc_mu(mix, s, NMIX, M * a->h, a->rms_eps, wide) *
				  a->scale[0] +
			  a->base[s]) +
	       a->pre_eps;
}

/* hc_pre_mixes over one warp (M * M <= the warp): the same values. Each
 * lane reads the mixes it needs from mix (2M + M^2 may exceed the warp). */
template <int M>
static __device__ void hc_pre_mixes_warp(const struct mtp_nv_hc_pre_args *a,
					 int64_t t, const double *mix,
					 bool wide, float *pre)
{
	const int NMIX = 2 * M + M * M, lane = threadIdx.x % MTP_GPU_WARP;
	const int64_t k_len = M * a->h;
	const float *sc = a->scale, *b = a->base;
	const int c = lane < M * M ? 2 * M + lane : 0;
	float v;

	if (lane < M)
		pre[lane] = hc_pre_weight<M>(a, mix, wide, lane);
	else if (lane < 2 * M)
		a->post_mix[t * M + lane - M] =
			nv_sigmoid(hc_mu(mix, lane, NMIX, k_len, a->rms_eps,
					 wide) *
					   sc[1] +
				   b[lane]) *
			a->post_mult;
	v = hc_mu(mix, c, NMIX, k_len, a->rms_eps, wide) * sc[2] + b[c];
	v = sinkhorn_warp<M>(v, a->sinkhorn_iters, a->sinkhorn_eps);
	if (lane < M * M)
		a->comb_mix[t * M * M + lane] = v;
}

/* layer_input of one token over one warp (the tiled and tensor-core
 * kernels, one warp per token): 16-bit T, h a multiple of 8, 16-byte
 * aligned rows. */
template <typename T, int M>
static __device__ void layer_input_warp(const T *x, const T *w, T *out,
					int64_t h, const float *pre, float eps)
{
	const int lane = threadIdx.x % MTP_GPU_WARP;
	float u[16];

	if (!w) {
#pragma unroll 4
		for (int64_t i = lane * 8; i < h; i += MTP_GPU_WARP * 8) {
			layer_sum<T, M, float>(x, h, i, true, pre, u);
			nv_store_vec(out + i, u);
		}
		return;
	}
	float ss = 0.0f;

#pragma unroll 4
	for (int64_t i = lane * 8; i < h; i += MTP_GPU_WARP * 8) {
		layer_sum<T, M, float>(x, h, i, true, pre, u);
		for (int k = 0; k < 8; k++)
			ss += u[k] * u[k];
	}
	ss = nv_warp_sum(ss);
	if (!nv_overflowed(ss)) {
		const float rr = nv_rms_inv(ss, h, eps);

#pragma unroll 4
		for (int64_t i = lane * 8; i < h; i += MTP_GPU_WARP * 8) {
			float wv[16];

			layer_sum<T, M, float>(x, h, i, true, pre, u);
			nv_load_vec(w + i, wv);
			for (int k = 0; k < 8; k++)
				u[k] = nv_round<T>(u[k]) * rr * wv[k];
			nv_store_vec(out + i, u);
		}
		return;
	}
	double ud[16], sd = 0.0;

	for (int64_t i = lane * 8; i < h; i += MTP_GPU_WARP * 8) {
		layer_sum<T, M, double>(x, h, i, true, pre, ud);
		for (int k = 0; k < 8; k++)
			sd += ud[k] * ud[k];
	}
	sd = nv_warp_sum(sd);
	const double rr = 1.0 / sqrt(sd / (double)h + (double)eps);

	for (int64_t i = lane * 8; i < h; i += MTP_GPU_WARP * 8) {
		float wv[16];

		layer_sum<T, M, double>(x, h, i, true, pre, ud);
		nv_load_vec(w + i, wv);
		for (int k = 0; k < 8; k++)
			u[k] = (float)(nv_round<T>((float)ud[k]) * rr) * wv[k];
		nv_store_vec(out + i, u);
	}
}

#endif
