/*
 * The matrix products of the backend (eh_proj, e_proj/h_proj, lm_head and
 * the synthetic block's GEMMs) through cblas_sgemm: activations widened to
 * fp32 around it, fp32 accumulation inside, and (for nn.Linear) one
 * rounding of each result. Weights are widened per call, in slabs of rows
 * so that a vocabulary-sized head never needs a full fp32 copy.
 */
#include "cpu_internal.h"

#include <cblas.h>

/* Rows of a weight widened at a time: at most 16 Mi floats (64 MiB). */
#define SLAB_FLOATS ((int64_t)1 << 24)

static void widen_rows(enum mtp_dtype act, const void *src, int64_t off,
		       int64_t rows, int64_t cols, float *dst)
{
#pragma omp parallel for schedule(static) if (rows * cols >= MTP_CPU_PAR_MIN)
	for (int64_t r = 0; r < rows; r++)
		mtp_cpu_load(act, src, off + r * cols, cols, dst + r * cols);
}

/* fp32 view of an activation matrix: the data itself when act is fp32. */
static const float *as_f32(enum mtp_dtype act, const void *src, int64_t off,
			   int64_t rows, int64_t cols, float *buf)
{
	if (act == MTP_F32)
		return (const float *)src + off;
	widen_rows(act, src, off, rows, cols, buf);
	return buf;
}

int64_t mtp_cpu_slab_rows(int64_t in, int64_t out)
{
	int64_t n = in ? SLAB_FLOATS / in : out;

	return n < 1 ? 1 : (n > out ? out : n);
}

void mtp_cpu_sgemm_slab(const float *x, const float *w, int64_t rows, int64_t n,
			int64_t in, int64_t out, float *y)
{
	cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, (int)rows, (int)n,
		    (int)in, 1.0f, x, (int)in, w, (int)in, 0.0f, y, (int)out);
}

enum mtp_status mtp_cpu_gemm(enum mtp_dtype act, const void *x, const void *w,
			     int64_t rows, int64_t in, int64_t out, float *y)
{
	const int64_t nw = mtp_cpu_slab_rows(in, out);
	float *xb = NULL, *wb = NULL;
	enum mtp_status st = MTP_ERR_NOMEM;

	if (rows == 0 || out == 0)
		return MTP_OK;
	if (in == 0) {
		memset(y, 0, (size_t)(rows * out) * sizeof(*y));
		return MTP_OK;
	}
	if (act != MTP_F32) {
		xb = mtp_cpu_floats((size_t)(rows * in));
		wb = mtp_cpu_floats((size_t)(nw * in));
		if (!xb || !wb)
			goto out_free;
	}
	const float *xf = as_f32(act, x, 0, rows, in, xb);

	for (int64_t o = 0; o < out; o += nw) {
		const int64_t n = out - o < nw ? out - o : nw;
		const float *wf = as_f32(act, w, o * in, n, in, wb);

		mtp_cpu_sgemm_slab(xf, wf, rows, n, in, out, y + o);
	}
	st = MTP_OK;
out_free:
	mtp_cpu_free(wb);
	mtp_cpu_free(xb);
	return st;
}

enum mtp_status mtp_cpu_linear(enum mtp_dtype act, const void *x, const void *w,
			       int64_t rows, int64_t in, int64_t out, void *y)
{
	float *yf = mtp_cpu_floats((size_t)(rows * out));
	enum mtp_status st = MTP_ERR_NOMEM;

	if (!yf)
		return st;
	st = mtp_cpu_gemm(act, x, w, rows, in, out, yf);
	if (!st) {
#pragma omp parallel for schedule(static) if (rows * out >= MTP_CPU_PAR_MIN)
		for (int64_t r = 0; r < rows; r++)
			mtp_cpu_store(act, y, r * out, out, yf + r * out);
	}
	mtp_cpu_free(yf);
	return st;
}
