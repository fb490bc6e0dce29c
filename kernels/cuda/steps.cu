/*
 * The kernels that the captured-block and tensor-parallel steps and the
 * DSpark ops need beyond the block's [SPEC.md §2.5, §12.1, §13]: a
 * conversion between activation types, the all-reduce in a declared order,
 * the collapse of a token's streams with a given pre-mix, and DSpark's
 * confidence head. The same code shape and the same float32 order as
 * kernels/opencl/steps.cl, whose copy the opencl CTest runs: the type is a
 * run-time argument here as there (these kernels are small and not timed).
 * CUDA only: the HIP build leaves these primitives NULL (prims.c).
 */
#include "act_rt.cuh"

/* Reduction orders, as enum mtp_reduce_order (mtp/ref.h). */
#define RED_EXACT 0
#define RED_ONE_SHOT 1
#define RED_TWO_SHOT 2
#define RED_RING 3
#define RED_TREE 4

__global__ void convert_kernel(const void *x, void *y, int64_t n, int from,
			       int to)
{
	GRID_STRIDE(i, n)
	st_act(y, i, ld_act(x, i, from), to);
}

extern "C" cudaError_t mtp_nv_convert(enum mtp_nv_act from, enum mtp_nv_act to,
				      const void *x, void *y, int64_t n,
				      cudaStream_t s)
{
	if (n == 0)
		return cudaSuccess;
	convert_kernel<<<grid_for(n), NV_BLOCK, 0, s>>>(x, y, n, from, to);
	return cudaGetLastError();
}

/* [§2.5] a tree's levels, pairwise, each stored in act; an unpaired last
 * value carried up. */
static __device__ float tree_sum(float *v, int64_t len, int act)
{
	while (len > 1) {
		int64_t m = 0;

		for (int64_t i = 0; i + 1 < len; i += 2)
			v[m++] = round_act(__fadd_rn(v[i], v[i + 1]), act);
		if (len % 2)
			v[m++] = v[len - 1];
		len = m;
	}
	return v[0];
}

/*
 * [§2.5] Element e (hidden index j) of parts [p, n] in order: exact and
 * one_shot in rank order, fp32; two_shot from the chunk's owner
 * c = j * p / h; ring from c + 1, each hop stored in act; tree pairwise.
 * __fadd_rn: no add may fuse with anything.
 */
__global__ void reduce_ordered_kernel(const void *x, int64_t p, int64_t n,
				      int64_t h, void *out, int order, int act)
{
	GRID_STRIDE(e, n)
	{
		const int64_t c = e % h * p / h;
		float v[MTP_NV_REDUCE_MAX_P], s = 0.0f;

		if (p > 0 && order == RED_RING) {
			s = ld_act(x, (c + 1) % p * n + e, act);
			for (int64_t k = 2; k <= p; k++)
				s = round_act(
					__fadd_rn(s, ld_act(x, (c + k) % p * n + e,
							    act)),
					act);
		} else if (p > 0 && order == RED_TREE) {
			for (int64_t k = 0; k < p; k++)
				v[k] = ld_act(x, k * n + e, act);
			s = tree_sum(v, p, act);
		} else if (p > 0) {
			const int64_t c0 = order == RED_TWO_SHOT ? c : 0;

			s = ld_act(x, c0 * n + e, act);
			for (int64_t k = 1; k < p; k++)
				s = __fadd_rn(
					s, ld_act(x, (c0 + k) % p * n + e, act));
		}
		st_act(out, e, s, act);
	}
}

extern "C" cudaError_t mtp_nv_reduce_ordered(enum mtp_nv_act act,
					     const void *parts, int64_t p,
					     int64_t rows, int64_t h, int order,
					     void *out, cudaStream_t s)
{
	const int64_t n = rows * h;

	if (p > MTP_NV_REDUCE_MAX_P)
		return cudaErrorInvalidValue;
	if (n == 0)
		return cudaSuccess;
	reduce_ordered_kernel<<<grid_for(n), NV_BLOCK, 0, s>>>(
		parts, p, n, h, out, order, act);
	return cudaGetLastError();
}

/* [§13 Step DS-5] element (r, i): streams in order, float32. */
__global__ void hc_collapse_kernel(const void *x, const float *pre, void *y,
				   int64_t t, int64_t m, int64_t h, int act)
{
	GRID_STRIDE(e, t * h)
	{
		const int64_t r = e / h, i = e % h;
		const float *w = pre + r * m;
		float acc = w[0] * ld_act(x, r * m * h + i, act);

		for (int64_t k = 1; k < m; k++)
			acc += w[k] * ld_act(x, (r * m + k) * h + i, act);
		st_act(y, e, acc, act);
	}
}

/* The same sums, a 16-byte vector of a row a thread (h a multiple of the
 * vector, x and y aligned): one division a vector instead of one an
 * element, and the M loads in flight together (the scalar kernel ran at
 * 43 % of copy at T = 4096, H = 7168 on the H100, docs/BENCHMARKS.md). */
template <typename T, int M>
__global__ void hc_collapse_vec(const T *x, const float *pre, T *y, int64_t t,
				int64_t h)
{
	const int n = nv_vec<T>::n;
	const int64_t hv = h / n;

	GRID_STRIDE(e, t * hv)
	{
		const int64_t r = e / hv, i = (e % hv) * n;
		const float *w = pre + r * M;
		float xv[M][16], acc[16];

		for (int k = 0; k < M; k++)
			nv_load_vec(x + (r * M + k) * h + i, xv[k]);
		for (int j = 0; j < n; j++) {
			acc[j] = w[0] * xv[0][j];
			for (int k = 1; k < M; k++)
				acc[j] += w[k] * xv[k][j];
		}
		nv_store_vec(y + r * h + i, acc);
	}
}

template <typename T>
static bool collapse_vec(const void *x, const float *pre, void *y, int64_t t,
			 int64_t m, int64_t h, cudaStream_t s)
{
	const int64_t nv = t * (h / nv_vec<T>::n);

	if (h % nv_vec<T>::n || !nv_aligned16(x) || !nv_aligned16(y))
		return false;
	switch (m) {
	case 4:
		hc_collapse_vec<T, 4><<<grid_for(nv), NV_BLOCK, 0, s>>>(
			(const T *)x, pre, (T *)y, t, h);
		return true;
	case 2:
		hc_collapse_vec<T, 2><<<grid_for(nv), NV_BLOCK, 0, s>>>(
			(const T *)x, pre, (T *)y, t, h);
		return true;
	default:
		return false;
	}
}

extern "C" cudaError_t mtp_nv_hc_collapse(enum mtp_nv_act act, const void *x,
					  const float *pre, void *y, int64_t t,
					  int64_t m, int64_t h, cudaStream_t s)
{
	if (t == 0 || h == 0 || m == 0)
		return cudaSuccess;
	const bool vec =
		act == MTP_NV_BF16   ? collapse_vec<mtp_gpu_bf16>(x, pre, y, t, m,
								h, s)
		: act == MTP_NV_F16 ? collapse_vec<mtp_gpu_f16>(x, pre, y, t, m,
							      h, s)
				    : collapse_vec<float>(x, pre, y, t, m, h, s);

	if (!vec)
		hc_collapse_kernel<<<grid_for(t * h), NV_BLOCK, 0, s>>>(
			x, pre, y, t, m, h, act);
	return cudaGetLastError();
}

/* [§13 Step DS-7] one block per token: float32 partial dots, the block's
 * fixed-order sum, the sigmoid. */
__global__ void confidence_kernel(const void *hidden, const void *embed,
				  const float *w, const float *bias,
				  float *conf, int64_t h, int64_t r, int act)
{
	__shared__ float sh[NV_MAX_WARPS];
	const int64_t t = blockIdx.x;
	const size_t es = act == MTP_NV_F32 ? 4 : 2;
	const char *x = (const char *)hidden + t * h * es;
	const char *em = (const char *)embed + t * r * es;
	float z = 0.0f;

	for (int64_t i = threadIdx.x; i < h; i += blockDim.x)
		z += w[i] * ld_act(x, i, act);
	for (int64_t i = threadIdx.x; i < r; i += blockDim.x)
		z += w[h + i] * ld_act(em, i, act);
	z = nv_block_sum(z, sh);
	if (threadIdx.x == 0)
		conf[t] = nv_sigmoid(bias ? z + bias[0] : z);
}

extern "C" cudaError_t mtp_nv_confidence(enum mtp_nv_act act,
					 const void *hidden, const void *embed,
					 const float *w, const float *bias,
					 float *conf, int64_t t, int64_t h,
					 int64_t r, cudaStream_t s)
{
	if (t == 0)
		return cudaSuccess;
	confidence_kernel<<<(unsigned)t, NV_BLOCK, 0, s>>>(
		hidden, embed, w, bias, conf, h, r, act);
	return cudaGetLastError();
}
