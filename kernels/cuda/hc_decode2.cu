/*
 * The two-kernel decode path of hc_pre and hc_head: hc_fused_post_pre's at
 * T > 8 (hc_post then runs before it) and every call with
 * MTP_CUDA_HC_ONE_KERNEL=0 (hc_decode.cu's dec_one). Two kernels per op:
 *  1. dots: block c takes the k slice [c*nsub*KC, (c+1)*nsub*KC) of every
 *     token (k over the M*H flattened streams), stages fn and x of one
 *     DEC_KC step in shared memory, and each thread accumulates a tile of
 *     4 tokens x R mixes over an eighth of the step's k (register tiling: 4
 *     + R shared loads for 4R multiply-adds); the eight slices are added in
 *     order and every (token, sum) partial of the slice is written to
 *     dec_part. Sum NMIX is q = sum x^2.
 *  2. finish: one block per token adds the partials over the slices in a
 *     fixed order (each warp lane a fixed stride, then a fixed butterfly),
 *     redoes the token in double when a float32 sum overflowed (as the
 *     per-token kernels do), and writes the op's outputs: hc_pre's mixes and
 *     Sinkhorn on one warp, then layer_input; hc_head's pre and y.
 * Every sum is float32, like the per-token kernels; the order differs
 * (chunks of DEC_KC instead of one block's strided lanes), which the
 * tolerance of SPEC.md §4.4.1 covers either way.
 */
#include "hc_decode.cuh"
#include "hc_pre_common.cuh"

#define DEC_THREADS 128
#define DEC_KC 128		/* k values staged per step */
#define DEC_STRIDE (DEC_KC + 1) /* padded: no bank conflicts */
#define DEC_TG 16		/* tokens per group: 4 tiles of 4 */
#define DEC_SLICES 8		/* DEC_THREADS / 16 */
#define DEC_MAX_CHUNKS 256
#define DEC_MAX_M 5 /* hc_pre: M * M <= 32, one warp's Sinkhorn */
#define DEC_MAX_SUMS (2 * DEC_MAX_M + DEC_MAX_M * DEC_MAX_M + 1)

/* The partials, [token][sum][chunk]: 9.4 MB. Calls on one stream run in
 * order, so one buffer serves every call of the module. */
static __device__ float
	dec_part[NV_HC_DECODE_MAX_T * DEC_MAX_SUMS * DEC_MAX_CHUNKS];

static_assert(DEC_KC == DEC_THREADS, "one staged k per thread");
static_assert(DEC_MAX_M == 5, "hc_pre dispatches M by NV_HC_DISPATCH_TO_5");
static_assert(NV_BLOCK >= DEC_MAX_CHUNKS, "one chunk per finishing thread");

template <typename T, int NMIX>
__global__ void __launch_bounds__(DEC_THREADS)
	hc_dec_dots(const T *x, const float *fn, int64_t t_n, int64_t k_len,
		    int nsub, int nchunk)
{
	constexpr int NS = NMIX + 1, R = (NMIX + 3) / 4;
	__shared__ float fs[NMIX * DEC_STRIDE];
	__shared__ float xs[DEC_TG * DEC_STRIDE];
	__shared__ float red[DEC_SLICES * DEC_TG * NS];
	const int tid = threadIdx.x, slice = tid / 16;
	const int a = (tid % 16) / 4, b = tid % 4;
	const int64_t chunk = blockIdx.x, kbase = chunk * nsub * DEC_KC;

	for (int64_t t0 = 0; t0 < t_n; t0 += DEC_TG) {
		const int nt = (int)(t_n - t0 < DEC_TG ? t_n - t0 : DEC_TG);
		float acc[4][R], q[4];

#pragma unroll
		for (int i = 0; i < 4; i++) {
			q[i] = 0.0f;
#pragma unroll
			for (int r = 0; r < R; r++)
				acc[i][r] = 0.0f;
		}
		for (int sc = 0; sc < nsub; sc++) {
			const int64_t k0 = kbase + (int64_t)sc * DEC_KC;
			const int64_t k = k0 + tid; /* DEC_KC == DEC_THREADS */
			const bool in = k < k_len;

			__syncthreads(); /* the last step's reads are done */
			/* unrolled: every load in flight at once (a loop
			 * waits out one memory latency per iteration) */
#pragma unroll
			for (int o = 0; o < NMIX; o++)
				fs[o * DEC_STRIDE + tid] =
					in ? fn[o * k_len + k] : 0.0f;
#pragma unroll
			for (int tt = 0; tt < DEC_TG; tt++)
				xs[tt * DEC_STRIDE + tid] =
					in && tt < nt
						? nv_f32(x[(t0 + tt) * k_len +
							   k])
						: 0.0f;
			__syncthreads();
			if (a * 4 >= nt)
				continue;
#pragma unroll 4
			for (int j = slice; j < DEC_KC; j += DEC_SLICES) {
				float xv[4], fv[R];

#pragma unroll
				for (int i = 0; i < 4; i++)
					xv[i] = xs[(a * 4 + i) * DEC_STRIDE + j];
#pragma unroll
				for (int r = 0; r < R; r++)
					fv[r] = b * R + r < NMIX
							? fs[(b * R +
							      r) * DEC_STRIDE +
							     j]
							: 0.0f;
#pragma unroll
				for (int i = 0; i < 4; i++) {
#pragma unroll
					for (int r = 0; r < R; r++)
						acc[i][r] += xv[i] * fv[r];
					if (b == 0)
						q[i] += xv[i] * xv[i];
				}
			}
		}
#pragma unroll
		for (int i = 0; i < 4; i++) {
			float *row = red + (slice * DEC_TG + a * 4 + i) * NS;

#pragma unroll
			for (int r = 0; r < R; r++)
				if (b * R + r < NMIX)
					row[b * R + r] = acc[i][r];
			if (b == 0)
				row[NMIX] = q[i];
		}
		__syncthreads();
		for (int i = tid; i < nt * NS; i += DEC_THREADS) {
			const int tt = i / NS, o = i % NS;
			float s = 0.0f;

			for (int sl = 0; sl < DEC_SLICES; sl++)
				s += red[(sl * DEC_TG + tt) * NS + o];
			dec_part[((t0 + tt) * NS + o) * nchunk + chunk] = s;
		}
	}
}

/* mix[o] = the sum of token t's NS partials over the chunks, in a fixed
 * order (thread c loads chunk c of every sum at once, then a butterfly per
 * warp and the warps in order); whether one is not finite. Ends with a
 * barrier. */
template <int NS>
static __device__ bool hc_dec_sum(int64_t t, int nchunk, double *mix)
{
	const int lane = threadIdx.x % MTP_GPU_WARP;
	const int wid = threadIdx.x / MTP_GPU_WARP, c = threadIdx.x;
	__shared__ float red[NV_HC_WARPS * NS];
	__shared__ int bad;
	float v[NS];

#pragma unroll
	for (int o = 0; o < NS; o++)
		v[o] = c < nchunk ? dec_part[(t * NS + o) * nchunk + c] : 0.0f;
#pragma unroll
	for (int o = 0; o < NS; o++) {
		const float s = nv_warp_sum(v[o]);

		if (lane == 0)
			red[wid * NS + o] = s;
	}
	if (threadIdx.x == 0)
		bad = 0;
	__syncthreads();
	if (threadIdx.x < NS) {
		float s = 0.0f;

		for (int w = 0; w < NV_HC_WARPS; w++)
			s += red[w * NS + threadIdx.x];
		mix[threadIdx.x] = s;
		if (!isfinite(s))
			bad = 1;
	}
	__syncthreads();
	return bad != 0;
}

template <typename T, int M>
__global__ void hc_dec_pre_finish(struct mtp_nv_hc_pre_args a, int nchunk,
				  bool vec)
{
	constexpr int NMIX = 2 * M + M * M;
	__shared__ double mix[NMIX + 1];
	__shared__ double redd[NV_HC_WARPS * (NMIX + 1)];
	__shared__ float pre[M];
	const int64_t t = blockIdx.x;
	const bool wide = hc_dec_sum<NMIX + 1>(t, nchunk, mix);

	if (wide)
		hc_mix_dots<T, NMIX, double>(
			(const T *)a.residual + t * M * a.h, a.fn, M * a.h, vec,
			NULL, redd, mix);
	if (threadIdx.x < MTP_GPU_WARP)
		hc_pre_mixes_warp<M>(&a, t, mix, wide, pre);
	__syncthreads();
	hc_pre_layer_input<T, M>(&a, t, vec, pre);
}

template <typename T, int M>
__global__ void hc_dec_head_finish(const T *xs, const float *fn,
				   const float *scale, const float *base, T *ys,
				   int64_t h, float rms_eps, float hc_eps,
				   int nchunk, bool vec, bool vec_out)
{
	__shared__ double mix[M + 1];
	__shared__ double redd[NV_HC_WARPS * (M + 1)];
	const int64_t t = blockIdx.x;
	const T *x = xs + t * M * h;
	const bool wide = hc_dec_sum<M + 1>(t, nchunk, mix);

	if (wide)
		hc_mix_dots<T, M, double>(x, fn, M * h, vec, NULL, redd, mix);
	hc_head_out<T, M>(x, ys + t * h, mix, wide, false, scale, base, h,
			  rms_eps, hc_eps, vec_out);
}

/* Chunks of nsub steps of DEC_KC, at most DEC_MAX_CHUNKS of them. */
static int dec_chunks(int64_t k_len, int *nsub)
{
	const int64_t steps = (k_len + DEC_KC - 1) / DEC_KC;

	*nsub = (int)((steps + DEC_MAX_CHUNKS - 1) / DEC_MAX_CHUNKS);
	return (int)((steps + *nsub - 1) / *nsub);
}

template <typename T, int M>
static void launch_pre(const struct mtp_nv_hc_pre_args *a, cudaStream_t s)
{
	int nsub, nchunk = dec_chunks(M * a->h, &nsub);
	const bool vec = hc_vec_ok<T>(a->residual, a->fn, M * a->h) &&
			 a->h % nv_vec<T>::n == 0;

	hc_dec_dots<T, 2 * M + M * M><<<(unsigned)nchunk, DEC_THREADS, 0, s>>>(
		(const T *)a->residual, a->fn, a->t, M * a->h, nsub, nchunk);
	hc_dec_pre_finish<T, M>
		<<<(unsigned)a->t, NV_BLOCK, 0, s>>>(*a, nchunk, vec);
}

template <typename T, int M>
static void launch_head(const void *x, const float *fn, const float *scale,
			const float *base, void *y, int64_t t, int64_t h,
			float rms_eps, float hc_eps, cudaStream_t s)
{
	int nsub, nchunk = dec_chunks(M * h, &nsub);
	const bool vec = hc_vec_ok<T>(x, fn, M * h);
	const bool vec_out = vec && h % nv_vec<T>::n == 0 && nv_aligned16(y);

	hc_dec_dots<T, M><<<(unsigned)nchunk, DEC_THREADS, 0, s>>>(
		(const T *)x, fn, t, M * h, nsub, nchunk);
	hc_dec_head_finish<T, M><<<(unsigned)t, NV_BLOCK, 0, s>>>(
		(const T *)x, fn, scale, base, (T *)y, h, rms_eps, hc_eps,
		nchunk, vec, vec_out);
}

bool nv_hc_pre_decode2(enum mtp_nv_act act, const struct mtp_nv_hc_pre_args *a,
		       cudaStream_t s)
{
	if (a->t > NV_HC_DECODE_MAX_T)
		return false;
	if (act == MTP_NV_BF16) {
		NV_HC_DISPATCH_TO_5(a->m, false, launch_pre, mtp_gpu_bf16, a,
				    s);
	} else if (act == MTP_NV_F16) {
		NV_HC_DISPATCH_TO_5(a->m, false, launch_pre, mtp_gpu_f16, a, s);
	} else {
		NV_HC_DISPATCH_TO_5(a->m, false, launch_pre, float, a, s);
	}
	return true;
}

bool nv_hc_head_decode2(enum mtp_nv_act act, const void *x, const float *fn,
			const float *scale, const float *base, void *y,
			int64_t t, int64_t m, int64_t h, float rms_eps,
			float hc_eps, cudaStream_t s)
{
	if (t > NV_HC_DECODE_MAX_T)
		return false;
	if (act == MTP_NV_BF16) {
		NV_HC_DISPATCH_OR(m, false, launch_head, mtp_gpu_bf16, x, fn,
				  scale, base, y, t, h, rms_eps, hc_eps, s);
	} else if (act == MTP_NV_F16) {
		NV_HC_DISPATCH_OR(m, false, launch_head, mtp_gpu_f16, x, fn,
				  scale, base, y, t, h, rms_eps, hc_eps, s);
	} else {
		NV_HC_DISPATCH_OR(m, false, launch_head, float, x, fn, scale,
				  base, y, t, h, rms_eps, hc_eps, s);
	}
	return true;
}
