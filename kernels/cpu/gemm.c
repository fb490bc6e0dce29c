/*
 * The matrix products of the backend (eh_proj, e_proj/h_proj, lm_head and
 * the synthetic block's GEMMs): activations widened to fp32 around them,
 * fp32 accumulation inside, and (for nn.Linear) one rounding of each
 * result. Weights are widened per call, in slabs of rows so that a
 * vocabulary-sized head never needs a full fp32 copy. The products are the
 * backend's own (dots.c tiles), not a BLAS: an element's bits must not
 * depend on how many rows the call has (`run --invariance`), which
 * OpenBLAS sgemm did not give (a row alone and in a batch differed by 1-5
 * fp32 ulps, enough to flip a bf16 rounding downstream).
 */
#include "cpu_internal.h"

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

/* Weight rows per task and x rows per pass: a task's K chunk of w (24 rows,
 * 96 KiB) and a pass's chunk of x (32 rows, 128 KiB) stay in L2. */
#define GEMM_OB 24
#define GEMM_RB 32

static int64_t min64(int64_t a, int64_t b)
{
	return a < b ? a : b;
}

/* y[r][o] for o in [o0, o1): 4x3 tiles over the K chunks in order; the
 * missing rows of a tile repeat the last ones, their results dropped. */
static void slab_block(const float *x, const float *w, int64_t rows, int64_t o0,
		       int64_t o1, int64_t in, int64_t out,
		       enum mtp_cpu_lanes lanes, float *y)
{
	for (int64_t r = 0; r < rows; r++)
		memset(y + r * out + o0, 0, (size_t)(o1 - o0) * sizeof(*y));
	for (int64_t kc = 0; kc < in; kc += MTP_DOT_KC) {
		const int64_t len = min64(in - kc, MTP_DOT_KC);

		for (int64_t rb = 0; rb < rows; rb += GEMM_RB)
			for (int64_t o = o0; o < o1; o += MTP_DOT_TO) {
				const float *wc[MTP_DOT_TO];

				for (int d = 0; d < MTP_DOT_TO; d++)
					wc[d] = w + min64(o + d, o1 - 1) * in +
						kc;
				for (int64_t r = rb;
				     r < min64(rb + GEMM_RB, rows);
				     r += MTP_DOT_TR) {
					const float *xc[MTP_DOT_TR];
					float acc[MTP_DOT_TR][MTP_DOT_TO] = {
						{0}};

					for (int t = 0; t < MTP_DOT_TR; t++)
						xc[t] = x +
							min64(r + t, rows - 1) *
								in +
							kc;
					mtp_cpu_dots_4x3(xc, wc, len, lanes,
							 acc);
					for (int t = 0;
					     t < MTP_DOT_TR && r + t < rows;
					     t++)
						for (int d = 0;
						     d < MTP_DOT_TO &&
						     o + d < o1;
						     d++)
							y[(r + t) * out + o +
							  d] += acc[t][d];
				}
			}
	}
}

void mtp_cpu_sgemm_slab(const float *x, const float *w, int64_t rows, int64_t n,
			int64_t in, int64_t out, float *y)
{
	const enum mtp_cpu_lanes lanes = mtp_cpu_dot_lanes();
	const int64_t tasks = (n + GEMM_OB - 1) / GEMM_OB;

#pragma omp parallel for schedule(static) if (rows * n * in >= MTP_CPU_PAR_MIN)
	for (int64_t b = 0; b < tasks; b++)
		slab_block(x, w, rows, b * GEMM_OB, min64(n, (b + 1) * GEMM_OB),
			   in, out, lanes, y);
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
