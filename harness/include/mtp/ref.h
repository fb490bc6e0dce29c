/*
 * The scalar reference of every MTP step (SPEC.md): the judge.
 *
 * Contract shared by every function here:
 *  - tensors are row-major arrays of double holding values that are already
 *    representable in their declared dtype (the caller widened them exactly);
 *  - all arithmetic is in double; a value is rounded, with mtp_round(), exactly
 *    where the spec stores to a narrower type: `act` is the activation dtype
 *    (bfloat16 in the engines; float32/float16 variants exist), mHC mixes
 *    (post_mix, comb_mix) are stored as float32, logits as float32;
 *  - positions, ids and tokens are int64 and already validated by the caller
 *    (ids in [0, V));
 *  - NaN and Inf propagate as IEEE arithmetic does, except where the spec
 *    selects: the position-0 mask is a select, so a masked row is exactly 0
 *    even if the embedding held a NaN;
 *  - outputs never alias inputs; the functions cannot fail (shapes were checked
 *    by the harness against the op table), except where they return a status.
 * Sections in brackets are SPEC.md's.
 */
#ifndef MTP_REF_H
#define MTP_REF_H

#include <stdbool.h>
#include <stdint.h>

#include "mtp/conventions.h"
#include "mtp/dtype.h"
#include "mtp/family.h"

#ifdef __cplusplus /* a backend written in C++ links these as C */
extern "C" {
#endif

enum mtp_rounding {
	MTP_ROUNDING_EAGER, /* §2.1: bf16(x*r) then bf16(y*w) */
	MTP_ROUNDING_FUSED, /* §2.2: bf16(x*r*w), one rounding */
};

enum mtp_hc_head_variant {
	MTP_HC_HEAD_CUDA, /* §4.4.4 tilelang: mixes from unrounded x, times rho */
	MTP_HC_HEAD_ROCM, /* §4.4.4 triton: x*rho rounded to act first */
};

enum mtp_contract {
	MTP_CONTRACT_DEFERRED, /* CUDA/XPU: block returns (f, R1, post_f, C_f) */
	MTP_CONTRACT_INTERNAL, /* ROCm: block applies the final hc_post itself */
};

/* [§12.2] How a projection with float8_e4m3fn weights is computed
 * (FORMAT.md `proj_quant`). */
enum mtp_proj_quant {
	MTP_PROJ_QUANT_NONE,  /* no float8 weight (plain GEMM) */
	MTP_PROJ_QUANT_FP8_W, /* weight-only: w*scale, activations as they are */
	MTP_PROJ_QUANT_FP8_W8A8, /* activations quantized per token per 128 */
};

#define MTP_QUANT_BLOCK 128 /* weight blocks 128x128, activation groups 128 */

/* A projection weight [out,in] (nn.Linear layout): plain values, or e4m3
 * values with their block scales [ceil(out/128), ceil(in/128)], the real
 * weight being w[o,i] * scale_inv[o/128, i/128]. */
struct mtp_ref_qweight {
	const double *w;
	const double *scale_inv; /* NULL: w is the weight itself */
};

struct mtp_ref_quant {
	enum mtp_proj_quant scheme;
	double act_eps; /* act_quant_eps: the W8A8 group scale's clamp */
};

/* Scalars of one mHC hc_pre [§4.4.1]. */
struct mtp_hc_params {
	double rms_eps;	     /* eps of the mixes' RMS over M*H */
	double pre_eps;	     /* added to sigmoid for pre_m */
	double sinkhorn_eps; /* eps of the Sinkhorn softmax and normalisations */
	double post_mult;    /* 2.0 in vLLM */
	int sinkhorn_iters; /* >= 1: one softmax + column norm, then iters-1 row+column */
	double norm_eps; /* used only when a norm weight is given */
};

/* ---- primitives ------------------------------------------------------- */

/* [§2.1/§2.2] y[r,:] = RMSNorm(x[r,:]; w, eps) for r < rows. */
void mtp_ref_rmsnorm(const double *x, const double *w, int64_t rows, int64_t h,
		     double eps, enum mtp_rounding rnd, enum mtp_dtype act,
		     double *y);

/* [§2.3] s = x + residual (unrounded); variance from s; residual_out =
 * act(s); y = RMSNorm(residual_out) with variance from the unrounded s. */
void mtp_ref_add_rmsnorm(const double *x, const double *residual,
			 const double *w, int64_t rows, int64_t h, double eps,
			 enum mtp_rounding rnd, enum mtp_dtype act, double *y,
			 double *residual_out);

/* The same under convention `in` [§12.1]: MTP_ADD_NORM_RESIDUAL is the
 * function above; MTP_ADD_NORM_SUM normalises the unrounded sum s itself
 * (residual_out is act(s) either way). */
void mtp_ref_add_rmsnorm_conv(const double *x, const double *residual,
			      const double *w, int64_t rows, int64_t h,
			      double eps, enum mtp_rounding rnd,
			      enum mtp_add_norm_input in, enum mtp_dtype act,
			      double *y, double *residual_out);

/* [§5.5] What the target hands draft step 0: handoff = the final norm of
 * hidden + residual (add_rmsnorm under convention `in`), or, pre_norm
 * (HANDOFF_MISMATCH), the rounded sum itself. */
void mtp_ref_target_handoff(const double *hidden, const double *residual,
			    const double *norm_w, int64_t rows, int64_t h,
			    double eps, enum mtp_rounding rnd,
			    enum mtp_add_norm_input in, bool pre_norm,
			    enum mtp_dtype act, double *handoff);

/* [Step V3-0] out[t,:] = table[ids[t],:] (exact copy). */
void mtp_ref_embed(const double *table, const int64_t *ids, int64_t t,
		   int64_t h, double *out);

/* [Step V3-1] out[t,:] = 0 if positions[t] == 0 else e[t,:] (a select). */
void mtp_ref_pos0_mask(const double *e, const int64_t *positions, int64_t t,
		       int64_t h, double *out);

/* y[r,o] = act(sum_c w[o,c] * x[r,c]): a GEMM, one rounding of its result.
 * x [rows,in], w [out,in] (nn.Linear layout), y [rows,out]. */
void mtp_ref_linear(const double *x, const double *w, int64_t rows, int64_t in,
		    int64_t out, enum mtp_dtype act, double *y);

/*
 * [§12.2] y[r,o] = out_dt(sum_c W[o,c] x[r,c]) with W optionally
 * block-quantized. Without a scale this is mtp_ref_linear. With one:
 *  - FP8_W (and NONE): W = w*scale_inv exactly (no rounding of the
 *    dequantized weight), x as given, one rounding of the result;
 *  - FP8_W8A8: each row of x is cut into groups of 128 consecutive inputs;
 *    a group's scale is s = f32(max(amax, f32(act_eps)) / 448), its values
 *    q = e4m3_saturating(f32(x / s)); then
 *    y = out_dt( sum_g s_g * scale_inv[o/128, g] * sum_{c in g} q_c w[o,c] ).
 * A NaN in a group makes its amax NaN (the group's outputs are NaN).
 */
void mtp_ref_qlinear(const double *x, struct mtp_ref_qweight w, int64_t rows,
		     int64_t in, int64_t out, const struct mtp_ref_quant *q,
		     enum mtp_dtype out_dt, double *y);

/* [§7.1] out[t] = [ RMSNorm_fused(mask(embeds)[t]; enorm) | RMSNorm_fused(prev[t]; hnorm) ],
 * out is [T, 2H]. */
void mtp_ref_fused_eh_norm(const int64_t *positions, const double *embeds,
			   const double *prev_hidden, const double *enorm_w,
			   const double *hnorm_w, int64_t t, int64_t h,
			   double eps, enum mtp_dtype act, double *out);

/* [§7.2] The same with embeds = table[input_ids]; table is [V,H]. */
void mtp_ref_fused_embed_eh_norm(const int64_t *positions,
				 const int64_t *input_ids,
				 const double *embed_table,
				 const double *prev_hidden,
				 const double *enorm_w, const double *hnorm_w,
				 int64_t t, int64_t h, double eps,
				 enum mtp_dtype act, double *out);

/* [Step V3-3] y [T,H] = act(W [H,2H] . x [T,2H]). */
void mtp_ref_eh_proj(const double *x, const double *w, int64_t t, int64_t h,
		     enum mtp_dtype act, double *y);
/* The same with an optionally quantized weight [§12.2]. */
void mtp_ref_eh_proj_q(const double *x, struct mtp_ref_qweight w, int64_t t,
		       int64_t h, const struct mtp_ref_quant *q,
		       enum mtp_dtype act, double *y);

/* [§7.3] enorm_out [T,H] = RMSNorm_fused(mask(embeds); enorm);
 * hnorm_out [T,M,H] = RMSNorm_fused(prev[t,m,:]; hnorm) per stream. */
void mtp_ref_fused_mtp_input_rmsnorm(
	const double *embeds, const int64_t *positions,
	const double *prev_hidden, const double *enorm_w, const double *hnorm_w,
	int64_t t, int64_t m, int64_t h, double eps, enum mtp_dtype act,
	double *enorm_out, double *hnorm_out);

/* [Step V4-3] x[t,m,:] = act( act(h_proj(p[t,m,:])) + act(e_proj(e[t,:])) ). */
void mtp_ref_eh_proj_hc(const double *e, const double *p,
			const double *e_proj_w, const double *h_proj_w,
			int64_t t, int64_t m, int64_t h, enum mtp_dtype act,
			double *x);
/* The same with optionally quantized weights [§12.2]. */
void mtp_ref_eh_proj_hc_q(const double *e, const double *p,
			  struct mtp_ref_qweight e_proj,
			  struct mtp_ref_qweight h_proj, int64_t t, int64_t m,
			  int64_t h, const struct mtp_ref_quant *q,
			  enum mtp_dtype act, double *x);

/* [§4.4.1] residual [T,M,H], fn [2M+M*M, M*H], scale [3], base [2M+M*M];
 * norm_w [H] or NULL (no fused norm). Outputs post_mix [T,M] and
 * comb_mix [T,M,M] (float32 values), layer_input [T,H] (act). */
void mtp_ref_hc_pre(const double *residual, const double *fn,
		    const double *scale, const double *base,
		    const double *norm_w, const struct mtp_hc_params *p,
		    int64_t t, int64_t m, int64_t h, enum mtp_dtype act,
		    double *post_mix, double *comb_mix, double *layer_input);

/* [§4.4.2] out[t,j,h] = act( post[t,j]*x[t,h] + sum_i comb[t,i,j]*R[t,i,h] ). */
void mtp_ref_hc_post(const double *x, const double *residual,
		     const double *post_mix, const double *comb_mix, int64_t t,
		     int64_t m, int64_t h, enum mtp_dtype act, double *out);

/* [§4.4.3] residual_out = hc_post(x, residual, post_in, comb_in) (stored in
 * act), then hc_pre on residual_out (the large-T path: pre reads the rounded
 * streams). */
void mtp_ref_hc_fused_post_pre(const double *x, const double *residual,
			       const double *post_in, const double *comb_in,
			       const double *fn, const double *scale,
			       const double *base, const double *norm_w,
			       const struct mtp_hc_params *p, int64_t t,
			       int64_t m, int64_t h, enum mtp_dtype act,
			       double *residual_out, double *post_mix,
			       double *comb_mix, double *layer_input);

/* [§4.4.4] y [T,H] from x [T,M,H], fn [M, M*H], scale [1], base [M]. */
void mtp_ref_hc_head(const double *x, const double *fn, const double *scale,
		     const double *base, int64_t t, int64_t m, int64_t h,
		     double rms_eps, double hc_eps,
		     enum mtp_hc_head_variant variant, enum mtp_dtype act,
		     double *y);

/* [§7.4] The shared head's RMSNorm: fused rounding. */
void mtp_ref_mtp_shared_head_rmsnorm(const double *x, const double *w,
				     int64_t t, int64_t h, double eps,
				     enum mtp_dtype act, double *y);

/* [Step V3-6] logits [T,V] = f32(sum_h W[v,h] x[t,h]), no activation rounding;
 * token[t] = argmax over the stored logits, first index on ties, a NaN counts
 * as larger than any number (torch.argmax). */
void mtp_ref_lm_head(const double *x, const double *w, int64_t t, int64_t v,
		     int64_t h, double *logits, int64_t *token);
/* The same with the logits rounded once to `logits_dtype` (float32 or
 * bfloat16, §12.1); the token is the lowest index among the maxima of the
 * rounded logits (FORMAT.md v2 rule 6). */
void mtp_ref_lm_head_dt(const double *x, const double *w, int64_t t, int64_t v,
			int64_t h, enum mtp_dtype logits_dtype, double *logits,
			int64_t *token);
/* The same with an optionally quantized head [§12.2]. */
void mtp_ref_lm_head_q(const double *x, struct mtp_ref_qweight w, int64_t t,
		       int64_t v, int64_t h, const struct mtp_ref_quant *q,
		       enum mtp_dtype logits_dtype, double *logits,
		       int64_t *token);

/* ---- DSpark drafters (§13) ------------------------------------------- */

/* [§13 DS-1] proj_out = act(W aux) for aux [T, A*H] (A target layers
 * concatenated), W [H, A*H], optionally block-FP8 [§12.2] (q may be NULL
 * without a scale); main_x = RMSNorm(proj_out; norm_w, eps, rnd). */
void mtp_ref_main_proj_norm(const double *aux, struct mtp_ref_qweight w,
			    const struct mtp_ref_quant *q, const double *norm_w,
			    int64_t t, int64_t a, int64_t h, double eps,
			    enum mtp_rounding rnd, enum mtp_dtype act,
			    double *proj_out, double *main_x);

/* [§13 DS-4] hc_pre's mixes of the streams, but the layer input is
 * sum_m pre_in[t,m] R[t,m] (pre_in [T,M], the previous sublayer's pre-mix),
 * or R[t,0] itself if pre_in is NULL (layer 0's identity pre-mix), with the
 * same optional fused norm; pre_out [T,M] = f32(this sublayer's pre-mix). */
void mtp_ref_hc_pre_delayed(const double *residual, const double *fn,
			    const double *scale, const double *base,
			    const double *norm_w, const double *pre_in,
			    const struct mtp_hc_params *p, int64_t t, int64_t m,
			    int64_t h, enum mtp_dtype act, double *post_mix,
			    double *comb_mix, double *layer_input,
			    double *pre_out);

/* [§13 DS-5] y[t,:] = act(sum_m pre[t,m] * x[t,m,:]), pre [T,M]. */
void mtp_ref_hc_collapse(const double *x, const double *pre, int64_t t,
			 int64_t m, int64_t h, enum mtp_dtype act, double *y);

/* [§13 DS-6] embed[t] = w1[prev_ids[t]] (w1 [V,R]); logits[t,v] =
 * act(logits_in[t,v] + act(scale * act(w2[v,:] . embed[t]))) (w2 [V,R]);
 * token[t] = argmax of logits[t] (first index on ties). */
void mtp_ref_markov_bias(const double *logits_in, const int64_t *prev_ids,
			 const double *w1, const double *w2, int64_t t,
			 int64_t v, int64_t r, double scale, enum mtp_dtype act,
			 double *embed, double *logits, int64_t *token);

/* [§13 DS-7] conf[t] = f32(sigmoid(w[:H] . hidden[t] + w[H:] . embed[t] +
 * bias)), w [1, H+R]; bias may be NULL. */
void mtp_ref_confidence(const double *hidden, const double *embed,
			const double *w, const double *bias, int64_t t,
			int64_t h, int64_t r, double *conf);

/* [§2.4] out [R,C] = act(sum_p parts[p,:,:]): one rounding of the wide sum. */
void mtp_ref_all_reduce(const double *parts, int64_t p, int64_t rows,
			int64_t cols, enum mtp_dtype act, double *out);

/* [§2.5] The declared order of a tensor-parallel sum. */
enum mtp_reduce_order {
	MTP_REDUCE_EXACT,    /* undeclared: the exact sum, rounded once */
	MTP_REDUCE_ONE_SHOT, /* rank order, fp32, one rounding */
	MTP_REDUCE_TWO_SHOT, /* the chunk's owner first, fp32, one rounding */
	MTP_REDUCE_RING,     /* from the owner + 1, rounded at every hop */
	MTP_REDUCE_TREE,     /* pairwise levels, rounded at every level */
};

/* [§2.5] parts [p, rows, cols] summed in `order`: out = the act-dtype
 * result, u (may be NULL) = the fp32 value before its last rounding (what
 * a fused all-reduce + norm adds to the residual). */
void mtp_ref_all_reduce_order(const double *parts, int64_t p, int64_t rows,
			      int64_t cols, enum mtp_reduce_order order,
			      enum mtp_dtype act, double *u, double *out);

/* ---- the synthetic block [§10] ---------------------------------------- */

struct mtp_ref_dims {
	int64_t t; /* tokens */
	int64_t h; /* hidden */
	int64_t m; /* hc_mult (V4), 1 otherwise */
	int64_t v; /* vocabulary */
	int64_t f; /* synthetic FFN width */
};

struct mtp_ref_v3_block {
	const double *w_in, *W_a, *w_post, *W_gate, *W_up, *W_down;
};

struct mtp_ref_v4_block {
	const double *hc_attn_fn, *hc_attn_scale, *hc_attn_base;
	const double *hc_ffn_fn, *hc_ffn_scale, *hc_ffn_base;
	const double *attn_norm_w, *ffn_norm_w;
	const double *W_a, *W_gate, *W_up, *W_down;
};

/* Settings of one step, from the case attributes. */
struct mtp_ref_step_cfg {
	enum mtp_family family;
	double eps;		    /* rms_norm_eps */
	enum mtp_rounding rounding; /* every RMSNorm of the step */
	enum mtp_dtype act;
	/* V4 only */
	double hc_eps;
	int sinkhorn_iters;
	double post_mult;
	enum mtp_contract contract;
	enum mtp_hc_head_variant hc_head_variant;
	/* engine conventions [§12.1]; zeroed is the v1 behaviour */
	struct mtp_conventions conv;
	/* [§12.2] every float8 projection of the step, head included */
	struct mtp_ref_quant quant;
	double logits_mup; /* [Step V3-9] the head's divisor; 0: none */
};

/* [§10.1] (h, r1) = block(x, residual). residual NULL is the first-layer call
 * (r0 = x, x normed with w_in); otherwise (x_n, r0) = add_rmsnorm(x, residual;
 * w_in). h_out and r_out are [T,H]. */
void mtp_ref_v3_block(const double *x, const double *residual,
		      const struct mtp_ref_v3_block *b,
		      const struct mtp_ref_dims *d,
		      const struct mtp_ref_step_cfg *c, double *h_out,
		      double *r_out);

/* [§10.1, Step V3-5, §12.1] After the V3 block: hidden_pre = act(r1 + h)
 * and hidden_post = RMSNorm(hidden_pre) (final_add unfused), or both from
 * one fused add + RMSNorm under add_norm_input (final_add fused). */
void mtp_ref_v3_final(const double *h_out, const double *r1,
		      const double *norm_w, const struct mtp_ref_dims *d,
		      const struct mtp_ref_step_cfg *c, double *hidden_pre,
		      double *hidden_post);

/* [§10.2] The V4 block. post_mix [T,M], res_mix [T,M,M], residual [T,M,H] are
 * the optional state of a previous layer: all NULL (first layer: x is the
 * streams [T,M,H]) or all given (x is [T,H] and the streams are
 * R0 = hc_post(x, residual, post_mix, res_mix)).
 * Deferred contract: x_out = f [T,H], residual_out = R1 [T,M,H],
 * post_out = post_f [T,M], comb_out = C_f [T,M,M].
 * Internal contract: x_out = R2 = hc_post(f, R1, post_f, C_f) [T,M,H]; the
 * other three are still written (they are what the ROCm block computed before
 * returning NULLs), so that callers may check them. */
void mtp_ref_v4_block(const double *x, const double *post_mix,
		      const double *res_mix, const double *residual,
		      const struct mtp_ref_v4_block *b,
		      const struct mtp_ref_dims *d,
		      const struct mtp_ref_step_cfg *c, double *x_out,
		      double *residual_out, double *post_out, double *comb_out);

/* ---- one MTP step [§3, §4, §10] and the draft chain [§5] --------------- */

struct mtp_ref_v3_layer {
	const double *enorm_w, *hnorm_w;
	const double *eh_proj_w; /* [H,2H] */
	struct mtp_ref_v3_block block;
	const double *shared_head_norm_w; /* [H] */
	const double *head_w;		  /* [V,H] */
	/* [§12.2] block scales of float8 weights, NULL when not quantized */
	const double *eh_proj_scale, *head_scale;
	const double *embed_pre_norm_w; /* [Step V3-9] the target's, or NULL */
};

struct mtp_ref_v4_layer {
	const double *enorm_w, *hnorm_w;
	const double *e_proj_w, *h_proj_w; /* [H,H] */
	struct mtp_ref_v4_block block;
	const double *hc_head_fn, *hc_head_scale, *hc_head_base;
	const double *shared_head_norm_w;
	const double *head_w;
	/* [§12.2] block scales of float8 weights, NULL when not quantized */
	const double *e_proj_scale, *h_proj_scale, *head_scale;
};

/* Outputs of one step; the caller allocates every array.
 * V3: block_out [T,H], block_residual [T,H], hidden_pre [T,H],
 *     hidden_post [T,H], recycled [T,H], logits [T,V], token [T].
 * V4: block_out [T,H], block_residual [T,M,H], post_mix [T,M],
 *     comb_mix [T,M,M], streams [T,M,H], recycled [T,M*H],
 *     head_hidden [T,H], logits [T,V], token [T].
 * Arrays a family does not produce are ignored (may be NULL). */
struct mtp_ref_step_out {
	double *block_out, *block_residual;
	double *hidden_pre, *hidden_post;		     /* V3 */
	double *post_mix, *comb_mix, *streams, *head_hidden; /* V4 */
	double *recycled, *logits;
	int64_t *token;
};

/* Inputs of one step that are not weights. */
struct mtp_ref_step_in {
	const double *embeds;	   /* [T,H] */
	const int64_t *positions;  /* [T] */
	const double *prev_hidden; /* [T,H] (V3) or [T,M*H] (V4) */
};

void mtp_ref_mtp_step_v3(const struct mtp_ref_step_in *in,
			 const struct mtp_ref_v3_layer *w,
			 const struct mtp_ref_dims *d,
			 const struct mtp_ref_step_cfg *c,
			 struct mtp_ref_step_out *out);

void mtp_ref_mtp_step_v4(const struct mtp_ref_step_in *in,
			 const struct mtp_ref_v4_layer *w,
			 const struct mtp_ref_dims *d,
			 const struct mtp_ref_step_cfg *c,
			 struct mtp_ref_step_out *out);

/* [§5, FORMAT.md draft_chain] K teacher-forced steps over L layers. */
struct mtp_ref_chain_in {
	int64_t k, l;
	bool pass_step_idx;	    /* layer s % L if set, else layer 0 */
	const double *embed_table;  /* [V,H] */
	const int64_t *input_ids;   /* [T] */
	const int64_t *positions;   /* [T]; step s uses positions + s */
	const double *prev_hidden;  /* step 0's previous hidden */
	const int64_t *next_tokens; /* [K-1, T] */
	const struct mtp_ref_v3_layer *v3; /* [L], for the V3 family */
	const struct mtp_ref_v4_layer *v4; /* [L], for V4 */
};

/* The layer that step s uses. */
int64_t mtp_ref_chain_layer(const struct mtp_ref_chain_in *in, int64_t s);

/* steps[s] receives step s's outputs (every array allocated by the caller). */
void mtp_ref_draft_chain(const struct mtp_ref_chain_in *in,
			 const struct mtp_ref_dims *d,
			 const struct mtp_ref_step_cfg *c,
			 struct mtp_ref_step_out *steps);

/* ---- the DSpark step (§13.9) ---------------------------------------- */

/* [§13.9] y[t] = act(rope(x[t], pos[t])): rotate-half (neox) over all H,
 * pairs (i, i + H/2), angle pos * 10000^(-2i/H); an odd H's last element
 * passes unrotated. */
void mtp_ref_rope(const double *x, const int64_t *pos, int64_t t, int64_t h,
		  enum mtp_dtype act, double *y);

/* [§13.9.1] which drafter a captured dspark_step is */
enum mtp_dspark_variant {
	MTP_DSPARK_V41,	  /* DeepSeek V4.1: mHC streams, hc_collapse */
	MTP_DSPARK_QWEN3, /* Qwen3: plain residual, norm(h, residual) */
};

/* [§13.9] the in-block mask of dspark_step's attention */
enum mtp_block_mask {
	MTP_BLOCK_MASK_NON_CAUSAL, /* the engines': every key of the block */
	MTP_BLOCK_MASK_CAUSAL,	   /* keys of the block up to the query */
};

/* [§13.9] single-head attention of the block's queries q [T,H] over the
 * context keys/values kc, vc [C,H] and the block's kb, vb [T,H] under
 * `mask`; scores / sqrt(H), softmax and sum in double; o = act(sum). */
void mtp_ref_block_attention(const double *q, const double *kc,
			     const double *vc, const double *kb,
			     const double *vb, int64_t c, int64_t t, int64_t h,
			     enum mtp_block_mask mask, enum mtp_dtype act,
			     double *o);

/* [§13.9] one synthetic DSpark layer: §10.2's V4 block weights (W_a is the
 * attention's output projection) and its attention's own. */
struct mtp_ref_dspark_layer {
	struct mtp_ref_v4_block b;
	const double *W_q, *W_kv, *kv_norm_w;
};

struct mtp_ref_dspark_w {
	const double *embed_table, *main_proj_w, *main_norm_w;
	const struct mtp_ref_dspark_layer *layers;
	const double *norm_w, *head_w, *markov_w1, *markov_w2, *conf_w;
};

struct mtp_ref_dspark_in {
	const double *aux;	      /* [C, P, H] */
	const int64_t *ctx_positions; /* [C] */
	const int64_t *ids;	      /* [T]: the bonus token, then masks */
	const int64_t *positions;     /* [T] */
};

/* [§13.9] The changes of four DSpark bug rows (harness/src/bugs/dspark.c):
 * internal attributes that no file sets (mtp_params.dspark). All zero is
 * the spec's step. */
struct mtp_dspark_mistakes {
	bool markov_on_ids;	/* DS-6: position k's bias keyed on ids[k] */
	bool pre_mix_undelayed; /* DS-4: plain hc_pre, each sublayer's own */
	/* DS-5: hc_collapse with the pre-mix of the sublayer this many before
	 * the last FFN (1: the last attention's, 2: the layer before's FFN;
	 * 0: the last FFN's, the spec's) */
	int collapse_back;
};

/* Sizes beyond mtp_ref_dims (t is the block length N) and settings. */
struct mtp_ref_dspark_cfg {
	int64_t c, p, l, r; /* context rows, aux layers, layers, Markov rank */
	enum mtp_block_mask mask;
	double logit_scale;
	struct mtp_dspark_mistakes mistakes;
};

struct mtp_ref_dspark_out {
	double *main_x;		 /* [C,H] */
	double *sublayer_inputs; /* [2L,T,H] */
	double *pre_mixes;	 /* [2L,T,M], float32 */
	double *streams;	 /* [T,M,H] after the last hc_post */
	double *h;		 /* [T,H] hc_collapse */
	double *base_logits;	 /* [T,V] act */
	double *markov_embed;	 /* [T,R] */
	double *logits;		 /* [T,V] act */
	int64_t *token;		 /* [T] */
	double *confidence;	 /* [T] float32 */
};

/* [§13.9] the synthetic DSpark step of one request. */
void mtp_ref_dspark_step(const struct mtp_ref_dspark_in *in,
			 const struct mtp_ref_dspark_w *w,
			 const struct mtp_ref_dims *d,
			 const struct mtp_ref_step_cfg *c,
			 const struct mtp_ref_dspark_cfg *dc,
			 const struct mtp_ref_dspark_out *out);

/* [§13.9.1] The captured-block DSpark step: the engine's decoder layers are
 * a black box whose outputs are inputs here; the glue around them is
 * recomputed. V4.1: block_out is the last FFN's output f [T,H],
 * block_residual its input streams R [T,M,H], post_mix, comb_mix, pre_mix
 * the last FFN's mixes; Qwen3 (no mHC): block_out the last layer's h [T,H],
 * block_residual its residual [T,H], the mixes NULL. */
struct mtp_ref_dspark_cap_in {
	const double *aux;	      /* [C, P, H] */
	const int64_t *ctx_positions; /* [C]: the target's positions */
	const int64_t *ids;	      /* [T]: the bonus token, then masks */
	int64_t max_position;	      /* the clamp of the block positions */
	const double *block_out, *block_residual;
	const double *post_mix, *comb_mix, *pre_mix;
};

struct mtp_ref_dspark_cap_w {
	const double *embed_table, *main_proj_w, *main_norm_w;
	const double *norm_w, *head_w, *markov_w1, *markov_w2;
	const double *conf_w, *conf_b; /* conf_b NULL: no bias (V4.1) */
};

struct mtp_ref_dspark_cap_cfg {
	int64_t c, p, r; /* context rows, aux layers, Markov rank */
	bool qwen3;	 /* the Qwen3 drafter: no mHC, post-norm hidden */
	double logit_scale;
	bool markov_on_ids; /* DSPARK_MARKOV_KEYED_ON_IDS's change */
};

struct mtp_ref_dspark_cap_out {
	double *main_proj_out; /* [C,H] */
	double *main_x;	       /* [C,H] */
	int64_t *positions;    /* [T] */
	double *block_in;      /* V4.1 [T,M,H], Qwen3 [T,H] */
	double *streams;       /* V4.1 [T,M,H]; Qwen3: unused */
	double *h;	       /* [T,H] the head hidden */
	double *base_logits;   /* [T,V] act */
	double *markov_embed;  /* [T,R] */
	double *logits;	       /* [T,V] act */
	int64_t *token;	       /* [T] */
	double *confidence;    /* [T] float32 */
};

void mtp_ref_dspark_captured(const struct mtp_ref_dspark_cap_in *in,
			     const struct mtp_ref_dspark_cap_w *w,
			     const struct mtp_ref_dims *d,
			     const struct mtp_ref_step_cfg *c,
			     const struct mtp_ref_dspark_cap_cfg *dc,
			     const struct mtp_ref_dspark_cap_out *out);

#ifdef __cplusplus
}
#endif

#endif
