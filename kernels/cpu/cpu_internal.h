/*
 * What the optimized CPU backend's files share and nothing else: fast
 * activation <-> fp32 conversions, the row helpers every kernel is built
 * from (one RMSNorm row, one sum of squares, one dot product), the sgemm
 * wrapper, the tensor lookup by name, and each op's entry point and the
 * whole-tensor kernels that the composite ops (block, step, chain) reuse.
 *
 * Arithmetic is fp32, as in the engines under test; a value is rounded to
 * the activation dtype exactly where SPEC.md stores to it. Activation
 * tensors are passed as (void *, enum mtp_dtype act); mHC parameters and
 * mixes are fp32.
 */
#ifndef MTP_CPU_INTERNAL_H
#define MTP_CPU_INTERNAL_H

#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mtp/backend.h"
#include "mtp/op.h"
#include "mtp/quant.h"

/* Hot loops get an AVX2 clone picked at load time where the CPU has it. */
#if defined(__x86_64__) && defined(__GNUC__)
#define MTP_CPU_HOT __attribute__((target_clones("avx2", "default")))
#else
#define MTP_CPU_HOT
#endif

/* Parallel regions only pay off above this many elements of work. */
#define MTP_CPU_PAR_MIN 32768

/*
 * Outputs of at least this many bytes are written with streaming stores
 * (on the AVX2 path): a plain store first reads the line it fills, a third
 * more traffic for a norm, and an output this large would not stay in the
 * caches (1 MiB of L2 per core here) for the next op anyway.
 */
#define MTP_CPU_NT_MIN ((size_t)4 << 20)
static inline bool mtp_cpu_nt(enum mtp_dtype act, int64_t out_elems)
{
	return (size_t)out_elems * mtp_dtype_size(act) >= MTP_CPU_NT_MIN;
}

/* ---- element conversions ---------------------------------------------- */

static inline float mtp_cpu_bf16_to_f32(uint16_t b)
{
	uint32_t u = (uint32_t)b << 16;
	float f;

	memcpy(&f, &u, sizeof(f));
	return f;
}

/* Round to nearest even; a NaN stays a quiet NaN with its sign. Written as
 * a select so that loops over it vectorize. */
static inline uint16_t mtp_cpu_f32_to_bf16(float f)
{
	uint32_t u;

	memcpy(&u, &f, sizeof(u));
	uint32_t rne = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
	uint32_t nan = (u >> 16) | 0x40u;

	return (uint16_t)((u & 0x7fffffffu) > 0x7f800000u ? nan : rne);
}

/* v rounded to the activation dtype, back in fp32. */
static inline float mtp_cpu_round(enum mtp_dtype act, float v)
{
	if (act == MTP_BF16)
		return mtp_cpu_bf16_to_f32(mtp_cpu_f32_to_bf16(v));
	if (act == MTP_F16)
		return (float)(_Float16)v;
	return v;
}

static inline float mtp_cpu_sigmoid(float z)
{
	return 1.0f / (1.0f + expf(-z));
}

/* ---- memory and rows (rows.c) ----------------------------------------- */

/* 64-byte aligned, at least one cache line; NULL on failure. */
void *mtp_cpu_alloc(size_t bytes);
void mtp_cpu_free(void *p);
float *mtp_cpu_floats(size_t n);
/* A buffer of n activation elements. */
void *mtp_cpu_act_alloc(enum mtp_dtype act, size_t n);

/* One allocation cut into 64-byte aligned pieces: size it with the sum of
 * MTP_CPU_PIECE(bytes) of every piece taken. */
#define MTP_CPU_PIECE(bytes) (((size_t)(bytes) + 63) & ~(size_t)63)
struct mtp_cpu_arena {
	char *base;
	size_t size, used;
};
bool mtp_cpu_arena_init(struct mtp_cpu_arena *a, size_t bytes);
void *mtp_cpu_arena_take(struct mtp_cpu_arena *a, size_t bytes);
void mtp_cpu_arena_fini(struct mtp_cpu_arena *a);

/* Element `off` of an activation buffer, as a pointer. */
static inline void *mtp_cpu_at(enum mtp_dtype act, const void *base,
			       int64_t off)
{
	return (char *)base + (size_t)off * mtp_dtype_size(act);
}

/* dst[0..n) = fp32(src[off..off+n)); store rounds each value to act. */
void mtp_cpu_load(enum mtp_dtype act, const void *src, int64_t off, int64_t n,
		  float *dst);
void mtp_cpu_store(enum mtp_dtype act, void *dst, int64_t off, int64_t n,
		   const float *src);
/* A whole activation tensor (a norm weight) widened to a new fp32 array,
 * plus the norm-weight offset of the call being launched (SPEC.md §2.6: 1
 * under a zero-centred family, set by cpu_launch for its duration). Every
 * norm weight of the backend is read through it, and nothing else is. */
float *mtp_cpu_widen(enum mtp_dtype act, const void *src, int64_t n);
void mtp_cpu_set_norm_offset(float offset);
/* x[i] = round(act, x[i]) in place. */
void mtp_cpu_round_row(enum mtp_dtype act, float *x, int64_t n);

float mtp_cpu_sumsq(const float *x, int64_t n);
/* sum (a[i] + b[i])^2 in double (b may be NULL): the overflow fallback. */
double mtp_cpu_sumsq_wide(const float *a, const float *b, int64_t n);
/* 1/sqrt(ss/n + eps). */
float mtp_cpu_rms_from(double ss, int64_t n, float eps);
/* 1/sqrt(sum(x^2)/n + eps) in fp32; in double only if fp32 overflowed. */
float mtp_cpu_rms_inv(const float *x, int64_t n, float eps);
/* s * sum a[i]*b[i] in fp32; in double only if fp32 overflowed. */
float mtp_cpu_scaled_dot(float s, const float *a, const float *b, int64_t n);
/* y[i] = x[i]*r*w[i] [§2.1/§2.2]: eager rounds x*r to act first; the
 * final rounding is the caller's store. y may alias x. */
void mtp_cpu_norm_row(const float *x, float r, const float *w, int64_t h,
		      enum mtp_rounding rnd, enum mtp_dtype act, float *y);
/* One RMSNorm row from memory to memory: src NULL is a zero row (the
 * position-0 mask is a select). buf is scratch of h floats. nt: streaming
 * stores allowed (only inside mtp_cpu_rows, which fences them). */
void mtp_cpu_norm_row_io(enum mtp_dtype act, const void *src, int64_t soff,
			 const float *w, int64_t h, float eps,
			 enum mtp_rounding rnd, bool nt, float *buf, void *dst,
			 int64_t doff);
/* out = act(a + b) elementwise over n (an unfused bf16 add). */
enum mtp_status mtp_cpu_add(enum mtp_dtype act, const void *a, const void *b,
			    int64_t n, void *out);

/*
 * Runs fn(ctx, r, buf) for r in [0, rows) over the OpenMP threads, each
 * thread with its own scratch buf of `scratch` floats. Parallel only when
 * rows * per_row elements are worth it; rows are handed out in chunks of about 64K elements as threads ask for them, so a
 * thread that the OS preempts does not hold the others at the barrier.
 * Each thread fences its streaming stores. MTP_ERR_NOMEM if scratch failed.
 */
typedef void (*mtp_cpu_row_fn)(const void *ctx, int64_t r, float *buf);
enum mtp_status mtp_cpu_rows(int64_t rows, int64_t per_row, size_t scratch,
			     mtp_cpu_row_fn fn, const void *ctx);

/* Index tensors (int32 or int64) widened to a new int64 array. */
int64_t *mtp_cpu_indices(const struct mtp_tensor *t);

/* ---- Dot-product tiles (dots.c) ---------------------------------------- */

/* A dot's bits depend on its span and on the lanes only, never on the tile,
 * the row's position in the batch or the thread (SPEC.md §11 invariance). */
#define MTP_DOT_TR 4 /* rows of a 4x3 tile */
#define MTP_DOT_TO 3 /* weight rows of a 4x3 tile */
#define MTP_DOT_WO 8 /* weight rows of a 1x8 tile */
#define MTP_DOT_KC                                                             \
	1024 /* the K chunk of a product: spans are summed in order */

enum mtp_cpu_lanes { MTP_CPU_LANES_1, MTP_CPU_LANES_8, MTP_CPU_LANES_16 };
/* The widest lanes this CPU runs (1 without AVX2 or under MTP_CPU_NO_AVX2). */
enum mtp_cpu_lanes mtp_cpu_dot_lanes(void);
/* acc[t][d] += x[t] . w[d] over len elements. */
void mtp_cpu_dots_4x3(const float *const x[MTP_DOT_TR],
		      const float *const w[MTP_DOT_TO], int64_t len,
		      enum mtp_cpu_lanes lanes, float acc[][MTP_DOT_TO]);
/* acc[d] += x . (w + d * ldw) over len elements, d < MTP_DOT_WO. */
void mtp_cpu_dots_1x8(const float *x, const float *w, int64_t ldw, int64_t len,
		      enum mtp_cpu_lanes lanes, float acc[MTP_DOT_WO]);

/* ---- GEMM (gemm.c) ---------------------------------------------------- */

/* Rows of an [out,in] weight widened to fp32 at a time (at most 64 MiB). */
int64_t mtp_cpu_slab_rows(int64_t in, int64_t out);
/* y[r, 0..n) (row stride out) = x [rows,in] . w [n,in]^T in fp32, each
 * element the K-chunk-ordered sum of its dots (dots.c): batch invariant. */
void mtp_cpu_sgemm_slab(const float *x, const float *w, int64_t rows, int64_t n,
			int64_t in, int64_t out, float *y);

/* y [rows,out] = x [rows,in] . w [out,in]^T in fp32, no
 * rounding. x and w are activations. */
enum mtp_status mtp_cpu_gemm(enum mtp_dtype act, const void *x, const void *w,
			     int64_t rows, int64_t in, int64_t out, float *y);
/* The same, stored to act with one rounding (nn.Linear). */
enum mtp_status mtp_cpu_linear(enum mtp_dtype act, const void *x, const void *w,
			       int64_t rows, int64_t in, int64_t out, void *y);

/* ---- FP8 projections (qgemm.c) [§12.2] -------------------------------- */

/* A projection weight [out,in]: activations, or e4m3 bytes with their
 * block scale [ceil(out/128), ceil(in/128)] (float32 or e8m0). */
struct mtp_cpu_qw {
	const void *w;
	const void *scale; /* NULL: w is in the activation dtype */
	enum mtp_dtype scale_dt;
};
/* The weight input pfx + name and its scale, if it is float8. */
void mtp_cpu_qw_get(const struct mtp_call *c, const char *pfx, const char *name,
		    struct mtp_cpu_qw *w);
/* mtp_cpu_gemm / mtp_cpu_linear with an optionally quantized weight; q
 * says weight-only or W8A8 (ignored without a scale). */
enum mtp_status mtp_cpu_qgemm(enum mtp_dtype act, const void *x,
			      const struct mtp_cpu_qw *w,
			      const struct mtp_ref_quant *q, int64_t rows,
			      int64_t in, int64_t out, float *y);
enum mtp_status mtp_cpu_qlinear(enum mtp_dtype act, const void *x,
				const struct mtp_cpu_qw *w,
				const struct mtp_ref_quant *q, int64_t rows,
				int64_t in, int64_t out, void *y);

/* ---- tensor lookup (backend_cpu.c) ------------------------------------ */

/* The data of the input/output named pfx+name, or NULL if absent. */
void *mtp_cpu_in(const struct mtp_call *c, const char *pfx, const char *name);
void *mtp_cpu_out(const struct mtp_call *c, const char *pfx, const char *name);
const struct mtp_tensor *mtp_cpu_in_tensor(const struct mtp_call *c,
					   const char *name);

/* ---- whole-tensor kernels reused by the composites -------------------- */

enum mtp_status mtp_cpu_rmsnorm_rows(enum mtp_dtype act, const void *x,
				     const void *w, int64_t rows, int64_t h,
				     float eps, enum mtp_rounding rnd, void *y);
enum mtp_status mtp_cpu_add_rmsnorm_rows(enum mtp_dtype act, const void *x,
					 const void *res, const void *w,
					 int64_t rows, int64_t h, float eps,
					 enum mtp_rounding rnd, void *y,
					 void *res_out);
/* The same under a §12.1 add_norm_input convention (sum: the unrounded fp32
 * sum is normalised; residual: as above). */
enum mtp_status mtp_cpu_add_rmsnorm_conv_rows(enum mtp_dtype act, const void *x,
					      const void *res, const void *w,
					      int64_t rows, int64_t h,
					      float eps, enum mtp_rounding rnd,
					      enum mtp_add_norm_input in,
					      void *y, void *res_out);
/* out[t] = table[ids[t]]; MTP_ERR_INVALID if an id is out of [0, v). */
enum mtp_status mtp_cpu_embed_rows(enum mtp_dtype act, const void *table,
				   int64_t v, const int64_t *ids, int64_t t,
				   int64_t h, void *out);
/* [§7.1/§7.2] out [T,2H] = [norm(mask(E)) | norm(P)]; E is table[ids] when
 * ids is given, else embeds. */
struct mtp_cpu_eh_norm {
	const int64_t *positions, *ids;
	const void *embeds, *table, *prev, *enorm_w, *hnorm_w;
	int64_t t, h, v;
	float eps;
	enum mtp_rounding rnd;
	bool hidden_first; /* [ p | e ] (the family's order, Step V3-2) */
};
enum mtp_status mtp_cpu_eh_norm_rows(enum mtp_dtype act,
				     const struct mtp_cpu_eh_norm *a,
				     void *out);
/* [§7.3] enorm of mask(embeds) [T,H] and hnorm of prev [T,M,H] per stream. */
enum mtp_status
mtp_cpu_mtp_input_norm_rows(enum mtp_dtype act, const int64_t *positions,
			    const void *embeds, const void *prev,
			    const void *enorm_w, const void *hnorm_w, int64_t t,
			    int64_t m, int64_t h, float eps,
			    enum mtp_rounding rnd, void *e_out, void *p_out);
enum mtp_status mtp_cpu_eh_proj_hc_rows(enum mtp_dtype act, const void *e,
					const void *p,
					const struct mtp_cpu_qw *e_proj_w,
					const struct mtp_cpu_qw *h_proj_w,
					const struct mtp_ref_quant *q,
					int64_t t, int64_t m, int64_t h,
					void *x);

/* The constants of one hc_pre [§4.4.1]. */
struct mtp_cpu_hc_pre {
	const float *fn, *scale, *base;
	const float *norm_w; /* fp32 [H], or NULL: no fused norm */
	float rms_eps, pre_eps, sinkhorn_eps, post_mult, norm_eps;
	int iters;
	int64_t m, h;
	enum mtp_dtype act;
};
void mtp_cpu_hc_pre_init(struct mtp_cpu_hc_pre *k, const float *fn,
			 const float *scale, const float *base,
			 const struct mtp_hc_params *p, int64_t m, int64_t h,
			 enum mtp_dtype act);
/* One token: x [M*H] fp32 streams; mu scratch [2M+M*M]; u scratch [H];
 * li [H] receives the layer input before its store rounding. */
void mtp_cpu_hc_pre_token(const struct mtp_cpu_hc_pre *k, const float *x,
			  float *mu, float *u, float *post, float *comb,
			  float *li);
/* u [H] = sum_s pre[s] * x[s], s ascending (pre NULL: u = x[0], DSpark's
 * identity pre-mix); li = u or its fused norm before the store rounding. */
void mtp_cpu_hc_layer_input(const struct mtp_cpu_hc_pre *k, const float *x,
			    const float *pre, float *u, float *li);
/* norm_w: activation [H] or NULL. */
enum mtp_status mtp_cpu_hc_pre_rows(const struct mtp_cpu_hc_pre *k,
				    const void *norm_w, const void *residual,
				    int64_t t, float *post, float *comb,
				    void *layer_input);
/* [§4.4.2] One token: out [M*H] = post[j]*x + sum_i C[i,j]*R[i], fp32. */
void mtp_cpu_hc_post_token(const float *x, const float *r, const float *post,
			   const float *comb, int64_t m, int64_t h, float *out);
enum mtp_status mtp_cpu_hc_post_rows(enum mtp_dtype act, const void *x,
				     const void *residual, const float *post,
				     const float *comb, int64_t t, int64_t m,
				     int64_t h, void *out);
enum mtp_status mtp_cpu_hc_head_rows(enum mtp_dtype act, const void *x,
				     const float *fn, const float *scale,
				     const float *base, int64_t t, int64_t m,
				     int64_t h, float rms_eps, float hc_eps,
				     enum mtp_hc_head_variant variant, void *y);
/* y[0..h) = sum_s pre[s] * x[s*h ..], s ascending, in fp32 (hc_collapse,
 * the end of hc_head). */
void mtp_cpu_collapse_row(const float *x, const float *pre, int64_t m,
			  int64_t h, float *y);
/* The greedy token of one row: torch.argmax's rules (first index on ties,
 * the first NaN beats every number). */
int64_t mtp_cpu_argmax(const float *l, int64_t v);
/* logits [T,V] of dtype logits_dt (float32, or bfloat16 under §12.1's
 * logits_dtype), divided by mup before they are stored where mup is not 0
 * [Step V3-9], and the greedy token of the stored logits. */
enum mtp_status mtp_cpu_lm_head_rows(enum mtp_dtype act, const void *x,
				     const struct mtp_cpu_qw *w,
				     const struct mtp_ref_quant *q, int64_t t,
				     int64_t v, int64_t h, double mup,
				     enum mtp_dtype logits_dt, void *logits,
				     int64_t *token);

/* ---- the synthetic block, one step, the chain ------------------------- */

/* A composite's settings, from the case attributes and bound dims. */
struct mtp_cpu_cfg {
	enum mtp_dtype act;
	enum mtp_family family;
	float eps, hc_eps;
	enum mtp_rounding rnd;
	struct mtp_hc_params hc; /* every hc_pre of the V4 block */
	enum mtp_contract contract;
	enum mtp_hc_head_variant variant;
	int64_t t, h, m, v, f;
	struct mtp_ref_quant quant; /* [§12.2] the step's float8 projections */
	struct mtp_conventions conv; /* [§12.1] (captured steps honour them) */
	double logits_mup;    /* [Step V3-9] the head's divisor; 0: none */
	int64_t max_position; /* chains of captured steps: the clamp */
};
void mtp_cpu_cfg_init(const struct mtp_call *c, struct mtp_cpu_cfg *cfg);

/* One MTP layer's weights (a block's alone for mtp_block). Activation
 * tensors are void *, mHC parameters float *. */
struct mtp_cpu_layer {
	const void *enorm_w, *hnorm_w, *eh_proj_w, *e_proj_w, *h_proj_w;
	const void *w_in, *w_post, *attn_norm_w, *ffn_norm_w;
	const void *W_a, *W_gate, *W_up, *W_down;
	const float *hc_attn_fn, *hc_attn_scale, *hc_attn_base;
	const float *hc_ffn_fn, *hc_ffn_scale, *hc_ffn_base;
	const float *hc_head_fn, *hc_head_scale, *hc_head_base;
	const void *shared_head_norm_w, *head_w;
	const void *embed_pre_norm_w; /* [Step V3-9] the target's embed_norm */
	/* the projections again, with their block scales if float8 */
	struct mtp_cpu_qw eh_proj, e_proj, h_proj, head;
};
void mtp_cpu_layer_get(const struct mtp_call *c, const char *pfx,
		       struct mtp_cpu_layer *w);

/* [§13 DS-6] markov_bias on t rows: ids are the previous tokens. */
struct mtp_cpu_markov {
	enum mtp_dtype act;
	const void *w1, *w2; /* [V,R] each */
	int64_t v, r;
	double scale; /* logit_scale */
	const void *logits_in;
	void *embed, *logits; /* [t,R], [t,V] */
	int64_t *token;
};
enum mtp_status mtp_cpu_markov_rows(const struct mtp_cpu_markov *k,
				    const int64_t *ids, int64_t t);
/* [§13 DS-4] hc_pre_delayed on t rows (pre_in NULL: stream 0). */
enum mtp_status mtp_cpu_hc_pre_delayed_rows(const struct mtp_cpu_hc_pre *k,
					    const void *residual,
					    const float *pre_in, int64_t t,
					    float *post, float *comb,
					    float *pre_out, void *layer_input);
/* [§13 DS-5..7] The head of both DSpark forms (dspark_head.c): base_logits
 * = act(lm_head_weight . hn) times logit_scale, the Markov loop keyed on
 * ids[0] and then on each drawn token, the confidence of the call's h. */
enum mtp_status mtp_cpu_dspark_head(const struct mtp_call *c,
				    enum mtp_dtype act, const void *hn,
				    const int64_t *ids);
/* [§13 DS-7] conf[t] = sigmoid(w . [hidden; embed] + bias), bias NULL. */
enum mtp_status mtp_cpu_confidence_rows(enum mtp_dtype act, const void *hidden,
					const void *embed, const float *w,
					const float *bias, int64_t t, int64_t h,
					int64_t r, float *conf);

/* out [T,H] = W_down . act(silu(act(W_gate x)) * act(W_up x)) [§10]. */
enum mtp_status mtp_cpu_swiglu(const struct mtp_cpu_cfg *cfg,
			       const struct mtp_cpu_layer *w, const void *x,
			       void *out);

/* [§10.1] (h, r1) = block(x, residual); residual NULL: first layer. */
enum mtp_status mtp_cpu_block_v3(const struct mtp_cpu_cfg *cfg,
				 const struct mtp_cpu_layer *w, const void *x,
				 const void *residual, void *h_out,
				 void *r_out);

/* [§10.2] What the V4 block computes: f, R1, post_f, C_f, and under the
 * internal contract also the streams R2 (NULL under deferred). */
struct mtp_cpu_v4_out {
	void *f, *r1;
	float *post, *comb;
	void *streams;
};
/* x is the streams [T,M,H] when state is NULL, else x [T,H] and the
 * previous layer's state (post_mix, res_mix, residual). */
struct mtp_cpu_v4_state {
	const float *post_mix, *res_mix;
	const void *residual;
};
enum mtp_status mtp_cpu_block_v4(const struct mtp_cpu_cfg *cfg,
				 const struct mtp_cpu_layer *w, const void *x,
				 const struct mtp_cpu_v4_state *state,
				 const struct mtp_cpu_v4_out *out);

/* Outputs of one step (see FORMAT.md mtp_step); a captured-block step
 * has block_in and no block outputs. */
struct mtp_cpu_step_out {
	void *block_in, *block_out, *block_residual, *hidden_pre, *hidden_post;
	float *post_mix, *comb_mix;
	void *streams, *head_hidden, *recycled;
	void *logits; /* float32, or bf16 under logits_dtype (§12.1) */
	int64_t *token;
};
void mtp_cpu_step_out_get(const struct mtp_call *c, const char *pfx,
			  struct mtp_cpu_step_out *o);

/* [§12.3] A captured block's outputs, as the engine produced them: V3
 * block_out [T,H] and block_residual [T,H]; V4 deferred block_out [T,H],
 * block_residual [T,M,H], post_mix, comb_mix; V4 internal block_out, the
 * streams [T,M,H]. */
struct mtp_cpu_captured {
	const void *block_out, *block_residual;
	const float *post_mix, *comb_mix;
};
/* The captured inputs under pfx; false for a synthetic-block call. */
bool mtp_cpu_captured_get(const struct mtp_call *c, const char *pfx,
			  struct mtp_cpu_captured *cap);

/* v rounded to act (a store and a load of one element). */
float mtp_cpu_round1(enum mtp_dtype act, float v);
/* [§2.5] parts [p, rows, h] reduced in `order` into out (act dtype). */
enum mtp_status mtp_cpu_reduce(enum mtp_dtype act, const void *parts, int64_t p,
			       int64_t rows, int64_t h,
			       enum mtp_reduce_order order, void *out);
/* [§2.5] The same over p worker processes in shared memory, each holding
 * its own partial (tp_shm.c; MTP_CPU_TP_PROCS=1 makes mtp_cpu_reduce use
 * it). MTP_ERR_UNSUPPORTED: p outside [1, 64] or nothing to reduce;
 * MTP_ERR_DEVICE: a rank failed or the ranks disagree. */
enum mtp_status mtp_cpu_reduce_procs(enum mtp_dtype act, const void *parts,
				     int64_t p, int64_t rows, int64_t h,
				     enum mtp_reduce_order order, void *out);
/* [Step V3-8] A tensor-parallel captured step's block output reduced from
 * its partials into cap->block_out (returned, to mtp_cpu_free), cfg's final
 * add fused under reduce_at = final_norm; *st the status. */
void *mtp_cpu_tp_block_out(const struct mtp_call *c, struct mtp_cpu_cfg *cfg,
			   struct mtp_cpu_captured *cap, enum mtp_status *st);

/* The glue before the block, writing x0 (V3 [T,H], V4 [T,M,H]), and
 * everything after it from the block's outputs (V3: h and r1; V4: the
 * streams after the one final hc_post). */
enum mtp_status mtp_cpu_glue(const struct mtp_cpu_cfg *cfg,
			     const struct mtp_cpu_layer *w, const void *embeds,
			     const int64_t *positions, const void *prev,
			     void *x0);
enum mtp_status mtp_cpu_after_v3(const struct mtp_cpu_cfg *cfg,
				 const struct mtp_cpu_layer *w, const void *h,
				 const void *r1,
				 const struct mtp_cpu_step_out *o);
enum mtp_status mtp_cpu_after_v4(const struct mtp_cpu_cfg *cfg,
				 const struct mtp_cpu_layer *w,
				 const struct mtp_cpu_step_out *o);

/* One step; cap NULL: the synthetic block, else the captured one. */
enum mtp_status mtp_cpu_step(const struct mtp_cpu_cfg *cfg,
			     const struct mtp_cpu_layer *w, const void *embeds,
			     const int64_t *positions, const void *prev,
			     const struct mtp_cpu_captured *cap,
			     const struct mtp_cpu_step_out *o);
enum mtp_status mtp_cpu_captured_step(
	const struct mtp_cpu_cfg *cfg, const struct mtp_cpu_layer *w,
	const void *embeds, const int64_t *positions, const void *prev,
	const struct mtp_cpu_captured *cap, const struct mtp_cpu_step_out *o);

/* ---- op entry points, one per file ------------------------------------ */

typedef enum mtp_status (*mtp_cpu_op_fn)(const struct mtp_call *c);

enum mtp_status mtp_cpu_op_rmsnorm(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_add_rmsnorm(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_target_handoff(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_embed(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_fused_eh_norm(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_fused_embed_eh_norm(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_eh_proj(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_fused_mtp_input_rmsnorm(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_eh_proj_hc(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_hc_pre(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_hc_post(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_hc_fused_post_pre(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_hc_head(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_shared_head_rmsnorm(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_lm_head(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_all_reduce(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_mtp_block(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_mtp_step(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_draft_chain(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_main_proj_norm(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_hc_collapse(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_markov_bias(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_confidence(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_hc_pre_delayed(const struct mtp_call *c);
enum mtp_status mtp_cpu_op_dspark_step(const struct mtp_call *c);
/* [§13.9.1] its captured-block form (dspark_captured.c) */
enum mtp_status mtp_cpu_op_dspark_captured(const struct mtp_call *c);

#endif
