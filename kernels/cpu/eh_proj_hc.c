/*
 * The V4 input projection [SPEC.md Step V4-3]: h_proj of every stream plus
 * e_proj of the embedding broadcast over the M streams. Both products are
 * sgemms whose results are rounded to the activation dtype, and their sum is
 * rounded once more (a bf16 add), in one pass over the output.
 */
#include "cpu_internal.h"

struct hc_args {
	enum mtp_dtype act;
	const float *ep, *hp;
	void *x;
	int64_t m, h;
};

static void sum_one(const void *ctx, int64_t r, float *buf)
{
	const struct hc_args *g = ctx;
	const int64_t h = g->h;
	const float *e = g->ep + r * h;

	for (int64_t s = 0; s < g->m; s++) {
		const int64_t o = (r * g->m + s) * h;
		const float *p = g->hp + o;

		for (int64_t i = 0; i < h; i++)
			buf[i] = mtp_cpu_round(g->act, p[i]) +
				 mtp_cpu_round(g->act, e[i]);
		mtp_cpu_store(g->act, g->x, o, h, buf);
	}
}

enum mtp_status mtp_cpu_eh_proj_hc_rows(
	enum mtp_dtype act, const void *e, const void *p,
	const struct mtp_cpu_qw *e_proj_w, const struct mtp_cpu_qw *h_proj_w,
	const struct mtp_ref_quant *q, int64_t t, int64_t m, int64_t h, void *x)
{
	float *ep = mtp_cpu_floats((size_t)(t * h + t * m * h));
	float *hp = ep + t * h;
	struct hc_args g = {act, ep, hp, x, m, h};
	enum mtp_status st;

	if (!ep)
		return MTP_ERR_NOMEM;
	st = mtp_cpu_qgemm(act, e, e_proj_w, q, t, h, h, ep);
	if (!st)
		st = mtp_cpu_qgemm(act, p, h_proj_w, q, t * m, h, h, hp);
	if (!st)
		st = mtp_cpu_rows(t, m * h, (size_t)h, sum_one, &g);
	mtp_cpu_free(ep);
	return st;
}

enum mtp_status mtp_cpu_op_eh_proj_hc(const struct mtp_call *c)
{
	struct mtp_cpu_qw ew, hw;
	const struct mtp_ref_quant q = {c->params->proj_quant,
					c->params->act_quant_eps};

	mtp_cpu_qw_get(c, "", "e_proj_weight", &ew);
	mtp_cpu_qw_get(c, "", "h_proj_weight", &hw);
	return mtp_cpu_eh_proj_hc_rows(c->act, mtp_cpu_in(c, "", "e"),
				       mtp_cpu_in(c, "", "p"), &ew, &hw, &q,
				       c->dims.t, c->dims.m, c->dims.h,
				       mtp_cpu_out(c, "", "x"));
}
