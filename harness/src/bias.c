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

/* Outputs computed through the mHC mix GEMMs (§4.4.1): everything of the
 * hc ops but hc_post's own output, and every output of a V4 block, step or
 * chain (they all lie downstream of an hc_pre). */
static bool through_mix_gemm(const struct mtp_op *op, enum mtp_family fam,
			     const char *output)
{
	switch (op->id) {
	case MTP_OP_HC_PRE:
	case MTP_OP_HC_HEAD: return true;
	case MTP_OP_HC_FUSED_POST_PRE:
		return strcmp(output, "residual_out") != 0;
	case MTP_OP_MTP_BLOCK:
	case MTP_OP_MTP_STEP:
	case MTP_OP_DRAFT_CHAIN: return fam == MTP_FAMILY_DEEPSEEK_V4;
	default: return false;
	}
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

/* Per-row means of d and m (row mode), or the elements (element mode). */
static void collect(const struct mtp_tensor *got, const struct mtp_tensor *want,
		    bool rows, struct series *d, struct series *m,
		    int64_t *ndiff)
{
	int64_t n = mtp_tensor_numel(want);
	int64_t nr = rows && want->ndim > 0 ? want->shape[0] : 1;
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
			*ndiff += e != 0;
			add(rows ? &rd : d, e);
			add(rows ? &rm : m, b > 0 ? e : b < 0 ? -e : 0);
		}
		if (rows && rd.n) {
			add(d, rd.s / (double)rd.n);
			add(m, rm.s / (double)rm.n);
		}
	}
}

void mtp_rounding_bias(const struct mtp_op *op, enum mtp_family family,
		       const char *output, const struct mtp_tensor *got,
		       const struct mtp_tensor *want, struct mtp_bias *out)
{
	const char *slash = strrchr(output, '/');
	const char *base = slash ? slash + 1 : output;
	struct series d = {0}, m = {0};
	int64_t ndiff = 0;
	double zd, zm;

	memset(out, 0, sizeof(*out));
	if (!got->data || !want->data || !mtp_tensor_same_shape(got, want) ||
	    !mtp_dtype_is_float(want->dtype) || want->dtype == MTP_F64)
		return;
	out->row_mode =
		want->dtype == MTP_F32 || through_mix_gemm(op, family, base);
	collect(got, want, out->row_mode, &d, &m, &ndiff);
	out->n = d.n;
	if (d.n < (out->row_mode ? MTP_BIAS_MIN_ROWS : MTP_BIAS_MIN_ELEMS))
		return;
	out->tested = true;
	zd = zstat(&d);
	zm = zstat(&m);
	out->toward_zero = fabs(zm) > fabs(zd);
	out->z = out->toward_zero ? zm : zd;
	out->mean = out->toward_zero ? mean_of(&m) : mean_of(&d);
	out->fired = fabs(out->z) >= MTP_BIAS_Z &&
		     fabs(out->mean) >= MTP_BIAS_MIN_MEAN &&
		     ndiff >= MTP_BIAS_MIN_DIFF;
}

const char *mtp_bias_direction(const struct mtp_bias *b)
{
	if (b->toward_zero)
		return b->z < 0 ? "toward zero" : "away from zero";
	return b->z < 0 ? "toward -inf" : "toward +inf";
}
