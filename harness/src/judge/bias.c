/*
 * The signed rounding-bias test; see mtp/bias.h and docs/DIAGNOSES.md.
 */
#include "mtp/bias.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define CLIP_ULPS 4.0

/* ulp of dt at |v| (the spacing of dt's values just above |v|). */
static double ulp_at(enum mtp_dtype dt, double v)
{
	int mant = dt == MTP_BF16 ? 7 : dt == MTP_F16 ? 10 : 23;
	int emin = dt == MTP_F16 ? -14 : -126;
	int e;

	frexp(fabs(v), &e);
	e -= 1;
	if (v == 0 || e < emin)
		e = emin;
	return ldexp(1.0, e - mant);
}

/* Outputs computed through the mHC mix GEMMs (§4.4.1), as the op's row says
 * (op->bias): everything of the hc ops but hc_post's own output, and every
 * output of a V4 block, step or chain (they all lie downstream of an
 * hc_pre). */
static bool through_mix_gemm(const struct mtp_op *op, enum mtp_family fam,
			     const char *output)
{
	if (op->bias == MTP_BIAS_MHC)
		return mtp_family_mhc(fam);
	return op->bias == MTP_BIAS_ALL &&
	       !(op->bias_skip && strcmp(output, op->bias_skip) == 0);
}

struct series {
	double s, ss;
	int64_t n;
};

static void add(struct series *a, double v)
{
	a->s += v;
	a->ss += v * v;
	a->n++;
}

static double mean_of(const struct series *a)
{
	return a->n ? a->s / (double)a->n : 0;
}

static double zstat(const struct series *a)
{
	double mean, var;

	if (a->n < 2)
		return 0;
	mean = a->s / (double)a->n;
	var = (a->ss - a->s * mean) / (double)(a->n - 1);
	if (var <= 0)
		return mean == 0 ? 0 : copysign(INFINITY, mean);
	return mean / sqrt(var / (double)a->n);
}

/* The four series of one output: per element (d, m) and per row of the
 * first dimension (row means of d and m). */
struct collected {
	struct series d, m, rd, rm;
	int64_t ndiff, near; /* elements that differ; within one ulp */
};

static void collect(const struct mtp_tensor *got, const struct mtp_tensor *want,
		    struct collected *c)
{
	int64_t n = mtp_tensor_numel(want);
	int64_t nr = want->ndim > 0 ? want->shape[0] : 1;
	int64_t per = nr ? n / nr : 0;

	for (int64_t r = 0; r < nr; r++) {
		struct series rd = {0}, rm = {0};

		for (int64_t i = r * per; i < (r + 1) * per; i++) {
			double a = mtp_load(got->dtype, got->data, (size_t)i);
			double b = mtp_load(want->dtype, want->data, (size_t)i);
			double e;

			if (!isfinite(a) || !isfinite(b))
				continue;
			e = fmax(-CLIP_ULPS,
				 fmin(CLIP_ULPS,
				      (a - b) / ulp_at(want->dtype, b)));
			c->ndiff += e != 0;
			c->near += fabs(e) <= 1;
			add(&c->d, e);
			add(&rd, e);
			add(&c->m, b > 0 ? e : b < 0 ? -e : 0);
			add(&rm, b > 0 ? e : b < 0 ? -e : 0);
		}
		if (rd.n) {
			add(&c->rd, mean_of(&rd));
			add(&c->rm, mean_of(&rm));
		}
	}
}

/* z and mean of the stronger of two series; whether they pass the test. */
static bool judge(const struct series *d, const struct series *m, int64_t ndiff,
		  double *z, double *mean, bool *toward_zero)
{
	double zd = zstat(d), zm = zstat(m);

	*toward_zero = fabs(zm) > fabs(zd);
	*z = *toward_zero ? zm : zd;
	*mean = *toward_zero ? mean_of(m) : mean_of(d);
	return fabs(*z) >= MTP_BIAS_Z && fabs(*mean) >= MTP_BIAS_MIN_MEAN &&
	       ndiff >= MTP_BIAS_MIN_DIFF;
}

void mtp_rounding_bias(const struct mtp_op *op, enum mtp_family family,
		       const char *output, const struct mtp_tensor *got,
		       const struct mtp_tensor *want, struct mtp_bias *out)
{
	const char *slash = strrchr(output, '/');
	const char *base = slash ? slash + 1 : output;
	struct collected c = {0};
	double z = 0, mean = 0;
	bool tz = false, hit;

	memset(out, 0, sizeof(*out));
	if (!got->data || !want->data || !mtp_tensor_same_shape(got, want) ||
	    !mtp_dtype_is_float(want->dtype) || want->dtype == MTP_F64)
		return;
	out->row_mode =
		want->dtype == MTP_F32 || through_mix_gemm(op, family, base);
	collect(got, want, &c);
	/* the element test, for naming a failure that already failed */
	out->names_failure = c.d.n >= MTP_BIAS_MIN_ELEMS &&
			     c.near * 100 >= c.d.n * 99 &&
			     judge(&c.d, &c.m, c.ndiff, &z, &mean, &tz);
	out->z_elem = out->names_failure ? z : 0;
	out->toward_zero_elem = tz;
	out->n = out->row_mode ? c.rd.n : c.d.n;
	if (out->row_mode ? c.rd.n < MTP_BIAS_MIN_ROWS
			  : c.d.n < MTP_BIAS_MIN_ELEMS)
		return;
	out->tested = true;
	out->report_only = want->dtype == MTP_F32;
	hit = out->row_mode ? judge(&c.rd, &c.rm, c.ndiff, &out->z, &out->mean,
				    &out->toward_zero)
			    : judge(&c.d, &c.m, c.ndiff, &out->z, &out->mean,
				    &out->toward_zero);
	out->fired = hit && !out->report_only;
}

static const char *direction(bool toward_zero, double z)
{
	if (toward_zero)
		return z < 0 ? "toward zero" : "away from zero";
	return z < 0 ? "toward -inf" : "toward +inf";
}

const char *mtp_bias_direction(const struct mtp_bias *b)
{
	return b->fired ? direction(b->toward_zero, b->z)
			: direction(b->toward_zero_elem, b->z_elem);
}
