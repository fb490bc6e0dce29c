/*
 * The kernels that the synthetic DSpark step [SPEC.md §13.9] needs beyond
 * the ops of §13.8, and the logit scale of DSpark's Markov bias [Step
 * DS-6]: a scale with one rounding, the rotary embedding of the step's
 * single head (angles in double, as the cpu backend's), and its attention
 * of the draft block over the context keys and the block's own (scores,
 * softmax and sums in float32). The same order as kernels/opencl/dspark.cl,
 * which the opencl CTest runs; small kernels, not timed. CUDA only: the HIP
 * build leaves these primitives NULL (prims.c).
 */
#include "act_rt.cuh"

/* [Step DS-6] y[i] = act(s * x[i]): the float32 product, one rounding. */
__global__ void scale_kernel(const void *x, void *y, int64_t n, float s,
			     int act)
{
	GRID_STRIDE(i, n)
	st_act(y, i, s * ld_act(x, i, act), act);
}

extern "C" cudaError_t mtp_nv_scale(enum mtp_nv_act act, const void *x,
				    void *y, int64_t n, float s,
				    cudaStream_t st)
{
	if (n == 0)
		return cudaSuccess;
	scale_kernel<<<grid_for(n), NV_BLOCK, 0, st>>>(x, y, n, s, act);
	return cudaGetLastError();
}

/* [§13.9] element (r, i) of nh = h - h/2 per row: the pair (i, i + h/2)
 * rotated by pos[r] * 10000^(-2i/h) in double, each rounded to float32,
 * then to act; an odd h's last element (i = h/2) copied. y may be x. */
__global__ void rope_kernel(const void *x, const void *pos, int pos64, void *y,
			    int64_t rows, int64_t h, int act)
{
	const int64_t half = h / 2, nh = h - half;

	GRID_STRIDE(e, rows * nh)
	{
		const int64_t r = e / nh, i = e % nh, o = r * h;
		double a, cs, sn, x1, x2;

		if (i == half) {
			st_act(y, o + h - 1, ld_act(x, o + h - 1, act), act);
			continue;
		}
		a = (double)nv_idx(pos, pos64, r) *
		    pow(10000.0, -2.0 * (double)i / (double)h);
		sincos(a, &sn, &cs);
		x1 = ld_act(x, o + i, act);
		x2 = ld_act(x, o + i + half, act);
		st_act(y, o + i, (float)(x1 * cs - x2 * sn), act);
		st_act(y, o + i + half, (float)(x2 * cs + x1 * sn), act);
	}
}

extern "C" cudaError_t mtp_nv_rope(enum mtp_nv_act act, const void *x,
				   const void *pos, int pos64, void *y,
				   int64_t rows, int64_t h, cudaStream_t s)
{
	const int64_t n = rows * (h - h / 2);

	if (n == 0)
		return cudaSuccess;
	rope_kernel<<<grid_for(n), NV_BLOCK, 0, s>>>(x, pos, pos64, y, rows, h,
						     act);
	return cudaGetLastError();
}

/* [§13.9] sc[i * n + j] = (q_i . k_j) / sqrt(h) over the n = c + t keys
 * (context, then block), the dot in float32 in index order; keys hidden
 * by the causal mask are not computed (the softmax never reads them). */
__global__ void block_scores_kernel(const void *q, const void *kc,
				    const void *kb, float *sc, int64_t c,
				    int64_t t, int64_t h, int causal, int act)
{
	const int64_t n = c + t;
	const size_t es = act_size(act);

	GRID_STRIDE(e, t * n)
	{
		const int64_t i = e / n, j = e % n;
		const char *qr = (const char *)q + i * h * es;
		const char *kr = j < c ? (const char *)kc + j * h * es
				       : (const char *)kb + (j - c) * h * es;
		float d = 0.0f;

		if (causal && j > c + i)
			continue;
		for (int64_t k = 0; k < h; k++)
			d = __fmaf_rn(ld_act(qr, k, act), ld_act(kr, k, act), d);
		sc[e] = d / sqrtf((float)h);
	}
}

/* The maximum of v over the block, in warp order (deterministic). */
static __device__ float block_max(float v, float *sh)
{
	const int lane = threadIdx.x % MTP_GPU_WARP;
	const int wid = threadIdx.x / MTP_GPU_WARP;
	const int nw = (blockDim.x + MTP_GPU_WARP - 1) / MTP_GPU_WARP;
	float r = -INFINITY;

	for (int o = MTP_GPU_WARP / 2; o > 0; o >>= 1)
		v = fmaxf(v, mtp_gpu_shfl_xor(v, o));
	__syncthreads();
	if (lane == 0)
		sh[wid] = v;
	__syncthreads();
	for (int k = 0; k < nw; k++)
		r = fmaxf(r, sh[k]);
	return r;
}

/* [§13.9] one block per query i over its nk keys: the maximum, e_j =
 * exp(s_j - max) stored back, their sum (fixed orders), then o[i,k] =
 * act(sum_j (e_j / sum) v_j[k]) in key order, float32. */
__global__ void block_attend_kernel(float *sc, const void *vc, const void *vb,
				    void *o, int64_t c, int64_t t, int64_t h,
				    int causal, int act)
{
	__shared__ float sh[NV_MAX_WARPS];
	const int64_t i = blockIdx.x, n = c + t;
	const int64_t nk = causal ? c + i + 1 : n;
	const size_t es = act_size(act);
	float *s = sc + i * n;
	float mx = -INFINITY, sum = 0.0f;

	for (int64_t j = threadIdx.x; j < nk; j += blockDim.x)
		mx = fmaxf(mx, s[j]);
	mx = block_max(mx, sh);
	for (int64_t j = threadIdx.x; j < nk; j += blockDim.x) {
		s[j] = expf(s[j] - mx);
		sum += s[j];
	}
	sum = nv_block_sum(sum, sh); /* its barriers publish every e_j */
	for (int64_t k = threadIdx.x; k < h; k += blockDim.x) {
		float acc = 0.0f;

		for (int64_t j = 0; j < nk; j++) {
			const char *v = j < c ? (const char *)vc + j * h * es
					      : (const char *)vb +
							(j - c) * h * es;

			acc = __fmaf_rn(s[j] / sum, ld_act(v, k, act), acc);
		}
		st_act(o, i * h + k, acc, act);
	}
}

extern "C" cudaError_t mtp_nv_block_attention(
	enum mtp_nv_act act, const void *q, const void *kc, const void *vc,
	const void *kb, const void *vb, float *scores, void *o, int64_t c,
	int64_t t, int64_t h, int causal, cudaStream_t s)
{
	if (t == 0 || h == 0)
		return cudaSuccess;
	block_scores_kernel<<<grid_for(t * (c + t)), NV_BLOCK, 0, s>>>(
		q, kc, kb, scores, c, t, h, causal, act);
	block_attend_kernel<<<(unsigned)t, NV_BLOCK, 0, s>>>(
		scores, vc, vb, o, c, t, h, causal, act);
	return cudaGetLastError();
}
