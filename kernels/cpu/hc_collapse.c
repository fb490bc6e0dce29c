/*
 * hc_collapse [SPEC.md §13 Step DS-5]: a token's M streams summed with given
 * fp32 pre-mix weights, streams in order, one rounding. DSpark V4.1 calls it
 * with the last FFN's pre-mix; hc_head (§4.4.4) ends with the same sum over
 * its own weights and uses the row function below.
 */
#include "cpu_internal.h"

void mtp_cpu_collapse_row(const float *x, const float *pre, int64_t m,
			  int64_t h, float *y)
{
	for (int64_t i = 0; i < h; i++)
		y[i] = pre[0] * x[i];
	for (int64_t s = 1; s < m; s++)
		for (int64_t i = 0; i < h; i++)
			y[i] += pre[s] * x[s * h + i];
}

struct collapse_args {
	enum mtp_dtype act;
	const void *x;
	const float *pre;
	int64_t m, h;
	void *y;
};

static void collapse_one(const void *ctx, int64_t t, float *buf)
{
	const struct collapse_args *g = ctx;
	const int64_t n = g->m * g->h;
	float *x = buf, *y = buf + n;

	mtp_cpu_load(g->act, g->x, t * n, n, x);
	mtp_cpu_collapse_row(x, g->pre + t * g->m, g->m, g->h, y);
	mtp_cpu_store(g->act, g->y, t * g->h, g->h, y);
}

enum mtp_status mtp_cpu_op_hc_collapse(const struct mtp_call *c)
{
	const struct collapse_args g = {c->act,
					mtp_cpu_in(c, "", "x"),
					mtp_cpu_in(c, "", "pre_mix"),
					c->dims.m,
					c->dims.h,
					mtp_cpu_out(c, "", "y")};

	return mtp_cpu_rows(c->dims.t, g.m * g.h, (size_t)((g.m + 1) * g.h),
			    collapse_one, &g);
}
