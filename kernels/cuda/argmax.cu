/*
 * Greedy token of each logits row with torch.argmax's rules [Step V3-6]:
 * the first NaN wins over every number, otherwise the largest value, and
 * the first index among equal values. One block of ARGMAX_BLOCK threads per
 * row, each thread reading float4s (four in flight: one row is all a
 * decode step has, so one multiprocessor must stream V floats alone; with
 * one scalar load a thread at a time, markov_bias took 139 us at T = 1,
 * V = 129280 on the H100, docs/BENCHMARKS.md); the (value, index) pairs
 * are reduced with warp shuffles. better() is a strict total order on
 * (value, index), so the order the elements are visited in does not
 * change the winner.
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

#define ARGMAX_BLOCK 1024
#define ARGMAX_UNROLL 4

static __device__ __forceinline__ void consider4(float4 q, int64_t i,
						 struct best *b)
{
	const float e[4] = {q.x, q.y, q.z, q.w};

	for (int k = 0; k < 4; k++) {
		struct best c = {e[k], i + k};

		if (better(c, *b))
			*b = c;
	}
}

/* This thread's best of row l: float4 j of the row for j = threadIdx.x,
 * + blockDim.x, ... (vec: v % 4 == 0 and l 16-byte aligned), else one
 * float at a time. */
static __device__ struct best thread_best(const float *l, int64_t v, int vec)
{
	struct best b = {-INFINITY, INT64_MAX};
	const int64_t step = blockDim.x;

	if (!vec) {
		for (int64_t i = threadIdx.x; i < v; i += step) {
			struct best c = {l[i], i};

			if (better(c, b))
				b = c;
		}
		return b;
	}
	const float4 *l4 = (const float4 *)l;
	const int64_t n4 = v / 4;
	int64_t j = threadIdx.x;

	for (; j + (ARGMAX_UNROLL - 1) * step < n4; j += ARGMAX_UNROLL * step) {
		float4 q[ARGMAX_UNROLL];

		for (int u = 0; u < ARGMAX_UNROLL; u++)
			q[u] = l4[j + u * step];
		for (int u = 0; u < ARGMAX_UNROLL; u++)
			consider4(q[u], 4 * (j + u * step), &b);
	}
	for (; j < n4; j += step)
		consider4(l4[j], 4 * j, &b);
	return b;
}

__global__ void argmax_kernel(const float *logits, void *token, int tok64,
			      int64_t v, int vec)
{
	__shared__ struct best sh[NV_MAX_WARPS];
	const float *l = logits + (int64_t)blockIdx.x * v;
	const int lane = threadIdx.x % MTP_GPU_WARP;
	const int wid = threadIdx.x / MTP_GPU_WARP;
	const int nw = (blockDim.x + MTP_GPU_WARP - 1) / MTP_GPU_WARP;
	struct best b = thread_best(l, v, vec);

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
	/* every row 16-byte aligned: the base and v * 4 bytes */
	const int vec = v % 4 == 0 && nv_aligned16(logits);

	if (rows == 0 || v == 0)
		return cudaSuccess;
	argmax_kernel<<<(unsigned)rows, ARGMAX_BLOCK, 0, s>>>(logits, token,
							      tok64, v, vec);
	return cudaGetLastError();
}
