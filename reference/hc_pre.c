/*
 * mHC hc_pre [SPEC.md §4.4.1]: from the M residual streams of a token, the
 * mixes (pre, post, and the Sinkhorn-normalised comb matrix) and the
 * sublayer input sum_m pre_m * R[m], optionally with the fused RMSNorm of
 * the tilelang with_norm kernel; and DSpark's delayed form [§13 DS-4], whose
 * layer input uses the pre-mix carried from the previous sublayer (stream 0
 * for layer 0) and which returns its own. pre stays in double (a register in every
 * engine); post_mix and comb_mix are stored as float32.
 */
#include "ref_internal.h"

/* mu[o] = rho * sum_k x_k fn[o,k], rho the RMS scale over the n = M*H values. */
static void hc_mix_logits(const double *x, const double *fn, int64_t nmix,
			  int64_t n, double rms_eps, double *mu)
{
	const double rho = mtp_ref_rms_inv(x, n, rms_eps);

	for (int64_t o = 0; o < nmix; o++)
		mu[o] = rho * mtp_ref_dot(x, fn + o * n, n);
}

/* c[i][j] /= (sum over the row i, or over the column j) + eps. */
static void hc_normalise(double *c, int64_t m, bool rows, double eps)
{
	for (int64_t a = 0; a < m; a++) {
		double s = 0.0;

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

/* In place on the logits c [M,M]: row softmax + eps, column normalise, then
 * iters-1 times row and column normalise. */
static void hc_sinkhorn(double *c, int64_t m, int iters, double eps)
{
	for (int64_t i = 0; i < m; i++) {
		double *row = c + i * m;
		double mx = row[0], s = 0.0;

		for (int64_t j = 1; j < m; j++)
			mx = row[j] > mx ? row[j] : mx;
		for (int64_t j = 0; j < m; j++) {
			row[j] = exp(row[j] - mx);
			s += row[j];
		}
		for (int64_t j = 0; j < m; j++)
			row[j] = row[j] / s + eps;
	}
	hc_normalise(c, m, false, eps);
	for (int it = 1; it < iters; it++) {
		hc_normalise(c, m, true, eps);
		hc_normalise(c, m, false, eps);
	}
}

/* layer_input [H] of one token from its streams x [M,H]; u is scratch [H].
 * pre NULL is the identity pre-mix of DSpark's layer 0 [§13 DS-4]: stream 0
 * selected as it is (a select, so Inf or NaN in other streams stay out). */
static void hc_layer_input(const double *x, const double *pre,
			   const double *norm_w, const struct mtp_hc_params *p,
			   int64_t m, int64_t h, enum mtp_dtype act, double *u,
			   double *out)
{
	for (int64_t i = 0; i < h; i++) {
		u[i] = pre ? 0.0 : x[i];
		for (int64_t s = 0; pre && s < m; s++)
			u[i] += pre[s] * x[s * h + i];
		out[i] = mtp_round(act, u[i]);
	}
	if (!norm_w)
		return;
	/* variance from the unrounded u, applied to the rounded u */
	const double rho = mtp_ref_rms_inv(u, h, p->norm_eps);

	for (int64_t i = 0; i < h; i++)
		out[i] = mtp_round(act, out[i] * rho * norm_w[i]);
}

/* The outputs of one hc_pre or hc_pre_delayed call. */
struct hc_out {
	double *post_mix, *comb_mix, *layer_input;
	double *pre_out; /* delayed only: this sublayer's pre-mix, float32 */
};

/*
 * Row r's mixes; then its layer input with the row's own pre-mix
 * (delayed false), or with pre_in's row, or stream 0 if pre_in is NULL
 * (delayed true, §13 DS-4).
 */
static void hc_pre_rows(const double *residual, const double *fn,
			const double *scale, const double *base,
			const double *norm_w, const struct mtp_hc_params *p,
			int64_t t, int64_t m, int64_t h, enum mtp_dtype act,
			bool delayed, const double *pre_in,
			const struct hc_out *o)
{
	const int64_t nmix = 2 * m + m * m;
	double *mu = mtp_ref_scratch((size_t)(nmix + m + h));
	double *pre = mu + nmix;
	double *u = pre + m;

	for (int64_t r = 0; r < t; r++) {
		const double *x = residual + r * m * h;
		double *c = mu + 2 * m; /* the logits L become C in place */
		const double *w = !delayed ? pre
				  : pre_in ? pre_in + r * m
					   : NULL;

		hc_mix_logits(x, fn, nmix, m * h, p->rms_eps, mu);
		for (int64_t s = 0; s < m; s++) {
			pre[s] = mtp_ref_sigmoid(mu[s] * scale[0] + base[s]) +
				 p->pre_eps;
			o->post_mix[r * m + s] = mtp_round(
				MTP_F32, mtp_ref_sigmoid(mu[m + s] * scale[1] +
							 base[m + s]) *
						 p->post_mult);
			if (delayed)
				o->pre_out[r * m + s] =
					mtp_round(MTP_F32, pre[s]);
		}
		for (int64_t k = 0; k < m * m; k++)
			c[k] = c[k] * scale[2] + base[2 * m + k];
		hc_sinkhorn(c, m, p->sinkhorn_iters, p->sinkhorn_eps);
		for (int64_t k = 0; k < m * m; k++)
			o->comb_mix[r * m * m + k] = mtp_round(MTP_F32, c[k]);
		hc_layer_input(x, w, norm_w, p, m, h, act, u,
			       o->layer_input + r * h);
	}
	free(mu);
}

void mtp_ref_hc_pre(const double *residual, const double *fn,
		    const double *scale, const double *base,
		    const double *norm_w, const struct mtp_hc_params *p,
		    int64_t t, int64_t m, int64_t h, enum mtp_dtype act,
		    double *post_mix, double *comb_mix, double *layer_input)
{
	const struct hc_out o = {post_mix, comb_mix, layer_input, NULL};

	hc_pre_rows(residual, fn, scale, base, norm_w, p, t, m, h, act, false,
		    NULL, &o);
}

void mtp_ref_hc_pre_delayed(const double *residual, const double *fn,
			    const double *scale, const double *base,
			    const double *norm_w, const double *pre_in,
			    const struct mtp_hc_params *p, int64_t t, int64_t m,
			    int64_t h, enum mtp_dtype act, double *post_mix,
			    double *comb_mix, double *layer_input,
			    double *pre_out)
{
	const struct hc_out o = {post_mix, comb_mix, layer_input, pre_out};

	hc_pre_rows(residual, fn, scale, base, norm_w, p, t, m, h, act, true,
		    pre_in, &o);
}
