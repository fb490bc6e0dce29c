/*
 * mHC hc_pre [MTP-SPEC §4.4.1], one token per task in fp32 as the tilelang
 * kernels do: the RMS scale and the 2M+M*M mixes from the M streams, pre and
 * post through sigmoids, the Sinkhorn-normalised comb matrix, and the layer
 * input sum_m pre_m * R[m], optionally with the fused RMSNorm. The token
 * kernel is shared with hc_fused_post_pre and the V4 block.
 */
#include "cpu_internal.h"

void mtp_cpu_hc_pre_init(struct mtp_cpu_hc_pre *k, const float *fn,
			 const float *scale, const float *base,
			 const struct mtp_hc_params *p, int64_t m, int64_t h,
			 enum mtp_dtype act)
{
	k->fn = fn;
	k->scale = scale;
	k->base = base;
	k->norm_w = NULL;
	k->rms_eps = (float)p->rms_eps;
	k->pre_eps = (float)p->pre_eps;
	k->sinkhorn_eps = (float)p->sinkhorn_eps;
	k->post_mult = (float)p->post_mult;
	k->norm_eps = (float)p->norm_eps;
	k->iters = p->sinkhorn_iters;
	k->m = m;
	k->h = h;
	k->act = act;
}

/* c[i][j] /= (sum over row i, or over column j) + eps. */
static void normalise(float *c, int64_t m, bool rows, float eps)
{
	for (int64_t a = 0; a < m; a++) {
		float s = 0.0f;

		for (int64_t b = 0; b < m; b++)
			s += rows ? c[a * m + b] : c[b * m + a];
		for (int64_t b = 0; b < m; b++) {
			if (rows)
				c[a * m + b] /= s + eps;
			else
				c[b * m + a] /= s + eps;
		}
	}
}

/* Row softmax + eps, column normalise, then iters-1 row+column passes. */
static void sinkhorn(float *c, int64_t m, int iters, float eps)
{
	for (int64_t i = 0; i < m; i++) {
		float *row = c + i * m;
		float mx = row[0], s = 0.0f;

		for (int64_t j = 1; j < m; j++)
			mx = row[j] > mx ? row[j] : mx;
		for (int64_t j = 0; j < m; j++) {
			row[j] = expf(row[j] - mx);
			s += row[j];
		}
		for (int64_t j = 0; j < m; j++)
			row[j] = row[j] / s + eps;
	}
	normalise(c, m, false, eps);
	for (int it = 1; it < iters; it++) {
		normalise(c, m, true, eps);
		normalise(c, m, false, eps);
	}
}

/* u [H] = sum_s pre[s] * x[s], s ascending; li = u or its fused norm. */
static void layer_input(const struct mtp_cpu_hc_pre *k, const float *x,
			const float *pre, float *u, float *li)
{
	const int64_t h = k->h;

	for (int64_t i = 0; i < h; i++)
		u[i] = pre[0] * x[i];
	for (int64_t s = 1; s < k->m; s++)
		for (int64_t i = 0; i < h; i++)
			u[i] += pre[s] * x[s * h + i];
	if (!k->norm_w) {
		memcpy(li, u, (size_t)h * sizeof(*li));
		return;
	}
	/* variance from the unrounded u, applied to the rounded u */
	const float rho = mtp_cpu_rms_inv(u, h, k->norm_eps);

	for (int64_t i = 0; i < h; i++)
		li[i] = mtp_cpu_round(k->act, u[i]) * rho * k->norm_w[i];
}

void mtp_cpu_hc_pre_token(const struct mtp_cpu_hc_pre *k, const float *x,
			  float *mu, float *u, float *post, float *comb,
			  float *li)
{
	const int64_t m = k->m, n = m * k->h, nmix = 2 * m + m * m;
	const float rho = mtp_cpu_rms_inv(x, n, k->rms_eps);
	float *c = mu + 2 * m; /* the comb logits become C in place */

	for (int64_t o = 0; o < nmix; o++)
		mu[o] = mtp_cpu_scaled_dot(rho, x, k->fn + o * n, n);
	for (int64_t s = 0; s < m; s++) {
		post[s] = mtp_cpu_sigmoid(mu[m + s] * k->scale[1] +
					  k->base[m + s]) * k->post_mult;
		mu[s] = mtp_cpu_sigmoid(mu[s] * k->scale[0] + k->base[s]) +
			k->pre_eps; /* pre, in place */
	}
	for (int64_t i = 0; i < m * m; i++)
		c[i] = c[i] * k->scale[2] + k->base[2 * m + i];
	sinkhorn(c, m, k->iters, k->sinkhorn_eps);
	memcpy(comb, c, (size_t)(m * m) * sizeof(*comb));
	layer_input(k, x, mu, u, li);
}

struct pre_args {
	const struct mtp_cpu_hc_pre *k;
	const void *residual;
	float *post, *comb;
	void *li;
};

static void pre_one(const void *ctx, int64_t r, float *buf)
{
	const struct pre_args *g = ctx;
	const struct mtp_cpu_hc_pre *k = g->k;
	const int64_t m = k->m, h = k->h, n = m * h;
	float *x = buf, *u = x + n, *li = u + h, *mu = li + h;

	mtp_cpu_load(k->act, g->residual, r * n, n, x);
	mtp_cpu_hc_pre_token(k, x, mu, u, g->post + r * m,
			     g->comb + r * m * m, li);
	mtp_cpu_store(k->act, g->li, r * h, h, li);
}

enum mtp_status mtp_cpu_hc_pre_rows(const struct mtp_cpu_hc_pre *k,
				    const void *norm_w, const void *residual,
				    int64_t t, float *post, float *comb,
				    void *layer_input)
{
	const int64_t m = k->m, h = k->h;
	struct mtp_cpu_hc_pre kn = *k;
	const struct pre_args g = {&kn, residual, post, comb, layer_input};
	float *wf = NULL;
	enum mtp_status st;

	if (norm_w) {
		wf = mtp_cpu_widen(k->act, norm_w, h);
		if (!wf)
			return MTP_ERR_NOMEM;
		kn.norm_w = wf;
	}
	st = mtp_cpu_rows(t, m * h, (size_t)(m * h + 2 * h + 2 * m + m * m),
			  pre_one, &g);
	mtp_cpu_free(wf);
	return st;
}

enum mtp_status mtp_cpu_op_hc_pre(const struct mtp_call *c)
{
	struct mtp_cpu_hc_pre k;

	mtp_cpu_hc_pre_init(&k, mtp_cpu_in(c, "", "fn"),
			    mtp_cpu_in(c, "", "scale"),
			    mtp_cpu_in(c, "", "base"), &c->params->hc,
			    c->dims.m, c->dims.h, c->act);
	return mtp_cpu_hc_pre_rows(&k, mtp_cpu_in(c, "", "norm_weight"),
				   mtp_cpu_in(c, "", "residual"), c->dims.t,
				   mtp_cpu_out(c, "", "post_mix"),
				   mtp_cpu_out(c, "", "comb_mix"),
				   mtp_cpu_out(c, "", "layer_input"));
}
