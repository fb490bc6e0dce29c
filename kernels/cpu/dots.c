/*
 * The dot-product tiles under every matrix product of the backend (the
 * GEMMs of gemm.c and hc_pre's mixes), written so that a dot's bits do not
 * depend on the batch it is computed in (SPEC.md §11, `run --invariance`):
 * each dot is lane-wise FMAs over its span (16 lanes where AVX-512 may run,
 * else 8), one fixed reduction, then the rest past the last full vector
 * (dot_rest) — the same operations whichever tile, token position or thread
 * computes it. A product is then the sum, in K-chunk order, of these spans.
 * Before this file the GEMMs went through OpenBLAS sgemm, whose result for
 * a row changed with the number of rows (1-5 fp32 ulps).
 */
#include "cpu_internal.h"
#include "vec.h"

#include <math.h>

#if MTP_CPU_VEC
/* Past the main loop: one 8-lane step if at least 8 remain (only after a
 * 16-lane loop), then scalar FMAs. Every tile finishes its dots here. */
MTP_CPU_AVX2 static float dot_rest(const float *x, const float *w, int64_t n)
{
	float s = 0.0f;
	int64_t i = 0;

	if (n >= 8) {
		s = mtp_vec_hsum(
			_mm256_mul_ps(_mm256_loadu_ps(x), _mm256_loadu_ps(w)));
		i = 8;
	}
	for (; i < n; i++)
		s = fmaf(x[i], w[i], s);
	return s;
}

MTP_CPU_AVX2 static void tile_4x3_256(const float *const x[MTP_DOT_TR],
				      const float *const w[MTP_DOT_TO],
				      int64_t len, float acc[][MTP_DOT_TO])
{
	__m256 v[MTP_DOT_TR][MTP_DOT_TO];
	int64_t k = 0;

	for (int t = 0; t < MTP_DOT_TR; t++)
		for (int d = 0; d < MTP_DOT_TO; d++)
			v[t][d] = _mm256_setzero_ps();
	for (; k + 8 <= len; k += 8) {
		const __m256 f0 = _mm256_loadu_ps(w[0] + k);
		const __m256 f1 = _mm256_loadu_ps(w[1] + k);
		const __m256 f2 = _mm256_loadu_ps(w[2] + k);

		for (int t = 0; t < MTP_DOT_TR; t++) {
			const __m256 xt = _mm256_loadu_ps(x[t] + k);

			v[t][0] = _mm256_fmadd_ps(xt, f0, v[t][0]);
			v[t][1] = _mm256_fmadd_ps(xt, f1, v[t][1]);
			v[t][2] = _mm256_fmadd_ps(xt, f2, v[t][2]);
		}
	}
	for (int t = 0; t < MTP_DOT_TR; t++)
		for (int d = 0; d < MTP_DOT_TO; d++)
			acc[t][d] += mtp_vec_hsum(v[t][d]) +
				     dot_rest(x[t] + k, w[d] + k, len - k);
}

MTP_CPU_AVX512 static void tile_4x3_512(const float *const x[MTP_DOT_TR],
					const float *const w[MTP_DOT_TO],
					int64_t len, float acc[][MTP_DOT_TO])
{
	__m512 v[MTP_DOT_TR][MTP_DOT_TO];
	int64_t k = 0;

	for (int t = 0; t < MTP_DOT_TR; t++)
		for (int d = 0; d < MTP_DOT_TO; d++)
			v[t][d] = _mm512_setzero_ps();
	for (; k + 16 <= len; k += 16) {
		const __m512 f0 = _mm512_loadu_ps(w[0] + k);
		const __m512 f1 = _mm512_loadu_ps(w[1] + k);
		const __m512 f2 = _mm512_loadu_ps(w[2] + k);

		for (int t = 0; t < MTP_DOT_TR; t++) {
			__m512 xt = _mm512_loadu_ps(x[t] + k);

			/* one load of x per token, in a register: gcc folds
			 * it into each of the 3 FMAs otherwise (15 loads per
			 * 12 FMAs), and Zen 4 loads one zmm per cycle */
			__asm__("" : "+v"(xt));
			v[t][0] = _mm512_fmadd_ps(xt, f0, v[t][0]);
			v[t][1] = _mm512_fmadd_ps(xt, f1, v[t][1]);
			v[t][2] = _mm512_fmadd_ps(xt, f2, v[t][2]);
		}
	}
	for (int t = 0; t < MTP_DOT_TR; t++)
		for (int d = 0; d < MTP_DOT_TO; d++)
			acc[t][d] += _mm512_reduce_add_ps(v[t][d]) +
				     dot_rest(x[t] + k, w[d] + k, len - k);
}

MTP_CPU_AVX2 static void tile_1x8_256(const float *x, const float *w,
				      int64_t ldw, int64_t len, float *acc)
{
	__m256 v[MTP_DOT_WO];
	int64_t k = 0;

	for (int d = 0; d < MTP_DOT_WO; d++)
		v[d] = _mm256_setzero_ps();
	for (; k + 8 <= len; k += 8) {
		const __m256 xv = _mm256_loadu_ps(x + k);

		for (int d = 0; d < MTP_DOT_WO; d++)
			v[d] = _mm256_fmadd_ps(
				xv, _mm256_loadu_ps(w + d * ldw + k), v[d]);
	}
	for (int d = 0; d < MTP_DOT_WO; d++)
		acc[d] += mtp_vec_hsum(v[d]) +
			  dot_rest(x + k, w + d * ldw + k, len - k);
}

MTP_CPU_AVX512 static void tile_1x8_512(const float *x, const float *w,
					int64_t ldw, int64_t len, float *acc)
{
	__m512 v[MTP_DOT_WO];
	int64_t k = 0;

	for (int d = 0; d < MTP_DOT_WO; d++)
		v[d] = _mm512_setzero_ps();
	for (; k + 16 <= len; k += 16) {
		const __m512 xv = _mm512_loadu_ps(x + k);

		for (int d = 0; d < MTP_DOT_WO; d++)
			v[d] = _mm512_fmadd_ps(
				xv, _mm512_loadu_ps(w + d * ldw + k), v[d]);
	}
	for (int d = 0; d < MTP_DOT_WO; d++)
		acc[d] += _mm512_reduce_add_ps(v[d]) +
			  dot_rest(x + k, w + d * ldw + k, len - k);
}
#endif

/* Without AVX2: one scalar FMA chain per dot, in k order. */
static float dot_plain(const float *x, const float *w, int64_t len)
{
	float s = 0.0f;

	for (int64_t k = 0; k < len; k++)
		s = fmaf(x[k], w[k], s);
	return s;
}

void mtp_cpu_dots_4x3(const float *const x[MTP_DOT_TR],
		      const float *const w[MTP_DOT_TO], int64_t len,
		      enum mtp_cpu_lanes lanes, float acc[][MTP_DOT_TO])
{
#if MTP_CPU_VEC
	if (lanes == MTP_CPU_LANES_16)
		return tile_4x3_512(x, w, len, acc);
	if (lanes == MTP_CPU_LANES_8)
		return tile_4x3_256(x, w, len, acc);
#endif
	for (int t = 0; t < MTP_DOT_TR; t++)
		for (int d = 0; d < MTP_DOT_TO; d++)
			acc[t][d] += dot_plain(x[t], w[d], len);
}

void mtp_cpu_dots_1x8(const float *x, const float *w, int64_t ldw, int64_t len,
		      enum mtp_cpu_lanes lanes, float acc[MTP_DOT_WO])
{
#if MTP_CPU_VEC
	if (lanes == MTP_CPU_LANES_16)
		return tile_1x8_512(x, w, ldw, len, acc);
	if (lanes == MTP_CPU_LANES_8)
		return tile_1x8_256(x, w, ldw, len, acc);
#endif
	for (int d = 0; d < MTP_DOT_WO; d++)
		acc[d] += dot_plain(x, w + d * ldw, len);
}
