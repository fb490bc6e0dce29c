/*
 * The V3.2/GLM-5 fused MTP input kernels [SPEC.md §7.1, §7.2]: per token,
 * the position-0 select, enorm of the embedding (gathered from the table in
 * fused_embed_eh_norm) and hnorm of the previous hidden, written side by
 * side as [ e | p ] in one pass with fused rounding. A V3-family mtp_step
 * runs the same kernel with its case's rounding before eh_proj, the halves
 * in its family's order ([ p | e ] for MiMo's input_proj).
 */
#include "cpu_internal.h"

struct eh_args {
	enum mtp_dtype act;
	const struct mtp_cpu_eh_norm *a;
	const float *ew, *hw;
	void *out;
	bool nt;
};

static void eh_one(const void *ctx, int64_t r, float *buf)
{
	const struct eh_args *g = ctx;
	const struct mtp_cpu_eh_norm *a = g->a;
	const int64_t h = a->h;
	const void *src = a->ids ? a->table : a->embeds;
	const int64_t row = a->ids ? a->ids[r] : r;

	const int64_t e_at = a->hidden_first ? h : 0;

	if (a->positions[r] == 0)
		src = NULL; /* a select: NaN embeddings give exact zeros */
	mtp_cpu_norm_row_io(g->act, src, row * h, g->ew, h, a->eps, a->rnd,
			    g->nt, buf, g->out, r * 2 * h + e_at);
	mtp_cpu_norm_row_io(g->act, a->prev, r * h, g->hw, h, a->eps, a->rnd,
			    g->nt, buf, g->out, r * 2 * h + h - e_at);
}

enum mtp_status mtp_cpu_eh_norm_rows(enum mtp_dtype act,
				     const struct mtp_cpu_eh_norm *a, void *out)
{
	struct eh_args g = {act,  a,   NULL,
			    NULL, out, mtp_cpu_nt(act, 2 * a->t * a->h)};
	enum mtp_status st = MTP_ERR_INVALID;

	for (int64_t r = 0; a->ids && r < a->t; r++)
		if (a->ids[r] < 0 || a->ids[r] >= a->v)
			return st;
	st = MTP_ERR_NOMEM;
	g.ew = mtp_cpu_widen(act, a->enorm_w, a->h);
	g.hw = mtp_cpu_widen(act, a->hnorm_w, a->h);
	if (g.ew && g.hw)
		st = mtp_cpu_rows(a->t, 2 * a->h, (size_t)a->h, eh_one, &g);
	mtp_cpu_free((void *)g.hw);
	mtp_cpu_free((void *)g.ew);
	return st;
}

/* Both ops; from_table selects fused_embed_eh_norm. */
static enum mtp_status eh_norm_op(const struct mtp_call *c, bool from_table)
{
	struct mtp_cpu_eh_norm a = {
		.embeds = mtp_cpu_in(c, "", "embeds"),
		.table = mtp_cpu_in(c, "", "embed_table"),
		.prev = mtp_cpu_in(c, "", "prev_hidden"),
		.enorm_w = mtp_cpu_in(c, "", "enorm_weight"),
		.hnorm_w = mtp_cpu_in(c, "", "hnorm_weight"),
		.t = c->dims.t,
		.h = c->dims.h,
		.v = c->dims.v,
		.eps = (float)c->params->eps,
		.rnd = MTP_ROUNDING_FUSED,
	};
	int64_t *pos = mtp_cpu_indices(mtp_cpu_in_tensor(c, "positions"));
	int64_t *ids = NULL;
	enum mtp_status st = MTP_ERR_NOMEM;

	if (from_table) {
		ids = mtp_cpu_indices(mtp_cpu_in_tensor(c, "input_ids"));
		if (!ids)
			goto out_free;
	}
	if (!pos)
		goto out_free;
	a.positions = pos;
	a.ids = ids;
	st = mtp_cpu_eh_norm_rows(c->act, &a, mtp_cpu_out(c, "", "out"));
out_free:
	mtp_cpu_free(ids);
	mtp_cpu_free(pos);
	return st;
}

enum mtp_status mtp_cpu_op_fused_eh_norm(const struct mtp_call *c)
{
	return eh_norm_op(c, false);
}

enum mtp_status mtp_cpu_op_fused_embed_eh_norm(const struct mtp_call *c)
{
	return eh_norm_op(c, true);
}
