/*
 * Tensor-parallel all-reduce [SPEC.md §2.4, Step V3-7]: the sum of the P
 * partial outputs in fp32, parts in order, rounded once on store.
 */
#include "cpu_internal.h"

struct ar_args {
	enum mtp_dtype act;
	const void *parts;
	void *out;
	int64_t p, n, h;
};

static void reduce_row(const void *ctx, int64_t r, float *buf)
{
	const struct ar_args *g = ctx;
	const int64_t h = g->h;
	float *acc = buf, *part = buf + h;

	mtp_cpu_load(g->act, g->parts, r * h, h, acc);
	for (int64_t k = 1; k < g->p; k++) {
		mtp_cpu_load(g->act, g->parts, k * g->n + r * h, h, part);
		for (int64_t i = 0; i < h; i++)
			acc[i] += part[i];
	}
	mtp_cpu_store(g->act, g->out, r * h, h, acc);
}

enum mtp_status mtp_cpu_op_all_reduce(const struct mtp_call *c)
{
	const struct mtp_dims *d = &c->dims;
	const struct ar_args g = {c->act,
				  mtp_cpu_in(c, "", "parts"),
				  mtp_cpu_out(c, "", "out"),
				  d->p,
				  d->r * d->h,
				  d->h};

	if (d->p == 0) {
		memset(g.out, 0, (size_t)g.n * mtp_dtype_size(c->act));
		return MTP_OK;
	}
	return mtp_cpu_rows(d->r, d->p * d->h, 2 * (size_t)d->h, reduce_row,
			    &g);
}
