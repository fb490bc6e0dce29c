/*
 * FP8 block-quantized projections [SPEC.md §12.2]: float8_e4m3fn weights
 * with 128x128 block scales, computed weight-only (dequantize) or W8A8
 * (activations quantized per token per group of 128 with a dynamic scale).
 * Every MTP projection (eh_proj, e_proj/h_proj, the shared head) goes
 * through mtp_ref_qlinear, quantized or not.
 */
#include "ref_internal.h"

#define E4M3_MAX 448.0

static int64_t ceil_div(int64_t a, int64_t b)
{
	return (a + b - 1) / b;
}

struct qgemm {
	const double *x;
	struct mtp_ref_qweight w;
	int64_t in, out;
	double eps;
	enum mtp_dtype out_dt;
	double *y;
};

/* y[r,o] = sum_c x[r,c] * w[o,c] * scale_inv[o/128, c/128], no rounding
 * of the dequantized weight; elements [lo, hi) of y, row-major. */
static void dequant_range(void *p, int64_t lo, int64_t hi)
{
	const struct qgemm *g = p;
	const int64_t in = g->in, sc = ceil_div(in, MTP_QUANT_BLOCK);

	for (int64_t i = lo; i < hi; i++) {
		const int64_t r = i / g->out, o = i % g->out;
		const double *s = g->w.scale_inv + o / MTP_QUANT_BLOCK * sc;
		const double *x = g->x + r * in, *w = g->w.w + o * in;
		double acc = 0.0;

		for (int64_t c = 0; c < in; c++)
			acc += x[c] * (w[c] * s[c / MTP_QUANT_BLOCK]);
		g->y[i] = mtp_round(g->out_dt, acc);
	}
}

/* One token's group [n values]: its scale (returned) and its e4m3 values. */
static double quant_group(const double *x, int64_t n, double eps, double *q)
{
	double amax = 0.0, s;

	for (int64_t i = 0; i < n; i++)
		amax = isnan(x[i]) || isnan(amax) ? NAN
						  : fmax(amax, fabs(x[i]));
	s = mtp_round(MTP_F32, fmax(amax, mtp_round(MTP_F32, eps)) / E4M3_MAX);
	if (isnan(amax))
		s = NAN;
	for (int64_t i = 0; i < n; i++)
		q[i] = mtp_e4m3_to_double(mtp_e4m3_from_double(
			mtp_round(MTP_F32, x[i] / s), true));
	return s;
}

/* W8A8: rows [lo, hi), each quantized per group, then its products. */
static void w8a8_range(void *p, int64_t lo, int64_t hi)
{
	const struct qgemm *gm = p;
	const int64_t in = gm->in, ng = ceil_div(in, MTP_QUANT_BLOCK);
	double *q = mtp_ref_scratch((size_t)(in + ng));
	double *s = q + in;

	for (int64_t r = lo; r < hi; r++) {
		for (int64_t g = 0; g < ng; g++) {
			int64_t c0 = g * MTP_QUANT_BLOCK;
			int64_t n = in - c0 < MTP_QUANT_BLOCK ? in - c0
							      : MTP_QUANT_BLOCK;

			s[g] = quant_group(gm->x + r * in + c0, n, gm->eps,
					   q + c0);
		}
		for (int64_t o = 0; o < gm->out; o++) {
			const double *ws =
				gm->w.scale_inv + o / MTP_QUANT_BLOCK * ng;
			double acc = 0.0;

			for (int64_t g = 0; g < ng; g++) {
				int64_t c0 = g * MTP_QUANT_BLOCK;
				int64_t n = in - c0 < MTP_QUANT_BLOCK
						    ? in - c0
						    : MTP_QUANT_BLOCK;

				acc += mtp_ref_dot(q + c0,
						   gm->w.w + o * in + c0, n) *
				       s[g] * ws[g];
			}
			gm->y[r * gm->out + o] = mtp_round(gm->out_dt, acc);
		}
	}
	free(q);
}

void mtp_ref_qlinear(const double *x, struct mtp_ref_qweight w, int64_t rows,
		     int64_t in, int64_t out, const struct mtp_ref_quant *q,
		     enum mtp_dtype out_dt, double *y)
{
	struct qgemm g = {x, w, in, out, q ? q->act_eps : 0.0, out_dt, y};
	const double work = (double)rows * (double)out * (double)in;

	if (!w.scale_inv)
		mtp_ref_linear(x, w.w, rows, in, out, out_dt, y);
	else if (q && q->scheme == MTP_PROJ_QUANT_FP8_W8A8)
		mtp_ref_parallel(rows, work, w8a8_range, &g);
	else
		mtp_ref_parallel(rows * out, work, dequant_range, &g);
}

void mtp_ref_eh_proj_q(const double *x, struct mtp_ref_qweight w, int64_t t,
		       int64_t h, const struct mtp_ref_quant *q,
		       enum mtp_dtype act, double *y)
{
	mtp_ref_qlinear(x, w, t, 2 * h, h, q, act, y);
}
