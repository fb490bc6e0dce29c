/*
 * The DSpark ops [SPEC.md §13] on any GPU backend's primitives: the
 * context combiner main_proj_norm (a GEMM and a norm, both outputs, so it
 * composes from the existing primitives), the Markov bias (gather, GEMM,
 * the logit scale, the activation-dtype add and the greedy token of the
 * rounded logits; dspark_step.c runs it one block position at a time),
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

/* [Step DS-6] markov_embed = W1[prev] [rows,R]; the bias act(embed .
 * W2^T) [rows,V], times logit_scale rounded once more unless it is 1;
 * logits = act(logits_in + bias); the token of the stored logits (bf16 and
 * fp16 through the float32 copy f). */
enum mtp_status mtp_gpu_markov(struct mtp_backend *be,
			       const struct gpu_cfg *cfg,
			       const struct gpu_markov *k, struct gpu_buf bias,
			       struct gpu_buf f)
{
	const struct gpu_prims *pr = gpu_prims(be);
	const int64_t n = k->rows * k->v;

	GPU_TRY(pr->embed(be, cfg->act, k->w1, k->prev, k->prev64, k->embed,
			  k->rows, k->r));
	GPU_TRY(pr->linear(be, cfg->act, false, k->embed, k->w2, bias, k->rows,
			   k->r, k->v));
	if (k->scale != 1.0f) /* supports() asked for the primitive */
		GPU_TRY(pr->scale(be, cfg->act, bias, bias, n, k->scale));
	GPU_TRY(pr->add_bcast(be, cfg->act, k->logits_in, bias, k->logits,
			      k->rows, 1, k->v));
	if (cfg->act == GPU_F32)
		return pr->argmax(be, k->logits, k->token, k->tok64, k->rows,
				  k->v);
	/* widening is exact: the maxima and NaNs of the stored values */
	GPU_TRY(pr->convert(be, cfg->act, GPU_F32, k->logits, f, n));
	return pr->argmax(be, f, k->token, k->tok64, k->rows, k->v);
}

enum mtp_status mtp_gpu_op_markov_bias(struct mtp_backend *be,
				       const struct mtp_call *c,
				       const struct gpu_cfg *cfg)
{
	const struct mtp_dims *d = &c->dims;
	const size_t n = (size_t)(d->t * d->v);
	const struct gpu_markov k = {
		.logits_in = IN("logits_in"),
		.prev = IN("prev_ids"),
		.w1 = IN("markov_w1"),
		.w2 = IN("markov_w2"),
		.embed = OUT("markov_embed"),
		.logits = OUT("logits"),
		.token = OUT("token"),
		.prev64 = mtp_gpu_is64(c, false, NULL, "prev_ids"),
		.tok64 = mtp_gpu_is64(c, true, NULL, "token"),
		.rows = d->t,
		.v = d->v,
		.r = d->r,
		.scale = (float)c->params->logit_scale,
	};
	struct gpu_buf bias, f = {0};

	GPU_TRY(mtp_gpu_scratch(be, n * cfg->es, &bias));
	if (cfg->act != GPU_F32)
		GPU_TRY(mtp_gpu_scratch(be, n * sizeof(float), &f));
	return mtp_gpu_markov(be, cfg, &k, bias, f);
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

/* Whether the backend has the optional primitives that the DSpark op of
 * call c needs (every other op: true). */
bool mtp_gpu_dspark_prims_ok(const struct gpu_prims *pr,
			     const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;
	/* the bf16 and fp16 tokens go through a float32 copy */
	const bool markov = (pr->convert || c->act == MTP_F32) &&
			    (!p || p->logit_scale == 1.0 || pr->scale);

	switch (c->op->id) {
	case MTP_OP_MARKOV_BIAS: return markov;
	case MTP_OP_HC_COLLAPSE: return pr->hc_collapse != NULL;
	case MTP_OP_CONFIDENCE: return pr->confidence != NULL;
	case MTP_OP_HC_PRE_DELAYED: return pr->hc_pre_delayed != NULL;
	case MTP_OP_DSPARK_STEP: /* the synthetic step: neither the captured
				  * form (§13.9.1) nor a plain hc_pre */
		return markov && p && !p->v2.captured && pr->hc_pre_delayed &&
		       pr->hc_collapse && pr->confidence && pr->rope &&
		       pr->block_attention;
	default: return true;
	}
}
