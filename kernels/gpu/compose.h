/*
 * Private to the GPU composition layer (ops.c, block.c, step.c, qlinear.c,
 * dspark.c, dspark_step.c): a call's settings, tensor lookup by name, and
 * the building blocks that the single ops, the blocks and the steps share. Every function returns the first
 * failing status of the primitives it calls (gpu.h).
 */
#ifndef MTP_GPU_COMPOSE_H
#define MTP_GPU_COMPOSE_H

#include "gpu.h"

/* The input (out = false) or output named pfx + name, as a buffer. */
struct gpu_buf mtp_gpu_tensor(const struct mtp_call *c, bool out,
			      const char *pfx, const char *name);
bool mtp_gpu_is64(const struct mtp_call *c, bool out, const char *pfx,
		  const char *name);

/* Settings of one op, block or step, from the call's parameters. */
struct gpu_cfg {
	enum gpu_act act;
	size_t es; /* bytes per activation */
	int64_t t, h, m, v, f;
	float eps;
	int rounding; /* GPU_EAGER or GPU_FUSED, | GPU_NORM_ONE_PLUS */
	float hc_eps, post_mult;
	int sinkhorn_iters;
	int contract; /* enum mtp_contract */
	bool rocm_head;
	bool w8a8;     /* proj_quant = fp8_w8a8 [§12.2] */
	float act_eps; /* act_quant_eps, as float32 */
	/* [§12.1] the conventions (zeroed: v1): bf16 logits, the final add
	 * fused into the norm, its norm of the unrounded sum, no position-0
	 * mask */
	bool logits_bf16, final_fused, norm_sum, unmasked;
};

/* A projection weight and, when it is float8, its block scale
 * (scale.mem == NULL: an activation-typed weight). */
struct gpu_qw {
	struct gpu_buf w, scale;
	bool e8m0;
};

/* The weight pfx + name and its companion pfx + "..._scale_inv". */
struct gpu_qw mtp_gpu_qw(const struct mtp_call *c, const char *pfx,
			 const char *name);

void mtp_gpu_cfg_init(const struct mtp_call *c, struct gpu_cfg *cfg);

enum mtp_status mtp_gpu_op_block(struct mtp_backend *be,
				 const struct mtp_call *c);
enum mtp_status mtp_gpu_op_step(struct mtp_backend *be,
				const struct mtp_call *c);
enum mtp_status mtp_gpu_op_chain(struct mtp_backend *be,
				 const struct mtp_call *c);
/* The DSpark ops [§13] (dspark.c), and whether the backend has the
 * primitives each needs. */
enum mtp_status mtp_gpu_op_main_proj_norm(struct mtp_backend *be,
					  const struct mtp_call *c,
					  const struct gpu_cfg *cfg);
enum mtp_status mtp_gpu_op_hc_collapse(struct mtp_backend *be,
				       const struct mtp_call *c,
				       const struct gpu_cfg *cfg);
enum mtp_status mtp_gpu_op_markov_bias(struct mtp_backend *be,
				       const struct mtp_call *c,
				       const struct gpu_cfg *cfg);
enum mtp_status mtp_gpu_op_dspark_step(struct mtp_backend *be,
				       const struct mtp_call *c);
/* [Step DS-6] One Markov-bias step of rows rows (dspark.c). */
struct gpu_markov {
	struct gpu_buf logits_in, prev, w1, w2, embed, logits, token;
	bool prev64, tok64;
	int64_t rows, v, r;
	float scale; /* logit_scale */
};
/* bias: rows * v activations of scratch; f: rows * v floats (unused, may
 * be absent, for float32 activations). */
enum mtp_status mtp_gpu_markov(struct mtp_backend *be,
			       const struct gpu_cfg *cfg,
			       const struct gpu_markov *k, struct gpu_buf bias,
			       struct gpu_buf f);
enum mtp_status mtp_gpu_op_confidence(struct mtp_backend *be,
				      const struct mtp_call *c,
				      const struct gpu_cfg *cfg);
enum mtp_status mtp_gpu_op_hc_pre_delayed(struct mtp_backend *be,
					  const struct mtp_call *c,
					  const struct gpu_cfg *cfg);
bool mtp_gpu_dspark_prims_ok(const struct gpu_prims *pr,
			     const struct mtp_call *c);
/* hc_pre's arguments from a call's tensors and hc parameters; residual
 * "@name" is an output. */
void mtp_gpu_hc_args(const struct mtp_call *c, const char *residual,
		     const char *post, const char *comb,
		     struct gpu_hc_pre_args *a);

/* Building blocks. */
/* y = x . w^T through linear, or linear_fp8 under cfg's proj_quant when w
 * is float8 [§12.2]. */
enum mtp_status mtp_gpu_qlinear(struct mtp_backend *be,
				const struct gpu_cfg *cfg, bool logits,
				struct gpu_buf x, const struct gpu_qw *w,
				struct gpu_buf y, int64_t rows, int64_t in,
				int64_t out);
/* Fused rounding with cfg's norm form: the §7 kernels always round once. */
static inline int mtp_gpu_fused(const struct gpu_cfg *cfg)
{
	return GPU_FUSED | (cfg->rounding & GPU_NORM_ONE_PLUS);
}

/* rows rows of width h, no gather, no mask, in cfg's rounding. */
enum mtp_status mtp_gpu_norm_rows(struct mtp_backend *be,
				  const struct gpu_cfg *cfg, struct gpu_buf x,
				  struct gpu_buf w, struct gpu_buf y,
				  int64_t rows);
enum mtp_status mtp_gpu_swiglu_ffn(struct mtp_backend *be,
				   const struct gpu_cfg *cfg, struct gpu_buf x,
				   struct gpu_buf w_gate, struct gpu_buf w_up,
				   struct gpu_buf w_down, struct gpu_buf out);
/* [Step V4-3] x [T,M,H] = act(act(h_proj(p)) + act(e_proj(e))). */
enum mtp_status mtp_gpu_eh_proj_hc(struct mtp_backend *be,
				   const struct gpu_cfg *cfg, struct gpu_buf e,
				   struct gpu_buf p, const struct gpu_qw *we,
				   const struct gpu_qw *wh, struct gpu_buf x);
/* logits [T,V] (bf16 under cfg->logits_bf16, else float32) and the
 * token of the logits as stored. */
enum mtp_status mtp_gpu_lm_head(struct mtp_backend *be,
				const struct gpu_cfg *cfg, struct gpu_buf x,
				const struct gpu_qw *w, struct gpu_buf logits,
				struct gpu_buf token, bool tok64);
/* token[r] = the argmax of logits [rows,v] stored in act (float32
 * logits: the argmax primitive; else through a float32 copy). */
enum mtp_status mtp_gpu_argmax_act(struct mtp_backend *be, enum gpu_act act,
				   struct gpu_buf logits, struct gpu_buf token,
				   bool tok64, int64_t rows, int64_t v);

struct gpu_v3_block {
	struct gpu_buf w_in, W_a, w_post, W_gate, W_up, W_down;
};

struct gpu_v4_block {
	struct gpu_buf attn_fn, attn_scale, attn_base;
	struct gpu_buf ffn_fn, ffn_scale, ffn_base;
	struct gpu_buf attn_norm_w, ffn_norm_w, W_a, W_gate, W_up, W_down;
};

void mtp_gpu_v3_block_get(const struct mtp_call *c, const char *pfx,
			  struct gpu_v3_block *b);
void mtp_gpu_v4_block_get(const struct mtp_call *c, const char *pfx,
			  struct gpu_v4_block *b);

/* [§10.2] The synthetic blocks' mHC settings (T, M, H and the scalars:
 * rms_eps = norm_eps = eps, pre_eps = sinkhorn_eps = hc_eps) in a, every
 * buffer absent. */
void mtp_gpu_block_hc_args(const struct gpu_cfg *cfg,
			   struct gpu_hc_pre_args *a);

/* [§10.1] (h, r1) = block(x, residual or absent). */
enum mtp_status mtp_gpu_v3_block(struct mtp_backend *be,
				 const struct gpu_cfg *cfg, struct gpu_buf x,
				 struct gpu_buf residual,
				 const struct gpu_v3_block *b,
				 struct gpu_buf h_out, struct gpu_buf r_out);

/* [§10.2] Deferred form from the streams r0 [T,M,H]: f [T,H], R1 [T,M,H],
 * post_f [T,M], C_f [T,M,M]. */
enum mtp_status mtp_gpu_v4_block(struct mtp_backend *be,
				 const struct gpu_cfg *cfg, struct gpu_buf r0,
				 const struct gpu_v4_block *b,
				 struct gpu_buf f_out, struct gpu_buf r1_out,
				 struct gpu_buf post_out,
				 struct gpu_buf comb_out);

#endif
