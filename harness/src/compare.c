/*
 * Element and tensor comparison. Thresholds and their origin are part of the
 * result, so every report can show where a number came from.
 */
#include "mtp/compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* DESIGN.md defaults per dtype. */
static void dtype_default(enum mtp_dtype dt, double *rtol, double *atol)
{
	switch (dt) {
	case MTP_BF16: *rtol = 1.6e-2; *atol = 1e-5; break;
	case MTP_F16: *rtol = 1e-3; *atol = 1e-5; break;
	case MTP_F32: *rtol = 1.3e-6; *atol = 1e-5; break;
	default: *rtol = 1e-7; *atol = 1e-7; break;
	}
}

void mtp_tol_for(const struct mtp_op *op, const char *output,
		 enum mtp_dtype dt, const struct mtp_tol_override *ovr,
		 struct mtp_tol *out)
{
	(void)op;
	(void)output;
	if (ovr && ovr->set) {
		out->rtol = ovr->rtol;
		out->atol = ovr->atol;
		snprintf(out->origin, sizeof(out->origin), "fixture: %s",
			 ovr->origin);
		return;
	}
	dtype_default(dt, &out->rtol, &out->atol);
	snprintf(out->origin, sizeof(out->origin), "%s default (DESIGN.md)",
		 mtp_dtype_name(dt));
}

/* Distance in units in the last place of dt between two finite values. */
static double ulp_distance(enum mtp_dtype dt, double a, double b)
{
	int mant = dt == MTP_BF16 ? 7 : dt == MTP_F16 ? 10 : dt == MTP_F32 ? 23 : 52;
	int emin = dt == MTP_BF16 ? -126 : dt == MTP_F16 ? -14 : dt == MTP_F32 ? -126 : -1022;
	double m = fmax(fabs(a), fabs(b));
	int e;

	if (a == b)
		return 0;
	frexp(m, &e);
	e -= 1;
	if (e < emin)
		e = emin;
	return fabs(a - b) / ldexp(1.0, e - mant);
}

static int ulp_bucket(double u)
{
	static const double edges[] = {0, 1, 2, 4, 8, 16, 256};

	for (int i = 0; i < 7; i++)
		if (u <= edges[i] + 1e-9)
			return i;
	return 7;
}

static void set_worst(struct mtp_cmp *c, const struct mtp_tensor *t, int64_t i)
{
	int64_t r = i;

	c->worst = i;
	c->worst_ndim = t->ndim;
	for (int d = t->ndim - 1; d >= 0; d--) {
		int64_t s = t->shape[d] ? t->shape[d] : 1;

		c->worst_coord[d] = r % s;
		r /= s;
	}
}

static bool specials_match(double a, double b)
{
	if (isnan(a) || isnan(b))
		return isnan(a) && isnan(b);
	if (isinf(a) || isinf(b))
		return a == b;
	return true;
}

/* One element: returns its headroom (error / threshold), +Inf on a
 * NaN/Inf mismatch. */
static double element(struct mtp_cmp *c, enum mtp_dtype dt, double a, double b,
		      double *sq_err, double *sq_ref)
{
	if (!isfinite(a) || !isfinite(b)) {
		if (specials_match(a, b)) {
			c->ulp_hist[0]++;
			return 0;
		}
		c->n_special_mismatch++;
		c->ulp_hist[MTP_ULP_BUCKETS - 1]++;
		return INFINITY;
	}
	double err = fabs(a - b), thr = c->tol.atol + c->tol.rtol * fabs(b);

	*sq_err += err * err;
	*sq_ref += b * b;
	if (err > c->max_abs)
		c->max_abs = err;
	if (b != 0 && err / fabs(b) > c->max_rel)
		c->max_rel = err / fabs(b);
	if (mtp_dtype_is_float(dt))
		c->ulp_hist[ulp_bucket(ulp_distance(dt, a, b))]++;
	else
		c->ulp_hist[err == 0 ? 0 : MTP_ULP_BUCKETS - 1]++;
	if (!mtp_dtype_is_float(dt))
		return err == 0 ? 0 : INFINITY;
	return thr > 0 ? err / thr : (err == 0 ? 0 : INFINITY);
}

static void argmax_rows(const struct mtp_tensor *got,
			const struct mtp_tensor *want, struct mtp_cmp *c)
{
	int64_t cols = got->ndim ? got->shape[got->ndim - 1] : 0;
	int64_t rows = cols ? mtp_tensor_numel(got) / cols : 0;

	c->has_argmax = true;
	c->argmax_rows = rows;
	for (int64_t r = 0; r < rows; r++) {
		int64_t ia = 0, ib = 0;

		for (int64_t k = 1; k < cols; k++) {
			double a = mtp_load(got->dtype, got->data, (size_t)(r * cols + k));
			double b = mtp_load(want->dtype, want->data, (size_t)(r * cols + k));

			if (a > mtp_load(got->dtype, got->data, (size_t)(r * cols + ia)))
				ia = k;
			if (b > mtp_load(want->dtype, want->data, (size_t)(r * cols + ib)))
				ib = k;
		}
		c->argmax_agree += ia == ib;
	}
}

void mtp_compare(const char *name, const struct mtp_tensor *got,
		 const struct mtp_tensor *want, const struct mtp_tol *tol,
		 bool is_logits, struct mtp_cmp *c)
{
	double sq_err = 0, sq_ref = 0, worst = -1;
	char a[96], b[96];

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->tol = *tol;
	c->worst = -1;
	c->shape_ok = mtp_tensor_same_shape(got, want);
	if (!c->shape_ok) {
		snprintf(c->shape_msg, sizeof(c->shape_msg),
			 "shape %s, expected %s", mtp_shape_str(got, a, sizeof(a)),
			 mtp_shape_str(want, b, sizeof(b)));
		c->headroom = INFINITY;
		return;
	}
	c->n = mtp_tensor_numel(got);
	for (int64_t i = 0; i < c->n; i++) {
		double x = mtp_load(got->dtype, got->data, (size_t)i);
		double y = mtp_load(want->dtype, want->data, (size_t)i);
		double h = element(c, want->dtype, x, y, &sq_err, &sq_ref);

		c->n_bad += !(h <= 1.0);
		if (h > worst || (isnan(h) && worst >= 0)) {
			worst = h;
			set_worst(c, got, i);
			c->worst_got = x;
			c->worst_want = y;
		}
	}
	c->headroom = worst < 0 ? 0 : worst;
	c->nmse = sq_ref > 0 ? sq_err / sq_ref : sq_err;
	if (is_logits && got->ndim >= 1)
		argmax_rows(got, want, c);
	c->passed = c->n_bad == 0;
}

const char *mtp_cmp_where(const struct mtp_cmp *c, char *buf, size_t n)
{
	size_t k = (size_t)snprintf(buf, n, "%s", c->name);

	if (c->worst < 0 || c->worst_ndim == 0)
		return buf;
	for (int d = 0; d < c->worst_ndim && k < n; d++)
		k += (size_t)snprintf(buf + k, n - k, "%s%lld", d ? "," : "[",
				      (long long)c->worst_coord[d]);
	if (k < n)
		snprintf(buf + k, n - k, "]");
	return buf;
}
