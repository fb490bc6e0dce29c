/*
 * Element-wise kernels of the CUDA backend: the embedding gather [Step
 * V3-0], the draft chain's positions + s, the tensor-parallel all-reduce
 * [§2.4], the bf16 adds of the step (h + r, h_proj + e_proj broadcast) and
 * the SwiGLU product [§10]. Each output element is computed in float32 and
 * rounded once.
 */
#include "nv_common.cuh"

/*
 * The gather: one block per row (grid-stride over rows), the row's id read
 * once, the row copied in 16-byte vectors when the row's bytes and both
 * pointers allow it, element by element otherwise. The copy is exact, so
 * vector and scalar paths give the same bits.
 */
template <typename T, bool VEC>
__global__ void embed_kernel(const T *table, const void *ids, int ids64,
			     T *out, int64_t t, int64_t h)
{
	for (int64_t r = blockIdx.x; r < t; r += gridDim.x) {
		const T *src = table + nv_idx(ids, ids64, r) * h;
		T *dst = out + r * h;

		if (VEC) {
			const uint4 *s4 = reinterpret_cast<const uint4 *>(src);
			uint4 *d4 = reinterpret_cast<uint4 *>(dst);
			int64_t n4 = h / nv_vec<T>::n;

			for (int64_t j = threadIdx.x; j < n4; j += blockDim.x)
				d4[j] = s4[j];
		} else {
			for (int64_t j = threadIdx.x; j < h; j += blockDim.x)
				dst[j] = src[j];
		}
	}
}

template <typename T>
static void launch_embed(const void *table, const void *ids, int ids64,
			 void *out, int64_t t, int64_t h, cudaStream_t s)
{
	unsigned grid = (unsigned)(t > 65535 * 8 ? 65535 * 8 : t);
	bool vec = h % nv_vec<T>::n == 0 && nv_aligned16(table) &&
		   nv_aligned16(out);

	if (vec)
		embed_kernel<T, true><<<grid, NV_BLOCK, 0, s>>>(
			(const T *)table, ids, ids64, (T *)out, t, h);
	else
		embed_kernel<T, false><<<grid, NV_BLOCK, 0, s>>>(
			(const T *)table, ids, ids64, (T *)out, t, h);
}

extern "C" cudaError_t mtp_nv_embed(enum mtp_nv_act act, const void *table,
				    const void *ids, int ids64, void *out,
				    int64_t t, int64_t h, cudaStream_t s)
{
	if (t * h == 0)
		return cudaSuccess;
	NV_DISPATCH_ACT(act, launch_embed, table, ids, ids64, out, t, h, s);
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

/*
 * Element j of the sum, in vectors of V = 1 (any n) or nv_vec<T>::n (16-byte
 * loads: n a multiple of it and both pointers aligned, which aligns every
 * part); the same float32 order k = 0..p-1 on both paths, so the same bits.
 */
template <typename T, int V>
__global__ void all_reduce_kernel(const T *parts, int64_t p, int64_t n, T *out)
{
	GRID_STRIDE(j, n / V)
	{
		float acc[V], e[V];

		for (int u = 0; u < V; u++)
			acc[u] = 0.0f;
		for (int64_t k = 0; k < p; k++) {
			const T *src = parts + k * n + j * V;

			if constexpr (V == 1)
				e[0] = nv_f32(src[0]);
			else
				nv_load_vec(src, e);
			for (int u = 0; u < V; u++)
				acc[u] += e[u];
		}
		if constexpr (V == 1)
			out[j] = nv_from<T>(acc[0]);
		else
			nv_store_vec(out + j * V, acc);
	}
}

template <typename T>
static void launch_all_reduce(const void *parts, int64_t p, int64_t n,
			      void *out, cudaStream_t s)
{
	const int v = nv_vec<T>::n;

	if (n % v == 0 && nv_aligned16(parts) && nv_aligned16(out))
		all_reduce_kernel<T, nv_vec<T>::n>
			<<<grid_for(n / v), NV_BLOCK, 0, s>>>(
				(const T *)parts, p, n, (T *)out);
	else
		all_reduce_kernel<T, 1><<<grid_for(n), NV_BLOCK, 0, s>>>(
			(const T *)parts, p, n, (T *)out);
}

extern "C" cudaError_t mtp_nv_all_reduce(enum mtp_nv_act act,
					 const void *parts, int64_t p,
					 int64_t n, void *out, cudaStream_t s)
{
	if (n == 0)
		return cudaSuccess;
	NV_DISPATCH_ACT(act, launch_all_reduce, parts, p, n, out, s);
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

template <typename T>
static void launch_add_bcast(const void *a, const void *b, void *out,
			     int64_t rep, int64_t h, int64_t n, cudaStream_t s)
{
	add_bcast_kernel<<<grid_for(n), NV_BLOCK, 0, s>>>(
		(const T *)a, (const T *)b, (T *)out, rep, h, n);
}

extern "C" cudaError_t mtp_nv_add_bcast(enum mtp_nv_act act, const void *a,
					const void *b, void *out, int64_t rows,
					int64_t rep, int64_t h, cudaStream_t s)
{
	int64_t n = rows * rep * h;

	if (n == 0)
		return cudaSuccess;
	NV_DISPATCH_ACT(act, launch_add_bcast, a, b, out, rep, h, n, s);
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

template <typename T>
static void launch_swiglu(const void *gate, const void *up, void *g,
			  int64_t n, cudaStream_t s)
{
	swiglu_kernel<<<grid_for(n), NV_BLOCK, 0, s>>>((const T *)gate,
						       (const T *)up, (T *)g, n);
}

extern "C" cudaError_t mtp_nv_swiglu(enum mtp_nv_act act, const void *gate,
				     const void *up, void *g, int64_t n,
				     cudaStream_t s)
{
	if (n == 0)
		return cudaSuccess;
	NV_DISPATCH_ACT(act, launch_swiglu, gate, up, g, n, s);
	return cudaGetLastError();
}
