/*
 * Token tiling for the mHC mix GEMV of hc_pre and hc_head [SPEC.md §4.4.1,
 * §4.4.4]: one block of NV_BLOCK threads takes a tile of TB = G*TT tokens and
 * streams over K = M*H in chunks of KC. The fn chunk [NMIX, KC] (float32) is
 * copied once per block into shared memory (cp.async, double buffered), so
 * fn is read from L2 once per TB tokens instead of once per token. Lane
 * layout: a warp holds G token groups of KSL = 32/G lanes; the block's
 * S = 8*KSL k-splits each take one 16-byte x vector (8 activations) of each
 * of its TT tokens per chunk, and the fn values of a vector are broadcast to
 * the G groups and reused over the TT tokens from registers.
 *
 * Sums: float32 FMA chains per thread (k ascending), then a shuffle tree
 * over the KSL lanes, then the 8 warps added in warp order: deterministic.
 * Only 16-bit activations (bf16, f16) with 16-byte aligned rows. Used by
 * hc_pre (hc_pre.cu); SCALED (the ROCm hc_head input) passed the hc suite
 * in a tiled hc_head that measured no faster than the per-token kernel and
 * was left out (docs/BENCHMARKS.md).
 */
#ifndef MTP_NV_HC_TILE_CUH
#define MTP_NV_HC_TILE_CUH

#include <stdlib.h>

#include "hc_common.cuh"

template <int G, int TT> struct hc_tile_cfg {
	static const int KSL = MTP_GPU_WARP / G;
	static const int S = NV_HC_WARPS * KSL;
	static const int KC = S * 8;
	static const int TB = G * TT;
};

static __device__ __forceinline__ void hc_cp16(float *dst, const float *src)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
	unsigned d = (unsigned)__cvta_generic_to_shared(dst);

	asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d),
		     "l"(src));
#else
	*reinterpret_cast<float4 *>(dst) =
		*reinterpret_cast<const float4 *>(src);
#endif
}

static __device__ __forceinline__ void hc_cp_commit()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
	asm volatile("cp.async.commit_group;\n" ::);
#endif
}

static __device__ __forceinline__ void hc_cp_wait1()
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
	asm volatile("cp.async.wait_group 1;\n" ::);
#endif
}

/* Shared bytes of the fn double buffer. */
template <int NMIX, int G, int TT> static size_t hc_tile_smem()
{
	return 2 * (size_t)NMIX * hc_tile_cfg<G, TT>::KC * sizeof(float);
}

/*
 * mix[tb*(NMIX+1) + o] = sum_k xv_k fn[o,k], mix[tb*(NMIX+1) + NMIX] =
 * sum_k x_k^2 (0 when SCALED) in float32, for the nt <= TB tokens of x
 * (rows of K). xv = x, or act(x * rho[tb]) when SCALED (ROCm hc_head).
 * smem: hc_tile_smem bytes. Ends with a barrier.
 */
template <typename T, int NMIX, int G, int TT, bool SCALED>
static __device__ void hc_tile_dots(const T *x, int nt, const float *fn,
				    int64_t K, const float *rho, float *smem,
				    float *mix)
{
	typedef hc_tile_cfg<G, TT> C;
	const int KSL = C::KSL, KC = C::KC, TB = C::TB;
	const int tid = threadIdx.x, lane = tid % MTP_GPU_WARP;
	const int w = tid / MTP_GPU_WARP, g = lane / KSL, ks = lane % KSL;
	const int s = w * KSL + ks;
	const T *xp[TT];
	bool ok[TT];
	float acc[TT][NMIX], q[TT], r[TT];
	uint4 xr[TT];
	const int64_t nsteps = (K + KC - 1) / KC;

#pragma unroll
	for (int j = 0; j < TT; j++) {
		const int tb = g * TT + j;

		ok[j] = tb < nt;
		xp[j] = x + (int64_t)(ok[j] ? tb : 0) * K;
		r[j] = SCALED && ok[j] ? rho[tb] : 0.0f;
		q[j] = 0.0f;
#pragma unroll
		for (int o = 0; o < NMIX; o++)
			acc[j][o] = 0.0f;
	}

	/* chunk 0 of fn, and the first x vectors */
	for (int p = tid; p < NMIX * KC / 4; p += NV_BLOCK) {
		const int o = p / (KC / 4), c = (p % (KC / 4)) * 4;

		if (c < K)
			hc_cp16(smem + o * KC + c, fn + o * K + c);
	}
	hc_cp_commit();
#pragma unroll
	for (int j = 0; j < TT; j++) {
		const int64_t k = (int64_t)s * 8;

		xr[j] = ok[j] && k < K ? nv_load_raw(xp[j] + k)
				       : make_uint4(0, 0, 0, 0);
	}

	for (int64_t st = 0; st < nsteps; st++) {
		const int64_t k0 = st * KC, kk = k0 + (int64_t)s * 8;
		float *cur = smem + (st & 1) * NMIX * KC;
		float *nxt = smem + ((st + 1) & 1) * NMIX * KC;
		uint4 xn[TT];

		if (st + 1 < nsteps) {
			const int64_t k1 = k0 + KC;

			for (int p = tid; p < NMIX * KC / 4; p += NV_BLOCK) {
				const int o = p / (KC / 4),
					  c = (p % (KC / 4)) * 4;

				if (k1 + c < K)
					hc_cp16(nxt + o * KC + c,
						fn + o * K + k1 + c);
			}
		}
		hc_cp_commit();
#pragma unroll
		for (int j = 0; j < TT; j++) {
			const int64_t k = kk + KC;

			xn[j] = ok[j] && k < K ? nv_load_raw(xp[j] + k)
					       : make_uint4(0, 0, 0, 0);
		}
		hc_cp_wait1();
		__syncthreads();
		if (kk < K) {
			float xv[TT][8];
			const float *f = cur + s * 8;

#pragma unroll
			for (int j = 0; j < TT; j++) {
				nv_unpack<T>(xr[j], xv[j]);
#pragma unroll
				for (int k = 0; k < 8; k++) {
					if (SCALED)
						xv[j][k] = nv_round<T>(
							xv[j][k] * r[j]);
					else
						q[j] += xv[j][k] * xv[j][k];
				}
			}
#pragma unroll
			for (int o = 0; o < NMIX; o++) {
				const float4 a =
					*reinterpret_cast<const float4 *>(
						f + o * KC);
				const float4 b =
					*reinterpret_cast<const float4 *>(
						f + o * KC + 4);

#pragma unroll
				for (int j = 0; j < TT; j++) {
					acc[j][o] += xv[j][0] * a.x;
					acc[j][o] += xv[j][1] * a.y;
					acc[j][o] += xv[j][2] * a.z;
					acc[j][o] += xv[j][3] * a.w;
					acc[j][o] += xv[j][4] * b.x;
					acc[j][o] += xv[j][5] * b.y;
					acc[j][o] += xv[j][6] * b.z;
					acc[j][o] += xv[j][7] * b.w;
				}
			}
		}
#pragma unroll
		for (int j = 0; j < TT; j++)
			xr[j] = xn[j];
		__syncthreads();
	}

	/* the KSL lanes of a token group, then the warps in order */
	float *red = smem; /* NV_HC_WARPS * TB * (NMIX + 1), fn is done */
#pragma unroll
	for (int j = 0; j < TT; j++) {
		const int tb = g * TT + j;

#pragma unroll
		for (int o = 0; o <= NMIX; o++) {
			float v = o < NMIX ? acc[j][o] : q[j];

#pragma unroll
			for (int off = KSL / 2; off > 0; off >>= 1)
				v += mtp_gpu_shfl_xor(v, off);
			if (ks == 0)
				red[(w * TB + tb) * (NMIX + 1) + o] = v;
		}
	}
	__syncthreads();
	for (int i = tid; i < TB * (NMIX + 1); i += NV_BLOCK) {
		float v = 0.0f;

		for (int ww = 0; ww < NV_HC_WARPS; ww++)
			v += red[ww * TB * (NMIX + 1) + i];
		mix[i] = v;
	}
	__syncthreads();
}

/* The smallest T that takes the tiled kernels: MTP_CUDA_HC_TILE_MIN_T, or
 * def (a test hook: 1 sends every supported shape through them). */
static inline int64_t hc_tile_min_t(int64_t def)
{
	static int64_t v = -2;

	if (v == -2) {
		const char *e = getenv("MTP_CUDA_HC_TILE_MIN_T");

		v = e && *e ? strtoll(e, NULL, 10) : -1;
	}
	return v >= 0 ? v : def;
}

#endif
