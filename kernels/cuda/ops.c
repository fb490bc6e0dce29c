/*
 * The single ops of the op table on the CUDA backend (SPEC.md §11), what
 * supports() accepts, and the building blocks the composite ops share. Each
 * op finds its tensors by name in the call (harness/src/ops.c gives the
 * names and order) and enqueues kernels on the backend's stream.
 */
#include <stdio.h>
#include <string.h>

#include "nv_internal.h"
#include "mtp/quant.h"

const struct mtp_tensor *mtp_nv_in(const struct mtp_call *c, const char *name)
{
	return mtp_call_tensor(c, false, NULL, name);
}

const struct mtp_tensor *mtp_nv_out(const struct mtp_call *c, const char *name)
{
	return mtp_call_tensor(c, true, NULL, name);
}

void *mtp_nv_in_ptr(const struct mtp_call *c, const char *pfx, const char *name)
{
	const struct mtp_tensor *t = mtp_call_tensor(c, false, pfx, name);

	return t ? t->data : NULL;
}

void *mtp_nv_out_ptr(const struct mtp_call *c, const char *pfx,
		     const char *name)
{
	const struct mtp_tensor *t = mtp_call_tensor(c, true, pfx, name);

	return t ? t->data : NULL;
}

void mtp_nv_cfg_init(const struct mtp_call *c, struct nv_cfg *cfg)
{
	const struct mtp_params *p = c->params;

	memset(cfg, 0, sizeof(*cfg));
	cfg->act = mtp_nv_act_of(c->act);
	cfg->es = mtp_dtype_size(c->act);
	cfg->t = c->dims.t;
	cfg->h = c->dims.h;
	cfg->m = c->dims.m ? c->dims.m : 1;
	cfg->v = c->dims.v;
	cfg->f = c->dims.f;
	cfg->eps = (float)p->eps;
	cfg->rounding =
		p->rounding == MTP_ROUNDING_EAGER ? MTP_NV_EAGER : MTP_NV_FUSED;
	cfg->hc_eps = (float)p->hc_eps;
	cfg->post_mult = (float)p->hc.post_mult;
	cfg->sinkhorn_iters = p->hc.sinkhorn_iters;
	cfg->contract = p->contract;
	cfg->variant = p->variant;
}

/* ---- supports() ----------------------------------------------------------- */

static bool tensors_ok(const struct mtp_tspec *s, const struct mtp_tensor *t,
		       int n)
{
	for (int i = 0; i < n; i++) {
		enum mtp_dtype dt = t[i].dtype;

		if (!t[i].data)
			continue; /* absent optional input, or empty */
		switch (s[i].cls) {
		case MTP_TC_PARAM:
		case MTP_TC_LOGITS:
			if (dt != MTP_F32)
				return false;
			break;
		case MTP_TC_INDEX:
		case MTP_TC_TOKEN:
			if (dt != MTP_I64 && dt != MTP_I32)
				return false;
			break;
		default: break;
		}
	}
	return true;
}

bool mtp_nv_op_supported(const struct mtp_call *c)
{
	if (c->act != MTP_BF16 && c->act != MTP_F16 && c->act != MTP_F32)
		return false;
	if (mtp_call_has_fp8(c)) /* no FP8 kernels here (SPEC.md §12.2) */
		return false;
	if (!tensors_ok(c->sig->in, c->in, c->n_in) ||
	    !tensors_ok(c->sig->out, c->out, c->n_out))
		return false;
	if (c->dims.m > MTP_NV_HC_MAX_M)
		return false;
	/* every kernel indexes rows with a 32-bit grid */
	return c->dims.t < (1LL << 31) && c->dims.r < (1LL << 31);
}

/* ---- building blocks ------------------------------------------------------ */

enum mtp_status mtp_nv_rmsnorm_rows(struct mtp_backend *be,
				    const struct nv_cfg *cfg, const void *x,
				    const void *pos, int pos64, const void *w,
				    void *y, int64_t rows)
{
	struct mtp_nv_norm_job j = {
		.x = x,
		.x_stride = cfg->h,
		.pos = pos,
		.pos64 = pos64,
		.w = w,
		.y = y,
		.y_stride = cfg->h,
		.rows = rows,
	};

	NV_CUDA(be, mtp_nv_rmsnorm(cfg->act, &j, 1, cfg->h, cfg->eps,
				   cfg->rounding, nv_ctx(be)->stream));
	return MTP_OK;
}

enum mtp_status mtp_nv_swiglu_ffn(struct mtp_backend *be,
				  const struct nv_cfg *cfg, const void *x,
				  const void *w_gate, const void *w_up,
				  const void *w_down, void *out)
{
	const size_t n = (size_t)(cfg->t * cfg->f);
	void *gate, *up, *g;

	NV_TRY(mtp_nv_scratch(be, 3 * n * cfg->es, &gate));
	up = (char *)gate + n * cfg->es;
	g = (char *)up + n * cfg->es;
	NV_TRY(mtp_nv_linear(be, cfg->act, false, x, w_gate, gate, cfg->t,
			     cfg->h, cfg->f));
	NV_TRY(mtp_nv_linear(be, cfg->act, false, x, w_up, up, cfg->t, cfg->h,
			     cfg->f));
	NV_CUDA(be, mtp_nv_swiglu(cfg->act, gate, up, g, (int64_t)n,
				  nv_ctx(be)->stream));
	return mtp_nv_linear(be, cfg->act, false, g, w_down, out, cfg->t,
			     cfg->f, cfg->h);
}

enum mtp_status mtp_nv_lm_head(struct mtp_backend *be, enum mtp_nv_act act,
			       const void *x, const void *w, float *logits,
			       void *token, int tok64, int64_t t, int64_t v,
			       int64_t h)
{
	NV_TRY(mtp_nv_linear(be, act, true, x, w, logits, t, h, v));
	NV_CUDA(be,
		mtp_nv_argmax(logits, token, tok64, t, v, nv_ctx(be)->stream));
	return MTP_OK;
}

/* ---- single ops ----------------------------------------------------------- */

#define IN(name) mtp_nv_in_ptr(c, NULL, name)
#define OUT(name) mtp_nv_out_ptr(c, NULL, name)

static int is64(const struct mtp_call *c, const char *name)
{
	const struct mtp_tensor *t = mtp_nv_in(c, name);

	if (!t)
		t = mtp_nv_out(c, name);
	return t && t->dtype == MTP_I64;
}

/* fused_eh_norm and fused_embed_eh_norm [§7.1, §7.2]: two jobs, one launch. */
static enum mtp_status op_eh_norm(struct mtp_backend *be,
				  const struct mtp_call *c, bool gather)
{
	const int64_t t = c->dims.t, h = c->dims.h;
	char *out = OUT("out");
	const size_t es = mtp_dtype_size(c->act);
	struct mtp_nv_norm_job j[2] = {
		{.x = gather ? IN("embed_table") : IN("embeds"),
		 .x_stride = h,
		 .ids = gather ? IN("input_ids") : NULL,
		 .ids64 = gather && is64(c, "input_ids"),
		 .pos = IN("positions"),
		 .pos64 = is64(c, "positions"),
		 .w = IN("enorm_weight"),
		 .y = out,
		 .y_stride = 2 * h,
		 .rows = t},
		{.x = IN("prev_hidden"),
		 .x_stride = h,
		 .w = IN("hnorm_weight"),
		 .y = out + h * es,
		 .y_stride = 2 * h,
		 .rows = t},
	};

	NV_CUDA(be, mtp_nv_rmsnorm(mtp_nv_act_of(c->act), j, 2, h,
				   (float)c->params->eps, MTP_NV_FUSED,
				   nv_ctx(be)->stream));
	return MTP_OK;
}

/* fused_mtp_input_rmsnorm [§7.3]: enorm of T rows, hnorm of T*M rows. */
static enum mtp_status op_mtp_input_norm(struct mtp_backend *be,
					 const struct mtp_call *c)
{
	const int64_t t = c->dims.t, h = c->dims.h, m = c->dims.m;
	struct mtp_nv_norm_job j[2] = {
		{.x = IN("embeds"),
		 .x_stride = h,
		 .pos = IN("positions"),
		 .pos64 = is64(c, "positions"),
		 .w = IN("enorm_weight"),
		 .y = OUT("enorm_out"),
		 .y_stride = h,
		 .rows = t},
		{.x = IN("prev_hidden"),
		 .x_stride = h,
		 .w = IN("hnorm_weight"),
		 .y = OUT("hnorm_out"),
		 .y_stride = h,
		 .rows = t * m},
	};

	NV_CUDA(be, mtp_nv_rmsnorm(mtp_nv_act_of(c->act), j, 2, h,
				   (float)c->params->eps, MTP_NV_FUSED,
				   nv_ctx(be)->stream));
	return MTP_OK;
}

/* eh_proj_hc [Step V4-3]: two GEMMs rounded to act, then a rounded add. */
enum mtp_status mtp_nv_eh_proj_hc(struct mtp_backend *be,
				  const struct nv_cfg *cfg, const void *e,
				  const void *p, const void *we, const void *wh,
				  void *x)
{
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	void *ep, *hp;

	NV_TRY(mtp_nv_scratch(be, (size_t)(t * h) * cfg->es, &ep));
	NV_TRY(mtp_nv_scratch(be, (size_t)(t * m * h) * cfg->es, &hp));
	NV_TRY(mtp_nv_linear(be, cfg->act, false, e, we, ep, t, h, h));
	NV_TRY(mtp_nv_linear(be, cfg->act, false, p, wh, hp, t * m, h, h));
	NV_CUDA(be, mtp_nv_add_bcast(cfg->act, hp, ep, x, t, m, h,
				     nv_ctx(be)->stream));
	return MTP_OK;
}

static void hc_args(const struct mtp_call *c, const char *residual,
		    const char *post, const char *comb,
		    struct mtp_nv_hc_pre_args *a)
{
	const struct mtp_hc_params *p = &c->params->hc;

	memset(a, 0, sizeof(*a));
	a->residual = residual[0] == '@' ? OUT(residual + 1) : IN(residual);
	a->fn = IN("fn");
	a->scale = IN("scale");
	a->base = IN("base");
	a->norm_w = IN("norm_weight");
	a->post_mix = OUT(post);
	a->comb_mix = OUT(comb);
	a->layer_input = OUT("layer_input");
	a->t = c->dims.t;
	a->m = c->dims.m;
	a->h = c->dims.h;
	a->rms_eps = (float)p->rms_eps;
	a->pre_eps = (float)p->pre_eps;
	a->sinkhorn_eps = (float)p->sinkhorn_eps;
	a->post_mult = (float)p->post_mult;
	a->norm_eps = (float)p->norm_eps;
	a->sinkhorn_iters = p->sinkhorn_iters;
}

static enum mtp_status op_hc(struct mtp_backend *be, const struct mtp_call *c,
			     const struct nv_cfg *cfg)
{
	cudaStream_t s = nv_ctx(be)->stream;
	struct mtp_nv_hc_pre_args a;

	if (c->op->id == MTP_OP_HC_PRE) {
		hc_args(c, "residual", "post_mix", "comb_mix", &a);
		NV_CUDA(be, mtp_nv_hc_pre(cfg->act, &a, s));
		return MTP_OK;
	}
	NV_CUDA(be, mtp_nv_hc_post(cfg->act, IN("x"), IN("residual"),
				   IN("post_mix"), IN("comb_mix"),
				   OUT(c->op->id == MTP_OP_HC_POST
					       ? "out"
					       : "residual_out"),
				   cfg->t, cfg->m, cfg->h, s));
	if (c->op->id == MTP_OP_HC_POST)
		return MTP_OK;
	/* hc_fused_post_pre [§4.4.3]: pre reads the rounded new streams */
	hc_args(c, "@residual_out", "post_mix_out", "comb_mix_out", &a);
	NV_CUDA(be, mtp_nv_hc_pre(cfg->act, &a, s));
	return MTP_OK;
}

enum mtp_status mtp_nv_op_simple(struct mtp_backend *be,
				 const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;
	const struct mtp_dims *d = &c->dims;
	cudaStream_t s = nv_ctx(be)->stream;
	struct nv_cfg cfg;

	mtp_nv_cfg_init(c, &cfg);
	switch (c->op->id) {
	case MTP_OP_RMSNORM:
		return mtp_nv_rmsnorm_rows(be, &cfg, IN("x"), NULL, 0,
					   IN("weight"), OUT("y"), d->r);
	case MTP_OP_MTP_SHARED_HEAD_RMSNORM:
		cfg.rounding = MTP_NV_FUSED;
		return mtp_nv_rmsnorm_rows(be, &cfg, IN("x"), NULL, 0,
					   IN("weight"), OUT("y"), d->t);
	case MTP_OP_ADD_RMSNORM:
		NV_CUDA(be, mtp_nv_add_rmsnorm(cfg.act, IN("x"), IN("residual"),
					       IN("weight"), OUT("y"),
					       OUT("residual_out"), d->r, d->h,
					       cfg.eps, cfg.rounding, s));
		return MTP_OK;
	case MTP_OP_EMBED:
		NV_CUDA(be, mtp_nv_embed(cfg.act, IN("embed_table"),
					 IN("input_ids"), is64(c, "input_ids"),
					 OUT("out"), d->t, d->h, s));
		return MTP_OK;
	case MTP_OP_FUSED_EH_NORM: return op_eh_norm(be, c, false);
	case MTP_OP_FUSED_EMBED_EH_NORM: return op_eh_norm(be, c, true);
	case MTP_OP_FUSED_MTP_INPUT_RMSNORM: return op_mtp_input_norm(be, c);
	case MTP_OP_EH_PROJ:
		return mtp_nv_linear(be, cfg.act, false, IN("x"), IN("weight"),
				     OUT("y"), d->t, 2 * d->h, d->h);
	case MTP_OP_EH_PROJ_HC:
		return mtp_nv_eh_proj_hc(be, &cfg, IN("e"), IN("p"),
					 IN("e_proj_weight"),
					 IN("h_proj_weight"), OUT("x"));
	case MTP_OP_HC_PRE:
	case MTP_OP_HC_POST:
	case MTP_OP_HC_FUSED_POST_PRE: return op_hc(be, c, &cfg);
	case MTP_OP_HC_HEAD:
		NV_CUDA(be,
			mtp_nv_hc_head(cfg.act, IN("x"), IN("fn"), IN("scale"),
				       IN("base"), OUT("y"), d->t, d->m, d->h,
				       (float)p->hc.rms_eps, (float)p->hc_eps,
				       p->variant == MTP_HC_HEAD_ROCM
					       ? MTP_NV_HEAD_ROCM
					       : MTP_NV_HEAD_CUDA,
				       s));
		return MTP_OK;
	case MTP_OP_LM_HEAD:
		return mtp_nv_lm_head(be, cfg.act, IN("x"), IN("weight"),
				      OUT("logits"), OUT("token"),
				      is64(c, "token"), d->t, d->v, d->h);
	case MTP_OP_ALL_REDUCE:
		NV_CUDA(be, mtp_nv_all_reduce(cfg.act, IN("parts"), d->p,
					      d->r * d->h, OUT("out"), s));
		return MTP_OK;
	default:
		return mtp_backend_fail(be, MTP_ERR_UNSUPPORTED,
					"op %s is not implemented",
					c->op->name);
	}
}
