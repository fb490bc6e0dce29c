/*
 * mHC hc_pre [SPEC.md §4.4.1], fused per token in one block: the mix GEMV
 * with the RMS scale, sigmoids for pre and post, the Sinkhorn normalisation
 * of the comb matrix ("softmax, then column-first"), and the sublayer input
 * sum_m pre_m R[m], optionally with the tilelang with_norm RMSNorm (variance
 * from the unrounded sum, applied to the rounded sum). All float32;
 * post_mix and comb_mix are stored as float32, layer_input in act.
 */
#include "hc_decode.cuh"
#include "hc_pre_common.cuh"

template <typename T, int M>
__global__ void hc_pre_kernel(struct mtp_nv_hc_pre_args a, bool vec)
{
	const int NMIX = 2 * M + M * M;
	__shared__ double mix[NMIX + 1];
	__shared__ float pre[M];
	const int64_t t = blockIdx.x, h = a.h;
	const T *x = (const T *)a.residual + t * M * h;
	const bool wide = hc_mix<T, NMIX>(x, a.fn, M * h, vec, NULL, mix);

	if (threadIdx.x == 0)
		hc_pre_mixes<M>(&a, t, mix, wide, pre);
	__syncthreads();
	hc_pre_layer_input<T, M>(&a, t, vec, pre);
}

/*
 * hc_pre over a tile of TB tokens (hc_tile.cuh): the mix GEMV of the tile,
 * then one thread per token for the mixes and Sinkhorn, then one warp per
 * token for layer_input. A token whose float32 sums overflowed is redone
 * with the per-token block GEMV in double, as the per-token kernel does.
 */
template <typename T, int M, int G, int TT>
__global__ void __launch_bounds__(NV_BLOCK, 2)
	hc_pre_tile_kernel(struct mtp_nv_hc_pre_args a)
{
	const int NMIX = 2 * M + M * M, TB = hc_tile_cfg<G, TT>::TB;
	extern __shared__ float4 hc_dyn[];
	__shared__ float mixf[TB * (NMIX + 1)];
	__shared__ double mixd[NMIX + 1];
	__shared__ double redd[NV_HC_WARPS * (NMIX + 1)];
	__shared__ float pre[TB * M];
	__shared__ int redo[TB];
	const int64_t t0 = (int64_t)blockIdx.x * TB, h = a.h, K = M * h;
	const int nt = (int)(a.t - t0 < TB ? a.t - t0 : TB);
	const T *x = (const T *)a.residual + t0 * K;
	const int tid = threadIdx.x;

	hc_tile_dots<T, NMIX, G, TT, false>(x, nt, a.fn, K, NULL,
					    (float *)hc_dyn, mixf);
	if (tid < TB) {
		bool inf = false;

		for (int o = 0; o <= NMIX; o++)
			inf = inf || isinf(mixf[tid * (NMIX + 1) + o]);
		redo[tid] = tid < nt && inf;
	}
	__syncthreads();
	for (int tb = 0; tb < nt; tb++) {
		if (!redo[tb])
			continue;
		hc_mix_dots<T, NMIX, double>(x + tb * K, a.fn, K, true, NULL,
					     redd, mixd);
		if (tid == 0)
			hc_pre_mixes<M>(&a, t0 + tb, mixd, true, pre + tb * M);
		__syncthreads();
	}
	if (tid < nt && !redo[tid]) {
		double md[NMIX + 1];

		for (int o = 0; o <= NMIX; o++)
			md[o] = mixf[tid * (NMIX + 1) + o];
		hc_pre_mixes<M>(&a, t0 + tid, md, false, pre + tid * M);
	}
	__syncthreads();
	for (int tb = tid / MTP_GPU_WARP; tb < nt; tb += NV_HC_WARPS)
		layer_input_warp<T, M>(x + tb * K, (const T *)a.norm_w,
				       (T *)a.layer_input + (t0 + tb) * h, h,
				       pre + tb * M, a.norm_eps);
}

template <typename T, int M, int G, int TT>
static void launch_hc_pre_tile(const struct mtp_nv_hc_pre_args *a,
			       cudaStream_t s)
{
	const int NMIX = 2 * M + M * M, TB = hc_tile_cfg<G, TT>::TB;
	const size_t sm = hc_tile_smem<NMIX, G, TT>();
	static bool attr;

	if (!attr) {
		cudaFuncSetAttribute(
			hc_pre_tile_kernel<T, M, G, TT>,
			cudaFuncAttributeMaxDynamicSharedMemorySize, (int)sm);
		attr = true;
	}
	hc_pre_tile_kernel<T, M, G, TT>
		<<<(unsigned)((a->t + TB - 1) / TB), NV_BLOCK, sm, s>>>(*a);
}

/* Whether the tiled kernel takes a: 16-bit activations, M = 4, 16-byte
 * aligned rows, and T >= 2112 (16 tokens a tile, two tiles per SM). Below
 * that the per-token kernel is faster (a 4-token tile measured 212 us
 * against 153 us at T = 512, H = 7168: docs/BENCHMARKS.md). */
template <typename T>
static bool hc_pre_tiled(const struct mtp_nv_hc_pre_args *a, cudaStream_t s)
{
	const enum nv_hc_path path = nv_hc_path();

	if (path == NV_HC_PATH_TOKEN || sizeof(T) != 2 || a->m != 4 ||
	    a->h % 8 != 0 || !hc_vec_ok<T>(a->residual, a->fn, 4 * a->h) ||
	    (a->norm_w && !nv_aligned16(a->norm_w)) ||
	    !nv_aligned16(a->layer_input) ||
	    (path != NV_HC_PATH_TILE && a->t < hc_tile_min_t(2112)))
		return false;
	launch_hc_pre_tile<T, 4, 8, 2>(a, s);
	return true;
}

template <typename T, int M>
static void launch_hc_pre(const struct mtp_nv_hc_pre_args *a, cudaStream_t s)
{
	bool vec = hc_vec_ok<T>(a->residual, a->fn, M * a->h) &&
		   a->h % nv_vec<T>::n == 0;

	hc_pre_kernel<T, M><<<(unsigned)a->t, NV_BLOCK, 0, s>>>(*a, vec);
}

extern "C" cudaError_t mtp_nv_hc_pre(enum mtp_nv_act act,
				     const struct mtp_nv_hc_pre_args *a,
				     cudaStream_t s)
{
	if (a->t == 0 || a->h == 0)
		return cudaSuccess;
	if (nv_hc_decode_takes(a->t, NV_HC_DECODE_AUTO_T) &&
	    nv_hc_pre_decode(act, a, s))
		return cudaGetLastError();
	if (a->post_x) { /* the fused hc_post: here as a kernel of its own */
		struct mtp_nv_hc_pre_args b = *a;
		const cudaError_t e = mtp_nv_hc_post(
			act, a->post_x, a->post_res, a->post_in, a->comb_in,
			(void *)a->residual, a->t, a->m, a->h, s);

		b.post_x = NULL;
		return e != cudaSuccess ? e : mtp_nv_hc_pre(act, &b, s);
	}
#ifdef MTP_NV_HC_TC
	if (nv_hc_tc_takes(a->t, NV_HC_TC_AUTO_T) && nv_hc_pre_tc(act, a, s))
		return cudaGetLastError();
#endif
	if (act == MTP_NV_BF16 && hc_pre_tiled<mtp_gpu_bf16>(a, s))
		return cudaGetLastError();
	if (act == MTP_NV_F16 && hc_pre_tiled<mtp_gpu_f16>(a, s))
		return cudaGetLastError();
	if (act == MTP_NV_BF16) {
		NV_HC_DISPATCH(a->m, launch_hc_pre, mtp_gpu_bf16, a, s);
	} else if (act == MTP_NV_F16) {
		NV_HC_DISPATCH(a->m, launch_hc_pre, mtp_gpu_f16, a, s);
	} else {
		NV_HC_DISPATCH(a->m, launch_hc_pre, float, a, s);
	}
	return cudaGetLastError();
}
