/*
 * GEMMs with one rounding of the result [SPEC.md §10: bf16 operands, wide
 * accumulation, one store]: nn.Linear, eh_proj [Step V3-3] and the SwiGLU FFN
 * of the synthetic blocks, which is three of them.
 */
#include "ref_internal.h"

double mtp_ref_dot(const double *a, const double *b, int64_t n)
{
	double acc = 0.0;

	for (int64_t i = 0; i < n; i++)
		acc += a[i] * b[i];
	return acc;
}

struct linear {
	const double *x, *w;
	int64_t in, out;
	enum mtp_dtype act;
	double *y;
};

static void linear_range(void *p, int64_t lo, int64_t hi)
{
	const struct linear *l = p;

	for (int64_t i = lo; i < hi; i++)
		l->y[i] = mtp_round(
			l->act, mtp_ref_dot(l->w + i % l->out * l->in,
					    l->x + i / l->out * l->in, l->in));
}

void mtp_ref_linear(const double *x, const double *w, int64_t rows, int64_t in,
		    int64_t out, enum mtp_dtype act, double *y)
{
	struct linear l = {x, w, in, out, act, y};

	mtp_ref_parallel(rows * out, (double)rows * (double)out * (double)in,
			 linear_range, &l);
}

void mtp_ref_eh_proj(const double *x, const double *w, int64_t t, int64_t h,
		     enum mtp_dtype act, double *y)
{
	mtp_ref_eh_proj_q(x, (struct mtp_ref_qweight){w, NULL}, t, h, NULL, act,
			  y);
}

void mtp_ref_swiglu(const double *x, const double *w_gate, const double *w_up,
		    const double *w_down, int64_t rows, int64_t h, int64_t f,
		    enum mtp_silu_rounding silu, enum mtp_dtype act,
		    double *out)
{
	const size_t n = (size_t)(rows * f);
	double *gate = mtp_ref_scratch(3 * n);
	double *up = gate + n;
	double *g = up + n;

	mtp_ref_linear(x, w_gate, rows, h, f, act, gate);
	mtp_ref_linear(x, w_up, rows, h, f, act, up);
	for (size_t i = 0; i < n; i++) {
		double s = gate[i] * mtp_ref_sigmoid(gate[i]);

		if (silu == MTP_SILU_TWICE) /* §12.1: torch's SiluAndMul */
			s = mtp_round(act, s);
		g[i] = mtp_round(act, s * up[i]);
	}
	mtp_ref_linear(g, w_down, rows, f, h, act, out);
	free(gate);
}
