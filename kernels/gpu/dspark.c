/*
 * The DSpark ops [SPEC.md §13] on any GPU backend's primitives: the
 * context combiner main_proj_norm (a GEMM and a norm, both outputs, so it
 * composes from the existing primitives), the Markov bias (gather, GEMM,
 * the activation-dtype add and the greedy token of the rounded logits),
 * and the three that need kernels of their own, hc_pre_delayed,
 * hc_collapse and confidence (optional primitives: supports() declines
 * them where a backend has none).
 */
#include "compose.h"

#define IN(name) mtp_gpu_tensor(c, false, NULL, name)
#define OUT(name) mtp_gpu_tensor(c, true, NULL, name)

/* [Step DS-1] main_proj_out = act(aux [T,P*H] . W^T); main_x its norm in
 * the case's rounding. */
enum mtp_status mtp_gpu_op_main_proj_norm(struct mtp_backend *be,
					  const struct mtp_call *c,
					  const struct gpu_cfg *cfg)
{
	const struct mtp_dims *d = &c->dims;
	const struct gpu_qw w = mtp_gpu_qw(c, NULL, "main_proj_weight");

	/* bf16 or FP8 block-scaled (qlinear.c, SPEC.md §12.2) */
	GPU_TRY(mtp_gpu_qlinear(be, cfg, false, IN("aux"), &w,
				OUT("main_proj_out"), d->t, d->p * d->h, d->h));
	return mtp_gpu_norm_rows(be, cfg, OUT("main_proj_out"),
				 IN("main_norm_weight"), OUT("main_x"), d->t);
}

/* [Step DS-4] hc_pre's mixes, the pre-mix as an output, the layer input
 * from pre_mix_in (absent: stream 0). */
enum mtp_status mtp_gpu_op_hc_pre_delayed(struct mtp_backend *be,
					  const struct mtp_call *c,
					  const struct gpu_cfg *cfg)
{
	struct gpu_hc_pre_args a;

	mtp_gpu_hc_args(c, "residual", "post_mix", "comb_mix", &a);
	return gpu_prims(be)->hc_pre_delayed(be, cfg->act, &a, IN("pre_mix_in"),
					     OUT("pre_mix"));
}

/* [Step DS-5] */
enum mtp_status mtp_gpu_op_hc_collapse(struct mtp_backend *be,
				       const struct mtp_call *c,
				       const struct gpu_cfg *cfg)
{
	return gpu_prims(be)->hc_collapse(be, cfg->act, IN("x"), IN("pre_mix"),
					  OUT("y"), c->dims.t, c->dims.m,
					  c->dims.h);
}

/* [Step DS-6] markov_embed = W1[prev_ids] [T,R]; the bias act(embed .
 * W2^T) [T,V]; logits = act(logits_in + bias); the token of the stored
 * logits. */
enum mtp_status mtp_gpu_op_markov_bias(struct mtp_backend *be,
				       const struct mtp_call *c,
				       const struct gpu_cfg *cfg)
{
	const struct gpu_prims *pr = gpu_prims(be);
	const struct mtp_dims *d = &c->dims;
	struct gpu_buf bias;

	GPU_TRY(mtp_gpu_scratch(be, (size_t)(d->t * d->v) * cfg->es, &bias));
	GPU_TRY(pr->embed(be, cfg->act, IN("markov_w1"), IN("prev_ids"),
			  mtp_gpu_is64(c, false, NULL, "prev_ids"),
			  OUT("markov_embed"), d->t, d->r));
	GPU_TRY(pr->linear(be, cfg->act, false, OUT("markov_embed"),
			   IN("markov_w2"), bias, d->t, d->r, d->v));
	GPU_TRY(pr->add_bcast(be, cfg->act, IN("logits_in"), bias,
			      OUT("logits"), d->t, 1, d->v));
	return mtp_gpu_argmax_act(be, cfg->act, OUT("logits"), OUT("token"),
				  mtp_gpu_is64(c, true, NULL, "token"), d->t,
				  d->v);
}

/* [Step DS-7] */
enum mtp_status mtp_gpu_op_confidence(struct mtp_backend *be,
				      const struct mtp_call *c,
				      const struct gpu_cfg *cfg)
{
	return gpu_prims(be)->confidence(
		be, cfg->act, IN("hidden"), IN("markov_embed"), IN("weight"),
		IN("bias"), OUT("confidence"), c->dims.t, c->dims.h, c->dims.r);
}
