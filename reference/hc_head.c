/*
 * mHC hc_head [SPEC.md §4.4.4]: collapses the M streams of a token into one
 * hidden with sigmoid weights. The CUDA (tilelang) kernel takes the mixes
 * from the unrounded streams and scales by rho afterwards; the ROCm (triton)
 * kernel first stores x*rho in the activation dtype. Both are references.
 */
#include "ref_internal.h"

/* mu[s] (already including rho) for the token's streams x [M*H]. */
static void hc_head_mixes(const double *x, const double *fn, int64_t m,
			  int64_t n, double rms_eps,
			  enum mtp_hc_head_variant variant, enum mtp_dtype act,
			  double *xhat, double *mu)
{
	const double rho = mtp_ref_rms_inv(x, n, rms_eps);

	if (variant == MTP_HC_HEAD_CUDA) {
		for (int64_t s = 0; s < m; s++)
			mu[s] = mtp_ref_dot(x, fn + s * n, n) * rho;
		return;
	}
	for (int64_t k = 0; k < n; k++)
		xhat[k] = mtp_round(act, x[k] * rho);
	for (int64_t s = 0; s < m; s++)
		mu[s] = mtp_ref_dot(xhat, fn + s * n, n);
}

void mtp_ref_hc_head(const double *x, const double *fn, const double *scale,
		     const double *base, int64_t t, int64_t m, int64_t h,
		     double rms_eps, double hc_eps,
		     enum mtp_hc_head_variant variant, enum mtp_dtype act,
		     double *y)
{
	const int64_t n = m * h;
	double *mu = mtp_ref_scratch((size_t)(m + n));
	double *xhat = mu + m;

	for (int64_t r = 0; r < t; r++) {
		const double *xr = x + r * n;

		hc_head_mixes(xr, fn, m, n, rms_eps, variant, act, xhat, mu);
		for (int64_t s = 0; s < m; s++)
			mu[s] = mtp_ref_sigmoid(mu[s] * scale[0] + base[s]) +
				hc_eps;
		mtp_ref_hc_collapse(xr, mu, 1, m, h, act, y + r * h);
	}
	free(mu);
}
