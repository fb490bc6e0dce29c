/*
 * Element-wise kernels of the CUDA backend: the embedding gather [Step
 * V3-0], the draft chain's positions + s, the tensor-parallel all-reduce
 * [§2.4], the bf16 adds of the step (h + r, h_proj + e_proj broadcast) and
 * the SwiGLU product [§10]. Each output element is computed in float32 and
 * rounded once.
 */
#include "nv_common.cuh"

static unsigned grid_for(int64_t n)
{
	int64_t b = (n + NV_BLOCK - 1) / NV_BLOCK;

	return (unsigned)(b > 65535 * 8 ? 65535 * 8 : b);
}

#define GRID_STRIDE(i, n)                                                  \
	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;   \
	     i < (n); i += (int64_t)gridDim.x * blockDim.x)

template <typename T>
__global__ void embed_kernel(const T *table, const void *ids, int ids64,
			     T *out, int64_t t, int64_t h)
{
	GRID_STRIDE(i, t * h)
	{
		int64_t r = i / h;

		out[i] = table[nv_idx(ids, ids64, r) * h + i % h];
	}
}

extern "C" cudaError_t mtp_nv_embed(enum mtp_nv_act act, const void *table,
				    const void *ids, int ids64, void *out,
				    int64_t t, int64_t h, cudaStream_t s)
{
	if (t * h == 0)
		return cudaSuccess;
	if (act == MTP_NV_BF16)
		embed_kernel<<<grid_for(t * h), NV_BLOCK, 0, s>>>(
			(const mtp_gpu_bf16 *)table, ids, ids64,
			(mtp_gpu_bf16 *)out, t, h);
	else
		embed_kernel<<<grid_for(t * h), NV_BLOCK, 0, s>>>(
			(const float *)table, ids, ids64, (float *)out, t, h);
	return cudaGetLastError();
}

__global__ void positions_kernel(const void *pos, int pos64, int64_t add,
				 int64_t *out, int64_t t)
{
	GRID_STRIDE(i, t)
	out[i] = nv_idx(pos, pos64, i) + add;
}

extern "C" cudaError_t mtp_nv_positions_add(const void *pos, int pos64,
					    int64_t add, int64_t *out,
					    int64_t t, cudaStream_t s)
{
	if (t == 0)
		return cudaSuccess;
	positions_kernel<<<grid_for(t), NV_BLOCK, 0, s>>>(pos, pos64, add, out,
							  t);
	return cudaGetLastError();
}

template <typename T>
__global__ void all_reduce_kernel(const T *parts, int64_t p, int64_t n, T *out)
{
	GRID_STRIDE(i, n)
	{
		float acc = 0.0f;

		for (int64_t k = 0; k < p; k++)
			acc += nv_f32(parts[k * n + i]);
		out[i] = nv_from<T>(acc);
	}
}

extern "C" cudaError_t mtp_nv_all_reduce(enum mtp_nv_act act,
					 const void *parts, int64_t p,
					 int64_t n, void *out, cudaStream_t s)
{
	if (n == 0)
		return cudaSuccess;
	if (act == MTP_NV_BF16)
		all_reduce_kernel<<<grid_for(n), NV_BLOCK, 0, s>>>(
			(const mtp_gpu_bf16 *)parts, p, n, (mtp_gpu_bf16 *)out);
	else
		all_reduce_kernel<<<grid_for(n), NV_BLOCK, 0, s>>>(
			(const float *)parts, p, n, (float *)out);
	return cudaGetLastError();
}

template <typename T>
__global__ void add_bcast_kernel(const T *a, const T *b, T *out, int64_t rep,
				 int64_t h, int64_t n)
{
	GRID_STRIDE(i, n)
	{
		int64_t r = i / (rep * h);

		out[i] = nv_from<T>(nv_f32(a[i]) + nv_f32(b[r * h + i % h]));
	}
}

extern "C" cudaError_t mtp_nv_add_bcast(enum mtp_nv_act act, const void *a,
					const void *b, void *out, int64_t rows,
					int64_t rep, int64_t h, cudaStream_t s)
{
	int64_t n = rows * rep * h;

	if (n == 0)
		return cudaSuccess;
	if (act == MTP_NV_BF16)
		add_bcast_kernel<<<grid_for(n), NV_BLOCK, 0, s>>>(
			(const mtp_gpu_bf16 *)a, (const mtp_gpu_bf16 *)b,
			(mtp_gpu_bf16 *)out, rep, h, n);
	else
		add_bcast_kernel<<<grid_for(n), NV_BLOCK, 0, s>>>(
			(const float *)a, (const float *)b, (float *)out, rep,
			h, n);
	return cudaGetLastError();
}

template <typename T>
__global__ void swiglu_kernel(const T *gate, const T *up, T *g, int64_t n)
{
	GRID_STRIDE(i, n)
	{
		float z = nv_f32(gate[i]);

		g[i] = nv_from<T>(z * nv_sigmoid(z) * nv_f32(up[i]));
	}
}

extern "C" cudaError_t mtp_nv_swiglu(enum mtp_nv_act act, const void *gate,
				     const void *up, void *g, int64_t n,
				     cudaStream_t s)
{
	if (n == 0)
		return cudaSuccess;
	if (act == MTP_NV_BF16)
		swiglu_kernel<<<grid_for(n), NV_BLOCK, 0, s>>>(
			(const mtp_gpu_bf16 *)gate, (const mtp_gpu_bf16 *)up,
			(mtp_gpu_bf16 *)g, n);
	else
		swiglu_kernel<<<grid_for(n), NV_BLOCK, 0, s>>>(
			(const float *)gate, (const float *)up, (float *)g, n);
	return cudaGetLastError();
}
