/*
 * The decode-size path of hc_pre, hc_fused_post_pre and hc_head
 * (hc_decode.cuh says why and when): one kernel per op, in three phases
 * (dec_one says when hc_decode2.cu's two kernels run instead).
 *  1. dots: block (c, g) takes the k slice [c*nsub*KC, (c+1)*nsub*KC) (k
 *     over the M*H flattened streams) of the DEC_TG tokens of group g,
 *     stages fn and x of one DEC_KC step in shared memory, and each thread
 *     accumulates a tile of 4 tokens x R mixes over a sixteenth of the
 *     step's k (register tiling: 4 + R shared loads for 4R multiply-adds);
 *     the sixteen slices are added in order and every (token, sum) partial
 *     of the slice goes to dec_part. Sum NMIX is q = sum x^2. With a fused
 *     hc_post the staged x is hc_post's output, computed there from x, R,
 *     post and comb in hc_post's order, rounded, stored and used: the new
 *     streams are read from memory once, not written and read back.
  *  2. arrival: each block counts itself in with an atomic; the last one to
 *     arrive takes finishing role 0, the one before it role 1 and so on
 *     (hc_head: one role per token; hc_pre: two, below); those blocks wait
 *     for the last (they are already running, and fewer than the
 *     multiprocessors: the rest of the grid can always be scheduled).
 *  3. finish: a role's block adds its token's partials over the slices in
 *     a fixed order (each lane a fixed chunk, then a fixed butterfly),
 *     redoes the token in double when a float32 sum overflowed (as the
 *     per-token kernels do), and writes the op's outputs: hc_pre's
 *     layer_input from pre (role t) beside post_mix and the Sinkhorn of
 *     comb_mix on one warp (role T + t, another block, so the two overlap);
 *     hc_head's y. The output pass (hc_dec_out.cuh) holds the rows in
 *     registers, every load in flight at once (the per-token path's sums).
 * Every sum is float32, like the per-token kernels; the order differs
 * (chunks of DEC_KC instead of one block's strided lanes), which the
 * tolerance of SPEC.md §4.4.1 covers either way; a token's sums do not
 * depend on T (batch-invariant). The kernels launch with programmatic
 * dependent launch (CUDA builds; MTP_CUDA_PDL=0 turns it off): fn, a
 * weight, is loaded before the wait for the previous kernel, and the
 * dependants may start once every block arrived.
 * MTP_CUDA_HC_DEC_SKIP (a bench aid, wrong outputs): 1 leaves phase 3 out,
 * 2 layer_input / y, 4 runs one Sinkhorn iteration.
 */
#include "hc_decode.cuh"
#include "hc_dec_out.cuh"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEC_THREADS NV_BLOCK
#define DEC_KC DEC_THREADS	/* k values staged per step */
#define DEC_STRIDE (DEC_KC + 1) /* padded: no bank conflicts */
#define DEC_TG 16		/* tokens per group: 4 tiles of 4 */
#define DEC_SLICES (DEC_THREADS / 16)
#define DEC_MAX_CHUNKS 256
#define DEC_MAX_M 5 /* hc_pre: M * M <= 32, one warp's Sinkhorn */
#define DEC_MAX_SUMS (2 * DEC_MAX_M + DEC_MAX_M * DEC_MAX_M + 1)
#define DEC_SKIP_FINISH 1
#define DEC_SKIP_OUT 2

/* The partials, [token][sum][chunk]: 9.4 MB, and the arrival count and
 * generation. Calls on one stream run in order (with PDL, each waits for
 * the previous kernel before touching them), so one set serves every call
 * of the module. */
static __device__ float
	dec_part[NV_HC_DECODE_MAX_T * DEC_MAX_SUMS * DEC_MAX_CHUNKS];
static __device__ unsigned dec_arrived, dec_gen;

static_assert(DEC_KC == DEC_THREADS, "one staged k per thread");
static_assert(DEC_MAX_M == 5, "hc_pre dispatches M by NV_HC_DISPATCH_TO_5");
static_assert(NV_BLOCK >= DEC_MAX_CHUNKS, "one chunk per finishing thread");

/* hc_post's inputs when the op is hc_fused_post_pre (x NULL otherwise). */
struct dec_post {
	const void *x, *res;
	const float *post, *comb;
};

static __device__ __forceinline__ void dec_pdl_wait(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

static __device__ __forceinline__ void dec_pdl_release(void)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

/* Element k of token t's streams: x[t][k], or with p->x hc_post's output
 * [§4.4.2] (float32 in hc_post.cu's order, rounded once; the caller
 * stores it to x, after every load of the step is in flight). */
template <typename T, int M, bool POST>
static __device__ __forceinline__ float
dec_elem(const T *x, int64_t t, int64_t k, int64_t h, const struct dec_post *p)
{
	if (!POST)
		return nv_f32(x[t * M * h + k]);
	const int64_t j = k / h, i = k - j * h;
	const float *c = p->comb + t * M * M;
	float acc = p->post[t * M + j] * nv_f32(((const T *)p->x)[t * h + i]);

#pragma unroll
	for (int s = 0; s < M; s++)
		acc += c[s * M + j] *
		       nv_f32(((const T *)p->res)[(t * M + s) * h + i]);
	return nv_f32(nv_from<T>(acc));
}

/* Phase 1 of block (blockIdx.x, blockIdx.y): the partial sums of its k
 * slice for its token group, to dec_part. sm: the dynamic shared memory. */
template <typename T, int M, int NMIX, bool POST>
static __device__ void dec_dots(const T *x, const float *fn, int64_t t_n,
				int64_t h, int nsub, int nchunk,
				const struct dec_post *p, float *sm)
{
	constexpr int NS = NMIX + 1, R = (NMIX + 3) / 4;
	float *fs = sm, *xs = sm + NMIX * DEC_STRIDE, *red = sm;
	const int tid = threadIdx.x, slice = tid / 16;
	const int a = (tid % 16) / 4, b = tid % 4;
	const int64_t chunk = blockIdx.x, kbase = chunk * nsub * DEC_KC;
	const int64_t k_len = M * h, t0 = (int64_t)blockIdx.y * DEC_TG;
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
		const int64_t k = kbase + (int64_t)sc * DEC_KC + tid;
		const bool in = k < k_len;
		float fr[NMIX], xr[DEC_TG];

		/* unrolled: every load in flight at once; fn is a weight,
		 * loaded before the wait for the previous kernel (PDL) */
#pragma unroll
		for (int o = 0; o < NMIX; o++)
			fr[o] = in ? fn[o * k_len + k] : 0.0f;
		if (sc == 0)
			dec_pdl_wait();
#pragma unroll
		for (int tt = 0; tt < DEC_TG; tt++)
			xr[tt] = in && tt < nt ? dec_elem<T, M, POST>(
							 x, t0 + tt, k, h, p)
					       : 0.0f;
		if (POST) /* hc_post's output, once */
#pragma unroll
			for (int tt = 0; tt < DEC_TG; tt++)
				if (in && tt < nt)
					((T *)x)[(t0 + tt) * k_len + k] =
						nv_from<T>(xr[tt]);
		__syncthreads(); /* the last step's reads are done */
#pragma unroll
		for (int o = 0; o < NMIX; o++)
			fs[o * DEC_STRIDE + tid] = fr[o];
#pragma unroll
		for (int tt = 0; tt < DEC_TG; tt++)
			xs[tt * DEC_STRIDE + tid] = xr[tt];
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
						? fs[(b * R + r) * DEC_STRIDE +
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
	__syncthreads(); /* red overlays fs and xs */
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

/* Phase 2: this block's first finishing role (its rank counted back from
 * the last arrival; the caller adds the grid size while below nroles), or
 * -1. The partials (and a fused hc_post's output) are made visible before
 * the count; a block of rank 0 < k < nroles waits for the last arrival's
 * generation step. Block-uniform. */
static __device__ int64_t dec_arrive(int64_t nroles)
{
	__shared__ int64_t tok;

	__threadfence();
	__syncthreads();
	if (threadIdx.x == 0) {
		volatile unsigned *gen = &dec_gen;
		const unsigned n = gridDim.x * gridDim.y, g = *gen;
		const unsigned k = n - 1 - atomicAdd(&dec_arrived, 1u);

		if (k == 0) {
			dec_arrived = 0;
			__threadfence();
			atomicAdd(&dec_gen, 1u);
		} else if (k < nroles) {
			while (*gen == g)
				;
		}
		__threadfence();
		tok = k < nroles ? (int64_t)k : -1;
	}
	__syncthreads();
	dec_pdl_release();
	return tok;
}

/* mix[o] = the sum of token t's NS partials over the chunks, in a fixed
 * order (thread c loads chunk c of every sum at once, then a butterfly per
 * warp and the warps in order); whether one is not finite. Ends with a
 * barrier. Volatile loads: the partials were written by other blocks of
 * this kernel. */
template <int NS>
static __device__ bool hc_dec_sum(int64_t t, int nchunk, double *mix)
{
	const int lane = threadIdx.x % MTP_GPU_WARP;
	const int wid = threadIdx.x / MTP_GPU_WARP, c = threadIdx.x;
	const volatile float *part = dec_part;
	__shared__ float red[NV_HC_WARPS * NS];
	__shared__ int bad;
	float v[NS];

#pragma unroll
	for (int o = 0; o < NS; o++)
		v[o] = c < nchunk ? part[(t * NS + o) * nchunk + c] : 0.0f;
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

/* Two finishing roles per token: r < T writes layer_input (pre only), r >= T
 * post_mix and comb_mix (the Sinkhorn), so the two run side by side on two
 * blocks; both take the mixes from the same partials, in the same order. */
template <typename T, int M, bool POST>
__global__ void __launch_bounds__(DEC_THREADS)
	hc_dec_pre(struct mtp_nv_hc_pre_args a, struct dec_post p, int nsub,
		   int nchunk, bool vec, int skip)
{
	constexpr int NMIX = 2 * M + M * M;
	extern __shared__ float4 dec_dyn[];
	__shared__ double mix[NMIX + 1];
	__shared__ double redd[NV_HC_WARPS * (NMIX + 1)];
	__shared__ float pre[M], pre_sk[M];
	const int64_t n = (int64_t)gridDim.x * gridDim.y;

	dec_dots<T, M, NMIX, POST>((const T *)a.residual, a.fn, a.t, a.h, nsub,
				   nchunk, &p, (float *)dec_dyn);
	for (int64_t r = dec_arrive(2 * a.t); r >= 0 && r < 2 * a.t; r += n) {
		const int64_t t = r % a.t;

		if (skip & DEC_SKIP_FINISH)
			return;
		const bool wide = hc_dec_sum<NMIX + 1>(t, nchunk, mix);

		if (wide)
			hc_mix_dots<T, NMIX, double>(
				(const T *)a.residual + t * M * a.h, a.fn,
				M * a.h, vec, NULL, redd, mix);
		if (r >= a.t) {
			if (threadIdx.x < MTP_GPU_WARP)
				hc_pre_mixes_warp<M>(&a, t, mix, wide, pre_sk);
			continue;
		}
		if (threadIdx.x < M)
			pre[threadIdx.x] =
				hc_pre_weight<M>(&a, mix, wide, threadIdx.x);
		__syncthreads();
		if (!(skip & DEC_SKIP_OUT))
			dec_layer_input<T, M>(&a, t, vec, pre);
	}
}

template <typename T, int M>
__global__ void __launch_bounds__(DEC_THREADS)
	hc_dec_head(const T *xs, const float *fn, const float *scale,
		    const float *base, T *ys, int64_t t_n, int64_t h,
		    float rms_eps, float hc_eps, int nsub, int nchunk, bool vec,
		    bool vec_out, int skip)
{
	extern __shared__ float4 dec_dyn[];
	__shared__ double mix[M + 1];
	__shared__ double redd[NV_HC_WARPS * (M + 1)];
	const int64_t n = (int64_t)gridDim.x * gridDim.y;

	dec_dots<T, M, M, false>(xs, fn, t_n, h, nsub, nchunk, NULL,
				 (float *)dec_dyn);
	for (int64_t t = dec_arrive(t_n); t >= 0 && t < t_n; t += n) {
		const T *x = xs + t * M * h;

		if (skip & DEC_SKIP_FINISH)
			return;
		const bool wide = hc_dec_sum<M + 1>(t, nchunk, mix);

		if (wide)
			hc_mix_dots<T, M, double>(x, fn, M * h, vec, NULL, redd,
						  mix);
		if (!(skip & DEC_SKIP_OUT))
			dec_head_out<T, M>(x, ys + t * h, mix, wide, scale,
					   base, h, rms_eps, hc_eps, vec_out);
	}
}

/* Chunks of nsub steps of DEC_KC, at most DEC_MAX_CHUNKS of them. */
static int dec_chunks(int64_t k_len, int *nsub)
{
	const int64_t steps = (k_len + DEC_KC - 1) / DEC_KC;

	*nsub = (int)((steps + DEC_MAX_CHUNKS - 1) / DEC_MAX_CHUNKS);
	return (int)((steps + *nsub - 1) / *nsub);
}

/* The dynamic shared memory of dec_dots: fn and x of one step, or the
 * slices' sums (overlaid). */
static size_t dec_smem(int nmix)
{
	const size_t stage = (size_t)(nmix + DEC_TG) * DEC_STRIDE;
	const size_t red = (size_t)DEC_SLICES * DEC_TG * (nmix + 1);

	return (stage > red ? stage : red) * sizeof(float);
}

/* An integer from the environment (0 when unset), read once per name. */
static int dec_env(const char *name, int *cache)
{
	if (*cache < 0) {
		const char *e = getenv(name);

		*cache = e ? atoi(e) : 0;
	}
	return *cache;
}

static int dec_skip(void)
{
	static int v = -1;

	return dec_env("MTP_CUDA_HC_DEC_SKIP", &v);
}

/* The multiprocessors of the current device (the most tokens the arrival
 * may keep waiting, phase 2), read once. */
static int dec_sms(void)
{
	static int sms;

	if (!sms) {
		cudaDeviceProp p;
		int dev = 0;

		cudaGetDevice(&dev);
		sms = cudaGetDeviceProperties(&p, dev) == cudaSuccess
			      ? p.multiProcessorCount
			      : 1;
	}
	return sms;
}

/* kern<<<grid, DEC_THREADS, smem, s>>>(args...), with programmatic
 * dependent launch unless MTP_CUDA_PDL=0 (CUDA builds). */
template <typename... P, typename... A>
static void dec_launch(void (*kern)(P...), dim3 grid, size_t smem,
		       cudaStream_t s, A... args)
{
	if (smem > 48 * 1024) /* M = 5 only; not a stream operation */
		cudaFuncSetAttribute(
			kern, cudaFuncAttributeMaxDynamicSharedMemorySize,
			(int)smem);
#ifdef MTP_NV_HC_TC
	static int pdl = -1;

	if (pdl < 0) {
		const char *e = getenv("MTP_CUDA_PDL");

		pdl = !e || atoi(e) != 0;
	}
	if (pdl) {
		cudaLaunchConfig_t cfg = {};
		cudaLaunchAttribute at[1];

		at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
		at[0].val.programmaticStreamSerializationAllowed = 1;
		cfg.gridDim = grid;
		cfg.blockDim = dim3(DEC_THREADS);
		cfg.dynamicSmemBytes = smem;
		cfg.stream = s;
		cfg.attrs = at;
		cfg.numAttrs = 1;
		cudaLaunchKernelEx(&cfg, kern, ((P)args)...);
		return;
	}
#endif
	kern<<<grid, DEC_THREADS, smem, s>>>(((P)args)...);
}

template <typename T, int M>
static void launch_pre(const struct mtp_nv_hc_pre_args *a, cudaStream_t s)
{
	constexpr int NMIX = 2 * M + M * M;
	int nsub, nchunk = dec_chunks(M * a->h, &nsub);
	const bool vec = hc_vec_ok<T>(a->residual, a->fn, M * a->h) &&
			 a->h % nv_vec<T>::n == 0;
	const dim3 grid((unsigned)nchunk,
			(unsigned)((a->t + DEC_TG - 1) / DEC_TG));
	const struct dec_post p = {a->post_x, a->post_res, a->post_in,
				   a->comb_in};
	struct mtp_nv_hc_pre_args b = *a;

	if (dec_skip() & 4)
		b.sinkhorn_iters = 1;
	if (p.x)
		dec_launch(hc_dec_pre<T, M, true>, grid, dec_smem(NMIX), s, b,
			   p, nsub, nchunk, vec, dec_skip());
	else
		dec_launch(hc_dec_pre<T, M, false>, grid, dec_smem(NMIX), s, b,
			   p, nsub, nchunk, vec, dec_skip());
}

template <typename T, int M>
static void launch_head(const void *x, const float *fn, const float *scale,
			const float *base, void *y, int64_t t, int64_t h,
			float rms_eps, float hc_eps, cudaStream_t s)
{
	int nsub, nchunk = dec_chunks(M * h, &nsub);
	const bool vec = hc_vec_ok<T>(x, fn, M * h);
	const bool vec_out = vec && h % nv_vec<T>::n == 0 && nv_aligned16(y);
	const dim3 grid((unsigned)nchunk,
			(unsigned)((t + DEC_TG - 1) / DEC_TG));

	dec_launch(hc_dec_head<T, M>, grid, dec_smem(M), s, (const T *)x, fn,
		   scale, base, (T *)y, t, h, rms_eps, hc_eps, nsub, nchunk,
		   vec, vec_out, dec_skip());
}

/* Whether this path takes a call of t tokens rather than hc_decode2.cu's
 * two kernels (fused: with hc_post fused, which those cannot do).
 * MTP_CUDA_HC_ONE_KERNEL=1 forces it, 0 the two kernels; unset, the choice
 * measured on the H100 (2026-12-06, H = 7168, M = 4, rotated 128-launch
 * graphs, docs/BENCHMARKS.md): hc_pre 10.5 against 13.4 us at T = 1 and
 * 32.4 against 38.8 at T = 64; hc_head level at T = 1, 8, 48, 64 and
 * ahead at 16 and 32 (7.4 / 8.4 against 9.8 / 14.6); hc_fused_post_pre
 * ahead at T = 1 (11.4 against 15.4), level at 8 and behind from 16 (58.8
 * against 36.3 at T = 64: its staging of hc_post's output serialises the
 * tokens of a group), so fused takes it up to T = 8 only. */
static bool dec_one(int64_t t, bool fused)
{
	static int v = -1;

	if (v < 0) {
		const char *e = getenv("MTP_CUDA_HC_ONE_KERNEL");

		v = !e || !*e ? 2 : atoi(e) != 0;
	}
	return v == 2 ? !fused || t <= 8 : v != 0;
}

bool nv_hc_pre_decode(enum mtp_nv_act act, const struct mtp_nv_hc_pre_args *a,
		      cudaStream_t s)
{
	if (!dec_one(a->t, a->post_x != NULL))
		return !a->post_x && nv_hc_pre_decode2(act, a, s);
	if (a->t > NV_HC_DECODE_MAX_T || 2 * a->t > dec_sms())
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

bool nv_hc_head_decode(enum mtp_nv_act act, const void *x, const float *fn,
		       const float *scale, const float *base, void *y,
		       int64_t t, int64_t m, int64_t h, float rms_eps,
		       float hc_eps, cudaStream_t s)
{
	if (!dec_one(t, false))
		return nv_hc_head_decode2(act, x, fn, scale, base, y, t, m, h,
					  rms_eps, hc_eps, s);
	if (t > NV_HC_DECODE_MAX_T || t > dec_sms())
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

enum nv_hc_path nv_hc_path(void)
{
	static int path = -1;

	if (path < 0) {
		const char *e = getenv("MTP_CUDA_HC_PATH");

		path = NV_HC_PATH_AUTO;
		if (e && !strcmp(e, "decode"))
			path = NV_HC_PATH_DECODE;
		else if (e && !strcmp(e, "token"))
			path = NV_HC_PATH_TOKEN;
		else if (e && !strcmp(e, "tile"))
			path = NV_HC_PATH_TILE;
		else if (e && !strcmp(e, "tc"))
			path = NV_HC_PATH_TC;
		else if (e && *e && strcmp(e, "auto"))
			fprintf(stderr,
				"mtpcheck: MTP_CUDA_HC_PATH=%s is not decode, "
				"token, tile, tc or auto: auto\n",
				e);
	}
	return (enum nv_hc_path)path;
}

bool nv_hc_decode_takes(int64_t t, int64_t auto_max)
{
	const enum nv_hc_path p = nv_hc_path();

	return t <= NV_HC_DECODE_MAX_T &&
	       (p == NV_HC_PATH_DECODE ||
		(p == NV_HC_PATH_AUTO && t <= auto_max));
}
