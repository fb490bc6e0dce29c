/*
 * mHC hc_post [MTP-SPEC §4.4.2]: the new streams after a sublayer,
 * out[j] = post[j]*x + sum_i C[i,j]*R[i] (row i of C the source stream,
 * column j the destination), fp32 per token, one rounding on store.
 */
#include "cpu_internal.h"

MTP_CPU_HOT
void mtp_cpu_hc_post_token(const float *x, const float *r, const float *post,
			   const float *comb, int64_t m, int64_t h, float *out)
{
	for (int64_t j = 0; j < m; j++) {
		float *o = out + j * h;
		const float pj = post[j];

		for (int64_t k = 0; k < h; k++)
			o[k] = pj * x[k];
		for (int64_t i = 0; i < m; i++) {
			const float cij = comb[i * m + j];
			const float *ri = r + i * h;

			for (int64_t k = 0; k < h; k++)
				o[k] += cij * ri[k];
		}
	}
}

struct post_args {
	enum mtp_dtype act;
	const void *x, *residual;
	const float *post, *comb;
	void *out;
	int64_t m, h;
};

static void post_one(const void *ctx, int64_t t, float *buf)
{
	const struct post_args *g = ctx;
	const int64_t m = g->m, h = g->h, n = m * h;
	float *x = buf, *r = x + h, *o = r + n;

	mtp_cpu_load(g->act, g->x, t * h, h, x);
	mtp_cpu_load(g->act, g->residual, t * n, n, r);
	mtp_cpu_hc_post_token(x, r, g->post + t * m, g->comb + t * m * m, m, h,
			      o);
	mtp_cpu_store(g->act, g->out, t * n, n, o);
}

enum mtp_status mtp_cpu_hc_post_rows(enum mtp_dtype act, const void *x,
				     const void *residual, const float *post,
				     const float *comb, int64_t t, int64_t m,
				     int64_t h, void *out)
{
	const struct post_args g = {act, x, residual, post, comb, out, m, h};

	return mtp_cpu_rows(t, m * h, (size_t)(h + 2 * m * h), post_one, &g);
}

enum mtp_status mtp_cpu_op_hc_post(const struct mtp_call *c)
{
	return mtp_cpu_hc_post_rows(c->act, mtp_cpu_in(c, "", "x"),
				    mtp_cpu_in(c, "", "residual"),
				    mtp_cpu_in(c, "", "post_mix"),
				    mtp_cpu_in(c, "", "comb_mix"), c->dims.t,
				    c->dims.m, c->dims.h,
				    mtp_cpu_out(c, "", "out"));
}
