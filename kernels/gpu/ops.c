/*
 * The single ops of the op table (SPEC.md §11) on any GPU backend's
 * primitives (gpu.h), what supports() accepts, the launch of a call, the
 * scratch of a launch, and the building blocks that the blocks and steps
 * share. Each op finds its tensors by name in the call (harness/src/ops/ops.c
 * gives the names and order).
 */
#include <string.h>

#include "compose.h"
#include "mtp/quant.h"

struct gpu_buf mtp_gpu_tensor(const struct mtp_call *c, bool out,
			      const char *pfx, const char *name)
{
	const struct mtp_tensor *t = mtp_call_tensor(c, out, pfx, name);
	struct gpu_buf b = {t ? t->data : NULL, 0};

	return b;
}

bool mtp_gpu_is64(const struct mtp_call *c, bool out, const char *pfx,
		  const char *name)
{
	const struct mtp_tensor *t = mtp_call_tensor(c, out, pfx, name);

	return t && t->dtype == MTP_I64;
}

void mtp_gpu_cfg_init(const struct mtp_call *c, struct gpu_cfg *cfg)
{
	const struct mtp_params *p = c->params;

	memset(cfg, 0, sizeof(*cfg));
	cfg->act = c->act == MTP_F32   ? GPU_F32
		   : c->act == MTP_F16 ? GPU_F16
				       : GPU_BF16;
	cfg->es = mtp_dtype_size(c->act);
	cfg->t = c->dims.t;
	cfg->h = c->dims.h;
	cfg->m = c->dims.m ? c->dims.m : 1;
	cfg->v = c->dims.v;
	cfg->f = c->dims.f;
	cfg->eps = (float)p->eps;
	cfg->rounding =
		p->rounding == MTP_ROUNDING_EAGER ? GPU_EAGER : GPU_FUSED;
	cfg->rounding |= mtp_call_norm_offset(c) != 0.0 ? GPU_NORM_ONE_PLUS : 0;
	cfg->hc_eps = (float)p->hc_eps;
	cfg->post_mult = (float)p->hc.post_mult;
	cfg->sinkhorn_iters = p->hc.sinkhorn_iters;
	cfg->contract = p->contract;
	cfg->rocm_head = p->variant == MTP_HC_HEAD_ROCM;
	cfg->w8a8 = p->proj_quant == MTP_PROJ_QUANT_FP8_W8A8;
	cfg->act_eps = (float)p->act_quant_eps;
	cfg->logits_bf16 = p->conv.logits_dtype == MTP_LOGITS_BFLOAT16;
	cfg->final_fused = p->conv.final_add == MTP_FINAL_ADD_FUSED;
	cfg->norm_sum = p->conv.add_norm_input == MTP_ADD_NORM_SUM;
	cfg->unmasked = p->conv.pos0_mask == MTP_POS0_UNMASKED;
}

/* ---- scratch ------------------------------------------------------------- */

/* Parameters float32; logits float32, or bf16 under the logits_dtype
 * convention (SPEC.md §12.1); indices and tokens int32 or int64. */
static bool tensors_ok(const struct mtp_call *c, const struct mtp_tspec *s,
		       const struct mtp_tensor *t, int n)
{
	const enum mtp_dtype logits =
		c->params ? mtp_conv_logits_dtype(&c->params->conv) : MTP_F32;

	for (int i = 0; i < n; i++) {
		enum mtp_dtype dt = t[i].dtype;

		if (!t[i].data)
			continue; /* absent optional input, or empty */
		if (s[i].cls == MTP_TC_PARAM && dt != MTP_F32)
			return false;
		if (s[i].cls == MTP_TC_LOGITS && dt != logits)
			return false;
		if ((s[i].cls == MTP_TC_INDEX || s[i].cls == MTP_TC_TOKEN) &&
		    dt != MTP_I64 && dt != MTP_I32)
			return false;
	}
	return true;
}

enum mtp_status mtp_gpu_scratch(struct mtp_backend *be, size_t bytes,
				struct gpu_buf *out)
{
	struct gpu_dev *d = gpu_dev(be);

	out->mem = NULL;
	out->off = 0;
	if (d->n_scratch == GPU_SCRATCH_MAX)
		return mtp_backend_fail(
			be, MTP_ERR_LIMIT,
			"more than %d scratch buffers in one call",
			GPU_SCRATCH_MAX);
	GPU_TRY(d->prims->scratch_alloc(be, bytes, &out->mem));
	if (out->mem)
		d->scratch[d->n_scratch++] = out->mem;
	return MTP_OK;
}

enum mtp_status mtp_gpu_scratch_release(struct mtp_backend *be)
{
	struct gpu_dev *d = gpu_dev(be);
	enum mtp_status first = MTP_OK;
	char msg[MTP_BACKEND_ERR_MAX];

	/* every buffer is freed; the first failure and its message win */
	while (d->n_scratch > 0) {
		enum mtp_status st =
			d->prims->scratch_free(be, d->scratch[--d->n_scratch]);

		if (st != MTP_OK && first == MTP_OK) {
			first = st;
			memcpy(msg, be->error, sizeof(msg));
		}
	}
	if (first != MTP_OK)
		memcpy(be->error, msg, sizeof(msg));
	return first;
}

/* ---- building blocks ------------------------------------------------------ */

enum mtp_status mtp_gpu_norm_rows(struct mtp_backend *be,
				  const struct gpu_cfg *cfg, struct gpu_buf x,
				  struct gpu_buf w, struct gpu_buf y,
				  int64_t rows)
{
	const struct gpu_norm_job j = {
		.x = x,
		.w = w,
		.y = y,
		.x_stride = cfg->h,
		.y_stride = cfg->h,
		.rows = rows,
	};

	return gpu_prims(be)->rmsnorm(be, cfg->act, &j, 1, cfg->h, cfg->eps,
				      cfg->rounding);
}

enum mtp_status mtp_gpu_swiglu_ffn(struct mtp_backend *be,
				   const struct gpu_cfg *cfg, struct gpu_buf x,
				   struct gpu_buf w_gate, struct gpu_buf w_up,
				   struct gpu_buf w_down, struct gpu_buf out)
{
	const struct gpu_prims *pr = gpu_prims(be);
	const int64_t n = cfg->t * cfg->f;
	const size_t nb = (size_t)n * cfg->es;
	struct gpu_buf gate, up, g;

	GPU_TRY(mtp_gpu_scratch(be, 3 * nb, &gate));
	up = gpu_at(gate, nb);
	g = gpu_at(up, nb);
	GPU_TRY(pr->linear(be, cfg->act, false, x, w_gate, gate, cfg->t, cfg->h,
			   cfg->f));
	GPU_TRY(pr->linear(be, cfg->act, false, x, w_up, up, cfg->t, cfg->h,
			   cfg->f));
	GPU_TRY(pr->swiglu(be, cfg->act, gate, up, g, n));
	return pr->linear(be, cfg->act, false, g, w_down, out, cfg->t, cfg->f,
			  cfg->h);
}

/* ---- single ops ----------------------------------------------------------- */

#define IN(name) mtp_gpu_tensor(c, false, NULL, name)
#define OUT(name) mtp_gpu_tensor(c, true, NULL, name)
#define IS64(name) mtp_gpu_is64(c, false, NULL, name)

/* fused_eh_norm and fused_embed_eh_norm [§7.1, §7.2]: enorm of the masked
 * (gathered) embeddings into the left half of out, hnorm into the right;
 * two jobs of one call. */
static enum mtp_status op_eh_norm(struct mtp_backend *be,
				  const struct mtp_call *c,
				  const struct gpu_cfg *cfg, bool gather)
{
	const int64_t h = cfg->h;
	const struct gpu_norm_job j[2] = {
		{
			.x = gather ? IN("embed_table") : IN("embeds"),
			.ids = gather ? IN("input_ids") : (struct gpu_buf){0},
			.ids64 = gather && IS64("input_ids"),
			.pos = IN("positions"),
			.pos64 = IS64("positions"),
			.w = IN("enorm_weight"),
			.y = OUT("out"),
			.x_stride = h,
			.y_stride = 2 * h,
			.rows = cfg->t,
		},
		{
			.x = IN("prev_hidden"),
			.w = IN("hnorm_weight"),
			.y = gpu_at(OUT("out"), (size_t)h * cfg->es),
			.x_stride = h,
			.y_stride = 2 * h,
			.rows = cfg->t,
		},
	};

	return gpu_prims(be)->rmsnorm(be, cfg->act, j, 2, h, cfg->eps,
				      mtp_gpu_fused(cfg));
}

/* fused_mtp_input_rmsnorm [§7.3]: enorm of T rows, hnorm of T*M rows. */
static enum mtp_status op_mtp_input_norm(struct mtp_backend *be,
					 const struct mtp_call *c,
					 const struct gpu_cfg *cfg)
{
	const int64_t h = cfg->h;
	const struct gpu_norm_job j[2] = {
		{
			.x = IN("embeds"),
			.pos = IN("positions"),
			.pos64 = IS64("positions"),
			.w = IN("enorm_weight"),
			.y = OUT("enorm_out"),
			.x_stride = h,
			.y_stride = h,
			.rows = cfg->t,
		},
		{
			.x = IN("prev_hidden"),
			.w = IN("hnorm_weight"),
			.y = OUT("hnorm_out"),
			.x_stride = h,
			.y_stride = h,
			.rows = cfg->t * cfg->m,
		},
	};

	return gpu_prims(be)->rmsnorm(be, cfg->act, j, 2, h, cfg->eps,
				      mtp_gpu_fused(cfg));
}

void mtp_gpu_hc_args(const struct mtp_call *c, const char *residual,
		     const char *post, const char *comb,
		     struct gpu_hc_pre_args *a)
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

/* hc_pre [§4.4.1] */
static enum mtp_status op_hc_pre(struct mtp_backend *be,
				 const struct mtp_call *c,
				 const struct gpu_cfg *cfg)
{
	struct gpu_hc_pre_args a;

	mtp_gpu_hc_args(c, "residual", "post_mix", "comb_mix", &a);
	return gpu_prims(be)->hc_pre(be, cfg->act, &a);
}

/* hc_post [§4.4.2] into `out` */
static enum mtp_status hc_post_into(struct mtp_backend *be,
				    const struct mtp_call *c,
				    const struct gpu_cfg *cfg, const char *out)
{
	return gpu_prims(be)->hc_post(be, cfg->act, IN("x"), IN("residual"),
				      IN("post_mix"), IN("comb_mix"), OUT(out),
				      cfg->t, cfg->m, cfg->h);
}

static enum mtp_status op_hc_post(struct mtp_backend *be,
				  const struct mtp_call *c,
				  const struct gpu_cfg *cfg)
{
	return hc_post_into(be, c, cfg, "out");
}

/* hc_fused_post_pre [§4.4.3]: hc_post, then hc_pre reading the rounded new
 * streams; one call where the backend fuses the two (hc_pre_fuses_post). */
static enum mtp_status op_hc_fused_post_pre(struct mtp_backend *be,
					    const struct mtp_call *c,
					    const struct gpu_cfg *cfg)
{
	struct gpu_hc_pre_args a;

	mtp_gpu_hc_args(c, "@residual_out", "post_mix_out", "comb_mix_out", &a);
	if (gpu_prims(be)->hc_pre_fuses_post) {
		a.post_x = IN("x");
		a.post_res = IN("residual");
		a.post_in = IN("post_mix");
		a.comb_in = IN("comb_mix");
	} else {
		GPU_TRY(hc_post_into(be, c, cfg, "residual_out"));
	}
	return gpu_prims(be)->hc_pre(be, cfg->act, &a);
}

static enum mtp_status op_rmsnorm(struct mtp_backend *be,
				  const struct mtp_call *c,
				  const struct gpu_cfg *cfg)
{
	return mtp_gpu_norm_rows(be, cfg, IN("x"), IN("weight"), OUT("y"),
				 c->dims.r);
}

static enum mtp_status op_shared_head_rmsnorm(struct mtp_backend *be,
					      const struct mtp_call *c,
					      const struct gpu_cfg *cfg)
{
	struct gpu_cfg fused = *cfg;

	fused.rounding = mtp_gpu_fused(cfg); /* §7.4 */
	return mtp_gpu_norm_rows(be, &fused, IN("x"), IN("weight"), OUT("y"),
				 c->dims.t);
}

static enum mtp_status op_add_rmsnorm(struct mtp_backend *be,
				      const struct mtp_call *c,
				      const struct gpu_cfg *cfg)
{
	return gpu_prims(be)->add_rmsnorm(be, cfg->act, IN("x"), IN("residual"),
					  IN("weight"), OUT("y"),
					  OUT("residual_out"), c->dims.r,
					  c->dims.h, cfg->eps, cfg->rounding);
}

/* [SPEC.md §5.5] the target's final add + norm into handoff; under
 * HANDOFF_MISMATCH's change the rounded sum goes there instead */
static enum mtp_status op_target_handoff(struct mtp_backend *be,
					 const struct mtp_call *c,
					 const struct gpu_cfg *cfg)
{
	bool pre = mtp_params_handoff_pre_norm(c->params);
	struct gpu_buf other;

	GPU_TRY(mtp_gpu_scratch(be, (size_t)(c->dims.t * c->dims.h) * cfg->es,
				&other));
	return gpu_prims(be)->add_rmsnorm(
		be, cfg->act, IN("target_hidden"), IN("target_residual"),
		IN("target_norm_weight"), pre ? other : OUT("handoff"),
		pre ? OUT("handoff") : other, c->dims.t, c->dims.h, cfg->eps,
		cfg->rounding);
}

static enum mtp_status op_embed(struct mtp_backend *be,
				const struct mtp_call *c,
				const struct gpu_cfg *cfg)
{
	return gpu_prims(be)->embed(be, cfg->act, IN("embed_table"),
				    IN("input_ids"), IS64("input_ids"),
				    OUT("out"), c->dims.t, c->dims.h);
}

static enum mtp_status op_fused_eh_norm(struct mtp_backend *be,
					const struct mtp_call *c,
					const struct gpu_cfg *cfg)
{
	return op_eh_norm(be, c, cfg, false);
}

static enum mtp_status op_fused_embed_eh_norm(struct mtp_backend *be,
					      const struct mtp_call *c,
					      const struct gpu_cfg *cfg)
{
	return op_eh_norm(be, c, cfg, true);
}

static enum mtp_status op_fused_mtp_input_rmsnorm(struct mtp_backend *be,
						  const struct mtp_call *c,
						  const struct gpu_cfg *cfg)
{
	return op_mtp_input_norm(be, c, cfg);
}

static enum mtp_status op_eh_proj(struct mtp_backend *be,
				  const struct mtp_call *c,
				  const struct gpu_cfg *cfg)
{
	const struct gpu_qw w = mtp_gpu_qw(c, NULL, "weight");

	return mtp_gpu_qlinear(be, cfg, false, IN("x"), &w, OUT("y"), c->dims.t,
			       2 * c->dims.h, c->dims.h);
}

static enum mtp_status op_eh_proj_hc(struct mtp_backend *be,
				     const struct mtp_call *c,
				     const struct gpu_cfg *cfg)
{
	const struct gpu_qw we = mtp_gpu_qw(c, NULL, "e_proj_weight"),
			    wh = mtp_gpu_qw(c, NULL, "h_proj_weight");

	return mtp_gpu_eh_proj_hc(be, cfg, IN("e"), IN("p"), &we, &wh,
				  OUT("x"));
}

static enum mtp_status op_hc_head(struct mtp_backend *be,
				  const struct mtp_call *c,
				  const struct gpu_cfg *cfg)
{
	const struct mtp_params *p = c->params;
	const struct mtp_dims *d = &c->dims;

	return gpu_prims(be)->hc_head(be, cfg->act, IN("x"), IN("fn"),
				      IN("scale"), IN("base"), OUT("y"), d->t,
				      d->m, d->h, (float)p->hc.rms_eps,
				      (float)p->hc_eps, cfg->rocm_head);
}

static enum mtp_status op_lm_head(struct mtp_backend *be,
				  const struct mtp_call *c,
				  const struct gpu_cfg *cfg)
{
	const struct gpu_qw w = mtp_gpu_qw(c, NULL, "weight");

	return mtp_gpu_lm_head(be, cfg, IN("x"), &w, OUT("logits"),
			       OUT("token"),
			       mtp_gpu_is64(c, true, NULL, "token"));
}

static enum mtp_status op_all_reduce(struct mtp_backend *be,
				     const struct mtp_call *c,
				     const struct gpu_cfg *cfg)
{
	const struct gpu_prims *pr = gpu_prims(be);

	if (c->params->tp.order) /* declared [§2.5] */
		return pr->reduce_ordered(be, cfg->act, IN("parts"), c->dims.p,
					  c->dims.r, c->dims.h,
					  (int)c->params->tp.order, OUT("out"));
	return pr->all_reduce(be, cfg->act, IN("parts"), c->dims.p,
			      c->dims.r * c->dims.h, OUT("out"));
}

/* ---- the kernel table, supports(), launch() ------------------------------- */

typedef enum mtp_status (*gpu_op_fn)(struct mtp_backend *be,
				     const struct mtp_call *c,
				     const struct gpu_cfg *cfg);

/* The blocks, steps and chain set up their own configuration per layer. */
static enum mtp_status op_block(struct mtp_backend *be,
				const struct mtp_call *c,
				const struct gpu_cfg *cfg)
{
	(void)cfg;
	return mtp_gpu_op_block(be, c);
}

static enum mtp_status op_step(struct mtp_backend *be, const struct mtp_call *c,
			       const struct gpu_cfg *cfg)
{
	(void)cfg;
	return mtp_gpu_op_step(be, c);
}

static enum mtp_status op_chain(struct mtp_backend *be,
				const struct mtp_call *c,
				const struct gpu_cfg *cfg)
{
	(void)cfg;
	return mtp_gpu_op_chain(be, c);
}

static enum mtp_status op_dspark_step(struct mtp_backend *be,
				      const struct mtp_call *c,
				      const struct gpu_cfg *cfg)
{
	(void)cfg;
	return mtp_gpu_op_dspark_step(be, c);
}

/* What composes each op of the table (harness/src/ops/rows/), one entry per
 * op; NULL: not composed here. */
static const gpu_op_fn gpu_ops[MTP_OP_COUNT] = {
	[MTP_OP_RMSNORM] = op_rmsnorm,
	[MTP_OP_ADD_RMSNORM] = op_add_rmsnorm,
	[MTP_OP_TARGET_HANDOFF] = op_target_handoff,
	[MTP_OP_EMBED] = op_embed,
	[MTP_OP_FUSED_EH_NORM] = op_fused_eh_norm,
	[MTP_OP_FUSED_EMBED_EH_NORM] = op_fused_embed_eh_norm,
	[MTP_OP_EH_PROJ] = op_eh_proj,
	[MTP_OP_FUSED_MTP_INPUT_RMSNORM] = op_fused_mtp_input_rmsnorm,
	[MTP_OP_EH_PROJ_HC] = op_eh_proj_hc,
	[MTP_OP_HC_PRE] = op_hc_pre,
	[MTP_OP_HC_POST] = op_hc_post,
	[MTP_OP_HC_FUSED_POST_PRE] = op_hc_fused_post_pre,
	[MTP_OP_HC_HEAD] = op_hc_head,
	[MTP_OP_MTP_SHARED_HEAD_RMSNORM] = op_shared_head_rmsnorm,
	[MTP_OP_LM_HEAD] = op_lm_head,
	[MTP_OP_ALL_REDUCE] = op_all_reduce,
	[MTP_OP_MTP_BLOCK] = op_block,
	[MTP_OP_MTP_STEP] = op_step,
	[MTP_OP_DRAFT_CHAIN] = op_chain,
	[MTP_OP_MAIN_PROJ_NORM] = mtp_gpu_op_main_proj_norm,
	[MTP_OP_HC_COLLAPSE] = mtp_gpu_op_hc_collapse,
	[MTP_OP_MARKOV_BIAS] = mtp_gpu_op_markov_bias,
	[MTP_OP_CONFIDENCE] = mtp_gpu_op_confidence,
	[MTP_OP_HC_PRE_DELAYED] = mtp_gpu_op_hc_pre_delayed,
	[MTP_OP_DSPARK_STEP] = op_dspark_step,
};

static gpu_op_fn kernel_of(const struct mtp_call *c)
{
	return (unsigned)c->op->id < MTP_OP_COUNT ? gpu_ops[c->op->id] : NULL;
}

/* Whether the backend has the optional primitives (gpu.h) that call c
 * needs; without them the op is declined, never run half. */
static bool prims_ok(const struct gpu_prims *pr, const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;
	const enum mtp_op_id id = c->op->id;

	if (p && p->conv.logits_dtype == MTP_LOGITS_BFLOAT16 && !pr->convert)
		return false;
	if (p && (p->tp.order || p->tp.step) &&
	    (!pr->reduce_ordered || c->dims.p > GPU_REDUCE_MAX_P))
		return false; /* the declared reduction order (SPEC.md §2.5) */
	/* a captured chain clamps positions to max_position: the mask only
	 * reads it below 1 (step.c) */
	if (p && p->v2.captured && id == MTP_OP_DRAFT_CHAIN &&
	    p->v2.max_position < 1)
		return false;
	return mtp_gpu_dspark_prims_ok(pr, c);
}

/* The norm weight fused into an mHC kernel (hc_pre and its variants), if
 * the call has one: the one norm that does not go through norm_elem. */
static bool hc_norm_of(const struct mtp_call *c)
{
	const struct mtp_tensor *w =
		mtp_call_tensor(c, false, NULL, "norm_weight");

	return w && w->data &&
	       (c->op->id == MTP_OP_HC_PRE ||
		c->op->id == MTP_OP_HC_FUSED_POST_PRE ||
		c->op->id == MTP_OP_HC_PRE_DELAYED);
}

bool mtp_gpu_supports(struct mtp_backend *be, const struct mtp_call *c)
{
	const struct gpu_prims *pr = gpu_prims(be);

	if (c->act != MTP_BF16 && c->act != MTP_F16 && c->act != MTP_F32)
		return false;
	if (mtp_call_has_fp8(c) && !pr->linear_fp8)
		return false; /* no FP8 GEMM on this backend (SPEC.md §12.2) */
	if (!tensors_ok(c, c->sig->in, c->in, c->n_in) ||
	    !tensors_ok(c, c->sig->out, c->out, c->n_out))
		return false;
	if (c->dims.m > pr->max_m || !kernel_of(c) || !prims_ok(pr, c))
		return false;
	if (mtp_call_norm_offset(c) != 0.0 && hc_norm_of(c))
		return false; /* hc_pre's fused norm has no (1 + w) form [§2.6] */
	if (c->params && (mtp_family_embed_pre_norm(c->params->family) ||
			  mtp_family_logits_mup(c->params->family)))
		return false; /* [Step V3-9] no second embedding norm, no mup head */
	return c->dims.t < pr->max_rows && c->dims.r < pr->max_rows;
}

enum mtp_status mtp_gpu_launch(struct mtp_backend *be, const struct mtp_call *c)
{
	struct gpu_cfg cfg;
	enum mtp_status st, rel;

	/* an empty batch (an idle rank's T = 0): no kernel on an empty grid,
	 * which CUDA and HIP refuse (SGLang #38952) */
	if (mtp_call_empty(c))
		return MTP_OK;
	if (!kernel_of(c))
		return mtp_backend_fail(be, MTP_ERR_UNSUPPORTED,
					"op %s is not implemented",
					c->op->name);
	mtp_gpu_cfg_init(c, &cfg);
	st = kernel_of(c)(be, c, &cfg);
	rel = mtp_gpu_scratch_release(be);
	return st ? st : rel;
}
