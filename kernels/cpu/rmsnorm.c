/*
 * RMSNorm of each row [SPEC.md §2.1 eager, §2.2 fused]: one pass, each row
 * read once into fp32 scratch, normalised with the shared row helper and
 * stored once. The whole-tensor kernel also serves the synthetic block's
 * norms, the per-stream hnorm and the shared head.
 */
#include "cpu_internal.h"

struct norm_args {
	enum mtp_dtype act;
	const void *x;
	const float *w;
	void *y;
	int64_t h;
	float eps;
	enum mtp_rounding rnd;
	bool nt;
};

static void norm_one(const void *ctx, int64_t r, float *buf)
{
	const struct norm_args *g = ctx;

	mtp_cpu_norm_row_io(g->act, g->x, r * g->h, g->w, g->h, g->eps, g->rnd,
			    g->nt, buf, g->y, r * g->h);
}

enum mtp_status mtp_cpu_rmsnorm_rows(enum mtp_dtype act, const void *x,
				     const void *w, int64_t rows, int64_t h,
				     float eps, enum mtp_rounding rnd, void *y)
{
	struct norm_args g = {act, x,	NULL, y,
			      h,   eps, rnd,  mtp_cpu_nt(act, rows * h)};
	float *wf = mtp_cpu_widen(act, w, h);
	enum mtp_status st;

	if (!wf)
		return MTP_ERR_NOMEM;
	g.w = wf;
	st = mtp_cpu_rows(rows, h, (size_t)h, norm_one, &g);
	mtp_cpu_free(wf);
	return st;
}

enum mtp_status mtp_cpu_op_rmsnorm(const struct mtp_call *c)
{
	return mtp_cpu_rmsnorm_rows(
		c->act, mtp_cpu_in(c, "", "x"), mtp_cpu_in(c, "", "weight"),
		c->dims.r, c->dims.h, (float)c->params->eps,
		c->params->rounding, mtp_cpu_out(c, "", "y"));
}
