/*
 * The synthetic DSpark step [SPEC.md §13.9] on any GPU backend's
 * primitives, composed once for all of them as the cpu backend composes
 * its own: the context combiner (linear, rmsnorm), per layer the context
 * K/V (linear, rmsnorm, rope), per sublayer hc_pre_delayed, the attention
 * (rope and the block_attention primitive: one head over the context keys
 * and the block's own under the in-block mask) or the SwiGLU FFN, and
 * hc_post; then hc_collapse with the last FFN's pre-mix, the norm and the
 * head, the Markov bias one block position at a time (each keyed on the
 * token drawn before it, read on the device) and the confidence. The
 * rounding points are the reference's (reference/dspark_step.c).
 */
#include <stdio.h>

#include "compose.h"

#define IN(pfx, name) mtp_gpu_tensor(c, false, pfx, name)
#define OUT(name) mtp_gpu_tensor(c, true, NULL, name)

/* The step's scratch, allocated once per launch. */
struct ds_scr {
	struct gpu_buf proj;   /* [max(C,T),H] a projection before its norm */
	struct gpu_buf kc, vc; /* [C,H] the layer's context keys, values */
	struct gpu_buf q, kb, vb;  /* [T,H] the block's queries, keys, values */
	struct gpu_buf o, a;	   /* [T,H] attention, sublayer output */
	struct gpu_buf r2;	   /* [T,M,H] hc_post's new streams */
	struct gpu_buf post, comb; /* [T,M], [T,M,M] float32 mixes */
	struct gpu_buf scores;	   /* [T,C+T] float32 */
	struct gpu_buf bias, f;	   /* [V] one Markov step */
};

struct ds {
	const struct mtp_call *c;
	struct gpu_cfg cfg;
	int64_t nc, r;
	struct ds_scr s;
};

static enum mtp_status scratch(struct mtp_backend *be, struct ds *d)
{
	const int64_t t = d->cfg.t, h = d->cfg.h, m = d->cfg.m, nc = d->nc;
	const size_t es = d->cfg.es, th = (size_t)(t * h) * es;
	struct gpu_buf *const act[] = {&d->s.q, &d->s.kb, &d->s.vb, &d->s.o,
				       &d->s.a};
	struct ds_scr *s = &d->s;

	GPU_TRY(mtp_gpu_scratch(be, (size_t)((nc > t ? nc : t) * h) * es,
				&s->proj));
	GPU_TRY(mtp_gpu_scratch(be, (size_t)(nc * h) * es, &s->kc));
	GPU_TRY(mtp_gpu_scratch(be, (size_t)(nc * h) * es, &s->vc));
	for (size_t i = 0; i < sizeof(act) / sizeof(act[0]); i++)
		GPU_TRY(mtp_gpu_scratch(be, th, act[i]));
	GPU_TRY(mtp_gpu_scratch(be, th * (size_t)m, &s->r2));
	GPU_TRY(mtp_gpu_scratch(be, (size_t)(t * m) * sizeof(float), &s->post));
	GPU_TRY(mtp_gpu_scratch(be, (size_t)(t * m * m) * sizeof(float),
				&s->comb));
	GPU_TRY(mtp_gpu_scratch(be, (size_t)(t * (nc + t)) * sizeof(float),
				&s->scores));
	GPU_TRY(mtp_gpu_scratch(be, (size_t)d->cfg.v * es, &s->bias));
	if (d->cfg.act != GPU_F32)
		GPU_TRY(mtp_gpu_scratch(be, (size_t)d->cfg.v * sizeof(float),
					&s->f));
	return MTP_OK;
}

/* (K, V) of n rows x at pos: V = RMSNorm(act(W_kv x); kv_norm_w), K =
 * rope(V). */
static enum mtp_status layer_kv(struct mtp_backend *be, const struct ds *d,
				const char *pfx, struct gpu_buf x,
				struct gpu_buf pos, bool pos64, int64_t n,
				struct gpu_buf k, struct gpu_buf v)
{
	const struct mtp_call *c = d->c;
	const struct gpu_prims *pr = gpu_prims(be);
	const int64_t h = d->cfg.h;

	GPU_TRY(pr->linear(be, d->cfg.act, false, x, IN(pfx, "W_kv"), d->s.proj,
			   n, h, h));
	GPU_TRY(mtp_gpu_norm_rows(be, &d->cfg, d->s.proj, IN(pfx, "kv_norm_w"),
				  v, n));
	return pr->rope(be, d->cfg.act, v, pos, pos64, k, n, h);
}

/* The attention sublayer's output a = act(W_a o) from its input u. */
static enum mtp_status attention(struct mtp_backend *be, const struct ds *d,
				 const char *pfx, struct gpu_buf u)
{
	const struct mtp_call *c = d->c;
	const struct gpu_prims *pr = gpu_prims(be);
	const struct ds_scr *s = &d->s;
	const int64_t t = d->cfg.t, h = d->cfg.h;
	const struct gpu_buf pos = IN(NULL, "positions");
	const bool pos64 = mtp_gpu_is64(c, false, NULL, "positions");

	GPU_TRY(pr->linear(be, d->cfg.act, false, u, IN(pfx, "W_q"), s->proj, t,
			   h, h));
	GPU_TRY(pr->rope(be, d->cfg.act, s->proj, pos, pos64, s->q, t, h));
	GPU_TRY(layer_kv(be, d, pfx, u, pos, pos64, t, s->kb, s->vb));
	GPU_TRY(pr->block_attention(be, d->cfg.act, s->q, s->kc, s->vc, s->kb,
				    s->vb, s->scores, s->o, d->nc, t, h,
				    c->params->block_mask ==
					    MTP_BLOCK_MASK_CAUSAL));
	return pr->linear(be, d->cfg.act, false, s->o, IN(pfx, "block.W_a"),
			  s->a, t, h, h);
}

/* Sublayer sl (0 attention, 1 FFN) of the layer under pfx, number idx of
 * the step, on the streams R (replaced); *pre carries the pre-mix. */
static enum mtp_status sublayer(struct mtp_backend *be, const struct ds *d,
				const char *pfx, int sl, int64_t idx,
				struct gpu_buf *pre)
{
	const struct mtp_call *c = d->c;
	const struct gpu_prims *pr = gpu_prims(be);
	const struct gpu_cfg *g = &d->cfg;
	const int64_t t = g->t, m = g->m, h = g->h;
	struct gpu_v4_block w;
	const struct gpu_v4_block *b = &w;
	struct gpu_hc_pre_args a;
	struct gpu_buf pre_out =
		gpu_at(OUT("pre_mixes"), (size_t)(idx * t * m) * sizeof(float));

	mtp_gpu_v4_block_get(c, pfx, &w);
	mtp_gpu_block_hc_args(g, &a);
	a.residual = OUT("streams");
	a.fn = sl ? b->ffn_fn : b->attn_fn;
	a.scale = sl ? b->ffn_scale : b->attn_scale;
	a.base = sl ? b->ffn_base : b->attn_base;
	a.norm_w = sl ? b->ffn_norm_w : b->attn_norm_w;
	a.post_mix = d->s.post;
	a.comb_mix = d->s.comb;
	a.layer_input =
		gpu_at(OUT("sublayer_inputs"), (size_t)(idx * t * h) * g->es);
	GPU_TRY(pr->hc_pre_delayed(be, g->act, &a, *pre, pre_out));
	if (c->params->dspark.pre_mix_undelayed) /* plain hc_pre: its own */
		GPU_TRY(pr->hc_pre(be, g->act, &a));
	if (sl)
		GPU_TRY(mtp_gpu_swiglu_ffn(be, g, a.layer_input, b->W_gate,
					   b->W_up, b->W_down, d->s.a));
	else
		GPU_TRY(attention(be, d, pfx, a.layer_input));
	GPU_TRY(pr->hc_post(be, g->act, d->s.a, a.residual, d->s.post,
			    d->s.comb, d->s.r2, t, m, h));
	*pre = pre_out;
	return pr->copy(be, a.residual, d->s.r2, (size_t)(t * m * h) * g->es);
}

/* [DS-1] main_x, and R = the block's embeddings broadcast to M streams
 * (the embedding gathered into the scratch a). */
static enum mtp_status inputs(struct mtp_backend *be, const struct ds *d)
{
	const struct mtp_call *c = d->c;
	const struct gpu_prims *pr = gpu_prims(be);
	const int64_t t = d->cfg.t, m = d->cfg.m, h = d->cfg.h;
	const size_t row = (size_t)h * d->cfg.es;

	GPU_TRY(pr->linear(be, d->cfg.act, false, IN(NULL, "aux"),
			   IN(NULL, "main_proj_weight"), d->s.proj, d->nc,
			   d->c->dims.p * h, h));
	GPU_TRY(mtp_gpu_norm_rows(be, &d->cfg, d->s.proj,
				  IN(NULL, "main_norm_weight"), OUT("main_x"),
				  d->nc));
	GPU_TRY(pr->embed(be, d->cfg.act, IN(NULL, "embed_table"),
			  IN(NULL, "ids"), mtp_gpu_is64(c, false, NULL, "ids"),
			  d->s.a, t, h));
	for (int64_t i = 0; i < t * m; i++)
		GPU_TRY(pr->copy(be, gpu_at(OUT("streams"), (size_t)i * row),
				 gpu_at(d->s.a, (size_t)(i / m) * row), row));
	return MTP_OK;
}

/* [DS-6] position k's Markov step, keyed on ids[0] (k = 0) or on the
 * token drawn at k - 1 (on ids[k] under DSPARK_MARKOV_KEYED_ON_IDS's
 * change, mtp_params.dspark). */
static enum mtp_status markov_at(struct mtp_backend *be, const struct ds *d,
				 int64_t k)
{
	const struct mtp_call *c = d->c;
	const int64_t v = d->cfg.v, r = d->r;
	const size_t es = d->cfg.es;
	const bool tok64 = mtp_gpu_is64(c, true, NULL, "token");
	const bool ids64 = mtp_gpu_is64(c, false, NULL, "ids");
	const bool on_ids = !k || c->params->dspark.markov_on_ids;
	const size_t tb = tok64 ? 8 : 4;
	struct gpu_markov mk = {
		.logits_in = gpu_at(OUT("base_logits"), (size_t)(k * v) * es),
		.prev = on_ids ? gpu_at(IN(NULL, "ids"),
					(size_t)k * (ids64 ? 8 : 4))
			       : gpu_at(OUT("token"), (size_t)(k - 1) * tb),
		.w1 = IN(NULL, "markov_w1"),
		.w2 = IN(NULL, "markov_w2"),
		.embed = gpu_at(OUT("markov_embed"), (size_t)(k * r) * es),
		.logits = gpu_at(OUT("logits"), (size_t)(k * v) * es),
		.token = gpu_at(OUT("token"), (size_t)k * tb),
		.prev64 = on_ids ? ids64 : tok64,
		.tok64 = tok64,
		.rows = 1,
		.v = v,
		.r = r,
		.scale = (float)c->params->logit_scale,
	};

	return mtp_gpu_markov(be, &d->cfg, &mk, d->s.bias, d->s.f);
}

/* [DS-5..7] h = hc_collapse(R, pre), base_logits = act(W_head
 * RMSNorm(h)) (times logit_scale, rounded again, as the reference's head),
 * the Markov loop, the confidence. */
static enum mtp_status head(struct mtp_backend *be, const struct ds *d,
			    struct gpu_buf pre)
{
	const struct mtp_call *c = d->c;
	const struct gpu_prims *pr = gpu_prims(be);
	const int64_t t = d->cfg.t, h = d->cfg.h;

	GPU_TRY(pr->hc_collapse(be, d->cfg.act, OUT("streams"), pre, OUT("h"),
				t, d->cfg.m, h));
	GPU_TRY(mtp_gpu_norm_rows(be, &d->cfg, OUT("h"),
				  IN(NULL, "norm_weight"), d->s.o, t));
	GPU_TRY(pr->linear(be, d->cfg.act, false, d->s.o,
			   IN(NULL, "lm_head_weight"), OUT("base_logits"), t, h,
			   d->cfg.v));
	if (c->params->logit_scale != 1.0) /* supports() asked for scale */
		GPU_TRY(pr->scale(be, d->cfg.act, OUT("base_logits"),
				  OUT("base_logits"), t * d->cfg.v,
				  (float)c->params->logit_scale));
	for (int64_t k = 0; k < t; k++)
		GPU_TRY(markov_at(be, d, k));
	return pr->confidence(be, d->cfg.act, OUT("h"), OUT("markov_embed"),
			      IN(NULL, "conf_weight"), (struct gpu_buf){0},
			      OUT("confidence"), t, h, d->r);
}

enum mtp_status mtp_gpu_op_dspark_step(struct mtp_backend *be,
				       const struct mtp_call *c)
{
	struct ds d = {.c = c, .nc = c->dims.c, .r = c->dims.r};
	struct gpu_buf pre = {0}; /* layer 0's attention: stream 0 */
	char pfx[32];

	mtp_gpu_cfg_init(c, &d.cfg);
	GPU_TRY(scratch(be, &d));
	GPU_TRY(inputs(be, &d));
	for (int64_t l = 0; l < c->params->num_layers; l++) {
		snprintf(pfx, sizeof(pfx), "layer.%lld/", (long long)l);
		GPU_TRY(layer_kv(be, &d, pfx, OUT("main_x"),
				 IN(NULL, "ctx_positions"),
				 mtp_gpu_is64(c, false, NULL, "ctx_positions"),
				 d.nc, d.s.kc, d.s.vc));
		for (int sl = 0; sl < 2; sl++)
			GPU_TRY(sublayer(be, &d, pfx, sl, 2 * l + sl, &pre));
	}
	if (c->params->dspark.collapse_back && c->params->num_layers > 0)
		pre = gpu_at(OUT("pre_mixes"), /* DSPARK_COLLAPSE_*_PRE_MIX */
			     (size_t)(mtp_dspark_collapse_sublayer(
					      &c->params->dspark,
					      c->params->num_layers) *
				      d.cfg.t * d.cfg.m) *
				     sizeof(float));
	return head(be, &d, pre);
}
