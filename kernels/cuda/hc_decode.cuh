/*
  * The decode-size path of hc_pre, hc_fused_post_pre and hc_head
 * (hc_decode.cu, opt-in with MTP_CUDA_HC_ONE_KERNEL=1 until it has passed
 * the suite on the device; the default is hc_decode2.cu's two kernels, a
 * dots kernel and a finishing kernel) and the choice of path. At decode a token's mix GEMV reads
 * the whole fn (2.75 MB at H = 7168, M = 4) for a few tokens, so one block
 * per token leaves the GPU idle: the decode path splits K over many blocks
 * (and the tokens over groups of 16), each writing float32 partial sums of
 * its slice, and in the same kernel the last blocks to arrive add the
 * partials in a fixed order (deterministic), finish the mixes and write the
 * outputs (hc_pre: one block a token for layer_input and another for the
 * Sinkhorn over one warp). The finishing blocks wait for the last arrival,
 * so there must be fewer of them than multiprocessors (the rest of the
 * grid must find room): hc_head takes T <= the multiprocessors, hc_pre
 * half that (66 on an H200).
 *
 * MTP_CUDA_HC_PATH forces a path for tests and benchmarks: decode (split-K,
 * T <= NV_HC_DECODE_MAX_T), token (one block per token), tile (hc_pre's
 * token tiles, hc_tile.cuh), tc (the tensor-core prefill path of hc_tc.cu,
 * CUDA builds only: MTP_NV_HC_TC), auto (the default: decode at T <=
 * NV_HC_DECODE_AUTO_T, hc_pre's tc at T >= NV_HC_TC_AUTO_T, tile at
 * hc_pre's tile threshold, token otherwise). A forced path that cannot
 * take a call (too many tokens, M too large, the ROCm hc_head variant, a
 * shape or build without tc) falls back to the automatic choice (a forced
 * tc to tile or token, not to decode).
 */
#ifndef MTP_NV_HC_DECODE_CUH
#define MTP_NV_HC_DECODE_CUH

#include "hc_common.cuh"

#define NV_HC_DECODE_MAX_T 256
/* The automatic choice's largest T, measured on the H200 (H = 7168, M = 4,
 * docs/BENCHMARKS.md): hc_pre's decode path beats the per-token kernel at
 * T = 64 (38 against 63 us) and loses at 256; hc_head's wins at T = 8 (6.5
 * against 19.8 us) and loses at 64 (24.8 against 19.4): 32 lies between.
 * The one-kernel path (the default since 2026-12-06; hc_decode.cu's
 * dec_one): hc_pre 28 against 64 us at T = 64 on the H200 (it cannot take
 * T >= 67), hc_head 10.6 against 15.2 at T = 48 and even at 64: 64 for
 * both is the next measurement's question. */
#define NV_HC_DECODE_AUTO_T 64
#define NV_HC_DECODE_AUTO_T_HEAD 32

enum nv_hc_path {
	NV_HC_PATH_AUTO,
	NV_HC_PATH_DECODE,
	NV_HC_PATH_TOKEN,
	NV_HC_PATH_TILE,
	NV_HC_PATH_TC
};

/* The path MTP_CUDA_HC_PATH asks for (read once; an unknown value is
 * reported on stderr once and means auto). */
enum nv_hc_path nv_hc_path(void);

/* Whether the decode path takes a call of t tokens (the path asked for, and
 * t against auto_max under auto). */
bool nv_hc_decode_takes(int64_t t, int64_t auto_max);

/* The decode path; return false (nothing launched) when it cannot take the
 * call (M too large for one warp's Sinkhorn). */
bool nv_hc_pre_decode(enum mtp_nv_act act, const struct mtp_nv_hc_pre_args *a,
		      cudaStream_t s);
bool nv_hc_head_decode(enum mtp_nv_act act, const void *x, const float *fn,
		       const float *scale, const float *base, void *y,
		       int64_t t, int64_t m, int64_t h, float rms_eps,
		       float hc_eps, cudaStream_t s);

/* The two-kernel decode path (hc_decode2.cu), which nv_hc_*_decode take
 * where hc_decode.cu's dec_one says so; it does not fuse hc_post (false). */
bool nv_hc_pre_decode2(enum mtp_nv_act act, const struct mtp_nv_hc_pre_args *a,
		       cudaStream_t s);
bool nv_hc_head_decode2(enum mtp_nv_act act, const void *x, const float *fn,
			const float *scale, const float *base, void *y,
			int64_t t, int64_t m, int64_t h, float rms_eps,
			float hc_eps, cudaStream_t s);

#ifdef MTP_NV_HC_TC
/* The automatic choice's smallest T for the tc path (hc_tc.cu), measured
 * on the H200 at H = 7168, M = 4 (docs/BENCHMARKS.md, 2026-12-02): with its
 * output pass in a second kernel, hc_pre's tc path beats per-token and
 * decode from T = 128 (63.9 against 67.8 and 68.4 us; 64.6 against 78.5
 * at 192, 75.4 against 154.9 at 512) and the tile path at 4096 and 16384:
 * auto takes it from 128 (the decode path ends at 64). hc_head's tc path
 * loses at 1024 (73.7 against 59.6 us per-token) and wins at 4096 (160.5
 * against 203.4) and 16384 (631 against 759); the lines through those
 * points cross near T = 1800: auto takes it from 2048. */
#define NV_HC_TC_AUTO_T 128
#define NV_HC_TC_AUTO_T_HEAD 2048

/* Whether the path asked for sends a call of t tokens to tc: forced, or
 * under auto from auto_min tokens (never when auto_min is 0). */
bool nv_hc_tc_takes(int64_t t, int64_t auto_min);

/* The tc path; false (nothing launched) when it cannot take the shape
 * (32-bit activations, M != 4, h not a multiple of 8, unaligned rows). */
bool nv_hc_pre_tc(enum mtp_nv_act act, const struct mtp_nv_hc_pre_args *a,
		  cudaStream_t s);
bool nv_hc_head_tc(enum mtp_nv_act act, const void *x, const float *fn,
		   const float *scale, const float *base, void *y, int64_t t,
		   int64_t m, int64_t h, float rms_eps, float hc_eps,
		   cudaStream_t s);
#endif

#endif
