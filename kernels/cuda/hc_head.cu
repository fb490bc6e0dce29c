/*
 * mHC hc_head [SPEC.md §4.4.4]: collapses a token's M streams into one
 * hidden with sigmoid weights, one block per token. Variant cuda (tilelang):
 * the mixes from the unrounded streams, scaled by rho afterwards. Variant
 * rocm (triton): x*rho is first stored in the activation type (the
 * weight-free RMSNorm), and the mixes are taken from those values.
 */
#include "hc_decode.cuh"

/* The ROCm variant's rho, first: float32 with the double fallback. */
template <typename T>
static __device__ struct nv_scale head_rho(const T *x, int64_t k_len,
					   float rms_eps)
{
	__shared__ float sh[NV_MAX_WARPS];
	__shared__ double shd[NV_MAX_WARPS];
	struct nv_scale r = {0.0f, 0.0, false};
	float q = 0.0f;
	double qd = 0.0;

	for (int64_t i = threadIdx.x; i < k_len; i += NV_BLOCK) {
		float a = nv_f32(x[i]);

		q += a * a;
	}
	q = nv_block_sum(q, sh);
	if (!nv_overflowed(q)) {
		r.r = nv_rms_inv(q, k_len, rms_eps);
		return r;
	}
	for (int64_t i = threadIdx.x; i < k_len; i += NV_BLOCK) {
		double a = nv_f32(x[i]);

		qd += a * a;
	}
	qd = nv_block_sum(qd, shd);
	r.wide = true;
	r.rd = 1.0 / sqrt(qd / (double)k_len + (double)rms_eps);
	return r;
}

template <typename T, int M>
__global__ void hc_head_kernel(const T *xs, const float *fn, const float *scale,
			       const float *base, T *ys, int64_t h,
			       float rms_eps, float hc_eps, int variant,
			       bool vec, bool vec_out)
{
	__shared__ double mix[M + 1];
	const int64_t t = blockIdx.x, k_len = M * h;
	const T *x = xs + t * k_len;
	T *y = ys + t * h;
	const bool rocm = variant == MTP_NV_HEAD_ROCM;
	struct nv_scale rho = {0.0f, 0.0, false};

	if (rocm)
		rho = head_rho<T>(x, k_len, rms_eps);
	const bool wide =
		hc_mix<T, M>(x, fn, k_len, vec, rocm ? &rho : NULL, mix);

	hc_head_out<T, M>(x, y, mix, wide, rocm, scale, base, h, rms_eps,
			  hc_eps, vec_out);
}

template <typename T, int M>
static void launch_hc_head(const void *x, const float *fn, const float *scale,
			   const float *base, void *y, int64_t t, int64_t h,
			   float rms_eps, float hc_eps, int variant,
			   cudaStream_t s)
{
	bool vec = hc_vec_ok<T>(x, fn, M * h);
	bool vec_out = vec && h % nv_vec<T>::n == 0 && nv_aligned16(y);

	hc_head_kernel<T, M><<<(unsigned)t, NV_BLOCK, 0, s>>>(
		(const T *)x, fn, scale, base, (T *)y, h, rms_eps, hc_eps,
		variant, vec, vec_out);
}

extern "C" cudaError_t mtp_nv_hc_head(enum mtp_nv_act act, const void *x,
				      const float *fn, const float *scale,
				      const float *base, void *y, int64_t t,
				      int64_t m, int64_t h, float rms_eps,
				      float hc_eps, int variant, cudaStream_t s)
{
	if (t == 0 || h == 0)
		return cudaSuccess;
	if (variant != MTP_NV_HEAD_ROCM &&
	    nv_hc_decode_takes(t, NV_HC_DECODE_AUTO_T_HEAD) &&
	    nv_hc_head_decode(act, x, fn, scale, base, y, t, m, h, rms_eps,
			      hc_eps, s))
		return cudaGetLastError();
#ifdef MTP_NV_HC_TC
	if (variant != MTP_NV_HEAD_ROCM &&
	    nv_hc_tc_takes(t, NV_HC_TC_AUTO_T_HEAD) &&
	    nv_hc_head_tc(act, x, fn, scale, base, y, t, m, h, rms_eps, hc_eps,
			  s))
		return cudaGetLastError();
#endif
	if (act == MTP_NV_BF16) {
		NV_HC_DISPATCH(m, launch_hc_head, mtp_gpu_bf16, x, fn, scale,
			       base, y, t, h, rms_eps, hc_eps, variant, s);
	} else if (act == MTP_NV_F16) {
		NV_HC_DISPATCH(m, launch_hc_head, mtp_gpu_f16, x, fn, scale,
			       base, y, t, h, rms_eps, hc_eps, variant, s);
	} else {
		NV_HC_DISPATCH(m, launch_hc_head, float, x, fn, scale, base, y,
			       t, h, rms_eps, hc_eps, variant, s);
	}
	return cudaGetLastError();
}
