/*
 * FP8 block-scaled projections in the composition layer [SPEC.md §12.2]:
 * a projection weight is looked up with its block-scale companion, and runs
 * on the backend's linear when it is activation-typed, on linear_fp8 when
 * it is float8 (weight-only or W8A8 as the call's proj_quant says). Every
 * projection of the ops, steps and chains (eh_proj, e_proj/h_proj, the
 * heads, main_proj) goes through mtp_gpu_qlinear; the V4 projection pair and
 * the LM head (with its greedy token) are here too.
 */
#include "compose.h"
#include "mtp/quant.h"

struct gpu_qw mtp_gpu_qw(const struct mtp_call *c, const char *pfx,
			 const char *name)
{
	const struct mtp_tensor *w = mtp_call_tensor(c, false, pfx, name);
	const struct mtp_tensor *s = NULL;
	struct gpu_qw q = {{w ? w->data : NULL, 0}, {NULL, 0}, false};
	char sname[MTP_NAME_MAX];

	if (w && w->dtype == MTP_F8E4M3 &&
	    mtp_quant_scale_name(name, sname, sizeof(sname)))
		s = mtp_call_tensor(c, false, pfx, sname);
	if (s && s->data) {
		q.scale.mem = s->data;
		q.e8m0 = s->dtype == MTP_F8E8M0;
	}
	return q;
}

enum mtp_status mtp_gpu_qlinear(struct mtp_backend *be,
				const struct gpu_cfg *cfg, bool logits,
				struct gpu_buf x, const struct gpu_qw *w,
				struct gpu_buf y, int64_t rows, int64_t in,
				int64_t out)
{
	const struct gpu_prims *pr = gpu_prims(be);
	const struct gpu_fp8 q = {w->scale, w->e8m0, cfg->w8a8, cfg->act_eps};

	if (!w->scale.mem)
		return pr->linear(be, cfg->act, logits, x, w->w, y, rows, in,
				  out);
	if (!pr->linear_fp8) /* supports() refused it */
		return mtp_backend_fail(be, MTP_ERR_UNSUPPORTED,
					"no float8 GEMM on this backend");
	return pr->linear_fp8(be, cfg->act, logits, x, w->w, &q, y, rows, in,
			      out);
}

enum mtp_status mtp_gpu_eh_proj_hc(struct mtp_backend *be,
				   const struct gpu_cfg *cfg, struct gpu_buf e,
				   struct gpu_buf p, const struct gpu_qw *we,
				   const struct gpu_qw *wh, struct gpu_buf x)
{
	const struct gpu_prims *pr = gpu_prims(be);
	const int64_t t = cfg->t, m = cfg->m, h = cfg->h;
	struct gpu_buf ep, hp;

	/* two buffers, each aligned as an allocation is (GEMM outputs) */
	GPU_TRY(mtp_gpu_scratch(be, (size_t)(t * h) * cfg->es, &ep));
	GPU_TRY(mtp_gpu_scratch(be, (size_t)(t * m * h) * cfg->es, &hp));
	GPU_TRY(mtp_gpu_qlinear(be, cfg, false, e, we, ep, t, h, h));
	GPU_TRY(mtp_gpu_qlinear(be, cfg, false, p, wh, hp, t * m, h, h));
	return pr->add_bcast(be, cfg->act, hp, ep, x, t, m, h);
}

enum mtp_status mtp_gpu_lm_head(struct mtp_backend *be,
				const struct gpu_cfg *cfg, struct gpu_buf x,
				const struct gpu_qw *w, struct gpu_buf logits,
				struct gpu_buf token, bool tok64)
{
	const struct gpu_prims *pr = gpu_prims(be);
	const size_t n = (size_t)(cfg->t * cfg->v);
	struct gpu_buf f;

	if (!cfg->logits_bf16) {
		GPU_TRY(mtp_gpu_qlinear(be, cfg, true, x, w, logits, cfg->t,
					cfg->h, cfg->v));
		return pr->argmax(be, logits, token, tok64, cfg->t, cfg->v);
	}
	/* [§12.1] float32 accumulation, one rounding to bf16 */
	GPU_TRY(mtp_gpu_scratch(be, n * sizeof(float), &f));
	GPU_TRY(mtp_gpu_qlinear(be, cfg, true, x, w, f, cfg->t, cfg->h,
				cfg->v));
	GPU_TRY(pr->convert(be, GPU_F32, GPU_BF16, f, logits, (int64_t)n));
	return mtp_gpu_argmax_act(be, GPU_BF16, logits, token, tok64, cfg->t,
				  cfg->v);
}

enum mtp_status mtp_gpu_argmax_act(struct mtp_backend *be, enum gpu_act act,
				   struct gpu_buf logits, struct gpu_buf token,
				   bool tok64, int64_t rows, int64_t v)
{
	const struct gpu_prims *pr = gpu_prims(be);
	struct gpu_buf f;

	if (act == GPU_F32)
		return pr->argmax(be, logits, token, tok64, rows, v);
	/* widening is exact: the maxima and NaNs of the stored values */
	GPU_TRY(mtp_gpu_scratch(be, (size_t)(rows * v) * sizeof(float), &f));
	GPU_TRY(pr->convert(be, act, GPU_F32, logits, f, rows * v));
	return pr->argmax(be, f, token, tok64, rows, v);
}
