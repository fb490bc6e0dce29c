/*
 * FP8 block-quantized projections on the CPU [SPEC.md §12.2]: the
 * float8_e4m3fn weight is dequantized slab by slab into fp32 (w * its
 * 128x128 block scale); under W8A8 each activation row is quantized per
 * group of 128 inputs (dynamic scale max(amax, eps) / 448, e4m3 with
 * saturation) and carried as q * s; then the same slab sgemm as every
 * other GEMM here (gemm.c). The products differ from an fp8 tensor-core GEMM only
 * by the fp32 rounding of q * s and w * s_w.
 */
#include "cpu_internal.h"

#define QB MTP_QUANT_BLOCK

static float scale_at(const struct mtp_cpu_qw *w, int64_t i)
{
	if (w->scale_dt == MTP_F8E8M0)
		return (float)mtp_e8m0_to_double(
			((const uint8_t *)w->scale)[i]);
	return ((const float *)w->scale)[i];
}

/* Rows [o0, o0+n) of the dequantized weight [out,in] into dst [n,in]. */
static void dequant_rows(const struct mtp_cpu_qw *w, int64_t o0, int64_t n,
			 int64_t in, float *dst)
{
	const int64_t sc = (in + QB - 1) / QB;
	float lut[256];

	for (int b = 0; b < 256; b++)
		lut[b] = (float)mtp_e4m3_to_double((uint8_t)b);
#pragma omp parallel for schedule(static) if (n * in >= MTP_CPU_PAR_MIN)
	for (int64_t r = 0; r < n; r++) {
		const uint8_t *src = (const uint8_t *)w->w + (o0 + r) * in;
		const int64_t srow = (o0 + r) / QB * sc;

		for (int64_t c = 0; c < in; c++)
			dst[r * in + c] =
				lut[src[c]] * scale_at(w, srow + c / QB);
	}
}

/* Quantizes one row in place to q * s per group of 128 (W8A8). */
static void quant_row(float *x, int64_t in, float eps)
{
	for (int64_t c0 = 0; c0 < in; c0 += QB) {
		const int64_t n = in - c0 < QB ? in - c0 : QB;
		float amax = 0.0f, s;

		for (int64_t i = 0; i < n; i++)
			amax = isnan(x[c0 + i]) || isnan(amax)
				       ? NAN
				       : fmaxf(amax, fabsf(x[c0 + i]));
		s = isnan(amax) ? NAN : fmaxf(amax, eps) / 448.0f;
		for (int64_t i = 0; i < n; i++) {
			float v = x[c0 + i] / s;

			x[c0 + i] = (float)mtp_e4m3_to_double(
					    mtp_e4m3_from_double(v, true)) *
				    s;
		}
	}
}

static enum mtp_status fp8_gemm(enum mtp_dtype act, const void *x,
				const struct mtp_cpu_qw *w,
				const struct mtp_ref_quant *q, int64_t rows,
				int64_t in, int64_t out, float *y)
{
	const int64_t nw = mtp_cpu_slab_rows(in, out);
	float *xf = mtp_cpu_floats((size_t)(rows * in) + 1);
	float *wf = mtp_cpu_floats((size_t)(nw * in) + 1);
	enum mtp_status st = MTP_ERR_NOMEM;

	if (!xf || !wf)
		goto out_free;
#pragma omp parallel for schedule(static) if (rows * in >= MTP_CPU_PAR_MIN)
	for (int64_t r = 0; r < rows; r++) {
		mtp_cpu_load(act, x, r * in, in, xf + r * in);
		if (q && q->scheme == MTP_PROJ_QUANT_FP8_W8A8)
			quant_row(xf + r * in, in, (float)q->act_eps);
	}
	for (int64_t o = 0; o < out; o += nw) {
		const int64_t n = out - o < nw ? out - o : nw;

		dequant_rows(w, o, n, in, wf);
		mtp_cpu_sgemm_slab(xf, wf, rows, n, in, out, y + o);
	}
	st = MTP_OK;
out_free:
	mtp_cpu_free(wf);
	mtp_cpu_free(xf);
	return st;
}

enum mtp_status mtp_cpu_qgemm(enum mtp_dtype act, const void *x,
			      const struct mtp_cpu_qw *w,
			      const struct mtp_ref_quant *q, int64_t rows,
			      int64_t in, int64_t out, float *y)
{
	if (!w->scale)
		return mtp_cpu_gemm(act, x, w->w, rows, in, out, y);
	if (rows == 0 || out == 0)
		return MTP_OK;
	if (in == 0) {
		memset(y, 0, (size_t)(rows * out) * sizeof(*y));
		return MTP_OK;
	}
	return fp8_gemm(act, x, w, q, rows, in, out, y);
}

enum mtp_status mtp_cpu_qlinear(enum mtp_dtype act, const void *x,
				const struct mtp_cpu_qw *w,
				const struct mtp_ref_quant *q, int64_t rows,
				int64_t in, int64_t out, void *y)
{
	float *yf;
	enum mtp_status st;

	if (!w->scale)
		return mtp_cpu_linear(act, x, w->w, rows, in, out, y);
	yf = mtp_cpu_floats((size_t)(rows * out) + 1);
	if (!yf)
		return MTP_ERR_NOMEM;
	st = mtp_cpu_qgemm(act, x, w, q, rows, in, out, yf);
	if (!st) {
#pragma omp parallel for schedule(static) if (rows * out >= MTP_CPU_PAR_MIN)
		for (int64_t r = 0; r < rows; r++)
			mtp_cpu_store(act, y, r * out, out, yf + r * out);
	}
	mtp_cpu_free(yf);
	return st;
}

void mtp_cpu_qw_get(const struct mtp_call *c, const char *pfx, const char *name,
		    struct mtp_cpu_qw *w)
{
	char sname[MTP_NAME_MAX];
	const struct mtp_tensor *wt = mtp_call_tensor(c, false, pfx, name);
	const struct mtp_tensor *st = NULL;

	memset(w, 0, sizeof(*w));
	w->w = wt ? wt->data : NULL;
	if (wt && wt->dtype == MTP_F8E4M3 &&
	    mtp_quant_scale_name(name, sname, sizeof(sname)))
		st = mtp_call_tensor(c, false, pfx, sname);
	if (st && st->data) {
		w->scale = st->data;
		w->scale_dt = st->dtype;
	}
}
