/*
 * The synthetic DSpark step [SPEC.md §13.9] on the cpu backend, composed
 * from the cpu primitives: the combiner (linear, rmsnorm), per layer the
 * context K/V, hc_pre_delayed, the attention (here: RoPE and the masked
 * single-head softmax, fp32 with the angles in double), swiglu, hc_post;
 * then hc_collapse, the head, markov_bias one block position at a time (each
 * keyed on the token drawn before) and the confidence. The three internal
 * attributes of mtp_params.dspark (bug rows' changes, bugs/dspark.c) are
 * honoured where the reference honours them, for the mutants over cpu.
 */
#include "cpu_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

struct ds {
	const struct mtp_call *c;
	struct mtp_cpu_cfg cfg;
	int64_t nc; /* context rows */
	size_t es;  /* bytes of one activation element */
};

/* x [rows,H] (act) rotated in place by pos, rounded once per element. */
static void rope_rows(const struct ds *s, void *x, const int64_t *pos,
		      int64_t rows, float *buf)
{
	const int64_t h = s->cfg.h, half = h / 2;

	for (int64_t r = 0; r < rows; r++) {
		mtp_cpu_load(s->cfg.act, x, r * h, h, buf);
		for (int64_t i = 0; i < half; i++) {
			double a = (double)pos[r] *
				   pow(10000.0, -2.0 * (double)i / (double)h);
			double cs = cos(a), sn = sin(a);
			double x1 = buf[i], x2 = buf[i + half];

			buf[i] = (float)(x1 * cs - x2 * sn);
			buf[i + half] = (float)(x2 * cs + x1 * sn);
		}
		mtp_cpu_store(s->cfg.act, x, r * h, h, buf);
	}
}

/* v = RMSNorm(act(W_kv x); kv_norm_w), k = rope(v): rows n. */
static enum mtp_status layer_kv(const struct ds *s, const char *pfx,
				const void *x, const int64_t *pos, int64_t n,
				void *k, void *v, float *buf)
{
	const int64_t h = s->cfg.h;
	enum mtp_status st;

	st = mtp_cpu_linear(s->cfg.act, x, mtp_cpu_in(s->c, pfx, "W_kv"), n, h,
			    h, k);
	if (!st)
		st = mtp_cpu_rmsnorm_rows(s->cfg.act, k,
					  mtp_cpu_in(s->c, pfx, "kv_norm_w"), n,
					  h, s->cfg.eps, s->cfg.rnd, v);
	if (!st) {
		memcpy(k, v, (size_t)(n * h) * s->es);
		rope_rows(s, k, pos, n, buf);
	}
	return st;
}

/* o[i] = act(softmax(q_i . K^T / sqrt(H)) V) over keys [C + T] whose block
 * part is cut at i under the causal mask; q, keys, vals fp32. */
static void attend(const struct ds *s, const float *q, const float *keys,
		   const float *vals, float *sc, float *o)
{
	const int64_t h = s->cfg.h, t = s->cfg.t, nc = s->nc;
	const bool causal = s->c->params->block_mask == MTP_BLOCK_MASK_CAUSAL;
	const float scale = 1.0f / sqrtf((float)h);

	for (int64_t i = 0; i < t; i++) {
		int64_t n = nc + (causal ? i + 1 : t);
		float mx = -INFINITY, sum = 0.0f;

		for (int64_t j = 0; j < n; j++) {
			sc[j] = mtp_cpu_scaled_dot(scale, q + i * h,
						   keys + j * h, h);
			mx = sc[j] > mx ? sc[j] : mx;
		}
		for (int64_t j = 0; j < n; j++) {
			sc[j] = expf(sc[j] - mx);
			sum += sc[j];
		}
		memset(o + i * h, 0, (size_t)h * sizeof(*o));
		for (int64_t j = 0; j < n; j++)
			for (int64_t k = 0; k < h; k++)
				o[i * h + k] += sc[j] / sum * vals[j * h + k];
	}
}

struct ds_buf {
	void *kc, *vc, *q, *kb, *vb, *o, *a, *r2;
	float *keys, *vals, *qf, *of, *sc, *row, *post, *comb;
	int64_t *ctx_pos, *pos, *ids;
};

/* The attention sublayer's output b->a = act(W_a o) from its input u. */
static enum mtp_status attention(const struct ds *s, const char *pfx,
				 const void *u, const struct ds_buf *b)
{
	const enum mtp_dtype act = s->cfg.act;
	const int64_t t = s->cfg.t, h = s->cfg.h, nc = s->nc;
	enum mtp_status st;

	st = mtp_cpu_linear(act, u, mtp_cpu_in(s->c, pfx, "W_q"), t, h, h,
			    b->q);
	if (!st) {
		rope_rows(s, b->q, b->pos, t, b->row);
		st = layer_kv(s, pfx, u, b->pos, t, b->kb, b->vb, b->row);
	}
	if (st)
		return st;
	mtp_cpu_load(act, b->kc, 0, nc * h, b->keys);
	mtp_cpu_load(act, b->kb, 0, t * h, b->keys + nc * h);
	mtp_cpu_load(act, b->vc, 0, nc * h, b->vals);
	mtp_cpu_load(act, b->vb, 0, t * h, b->vals + nc * h);
	mtp_cpu_load(act, b->q, 0, t * h, b->qf);
	attend(s, b->qf, b->keys, b->vals, b->sc, b->of);
	mtp_cpu_store(act, b->o, 0, t * h, b->of);
	return mtp_cpu_linear(act, b->o, mtp_cpu_in(s->c, pfx, "block.W_a"), t,
			      h, h, b->a);
}

/* One mHC-wrapped sublayer (s = 0 attention, 1 FFN) of the layer under
 * pfx on the streams R (replaced); pre carries the pre-mix. */
static enum mtp_status sublayer(const struct ds *s, const char *pfx, int sl,
				int64_t idx, void *r, const float **pre,
				const struct ds_buf *b)
{
	const struct mtp_cpu_cfg *g = &s->cfg;
	const int64_t t = g->t, m = g->m, h = g->h;
	char name[32];
	struct mtp_cpu_hc_pre k;
	struct mtp_cpu_layer w;
	void *u = (char *)mtp_cpu_out(s->c, "", "sublayer_inputs") +
		  (size_t)(idx * t * h) * s->es;
	float *pre_out =
		(float *)mtp_cpu_out(s->c, "", "pre_mixes") + idx * t * m;
	const char *which = sl ? "ffn" : "attn";
	float *nw;
	enum mtp_status st;

	const float *hc[3];
	static const char *const part[3] = {"fn", "scale", "base"};

	for (int i = 0; i < 3; i++) {
		snprintf(name, sizeof(name), "block.hc_%s_%s", which, part[i]);
		hc[i] = mtp_cpu_in(s->c, pfx, name);
	}
	mtp_cpu_hc_pre_init(&k, hc[0], hc[1], hc[2], &g->hc, m, h, g->act);
	snprintf(name, sizeof(name), "block.%s_norm_w", which);
	nw = mtp_cpu_widen(g->act, mtp_cpu_in(s->c, pfx, name), h);
	if (!nw)
		return MTP_ERR_NOMEM;
	k.norm_w = nw;
	st = mtp_cpu_hc_pre_delayed_rows(&k, r, *pre, t, b->post, b->comb,
					 pre_out, u);
	if (!st && s->c->params->dspark.pre_mix_undelayed) /* plain hc_pre */
		st = mtp_cpu_hc_pre_rows(&k, NULL, r, t, b->post, b->comb, u);
	mtp_cpu_free(nw);
	mtp_cpu_layer_get(s->c, pfx, &w);
	if (!st)
		st = sl ? mtp_cpu_swiglu(g, &w, u, b->a)
			: attention(s, pfx, u, b);
	if (!st)
		st = mtp_cpu_hc_post_rows(g->act, b->a, r, b->post, b->comb, t,
					  m, h, b->r2);
	if (!st)
		memcpy(r, b->r2, (size_t)(t * m * h) * s->es);
	*pre = pre_out;
	return st;
}

/* [DS-5] h = hc_collapse(streams, pre), its norm, then the head of both
 * forms (dspark_head.c). */
static enum mtp_status head(const struct ds *s, const void *r, const float *pre,
			    const struct ds_buf *b)
{
	const struct mtp_call *c = s->c;
	const enum mtp_dtype act = s->cfg.act;
	const int64_t t = s->cfg.t, m = s->cfg.m, h = s->cfg.h;
	void *hid = mtp_cpu_out(c, "", "h");
	enum mtp_status st;

	for (int64_t i = 0; i < t; i++) {
		mtp_cpu_load(act, r, i * m * h, m * h, b->row);
		mtp_cpu_collapse_row(b->row, pre + i * m, m, h, b->of);
		mtp_cpu_store(act, hid, i * h, h, b->of);
	}
	st = mtp_cpu_rmsnorm_rows(act, hid, mtp_cpu_in(c, "", "norm_weight"), t,
				  h, s->cfg.eps, s->cfg.rnd, b->o);
	return st ? st : mtp_cpu_dspark_head(c, act, b->o, b->ids);
}

/* main_x, the streams of the embedded block, the layers, the head. */
static enum mtp_status run(const struct ds *s, const struct ds_buf *b)
{
	const struct mtp_call *c = s->c;
	const enum mtp_dtype act = s->cfg.act;
	const int64_t t = s->cfg.t, m = s->cfg.m, h = s->cfg.h, nc = s->nc;
	void *main_x = mtp_cpu_out(c, "", "main_x");
	char *r = mtp_cpu_out(c, "", "streams");
	const float *pre = NULL; /* layer 0's attention: stream 0 */
	char pfx[32];
	enum mtp_status st;

	st = mtp_cpu_linear(act, mtp_cpu_in(c, "", "aux"),
			    mtp_cpu_in(c, "", "main_proj_weight"), nc,
			    c->dims.p * h, h, b->kc);
	if (!st)
		st = mtp_cpu_rmsnorm_rows(
			act, b->kc, mtp_cpu_in(c, "", "main_norm_weight"), nc,
			h, s->cfg.eps, s->cfg.rnd, main_x);
	if (!st)
		st = mtp_cpu_embed_rows(act, mtp_cpu_in(c, "", "embed_table"),
					s->cfg.v, b->ids, t, h, b->a);
	for (int64_t i = 0; !st && i < t * m; i++)
		memcpy(r + (size_t)(i * h) * s->es,
		       (char *)b->a + (size_t)(i / m * h) * s->es,
		       (size_t)h * s->es);
	for (int64_t l = 0; !st && l < c->params->num_layers; l++) {
		snprintf(pfx, sizeof(pfx), "layer.%lld/", (long long)l);
		st = layer_kv(s, pfx, main_x, b->ctx_pos, nc, b->kc, b->vc,
			      b->row);
		for (int sl = 0; !st && sl < 2; sl++)
			st = sublayer(s, pfx, sl, 2 * l + sl, r, &pre, b);
	}
	if (c->params->dspark.collapse_back && c->params->num_layers > 0)
		pre = (const float *)mtp_cpu_out(c, "", "pre_mixes") +
		      mtp_dspark_collapse_sublayer(&c->params->dspark,
						   c->params->num_layers) *
			      t * m;
	return st ? st : head(s, r, pre, b);
}

enum mtp_status mtp_cpu_op_dspark_step(const struct mtp_call *c)
{
	struct ds s = {.c = c, .nc = c->dims.c, .es = mtp_dtype_size(c->act)};
	const int64_t t = c->dims.t, h = c->dims.h,
		      m = c->dims.m ? c->dims.m : 1;
	const size_t ah = (size_t)(t * h) * s.es,
		     ac = (size_t)(s.nc * h) * s.es;
	const size_t fk = (size_t)((s.nc + t) * h) * sizeof(float);
	const size_t ft = (size_t)(t * h) * sizeof(float);
	struct mtp_cpu_arena ar;
	struct ds_buf b;
	enum mtp_status st = MTP_ERR_NOMEM;

	if (c->params->v2.captured) /* §13.9.1: the layers are the engine's */
		return mtp_cpu_op_dspark_captured(c);
	mtp_cpu_cfg_init(c, &s.cfg);
	if (!mtp_cpu_arena_init(
		    &ar,
		    2 * MTP_CPU_PIECE(ac) + 5 * MTP_CPU_PIECE(ah) +
			    MTP_CPU_PIECE(ah * (size_t)m) +
			    2 * MTP_CPU_PIECE(fk) + 2 * MTP_CPU_PIECE(ft) +
			    MTP_CPU_PIECE((s.nc + t) * sizeof(float)) +
			    MTP_CPU_PIECE((m + 1) * h * sizeof(float)) +
			    MTP_CPU_PIECE((t * m + t * m * m) * sizeof(float))))
		return MTP_ERR_NOMEM;
	b = (struct ds_buf){
		mtp_cpu_arena_take(&ar, ac),
		mtp_cpu_arena_take(&ar, ac),
		mtp_cpu_arena_take(&ar, ah),
		mtp_cpu_arena_take(&ar, ah),
		mtp_cpu_arena_take(&ar, ah),
		mtp_cpu_arena_take(&ar, ah),
		mtp_cpu_arena_take(&ar, ah),
		mtp_cpu_arena_take(&ar, ah * m),
		mtp_cpu_arena_take(&ar, fk),
		mtp_cpu_arena_take(&ar, fk),
		mtp_cpu_arena_take(&ar, ft),
		mtp_cpu_arena_take(&ar, ft),
		mtp_cpu_arena_take(&ar, (s.nc + t) * sizeof(float)),
		mtp_cpu_arena_take(&ar, (m + 1) * h * sizeof(float)),
		mtp_cpu_arena_take(&ar, (t * m + t * m * m) * sizeof(float)),
		NULL,
		mtp_cpu_indices(mtp_cpu_in_tensor(c, "ctx_positions")),
		mtp_cpu_indices(mtp_cpu_in_tensor(c, "positions")),
		mtp_cpu_indices(mtp_cpu_in_tensor(c, "ids"))};
	b.comb = b.post + t * m;
	if (b.ctx_pos && b.pos && b.ids)
		st = run(&s, &b);
	mtp_cpu_free(b.ids);
	mtp_cpu_free(b.pos);
	mtp_cpu_free(b.ctx_pos);
	mtp_cpu_arena_fini(&ar);
	return st;
}
