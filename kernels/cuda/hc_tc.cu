/*
 * The prefill path of hc_pre and hc_head (CUDA variant) on the tensor cores
 * [SPEC.md §4.4.1, §4.4.4]; CUDA only (mma.sync PTX), compiled by
 * kernels/cuda/CMakeLists.txt alone, called under MTP_NV_HC_TC.
 *
 * The mix product X [T, K] x fn^T [K, NMIX] runs as TF32 mma.sync
 * m16n8k8 with a float32-exact split of fn: x is bf16 or fp16 (8 or 11
 * significant bits), exact in TF32 (11 bits), so only fn is split:
 * fn_hi = tf32(fn), fn_lo = tf32(fn - fn_hi), mix = x fn_hi + x fn_lo.
 * Error (SPEC.md §4.4.1): fn - fn_hi is exact in float32 and below half a
 * TF32 ulp of fn, so rounding it to TF32 leaves at most 2^-23 |fn| (half a
 * float32 ulp of fn); each product x fn_hi, x fn_lo is exact (22 bits), so
 * |x fn - x (fn_hi + fn_lo)| <= 2^-23 |x fn|, then the float32 (truncating,
 * u = 2^-23) accumulation of the tensor cores over 2K/8 mma steps per
 * split and the fixed-order float32 sums of the splits: the bound
 * |mix - mix_exact| <= (2^-23 + gamma_n) sum_k |x_k fn_k|, n = 2K/8 + S + 2,
 * the same order as the float32 FMA chains of the other paths.
 * MTP_CUDA_TC_NOSPLIT=1 (a test mutant) drops fn_lo: the error becomes
 * 2^-11 |x fn| per product, which the float32 tolerance of post_mix and
 * comb_mix does not allow (tools/bench/mhc_tc_bound.case).
 *
 * Grid: tiles of TC_TB = 64 tokens, each split over S slices of K (about
 * 1024 k each): block (s, tile) has 8 warps, warp w takes tokens
 * 32 (w & 1) .. +31 (two m16 tiles) and every fourth 32-k step of the
 * slice (w >> 1). Per 32-k step a thread loads one 16-byte x vector of 8
 * activations per row it owns and 8 fn values per n8 tile, and runs 4 k8
 * mma steps (the k order inside the step is permuted alike in A and B).
 * q = sum x^2 is summed on the CUDA cores from the same registers. The
 * block adds its 4 k groups in order and stores its partials; the last
 * block of a tile (atomic counter, __threadfence) adds the S partials in
 * slice order (deterministic: no float atomics), redoes a token whose
 * float32 sums overflowed in double (hc_mix_dots, as the other paths do),
 * and computes the tile's mixes: hc_pre's mixes and Sinkhorn (one thread a
 * token), hc_head's pre; it stores pre (tc_pre) and resets the counter.
 * A second kernel over the whole GPU writes layer_input or y, one warp a
 * token: in the first version the last block wrote them too, 64 tokens'
 * 3.7 MB of x reread through one SM, a tail of about 100-130 us at every
 * T (docs/BENCHMARKS.md).
 */
#include "hc_decode.cuh"
#include "hc_pre_common.cuh"

#include <stdlib.h>

#define TC_TB 64	 /* tokens a tile */
#define TC_KSTEP 32	 /* k per warp step: 4 mma k8 steps */
#define TC_SLICE_STEPS 32 /* 32-k steps a slice aims at: 1024 k */
#define TC_MAX_SLICES 32
#define TC_MAX_TILES 64 /* tiles a launch: 4096 tokens */
#define TC_MAX_NS 25	 /* 2M + M^2 + 1 at M = 4 */
#define TC_KG 4		 /* k groups of warps */

/* The partials [tile][slice][token][sum], 13 MB, and the tile counters.
 * Calls on one stream run in order, so one buffer serves the module. */
static __device__ float
	tc_part[TC_MAX_TILES * TC_MAX_SLICES * TC_TB * TC_MAX_NS];
static __device__ unsigned tc_count[TC_MAX_TILES];
/* pre [token][M] of a launch, from the mixes to the output kernel. */
static __device__ float tc_pre[TC_MAX_TILES * TC_TB * 4];

static_assert(NV_BLOCK == 2 * TC_KG * MTP_GPU_WARP, "8 warps a block");

static __device__ __forceinline__ unsigned tc_tf32(float v)
{
	unsigned r;

	asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(v));
	return r;
}

/* c += a b, m16n8k8, TF32 inputs, float32 accumulation. */
static __device__ __forceinline__ void tc_mma(float *c, const unsigned *a,
					      unsigned b0, unsigned b1)
{
	asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
		     "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
		     "{%0,%1,%2,%3};\n"
		     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
		     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0),
		       "r"(b1));
}

struct tc_args {
	const void *x;	 /* [T, K] from token t0 */
	const float *fn; /* [NMIX, K] */
	int64_t nt, k, t0; /* tokens of this launch, K, the first token */
	int slices, steps; /* S, 32-k steps a slice */
	bool nosplit;
};

/* The raw x vector of row r at k (zero outside the launch's rows). */
template <typename T>
static __device__ __forceinline__ uint4 tc_ldx(const struct tc_args *g,
					       int64_t r, int64_t k)
{
	return r < g->nt ? nv_load_raw((const T *)g->x + r * g->k + k)
			 : make_uint4(0, 0, 0, 0);
}

/*
 * This block's slice of the tile's mixes, into part (TC_TB x NS: the NMIX
 * dots, then q). red: shared TC_KG * TC_TB * NS floats. Ends with a barrier.
 */
template <typename T, int NMIX>
static __device__ void tc_dots(const struct tc_args *g, int64_t tile0, int sl,
			       float *red, float *part)
{
	constexpr int NS = NMIX + 1, NN = (NMIX + 7) / 8;
	const int lane = threadIdx.x % MTP_GPU_WARP, w = threadIdx.x / 32;
	const int gi = lane / 4, c = lane % 4, half = w & 1, kg = w >> 1;
	const int64_t nk = g->k / TC_KSTEP;
	const int64_t j0 = (int64_t)sl * g->steps;
	const int64_t j1 = j0 + g->steps < nk ? j0 + g->steps : nk;
	float acc[2][NN][4], q[2][2];
	int64_t rows[2][2];

#pragma unroll
	for (int mt = 0; mt < 2; mt++) {
		rows[mt][0] = tile0 + half * 32 + mt * 16 + gi;
		rows[mt][1] = rows[mt][0] + 8;
		q[mt][0] = q[mt][1] = 0.0f;
#pragma unroll
		for (int n = 0; n < NN; n++)
			for (int e = 0; e < 4; e++)
				acc[mt][n][e] = 0.0f;
	}
	for (int64_t j = j0 + kg; j < j1; j += TC_KG) {
		const int64_t k = j * TC_KSTEP + 8 * c;
		uint4 xr[2][2];
		float f[NN][8], xv[2][2][8];

		/* every load of the step in flight before the first use */
#pragma unroll
		for (int mt = 0; mt < 2; mt++)
			for (int r = 0; r < 2; r++)
				xr[mt][r] = tc_ldx<T>(g, rows[mt][r], k);
#pragma unroll
		for (int n = 0; n < NN; n++) {
			const int o = n * 8 + gi;
			float4 u = make_float4(0, 0, 0, 0), v = u;

			if (o < NMIX) {
				u = __ldg((const float4 *)(g->fn + o * g->k +
							  k));
				v = __ldg((const float4 *)(g->fn + o * g->k +
							  k + 4));
			}
			f[n][0] = u.x, f[n][1] = u.y, f[n][2] = u.z;
			f[n][3] = u.w, f[n][4] = v.x, f[n][5] = v.y;
			f[n][6] = v.z, f[n][7] = v.w;
		}
#pragma unroll
		for (int mt = 0; mt < 2; mt++)
			for (int r = 0; r < 2; r++) {
				nv_unpack<T>(xr[mt][r], xv[mt][r]);
#pragma unroll
				for (int e = 0; e < 8; e++)
					q[mt][r] += xv[mt][r][e] *
						    xv[mt][r][e];
			}
		/* k8 step s: A column c <-> k + 2s, column c + 4 <-> k +
		 * 2s + 1, B rows alike */
#pragma unroll
		for (int s = 0; s < 4; s++) {
			unsigned bh[NN][2], bl[NN][2];

#pragma unroll
			for (int n = 0; n < NN; n++)
				for (int e = 0; e < 2; e++) {
					const float v = f[n][2 * s + e];

					bh[n][e] = tc_tf32(v);
					bl[n][e] = tc_tf32(
						v - __uint_as_float(bh[n][e]));
				}
#pragma unroll
			for (int mt = 0; mt < 2; mt++) {
				const unsigned a[4] = {
					__float_as_uint(xv[mt][0][2 * s]),
					__float_as_uint(xv[mt][1][2 * s]),
					__float_as_uint(xv[mt][0][2 * s + 1]),
					__float_as_uint(xv[mt][1][2 * s + 1])};

#pragma unroll
				for (int n = 0; n < NN; n++) {
					tc_mma(acc[mt][n], a, bh[n][0],
					       bh[n][1]);
					if (!g->nosplit)
						tc_mma(acc[mt][n], a, bl[n][0],
						       bl[n][1]);
				}
			}
		}
	}
	/* q over the 4 lanes of a row group, in a fixed butterfly */
#pragma unroll
	for (int mt = 0; mt < 2; mt++)
		for (int r = 0; r < 2; r++) {
			q[mt][r] += mtp_gpu_shfl_xor(q[mt][r], 1);
			q[mt][r] += mtp_gpu_shfl_xor(q[mt][r], 2);
		}
#pragma unroll
	for (int mt = 0; mt < 2; mt++)
		for (int r = 0; r < 2; r++) {
			const int tb = half * 32 + mt * 16 + gi + 8 * r;
			float *row = red + (kg * TC_TB + tb) * NS;

#pragma unroll
			for (int n = 0; n < NN; n++)
				for (int e = 0; e < 2; e++) {
					const int o = n * 8 + 2 * c + e;

					if (o < NMIX)
						row[o] = acc[mt][n][2 * r + e];
				}
			if (c == 0)
				row[NMIX] = q[mt][r];
		}
	__syncthreads();
	for (int i = threadIdx.x; i < TC_TB * NS; i += NV_BLOCK) {
		float v = 0.0f;

		for (int kk = 0; kk < TC_KG; kk++)
			v += red[kk * TC_TB * NS + i];
		part[i] = v;
	}
	__threadfence(); /* the partials, before tc_last's count */
	__syncthreads();
}

/* Whether this block is the tile's last (all S partials stored); then mix
 * (shared, TC_TB x NS) holds their sums in slice order. Block-uniform. */
template <int NS>
static __device__ bool tc_last(int tile, int slices, float *mix)
{
	__shared__ int last;

	if (threadIdx.x == 0) {
		last = atomicAdd(&tc_count[tile], 1u) == (unsigned)slices - 1;
	}
	__syncthreads();
	if (!last)
		return false;
	__threadfence(); /* the other blocks' partials, after the count */
	const float *p = tc_part + (int64_t)tile * slices * TC_TB * NS;

	for (int i = threadIdx.x; i < TC_TB * NS; i += NV_BLOCK) {
		float v = 0.0f;

		for (int s = 0; s < slices; s++)
			v += __ldcg(p + (int64_t)s * TC_TB * NS + i);
		mix[i] = v;
	}
	if (threadIdx.x == 0)
		tc_count[tile] = 0; /* for the next call */
	__syncthreads();
	return true;
}

/* Marks the tile's tokens whose float32 sums overflowed. */
template <int NS>
static __device__ void tc_redo_flags(const float *mix, int nt, int *redo)
{
	if (threadIdx.x < TC_TB) {
		bool inf = false;

		for (int o = 0; o < NS; o++)
			inf = inf || isinf(mix[threadIdx.x * NS + o]);
		redo[threadIdx.x] = (int)threadIdx.x < nt && inf;
	}
	__syncthreads();
}

template <typename T, int M>
__global__ void __launch_bounds__(NV_BLOCK)
	hc_tc_pre_kernel(struct tc_args g, struct mtp_nv_hc_pre_args a)
{
	constexpr int NMIX = 2 * M + M * M, NS = NMIX + 1;
	__shared__ float red[TC_KG * TC_TB * NS];
	__shared__ double mixd[NS], redd[NV_HC_WARPS * NS];
	__shared__ int redo[TC_TB];
	const int tile = blockIdx.y, sl = blockIdx.x;
	const int64_t tile0 = (int64_t)tile * TC_TB, K = g.k;
	const int nt = (int)(g.nt - tile0 < TC_TB ? g.nt - tile0 : TC_TB);
	const int64_t t0 = g.t0 + tile0; /* the tile's first token */
	const T *x = (const T *)g.x + tile0 * K;
	const int tid = threadIdx.x;
	float *pre = tc_pre + tile0 * M;
	float *part = tc_part + ((int64_t)tile * g.slices + sl) * TC_TB * NS;

	tc_dots<T, NMIX>(&g, tile0, sl, red, part);
	if (!tc_last<NS>(tile, g.slices, red))
		return;
	tc_redo_flags<NS>(red, nt, redo);
	for (int tb = 0; tb < nt; tb++) {
		if (!redo[tb])
			continue;
		hc_mix_dots<T, NMIX, double>(x + tb * K, g.fn, K, true, NULL,
					     redd, mixd);
		if (tid == 0)
			hc_pre_mixes<M>(&a, t0 + tb, mixd, true, pre + tb * M);
		__syncthreads();
	}
	if (tid < nt && !redo[tid]) {
		double md[NS];

		for (int o = 0; o < NS; o++)
			md[o] = red[tid * NS + o];
		hc_pre_mixes<M>(&a, t0 + tid, md, false, pre + tid * M);
	}
}

/* The launch's token of this warp in an output kernel, or -1. */
static __device__ __forceinline__ int64_t tc_out_token(int64_t nt)
{
	const int64_t tb = (int64_t)blockIdx.x * NV_HC_WARPS +
			   threadIdx.x / MTP_GPU_WARP;

	return tb < nt ? tb : -1;
}

/* hc_pre's layer_input from tc_pre, one warp a token. */
template <typename T, int M>
__global__ void __launch_bounds__(NV_BLOCK)
	hc_tc_pre_out(struct tc_args g, struct mtp_nv_hc_pre_args a)
{
	const int64_t tb = tc_out_token(g.nt), h = a.h;

	if (tb >= 0)
		layer_input_warp<T, M>((const T *)g.x + tb * g.k,
				       (const T *)a.norm_w,
				       (T *)a.layer_input + (g.t0 + tb) * h, h,
				       tc_pre + tb * M, a.norm_eps);
}

struct tc_head_args {
	const float *scale, *base;
	void *y; /* [T, H] from token 0 of the call */
	int64_t h;
	float rms_eps, hc_eps;
};

template <typename T, int M>
__global__ void __launch_bounds__(NV_BLOCK)
	hc_tc_head_kernel(struct tc_args g, struct tc_head_args a)
{
	constexpr int NS = M + 1;
	__shared__ float red[TC_KG * TC_TB * NS];
	__shared__ double mixd[NS], redd[NV_HC_WARPS * NS];
	__shared__ int redo[TC_TB];
	const int tile = blockIdx.y, sl = blockIdx.x;
	const int64_t tile0 = (int64_t)tile * TC_TB, K = g.k;
	const int nt = (int)(g.nt - tile0 < TC_TB ? g.nt - tile0 : TC_TB);
	const T *x = (const T *)g.x + tile0 * K;
	const int tid = threadIdx.x;
	float *pre = tc_pre + tile0 * M;

	tc_dots<T, M>(&g, tile0, sl, red,
		      tc_part + ((int64_t)tile * g.slices + sl) * TC_TB * NS);
	if (!tc_last<NS>(tile, g.slices, red))
		return;
	tc_redo_flags<NS>(red, nt, redo);
	for (int tb = 0; tb < nt; tb++) {
		if (!redo[tb])
			continue;
		hc_mix_dots<T, M, double>(x + tb * K, g.fn, K, true, NULL,
					  redd, mixd);
		if (tid < M)
			pre[tb * M + tid] =
				nv_sigmoid((float)(mixd[tid] /
						   sqrt(mixd[M] / (double)K +
							(double)a.rms_eps)) *
						   a.scale[0] +
					   a.base[tid]) +
				a.hc_eps;
		__syncthreads();
	}
	/* pre as hc_head_out has it, one thread a (token, stream) */
	if (tid < nt * M && !redo[tid / M]) {
		const int tb = tid / M, s = tid % M;
		const float mu = red[tb * NS + s] *
				 nv_rms_inv(red[tb * NS + M], K, a.rms_eps);

		pre[tid] = nv_sigmoid(mu * a.scale[0] + a.base[s]) + a.hc_eps;
	}
}

/* hc_head's y = sum_s pre_s x_s from tc_pre, one warp a token. */
template <typename T, int M>
__global__ void __launch_bounds__(NV_BLOCK)
	hc_tc_head_out(struct tc_args g, struct tc_head_args a)
{
	const int64_t tb = tc_out_token(g.nt), h = a.h;
	const int lane = threadIdx.x % MTP_GPU_WARP;

	if (tb < 0)
		return;
	const T *xt = (const T *)g.x + tb * g.k;
	const float *pre = tc_pre + tb * M;
	T *y = (T *)a.y + (g.t0 + tb) * h;

#pragma unroll 2
	for (int64_t i = lane * 8; i < h; i += MTP_GPU_WARP * 8) {
		float acc[16] = {0}, xv[M][16];

#pragma unroll
		for (int s = 0; s < M; s++)
			nv_load_vec(xt + s * h + i, xv[s]);
#pragma unroll
		for (int s = 0; s < M; s++)
			for (int k = 0; k < 8; k++)
				acc[k] += pre[s] * xv[s][k];
		nv_store_vec(y + i, acc);
	}
}

/* MTP_CUDA_TC_NOSPLIT=1: the test mutant without fn_lo (read once). */
static bool tc_nosplit(void)
{
	static int v = -1;

	if (v < 0) {
		const char *e = getenv("MTP_CUDA_TC_NOSPLIT");

		v = e && *e == '1';
	}
	return v != 0;
}

/* The slices of K: about TC_SLICE_STEPS 32-k steps each. */
static void tc_slices(int64_t k, struct tc_args *g)
{
	const int64_t nk = k / TC_KSTEP;
	int64_t s = (nk + TC_SLICE_STEPS - 1) / TC_SLICE_STEPS;

	if (s > TC_MAX_SLICES)
		s = TC_MAX_SLICES;
	g->slices = (int)(s > 0 ? s : 1);
	g->steps = (int)((nk + g->slices - 1) / g->slices);
}

bool nv_hc_tc_takes(int64_t t, int64_t auto_min)
{
	const enum nv_hc_path p = nv_hc_path();

	return p == NV_HC_PATH_TC ||
	       (p == NV_HC_PATH_AUTO && auto_min > 0 && t >= auto_min);
}

/* The shapes the path takes: 16-bit activations, M = 4, K a multiple of
 * 32, h of 8, 16-byte aligned rows. */
static bool tc_shape_ok(enum mtp_nv_act act, int64_t m, int64_t h,
			const void *x, const float *fn, const void *out)
{
	return (act == MTP_NV_BF16 || act == MTP_NV_F16) && m == 4 &&
	       h % 8 == 0 && (m * h) % TC_KSTEP == 0 && nv_aligned16(x) &&
	       nv_aligned16(fn) && nv_aligned16(out);
}

/* Blocks of the output kernels: one warp a token. */
static unsigned tc_out_blocks(int64_t nt)
{
	return (unsigned)((nt + NV_HC_WARPS - 1) / NV_HC_WARPS);
}

/* Launches of at most TC_MAX_TILES tiles, in token order, each the mixes
 * kernel then the output kernel (ordered on the stream: tc_pre). */
template <typename T, int M>
static void tc_launch_pre(const struct mtp_nv_hc_pre_args *a, cudaStream_t s)
{
	struct tc_args g;
	const int64_t K = M * a->h, per = (int64_t)TC_MAX_TILES * TC_TB;

	tc_slices(K, &g);
	g.fn = a->fn;
	g.k = K;
	g.nosplit = tc_nosplit();
	for (int64_t t0 = 0; t0 < a->t; t0 += per) {
		const int64_t nt = a->t - t0 < per ? a->t - t0 : per;
		const dim3 grid((unsigned)g.slices,
				(unsigned)((nt + TC_TB - 1) / TC_TB));

		g.x = (const T *)a->residual + t0 * K;
		g.nt = nt;
		g.t0 = t0;
		hc_tc_pre_kernel<T, M><<<grid, NV_BLOCK, 0, s>>>(g, *a);
		hc_tc_pre_out<T, M><<<tc_out_blocks(nt), NV_BLOCK, 0, s>>>(g,
									  *a);
	}
}

template <typename T, int M>
static void tc_launch_head(const void *x, const float *fn,
			   const struct tc_head_args *ha, int64_t t,
			   cudaStream_t s)
{
	struct tc_args g;
	const int64_t K = M * ha->h, per = (int64_t)TC_MAX_TILES * TC_TB;

	tc_slices(K, &g);
	g.fn = fn;
	g.k = K;
	g.nosplit = tc_nosplit();
	for (int64_t t0 = 0; t0 < t; t0 += per) {
		const int64_t nt = t - t0 < per ? t - t0 : per;
		const dim3 grid((unsigned)g.slices,
				(unsigned)((nt + TC_TB - 1) / TC_TB));

		g.x = (const T *)x + t0 * K;
		g.nt = nt;
		g.t0 = t0;
		hc_tc_head_kernel<T, M><<<grid, NV_BLOCK, 0, s>>>(g, *ha);
		hc_tc_head_out<T, M><<<tc_out_blocks(nt), NV_BLOCK, 0, s>>>(
			g, *ha);
	}
}

bool nv_hc_pre_tc(enum mtp_nv_act act, const struct mtp_nv_hc_pre_args *a,
		  cudaStream_t s)
{
	if (!tc_shape_ok(act, a->m, a->h, a->residual, a->fn,
			 a->layer_input) ||
	    (a->norm_w && !nv_aligned16(a->norm_w)))
		return false;
	if (act == MTP_NV_BF16)
		tc_launch_pre<mtp_gpu_bf16, 4>(a, s);
	else
		tc_launch_pre<mtp_gpu_f16, 4>(a, s);
	return true;
}

bool nv_hc_head_tc(enum mtp_nv_act act, const void *x, const float *fn,
		   const float *scale, const float *base, void *y, int64_t t,
		   int64_t m, int64_t h, float rms_eps, float hc_eps,
		   cudaStream_t s)
{
	const struct tc_head_args ha = {scale, base, y, h, rms_eps, hc_eps};

	if (!tc_shape_ok(act, m, h, x, fn, y))
		return false;
	if (act == MTP_NV_BF16)
		tc_launch_head<mtp_gpu_bf16, 4>(x, fn, &ha, t, s);
	else
		tc_launch_head<mtp_gpu_f16, 4>(x, fn, &ha, t, s);
	return true;
}
