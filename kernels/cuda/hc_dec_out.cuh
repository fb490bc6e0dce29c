/*
 * The output pass of the decode path's finishing blocks (hc_decode.cu):
 * hc_pre's layer_input and hc_head's y for one token, with the token's M
 * rows held in registers so that every load of a thread is in flight at
 * once (a block of NV_BLOCK threads, DEC_VPT 16-byte vectors of each row a
 * thread). The sums run in the order of the per-token path's layer_sum and
 * hc_head_out, so the values are the same bits; a row that does not fit
 * (or a norm whose float32 variance overflowed) takes those functions.
 */
#ifndef MTP_NV_HC_DEC_OUT_CUH
#define MTP_NV_HC_DEC_OUT_CUH

#include "hc_pre_common.cuh"

#define DEC_VPT 4
#define DEC_OUT_MAX_M 5 /* M x DEC_VPT vectors in registers */

/* The output pass from registers: the thread's DEC_VPT vectors (i = (tid +
 * v * NV_BLOCK) * n) of the M streams of row x, every load in flight at
 * once, and u[v] = sum_s pre[s] x[s][i..], in layer_sum's order. */
template <typename T, int M>
static __device__ void dec_mix_rows(const T *x, int64_t h, const float *pre,
				    float (*u)[16])
{
	const int n = nv_vec<T>::n;
	uint4 raw[DEC_VPT][M];

#pragma unroll
	for (int v = 0; v < DEC_VPT; v++) {
		const int64_t i = (threadIdx.x + (int64_t)v * NV_BLOCK) * n;

#pragma unroll
		for (int s = 0; s < M; s++)
			raw[v][s] = i < h ? nv_load_raw(x + s * h + i)
					  : make_uint4(0, 0, 0, 0);
	}
#pragma unroll
	for (int v = 0; v < DEC_VPT; v++) {
#pragma unroll
		for (int k = 0; k < n; k++)
			u[v][k] = 0.0f;
#pragma unroll
		for (int s = 0; s < M; s++) {
			float xv[16];

			nv_unpack<T>(raw[v][s], xv);
#pragma unroll
			for (int k = 0; k < n; k++)
				u[v][k] += pre[s] * xv[k];
		}
	}
}

/* Whether the output pass of a row of h fits dec_mix_rows. */
template <typename T, int M>
static __device__ bool dec_rows_fit(bool vec, int64_t h)
{
	return vec && M <= DEC_OUT_MAX_M &&
	       h <= (int64_t)DEC_VPT * NV_BLOCK * nv_vec<T>::n;
}

/* hc_pre_layer_input from registers (the same values: the sums in the same
 * order, the norm's variance from the same per-thread partials); the
 * general one where the row does not fit or the variance overflowed. */
template <typename T, int M>
static __device__ void dec_layer_input(const struct mtp_nv_hc_pre_args *a,
				       int64_t t, bool vec, const float *pre)
{
	__shared__ float sh[NV_MAX_WARPS];
	const int n = nv_vec<T>::n;
	const int64_t h = a->h;
	const T *w = (const T *)a->norm_w;
	T *out = (T *)a->layer_input + t * h;
	float u[DEC_VPT][16], rr = 1.0f;

	if (!dec_rows_fit<T, M>(vec, h)) {
		hc_pre_layer_input<T, M>(a, t, vec, pre);
		return;
	}
	dec_mix_rows<T, M>((const T *)a->residual + t * M * h, h, pre, u);
	if (w) {
		float ss = 0.0f;

#pragma unroll
		for (int v = 0; v < DEC_VPT; v++)
			if ((threadIdx.x + (int64_t)v * NV_BLOCK) * n < h)
#pragma unroll
				for (int k = 0; k < n; k++)
					ss += u[v][k] * u[v][k];
		ss = nv_block_sum(ss, sh);
		if (nv_overflowed(ss)) {
			hc_pre_layer_input<T, M>(a, t, vec, pre);
			return;
		}
		rr = nv_rms_inv(ss, h, a->norm_eps);
	}
#pragma unroll
	for (int v = 0; v < DEC_VPT; v++) {
		const int64_t i = (threadIdx.x + (int64_t)v * NV_BLOCK) * n;

		if (i >= h)
			continue;
#pragma unroll
		for (int k = 0; k < n; k++)
			out[i + k] = w ? nv_from<T>(nv_round<T>(u[v][k]) * rr *
						    nv_f32(w[i + k]))
				       : nv_from<T>(u[v][k]);
	}
}

/* hc_head_out from registers where the row fits (the same values). */
template <typename T, int M>
static __device__ void dec_head_out(const T *x, T *y, const double *mix,
				    bool wide, const float *scale,
				    const float *base, int64_t h, float rms_eps,
				    float hc_eps, bool vec_out)
{
	__shared__ float pre[M];
	float u[DEC_VPT][16];

	if (!dec_rows_fit<T, M>(vec_out, h)) {
		hc_head_out<T, M>(x, y, mix, wide, false, scale, base, h,
				  rms_eps, hc_eps, vec_out);
		return;
	}
	hc_head_pre<M>(mix, wide, false, scale, base, h, rms_eps, hc_eps, pre);
	dec_mix_rows<T, M>(x, h, pre, u);
#pragma unroll
	for (int v = 0; v < DEC_VPT; v++) {
		const int64_t i =
			(threadIdx.x + (int64_t)v * NV_BLOCK) * nv_vec<T>::n;

		if (i < h)
			nv_store_vec(y + i, u[v]);
	}
}

#endif
