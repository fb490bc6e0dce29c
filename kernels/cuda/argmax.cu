/*
 * Greedy token of each logits row with torch.argmax's rules [Step V3-6]:
 * the first NaN wins over every number, otherwise the largest value, and
 * the first index among equal values. One block per row; the (value,
 * index) pairs are reduced with warp shuffles.
 */
#include <math.h>

#include "nv_common.cuh"

struct best {
	float v;
	int64_t i;
};

/* Whether a comes before b in torch.argmax's order. */
static __device__ __forceinline__ bool better(struct best a, struct best b)
{
	if (isnan(a.v))
		return !isnan(b.v) || a.i < b.i;
	if (isnan(b.v))
		return false;
	return a.v > b.v || (a.v == b.v && a.i < b.i);
}

static __device__ struct best warp_best(struct best b)
{
	for (int o = MTP_GPU_WARP / 2; o > 0; o >>= 1) {
		struct best c;

		c.v = mtp_gpu_shfl_xor(b.v, o);
		c.i = mtp_gpu_shfl_xor(b.i, o);
		if (better(c, b))
			b = c;
	}
	return b;
}

__global__ void argmax_kernel(const float *logits, void *token, int tok64,
			      int64_t v)
{
	__shared__ struct best sh[NV_MAX_WARPS];
	const float *l = logits + (int64_t)blockIdx.x * v;
	const int lane = threadIdx.x % MTP_GPU_WARP;
	const int wid = threadIdx.x / MTP_GPU_WARP;
	const int nw = (blockDim.x + MTP_GPU_WARP - 1) / MTP_GPU_WARP;
	struct best b = {-INFINITY, INT64_MAX};

	for (int64_t i = threadIdx.x; i < v; i += blockDim.x) {
		struct best c = {l[i], i};

		if (better(c, b))
			b = c;
	}
	b = warp_best(b);
	if (lane == 0)
		sh[wid] = b;
	__syncthreads();
	if (threadIdx.x != 0)
		return;
	b = sh[0];
	for (int k = 1; k < nw; k++)
		if (better(sh[k], b))
			b = sh[k];
	if (tok64)
		((int64_t *)token)[blockIdx.x] = b.i;
	else
		((int32_t *)token)[blockIdx.x] = (int32_t)b.i;
}

extern "C" cudaError_t mtp_nv_argmax(const float *logits, void *token,
				     int tok64, int64_t rows, int64_t v,
				     cudaStream_t s)
{
	if (rows == 0 || v == 0)
		return cudaSuccess;
	argmax_kernel<<<(unsigned)rows, NV_BLOCK, 0, s>>>(logits, token, tok64,
							  v);
	return cudaGetLastError();
}
