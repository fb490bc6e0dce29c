/*
 * The synthetic decoder blocks [SPEC.md §10] on the CPU: the V3-family
 * block (input norm, attention stand-in, fused add+norm, SwiGLU) and the V4
 * block (two mHC-wrapped sublayers) under both call contracts, with or
 * without the optional state of a previous layer. Built from the same
 * whole-tensor kernels as the single ops; intermediates are stored in the
 * activation dtype exactly where the spec rounds. Also the settings and
 * weight lookup that mtp_step and draft_chain share.
 */
#include "cpu_internal.h"

void mtp_cpu_cfg_init(const struct mtp_call *c, struct mtp_cpu_cfg *cfg)
{
	const struct mtp_params *p = c->params;

	memset(cfg, 0, sizeof(*cfg));
	cfg->act = c->act;
	cfg->family = p->family;
	cfg->eps = (float)p->eps;
	cfg->hc_eps = (float)p->hc_eps;
	cfg->rnd = p->rounding;
	cfg->hc.rms_eps = p->eps;
	cfg->hc.pre_eps = p->hc_eps;
	cfg->hc.sinkhorn_eps = p->hc_eps;
	cfg->hc.post_mult = p->hc.post_mult;
	cfg->hc.sinkhorn_iters = p->hc.sinkhorn_iters;
	cfg->hc.norm_eps = p->eps;
	cfg->contract = p->contract;
	cfg->variant = p->variant;
	cfg->t = c->dims.t;
	cfg->h = c->dims.h;
	cfg->m = c->dims.m ? c->dims.m : 1;
	cfg->v = c->dims.v;
	cfg->f = c->dims.f;
	cfg->quant.scheme = p->proj_quant;
	cfg->quant.act_eps = p->act_quant_eps;
	cfg->conv = p->conv;
	cfg->logits_mup = p->logits_mup;
	cfg->max_position = p->v2.captured ? p->v2.max_position : INT64_MAX;
}

void mtp_cpu_layer_get(const struct mtp_call *c, const char *pfx,
		       struct mtp_cpu_layer *w)
{
	w->enorm_w = mtp_cpu_in(c, pfx, "enorm_weight");
	w->hnorm_w = mtp_cpu_in(c, pfx, "hnorm_weight");
	w->eh_proj_w = mtp_cpu_in(c, pfx, "eh_proj_weight");
	w->e_proj_w = mtp_cpu_in(c, pfx, "e_proj_weight");
	w->h_proj_w = mtp_cpu_in(c, pfx, "h_proj_weight");
	w->w_in = mtp_cpu_in(c, pfx, "block.w_in");
	w->w_post = mtp_cpu_in(c, pfx, "block.w_post");
	w->attn_norm_w = mtp_cpu_in(c, pfx, "block.attn_norm_w");
	w->ffn_norm_w = mtp_cpu_in(c, pfx, "block.ffn_norm_w");
	w->W_a = mtp_cpu_in(c, pfx, "block.W_a");
	w->W_gate = mtp_cpu_in(c, pfx, "block.W_gate");
	w->W_up = mtp_cpu_in(c, pfx, "block.W_up");
	w->W_down = mtp_cpu_in(c, pfx, "block.W_down");
	w->hc_attn_fn = mtp_cpu_in(c, pfx, "block.hc_attn_fn");
	w->hc_attn_scale = mtp_cpu_in(c, pfx, "block.hc_attn_scale");
	w->hc_attn_base = mtp_cpu_in(c, pfx, "block.hc_attn_base");
	w->hc_ffn_fn = mtp_cpu_in(c, pfx, "block.hc_ffn_fn");
	w->hc_ffn_scale = mtp_cpu_in(c, pfx, "block.hc_ffn_scale");
	w->hc_ffn_base = mtp_cpu_in(c, pfx, "block.hc_ffn_base");
	w->hc_head_fn = mtp_cpu_in(c, pfx, "hc_head_fn");
	w->hc_head_scale = mtp_cpu_in(c, pfx, "hc_head_scale");
	w->hc_head_base = mtp_cpu_in(c, pfx, "hc_head_base");
	w->shared_head_norm_w = mtp_cpu_in(c, pfx, "shared_head_norm_weight");
	w->head_w = mtp_cpu_in(c, pfx, "head_weight");
	w->embed_pre_norm_w = mtp_cpu_in(c, pfx, "embed_pre_norm_weight");
	mtp_cpu_qw_get(c, pfx, "eh_proj_weight", &w->eh_proj);
	mtp_cpu_qw_get(c, pfx, "e_proj_weight", &w->e_proj);
	mtp_cpu_qw_get(c, pfx, "h_proj_weight", &w->h_proj);
	mtp_cpu_qw_get(c, pfx, "head_weight", &w->head);
}

enum mtp_status mtp_cpu_swiglu(const struct mtp_cpu_cfg *cfg,
			       const struct mtp_cpu_layer *w, const void *x,
			       void *out)
{
	const int64_t t = cfg->t, h = cfg->h, f = cfg->f, n = t * f;
	const size_t nf = (size_t)n * sizeof(float);
	struct mtp_cpu_arena ar;
	enum mtp_status st;

	if (!mtp_cpu_arena_init(&ar, 3 * MTP_CPU_PIECE(nf)))
		return MTP_ERR_NOMEM;
	float *gate = mtp_cpu_arena_take(&ar, nf);
	float *up = mtp_cpu_arena_take(&ar, nf);
	void *g = mtp_cpu_arena_take(&ar, nf);

	st = mtp_cpu_gemm(cfg->act, x, w->W_gate, t, h, f, gate);
	if (!st)
		st = mtp_cpu_gemm(cfg->act, x, w->W_up, t, h, f, up);
	if (!st) {
		mtp_cpu_round_row(cfg->act, gate, n);
		mtp_cpu_round_row(cfg->act, up, n);
		for (int64_t i = 0; i < n; i++)
			gate[i] = gate[i] * mtp_cpu_sigmoid(gate[i]) * up[i];
		mtp_cpu_store(cfg->act, g, 0, n, gate);
		st = mtp_cpu_linear(cfg->act, g, w->W_down, t, f, h, out);
	}
	mtp_cpu_arena_fini(&ar);
	return st;
}

enum mtp_status mtp_cpu_block_v3(const struct mtp_cpu_cfg *cfg,
				 const struct mtp_cpu_layer *w, const void *x,
				 const void *residual, void *h_out, void *r_out)
{
	const enum mtp_dtype act = cfg->act;
	const int64_t t = cfg->t, h = cfg->h;
	const size_t nb = (size_t)(t * h) * mtp_dtype_size(act);
	struct mtp_cpu_arena ar;
	enum mtp_status st;

	if (!mtp_cpu_arena_init(&ar, 4 * MTP_CPU_PIECE(nb)))
		return MTP_ERR_NOMEM;
	void *xn = mtp_cpu_arena_take(&ar, nb),
	     *r0 = mtp_cpu_arena_take(&ar, nb);
	void *a = mtp_cpu_arena_take(&ar, nb),
	     *x1 = mtp_cpu_arena_take(&ar, nb);

	if (residual) {
		st = mtp_cpu_add_rmsnorm_rows(act, x, residual, w->w_in, t, h,
					      cfg->eps, cfg->rnd, xn, r0);
	} else {
		memcpy(r0, x, nb);
		st = mtp_cpu_rmsnorm_rows(act, x, w->w_in, t, h, cfg->eps,
					  cfg->rnd, xn);
	}
	if (!st)
		st = mtp_cpu_linear(act, xn, w->W_a, t, h, h, a);
	if (!st)
		st = mtp_cpu_add_rmsnorm_rows(act, a, r0, w->w_post, t, h,
					      cfg->eps, cfg->rnd, x1, r_out);
	if (!st)
		st = mtp_cpu_swiglu(cfg, w, x1, h_out);
	mtp_cpu_arena_fini(&ar);
	return st;
}

/* One mHC sublayer's input: (post, comb) and v = RMSNorm(u; norm_w) of the
 * hc_pre layer input u (no fused norm in the synthetic block). */
static enum mtp_status sublayer_input(const struct mtp_cpu_cfg *cfg,
				      const void *streams, const float *fn,
				      const float *scale, const float *base,
				      const void *norm_w, float *post,
				      float *comb, void *u, void *v)
{
	struct mtp_cpu_hc_pre k;
	enum mtp_status st;

	mtp_cpu_hc_pre_init(&k, fn, scale, base, &cfg->hc, cfg->m, cfg->h,
			    cfg->act);
	st = mtp_cpu_hc_pre_rows(&k, NULL, streams, cfg->t, post, comb, u);
	if (!st)
		st = mtp_cpu_rmsnorm_rows(cfg->act, u, norm_w, cfg->t, cfg->h,
					  cfg->eps, cfg->rnd, v);
	return st;
}

/* Scratch of the V4 block: R0 when state is given, the attention mixes,
 * u, v and the attention output a. */
struct v4_scratch {
	struct mtp_cpu_arena ar;
	void *r0, *u, *v, *a;
	float *post_a, *comb_a;
};

static bool v4_scratch_init(const struct mtp_cpu_cfg *cfg, struct v4_scratch *s)
{
	const size_t es = mtp_dtype_size(cfg->act);
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	const size_t ns = (size_t)(t * m * h) * es, nth = (size_t)(t * h) * es;
	const size_t np = (size_t)(t * m) * 4, nc = (size_t)(t * m * m) * 4;

	if (!mtp_cpu_arena_init(&s->ar, MTP_CPU_PIECE(ns) + MTP_CPU_PIECE(np) +
						MTP_CPU_PIECE(nc) +
						3 * MTP_CPU_PIECE(nth)))
		return false;
	s->r0 = mtp_cpu_arena_take(&s->ar, ns);
	s->post_a = mtp_cpu_arena_take(&s->ar, np);
	s->comb_a = mtp_cpu_arena_take(&s->ar, nc);
	s->u = mtp_cpu_arena_take(&s->ar, nth);
	s->v = mtp_cpu_arena_take(&s->ar, nth);
	s->a = mtp_cpu_arena_take(&s->ar, nth);
	return true;
}

enum mtp_status mtp_cpu_block_v4(const struct mtp_cpu_cfg *cfg,
				 const struct mtp_cpu_layer *w, const void *x,
				 const struct mtp_cpu_v4_state *state,
				 const struct mtp_cpu_v4_out *out)
{
	const enum mtp_dtype act = cfg->act;
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	struct v4_scratch s;
	enum mtp_status st = MTP_OK;
	const void *r0 = x;

	if (!v4_scratch_init(cfg, &s))
		return MTP_ERR_NOMEM;
	if (state) { /* the streams a previous layer left un-posted */
		st = mtp_cpu_hc_post_rows(act, x, state->residual,
					  state->post_mix, state->res_mix, t, m,
					  h, s.r0);
		r0 = s.r0;
	}
	if (!st)
		st = sublayer_input(cfg, r0, w->hc_attn_fn, w->hc_attn_scale,
				    w->hc_attn_base, w->attn_norm_w, s.post_a,
				    s.comb_a, s.u, s.v);
	if (!st)
		st = mtp_cpu_linear(act, s.v, w->W_a, t, h, h, s.a);
	if (!st)
		st = mtp_cpu_hc_post_rows(act, s.a, r0, s.post_a, s.comb_a, t,
					  m, h, out->r1);
	if (!st)
		st = sublayer_input(cfg, out->r1, w->hc_ffn_fn, w->hc_ffn_scale,
				    w->hc_ffn_base, w->ffn_norm_w, out->post,
				    out->comb, s.u, s.v);
	if (!st)
		st = mtp_cpu_swiglu(cfg, w, s.v, out->f);
	if (!st && out->streams) /* internal contract: the final post here */
		st = mtp_cpu_hc_post_rows(act, out->f, out->r1, out->post,
					  out->comb, t, m, h, out->streams);
	mtp_cpu_arena_fini(&s.ar);
	return st;
}

/* The internal contract returns only the streams: f, R1 and the FFN mixes
 * live in scratch. */
static enum mtp_status block_v4_internal(const struct mtp_cpu_cfg *cfg,
					 const struct mtp_cpu_layer *w,
					 const void *x,
					 const struct mtp_cpu_v4_state *state,
					 void *streams)
{
	const size_t es = mtp_dtype_size(cfg->act);
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	const size_t nf = (size_t)(t * h) * es, nr = (size_t)(t * m * h) * es;
	const size_t np = (size_t)(t * m) * 4, nc = (size_t)(t * m * m) * 4;
	struct mtp_cpu_arena ar;
	struct mtp_cpu_v4_out o;
	enum mtp_status st;

	if (!mtp_cpu_arena_init(&ar, MTP_CPU_PIECE(nf) + MTP_CPU_PIECE(nr) +
					     MTP_CPU_PIECE(np) +
					     MTP_CPU_PIECE(nc)))
		return MTP_ERR_NOMEM;
	o.f = mtp_cpu_arena_take(&ar, nf);
	o.r1 = mtp_cpu_arena_take(&ar, nr);
	o.post = mtp_cpu_arena_take(&ar, np);
	o.comb = mtp_cpu_arena_take(&ar, nc);
	o.streams = streams;
	st = mtp_cpu_block_v4(cfg, w, x, state, &o);
	mtp_cpu_arena_fini(&ar);
	return st;
}

enum mtp_status mtp_cpu_op_mtp_block(const struct mtp_call *c)
{
	struct mtp_cpu_cfg cfg;
	struct mtp_cpu_layer w;
	const void *x = mtp_cpu_in(c, "", "x");
	const void *residual = mtp_cpu_in(c, "", "residual");
	const struct mtp_cpu_v4_state state = {mtp_cpu_in(c, "", "post_mix"),
					       mtp_cpu_in(c, "", "res_mix"),
					       residual};

	mtp_cpu_cfg_init(c, &cfg);
	mtp_cpu_layer_get(c, "", &w);
	if (!mtp_family_mhc(cfg.family))
		return mtp_cpu_block_v3(&cfg, &w, x, residual,
					mtp_cpu_out(c, "", "h"),
					mtp_cpu_out(c, "", "residual_out"));
	if (residual && (!state.post_mix || !state.res_mix))
		return MTP_ERR_INVALID;
	if (cfg.contract == MTP_CONTRACT_INTERNAL)
		return block_v4_internal(&cfg, &w, x, residual ? &state : NULL,
					 mtp_cpu_out(c, "", "x_out"));

	const struct mtp_cpu_v4_out o = {
		mtp_cpu_out(c, "", "x_out"), mtp_cpu_out(c, "", "residual_out"),
		mtp_cpu_out(c, "", "post_mix_out"),
		mtp_cpu_out(c, "", "res_mix_out"), NULL};

	return mtp_cpu_block_v4(&cfg, &w, x, residual ? &state : NULL, &o);
}
