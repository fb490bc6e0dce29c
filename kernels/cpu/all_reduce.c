/*
 * Tensor-parallel all-reduce [SPEC.md §2.4, §2.5, Step V3-7]: the sum of the
 * P partial outputs in fp32, parts in order, rounded once on store; or, for
 * a declared reduce_order, added in that order with the act-dtype stores of
 * ring and tree at every hop, since the engine's sum is judged under its
 * own order. Also the reduction of a tensor-parallel captured step's block
 * partials (Step V3-8).
 */
#include "cpu_internal.h"

#include <stdlib.h>

struct ar_args {
	enum mtp_dtype act;
	const void *parts;
	void *out;
	int64_t p, n, h;
	enum mtp_reduce_order order;
};

float mtp_cpu_round1(enum mtp_dtype act, float v)
{
	float out;
	double tmp;

	mtp_cpu_store(act, &tmp, 0, 1, &v);
	mtp_cpu_load(act, &tmp, 0, 1, &out);
	return out;
}

/* One element of x[k * h] (k < p) in order; c the element's chunk. */
static float ordered(enum mtp_dtype act, const float *x, int64_t p, int64_t h,
		     int64_t c, enum mtp_reduce_order order, float *tree)
{
	float s;
	int64_t n = p;

	if (order == MTP_REDUCE_RING) {
		s = x[((c + 1) % p) * h];
		for (int64_t k = 2; k <= p; k++)
			s = mtp_cpu_round1(act, s + x[((c + k) % p) * h]);
		return s;
	}
	if (order != MTP_REDUCE_TREE) {
		int64_t c0 = order == MTP_REDUCE_TWO_SHOT ? c : 0;

		s = x[c0 * h];
		for (int64_t k = 1; k < p; k++)
			s += x[((c0 + k) % p) * h];
		return s;
	}
	for (int64_t k = 0; k < p; k++)
		tree[k] = x[k * h];
	while (n > 1) {
		int64_t m = 0;

		for (int64_t i = 0; i + 1 < n; i += 2)
			tree[m++] = mtp_cpu_round1(act, tree[i] + tree[i + 1]);
		if (n % 2)
			tree[m++] = tree[n - 1];
		n = m;
	}
	return tree[0];
}

static void reduce_row(const void *ctx, int64_t r, float *buf)
{
	const struct ar_args *g = ctx;
	const int64_t h = g->h;
	float *acc = buf, *part = buf + h;

	if (g->order != MTP_REDUCE_EXACT) {
		for (int64_t k = 0; k < g->p; k++)
			mtp_cpu_load(g->act, g->parts, k * g->n + r * h, h,
				     part + k * h);
		for (int64_t i = 0; i < h; i++)
			acc[i] =
				ordered(g->act, part + i, g->p, h, i * g->p / h,
					g->order, part + g->p * h);
		mtp_cpu_store(g->act, g->out, r * h, h, acc);
		return;
	}
	mtp_cpu_load(g->act, g->parts, r * h, h, acc);
	for (int64_t k = 1; k < g->p; k++) {
		mtp_cpu_load(g->act, g->parts, k * g->n + r * h, h, part);
		for (int64_t i = 0; i < h; i++)
			acc[i] += part[i];
	}
	mtp_cpu_store(g->act, g->out, r * h, h, acc);
}

enum mtp_status mtp_cpu_reduce(enum mtp_dtype act, const void *parts, int64_t p,
			       int64_t rows, int64_t h,
			       enum mtp_reduce_order order, void *out)
{
	const struct ar_args g = {act, parts, out, p, rows * h, h, order};
	const char *procs = getenv("MTP_CPU_TP_PROCS");

	if (procs && strcmp(procs, "1") == 0) { /* P ranks (tp_shm.c) */
		enum mtp_status st = mtp_cpu_reduce_procs(act, parts, p, rows,
							  h, order, out);

		if (st != MTP_ERR_UNSUPPORTED)
			return st;
	}
	if (p == 0) {
		memset(out, 0, (size_t)g.n * mtp_dtype_size(act));
		return MTP_OK;
	}
	return mtp_cpu_rows(rows, p * h, (size_t)((p + 2) * h + p), reduce_row,
			    &g);
}

enum mtp_status mtp_cpu_op_all_reduce(const struct mtp_call *c)
{
	const struct mtp_dims *d = &c->dims;

	return mtp_cpu_reduce(c->act, mtp_cpu_in(c, "", "parts"), d->p, d->r,
			      d->h, c->params->tp.order,
			      mtp_cpu_out(c, "", "out"));
}

void *mtp_cpu_tp_block_out(const struct mtp_call *c, struct mtp_cpu_cfg *cfg,
			   struct mtp_cpu_captured *cap, enum mtp_status *st)
{
	const struct mtp_tp_params *tp = &c->params->tp;
	void *h = mtp_cpu_act_alloc(c->act, (size_t)(c->dims.t * c->dims.h));

	*st = h ? mtp_cpu_reduce(c->act, mtp_cpu_in(c, "", "block_out_parts"),
				 c->dims.p, c->dims.t, c->dims.h, tp->order, h)
		: MTP_ERR_NOMEM;
	cap->block_out = h;
	/* the fused all-reduce + norm: a fused add (its sum stored in act
	 * first here, one rounding more than the reference's fp32 sum) */
	if (tp->at == MTP_REDUCE_AT_FINAL_NORM)
		cfg->conv.final_add = MTP_FINAL_ADD_FUSED;
	return h;
}
