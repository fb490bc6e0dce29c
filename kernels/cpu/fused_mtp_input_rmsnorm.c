/*
 * The V4 fused MTP input kernel [SPEC.md §7.3, Step V4-2]: per token, the
 * position-0 select and enorm of the embedding, then hnorm of each of the M
 * previous-hidden streams with the same weight, in one pass with fused
 * rounding. A V4 mtp_step runs it with its case's rounding.
 */
#include "cpu_internal.h"

struct in_args {
	enum mtp_dtype act;
	const int64_t *positions;
	const void *embeds, *prev;
	const float *ew, *hw;
	void *e_out, *p_out;
	int64_t m, h;
	float eps;
	enum mtp_rounding rnd;
	bool nt;
};

static void in_one(const void *ctx, int64_t r, float *buf)
{
	const struct in_args *g = ctx;
	const int64_t h = g->h;
	const void *e = g->positions[r] == 0 ? NULL : g->embeds;

	mtp_cpu_norm_row_io(g->act, e, r * h, g->ew, h, g->eps, g->rnd, g->nt,
			    buf, g->e_out, r * h);
	for (int64_t s = 0; s < g->m; s++) {
		const int64_t o = (r * g->m + s) * h;

		mtp_cpu_norm_row_io(g->act, g->prev, o, g->hw, h, g->eps,
				    g->rnd, g->nt, buf, g->p_out, o);
	}
}

enum mtp_status
mtp_cpu_mtp_input_norm_rows(enum mtp_dtype act, const int64_t *positions,
			    const void *embeds, const void *prev,
			    const void *enorm_w, const void *hnorm_w, int64_t t,
			    int64_t m, int64_t h, float eps,
			    enum mtp_rounding rnd, void *e_out, void *p_out)
{
	struct in_args g = {act,
			    positions,
			    embeds,
			    prev,
			    NULL,
			    NULL,
			    e_out,
			    p_out,
			    m,
			    h,
			    eps,
			    rnd,
			    mtp_cpu_nt(act, t * (m + 1) * h)};
	enum mtp_status st = MTP_ERR_NOMEM;

	g.ew = mtp_cpu_widen(act, enorm_w, h);
	g.hw = mtp_cpu_widen(act, hnorm_w, h);
	if (g.ew && g.hw)
		st = mtp_cpu_rows(t, (m + 1) * h, (size_t)h, in_one, &g);
	mtp_cpu_free((void *)g.hw);
	mtp_cpu_free((void *)g.ew);
	return st;
}

enum mtp_status mtp_cpu_op_fused_mtp_input_rmsnorm(const struct mtp_call *c)
{
	int64_t *pos = mtp_cpu_indices(mtp_cpu_in_tensor(c, "positions"));
	enum mtp_status st;

	if (!pos)
		return MTP_ERR_NOMEM;
	st = mtp_cpu_mtp_input_norm_rows(
		c->act, pos, mtp_cpu_in(c, "", "embeds"),
		mtp_cpu_in(c, "", "prev_hidden"),
		mtp_cpu_in(c, "", "enorm_weight"),
		mtp_cpu_in(c, "", "hnorm_weight"), c->dims.t, c->dims.m,
		c->dims.h, (float)c->params->eps, MTP_ROUNDING_FUSED,
		mtp_cpu_out(c, "", "enorm_out"),
		mtp_cpu_out(c, "", "hnorm_out"));
	mtp_cpu_free(pos);
	return st;
}
