/*
 * The decode-size path of hc_pre and hc_head (hc_decode.cu) and the choice
 * of path. At decode a token's mix GEMV reads the whole fn (2.75 MB at
 * H = 7168, M = 4) for a few tokens, so one block per token leaves the GPU
 * idle: the decode path splits K over many blocks, each writing float32
 * partial sums of its slice for every token, then one block per token adds
 * the partials in a fixed order (deterministic), finishes the mixes (the
 * Sinkhorn over one warp) and writes the output.
 *
 * MTP_CUDA_HC_PATH forces a path for tests and benchmarks: decode (split-K,
 * T <= NV_HC_DECODE_MAX_T), token (one block per token), tile (hc_pre's
 * token tiles, hc_tile.cuh), auto (the default: decode at T <=
 * NV_HC_DECODE_AUTO_T, tile at hc_pre's tile threshold, token otherwise).
 * A forced path that cannot take a call (too many tokens, M too large, the
 * ROCm hc_head variant) falls back to the automatic choice.
 */
#ifndef MTP_NV_HC_DECODE_CUH
#define MTP_NV_HC_DECODE_CUH

#include "hc_common.cuh"

#define NV_HC_DECODE_MAX_T 256
#define NV_HC_DECODE_AUTO_T 64

enum nv_hc_path {
	NV_HC_PATH_AUTO,
	NV_HC_PATH_DECODE,
	NV_HC_PATH_TOKEN,
	NV_HC_PATH_TILE
};

/* The path MTP_CUDA_HC_PATH asks for (read once; an unknown value is
 * reported on stderr once and means auto). */
enum nv_hc_path nv_hc_path(void);

/* Whether the decode path takes a call of t tokens (path and size). */
bool nv_hc_decode_takes(int64_t t);

/* The decode path; return false (nothing launched) when it cannot take the
 * call (M too large for one warp's Sinkhorn). */
bool nv_hc_pre_decode(enum mtp_nv_act act, const struct mtp_nv_hc_pre_args *a,
		      cudaStream_t s);
bool nv_hc_head_decode(enum mtp_nv_act act, const void *x, const float *fn,
		       const float *scale, const float *base, void *y,
		       int64_t t, int64_t m, int64_t h, float rms_eps,
		       float hc_eps, cudaStream_t s);

#endif
