/*
 * FP8 block-scaled projections in the composition layer [SPEC.md §12.2]:
 * a projection weight is looked up with its block-scale companion, and runs
 * on the backend's linear when it is activation-typed, on linear_fp8 when
 * it is float8 (weight-only or W8A8 as the call's proj_quant says). Every
 * projection of the ops, steps and chains (eh_proj, e_proj/h_proj, the
 * heads, main_proj) goes through mtp_gpu_qlinear.
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
