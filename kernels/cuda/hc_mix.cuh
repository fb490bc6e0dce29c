/*
 * The mHC mix GEMV as a bandwidth-bound split-K product on the tensor cores
 * (bf16 streams, hc_pre and hc_head at T >= NV_HCM_MIN_T): dot[t,o] =
 * sum_k x[t,k] fn[o,k] and q[t] = sum_k x[t,k]^2 [MTP-SPEC §4.4.1, §4.4.4].
 *
 * Why: one block per token reads all of fn (up to 24 x M*H float32) from L2
 * for every token, 48 times the bytes of the token itself, so the per-token
 * kernels are bound by L2, not by memory. Here a block takes 128 tokens (8
 * warps of 16) and one K slice, so fn is read once per 128 tokens, and x
 * once, with 16-byte loads.
 *
 * Exactness: x is bf16, so each x*f product is exact in float32 when f is a
 * bf16; fn (float32) is split into three bf16 terms hi + mid + lo (exact to
 * about 2^-24 relative) and each term goes through mma.m16n8k16 with
 * float32 accumulation: float32-class sums, in another order than the
 * per-token kernel (the spec leaves the order open; DeepGEMM's path is TF32).
 *
 * K order: the MMA's k index is a permutation of the row's k32 block (lane
 * t of a quad loads elements 8t..8t+7 with one 16-byte load); fn is split
 * into the same layout, so the dot products are unchanged.
 *
 * Partials: part[s][t][c], c < NT*8 the dots, c = NT*8 the sum of squares;
 * the per-token epilogue (hcm_gather) adds the splits in order.
 */
#ifndef MTP_NV_HC_MIX_CUH
#define MTP_NV_HC_MIX_CUH

#include <type_traits>

#include "hc_common.cuh"

#define NV_HCM_MIN_T 128
#define NV_HCM_TOK 128  /* tokens per block: 8 warps x 16 */
#define NV_HCM_PARTS 3  /* bf16 terms of each fn value */

/* Columns of one partial row for NT n-tiles: NT*8 dots, q, padding. */
#define NV_HCM_COLS(NT) ((NT) * 8 + 4)

/* fn [nmix, K] float32 -> sp [3][NT*8][K] bf16 terms (rows past nmix 0). */
static __global__ void hcm_split_kernel(const float *fn, int nmix, int rows,
				 int64_t k_len, mtp_gpu_bf16 *sp)
{
	const int64_t total = (int64_t)rows * k_len;

	for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
	     i < total; i += (int64_t)gridDim.x * blockDim.x) {
		const int64_t r = i / k_len;
		const float f = r < nmix ? fn[i] : 0.0f;
		const mtp_gpu_bf16 hi = nv_from<mtp_gpu_bf16>(f);
		const float r1 = f - nv_f32(hi); /* exact */
		const mtp_gpu_bf16 mid = nv_from<mtp_gpu_bf16>(r1);

		sp[i] = hi;
		sp[total + i] = mid;
		sp[2 * total + i] = nv_from<mtp_gpu_bf16>(r1 - nv_f32(mid));
	}
}

static __device__ __forceinline__ void hcm_mma(float *c, uint32_t a0,
					       uint32_t a1, uint32_t a2,
					       uint32_t a3, uint32_t b0,
					       uint32_t b1)
{
	asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

static __device__ __forceinline__ float hcm_sq8(uint4 u)
{
	float v[8], s = 0.0f;

	nv_unpack<mtp_gpu_bf16>(u, v);
#pragma unroll
	for (int e = 0; e < 8; e++)
		s += v[e] * v[e];
	return s;
}

/* acc[j] += rows (g, g+8) of this k32 block times the NT n-tiles of fn. */
template <int NT>
static __device__ __forceinline__ void hcm_step(uint4 a0, uint4 a1,
						const mtp_gpu_bf16 *sp,
						int64_t plane, int64_t k_len,
						float (*acc)[4])
{
#pragma unroll
	for (int j = 0; j < NT; j++) {
#pragma unroll
		for (int p = 0; p < NV_HCM_PARTS; p++) {
			const uint4 b = nv_load_raw(sp + p * plane + j * 8 * k_len);

			hcm_mma(acc[j], a0.x, a1.x, a0.y, a1.y, b.x, b.y);
			hcm_mma(acc[j], a0.z, a1.z, a0.w, a1.w, b.z, b.w);
		}
	}
}

/* Writes a warp's 16 x (NT*8) dots and its two q's to part. */
template <int NT>
static __device__ void hcm_store(float *part, int64_t t0, int64_t t_len,
				 float (*acc)[4], float q0, float q1)
{
	const int lane = threadIdx.x % 32, g = lane / 4, c = (lane % 4) * 2;
	const int cols = NV_HCM_COLS(NT);
	const int64_t r0 = t0 + g, r1 = r0 + 8;

	q0 += mtp_gpu_shfl_xor(q0, 1);
	q0 += mtp_gpu_shfl_xor(q0, 2);
	q1 += mtp_gpu_shfl_xor(q1, 1);
	q1 += mtp_gpu_shfl_xor(q1, 2);
#pragma unroll
	for (int j = 0; j < NT; j++) {
		if (r0 < t_len)
			*reinterpret_cast<float2 *>(part + r0 * cols + j * 8 + c) =
				make_float2(acc[j][0], acc[j][1]);
		if (r1 < t_len)
			*reinterpret_cast<float2 *>(part + r1 * cols + j * 8 + c) =
				make_float2(acc[j][2], acc[j][3]);
	}
	if (c == 0 && r0 < t_len)
		part[r0 * cols + NT * 8] = q0;
	if (c == 0 && r1 < t_len)
		part[r1 * cols + NT * 8] = q1;
}

/* Block (tile, split): 128 tokens x k32 blocks [kb0, kb1) of K. */
template <int NT>
__global__ void __launch_bounds__(256)
hcm_dots_kernel(const mtp_gpu_bf16 *x, const mtp_gpu_bf16 *sp, float *part,
		int64_t t_len, int64_t k_len, int kb_per_split)
{
	const int lane = threadIdx.x % 32, g = lane / 4, q4 = lane % 4;
	const int64_t t0 = (int64_t)blockIdx.x * NV_HCM_TOK + threadIdx.x / 32 * 16;
	const int64_t nkb = k_len / 32, kb0 = (int64_t)blockIdx.y * kb_per_split;
	const int64_t kb1 = kb0 + kb_per_split < nkb ? kb0 + kb_per_split : nkb;
	const bool v0 = t0 + g < t_len, v1 = t0 + g + 8 < t_len;
	const mtp_gpu_bf16 *x0 = x + (t0 + g) * k_len + q4 * 8;
	const mtp_gpu_bf16 *x1 = x0 + 8 * k_len;
	const mtp_gpu_bf16 *b = sp + g * k_len + q4 * 8;
	const int64_t plane = NT * 8 * k_len;
	float acc[NT][4] = {}, q0 = 0.0f, q1 = 0.0f;
	const uint4 z = make_uint4(0, 0, 0, 0);

	for (int64_t kb = kb0; kb < kb1; kb += 2) {
		const bool two = kb + 1 < kb1;
		/* four 16-byte loads in flight before the first MMA */
		const uint4 a0 = v0 ? nv_load_raw(x0 + kb * 32) : z;
		const uint4 a1 = v1 ? nv_load_raw(x1 + kb * 32) : z;
		const uint4 c0 = v0 && two ? nv_load_raw(x0 + kb * 32 + 32) : z;
		const uint4 c1 = v1 && two ? nv_load_raw(x1 + kb * 32 + 32) : z;

		q0 += hcm_sq8(a0) + hcm_sq8(c0);
		q1 += hcm_sq8(a1) + hcm_sq8(c1);
		hcm_step<NT>(a0, a1, b + kb * 32, plane, k_len, acc);
		if (two)
			hcm_step<NT>(c0, c1, b + kb * 32 + 32, plane, k_len, acc);
	}
	hcm_store<NT>(part + (int64_t)blockIdx.y * t_len * NV_HCM_COLS(NT), t0,
		      t_len, acc, q0, q1);
}

/* Whether the split-K path applies: bf16 rows of k_len (a multiple of 32)
 * with 16-byte alignment, and enough tokens to fill the machine. */
template <typename T>
static inline bool hcm_ok(const void *x, int64_t t, int64_t k_len, int nmix)
{
	return std::is_same<T, mtp_gpu_bf16>::value && t >= NV_HCM_MIN_T &&
	       k_len % 32 == 0 && nv_aligned16(x) && nmix <= 3 * 8;
}

/* Splits of K: about two blocks per SM in all, each at least 8 k32 blocks. */
static inline int hcm_splits(int64_t t, int64_t k_len, int *kb_per_split)
{
	int sms = 132, dev = 0;
	const int64_t tiles = (t + NV_HCM_TOK - 1) / NV_HCM_TOK, nkb = k_len / 32;
	int64_t ks;

	if (cudaGetDevice(&dev) != cudaSuccess ||
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) !=
		    cudaSuccess)
		sms = 132;
	ks = (2 * sms + tiles - 1) / tiles;
	if (ks > nkb / 8)
		ks = nkb / 8 > 0 ? nkb / 8 : 1;
	*kb_per_split = (int)((nkb + ks - 1) / ks);
	*kb_per_split += *kb_per_split % 2; /* the main loop steps by two */
	return (int)((nkb + *kb_per_split - 1) / *kb_per_split);
}

/*
 * Enqueues the split of fn and the dots into stream-ordered scratch;
 * *part and *ks are what hcm_gather reads. The caller frees *scratch
 * (cudaFreeAsync) after its epilogue.
 */
template <int NT>
static cudaError_t hcm_launch(const void *x, const float *fn, int nmix,
			      int64_t t, int64_t k_len, cudaStream_t s,
			      void **scratch, float **part, int *ks)
{
	int kbs = 0;
	const size_t sp_bytes = (size_t)NV_HCM_PARTS * NT * 8 * k_len * 2;
	cudaError_t e;

	*ks = hcm_splits(t, k_len, &kbs);
	e = cudaMallocAsync(scratch, sp_bytes + (size_t)*ks * t *
						NV_HCM_COLS(NT) * sizeof(float), s);
	if (e != cudaSuccess)
		return e;
	mtp_gpu_bf16 *sp = (mtp_gpu_bf16 *)*scratch;

	*part = (float *)((char *)*scratch + sp_bytes);
	hcm_split_kernel<<<264, 256, 0, s>>>(fn, nmix, NT * 8, k_len, sp);
	dim3 grid((unsigned)((t + NV_HCM_TOK - 1) / NV_HCM_TOK), (unsigned)*ks);

	hcm_dots_kernel<NT><<<grid, 256, 0, s>>>((const mtp_gpu_bf16 *)x, sp,
						  *part, t, k_len, kbs);
	return cudaGetLastError();
}

/*
 * The epilogue's mixes of token t from the partials (splits added in
 * order, float32): mix[o] for o < NMIX, mix[NMIX] = q. A sum that
 * overflowed float32 is redone in double from x, as hc_mix does. Returns
 * whether the double path was taken. Block-uniform; ends with a barrier.
 */
template <typename T, int NMIX, int NT>
static __device__ bool hcm_gather(const float *part, int ks, int64_t t_len,
				  int64_t t, const T *x, const float *fn,
				  int64_t k_len, bool vec, double *mix)
{
	__shared__ double redd[NV_HC_WARPS * (NMIX + 1)];
	const int cols = NV_HCM_COLS(NT);
	bool wide = false;

	if (threadIdx.x <= NMIX) {
		const int c = threadIdx.x < NMIX ? threadIdx.x : NT * 8;
		float v = 0.0f;

		for (int s = 0; s < ks; s++)
			v += part[((int64_t)s * t_len + t) * cols + c];
		mix[threadIdx.x] = v;
	}
	__syncthreads();
	for (int o = 0; o <= NMIX; o++)
		wide = wide || isinf(mix[o]);
	if (wide)
		hc_mix_dots<T, NMIX, double>(x, fn, k_len, vec, NULL, redd,
					     mix);
	return wide;
}

#endif
