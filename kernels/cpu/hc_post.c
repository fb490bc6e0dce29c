/*
 * mHC hc_post [SPEC.md §4.4.2]: the new streams after a sublayer,
 * out[j] = post[j]*x + sum_i C[i,j]*R[i] (row i of C the source stream,
 * column j the destination), fp32 per token, one rounding on store.
 */
#include "cpu_internal.h"
#include "vec.h"

MTP_CPU_HOT
void mtp_cpu_hc_post_token(const float *x, const float *r, const float *post,
			   const float *comb, int64_t m, int64_t h, float *out)
{
	for (int64_t j = 0; j < m; j++) {
		float *o = out + j * h;
		const float pj = post[j];

		for (int64_t k = 0; k < h; k++)
			o[k] = pj * x[k];
		for (int64_t i = 0; i < m; i++) {
			const float cij = comb[i * m + j];
			const float *ri = r + i * h;

			for (int64_t k = 0; k < h; k++)
				o[k] += cij * ri[k];
		}
	}
}

struct post_args {
	enum mtp_dtype act;
	const void *x, *residual;
	const float *post, *comb;
	void *out;
	int64_t m, h;
	bool nt;
};

#if MTP_CPU_VEC
#define POST_MAXM 8

/* out[j] = post[j]*x + sum_i C[i,j]*R[i] for 16 lanes at k, i ascending. */
MTP_CPU_AVX2 static void post_lanes(const __m256 x[2], __m256 r[][2],
				    const float *post, const float *comb,
				    int64_t m, int64_t h, bool nt,
				    uint16_t *out)
{
	for (int64_t j = 0; j < m; j++) {
		const __m256 pj = _mm256_set1_ps(post[j]);
		__m256 a = _mm256_mul_ps(pj, x[0]), b = _mm256_mul_ps(pj, x[1]);

		for (int64_t i = 0; i < m; i++) {
			const __m256 c = _mm256_set1_ps(comb[i * m + j]);

			a = _mm256_fmadd_ps(c, r[i][0], a);
			b = _mm256_fmadd_ps(c, r[i][1], b);
		}
		mtp_vec_st(out + j * h, a, b, nt);
	}
}

/* One token from bf16 memory to bf16 memory: x and the M residual streams
 * widened once per 16 lanes into registers, no fp32 copies of the rows.
 * h lanes of each stream, streams ld apart (the AVX-512 kernel's tail). */
MTP_CPU_AVX2 static void post_token_bf16(const uint16_t *x, const uint16_t *r,
					 const float *post, const float *comb,
					 int64_t m, int64_t h, int64_t ld,
					 bool nt, uint16_t *out)
{
	__m256 xv[2], rv[POST_MAXM][2];
	int64_t k = 0;

	nt = mtp_vec_nt_ok(out, nt) && ld % 16 == 0;
	for (; k + 16 <= h; k += 16) {
		xv[0] = mtp_vec_ld(x + k);
		xv[1] = mtp_vec_ld(x + k + 8);
		for (int64_t i = 0; i < m; i++) {
			rv[i][0] = mtp_vec_ld(r + i * ld + k);
			rv[i][1] = mtp_vec_ld(r + i * ld + k + 8);
		}
		post_lanes(xv, rv, post, comb, m, ld, nt, out + k);
	}
	for (; k < h; k++) {
		for (int64_t j = 0; j < m; j++) {
			float o = post[j] * mtp_cpu_bf16_to_f32(x[k]);

			for (int64_t i = 0; i < m; i++)
				o += comb[i * m + j] *
				     mtp_cpu_bf16_to_f32(r[i * ld + k]);
			out[j * ld + k] = mtp_cpu_f32_to_bf16(o);
		}
	}
}

/*
 * post_token_bf16 at 2 x 16 lanes (AVX-512): each output stream gets a
 * whole 64-byte line per step, so that the M interleaved streaming stores
 * leave full write-combining buffers; the next token's rows (most likely
 * this thread's next) are fetched meanwhile, as the hardware prefetcher
 * alone leaves DRAM idle. The tail is post_token_bf16's.
 */
MTP_CPU_AVX512 static void post_token_512(const uint16_t *x, const uint16_t *r,
					  const float *post, const float *comb,
					  int64_t m, int64_t h, bool nt,
					  uint16_t *out)
{
	__m512 rv[POST_MAXM][2];
	int64_t k = 0;

	nt = mtp_vec_nt_ok(out, nt) && h % 16 == 0;
	for (; k + 32 <= h; k += 32) {
		const __m512 x0 = mtp_v16_ld(x + k),
			     x1 = mtp_v16_ld(x + k + 16);

		_mm_prefetch((const char *)(x + h + k), _MM_HINT_T0);
		for (int64_t i = 0; i < m; i++) {
			_mm_prefetch((const char *)(r + (m + i) * h + k),
				     _MM_HINT_T0);
			rv[i][0] = mtp_v16_ld(r + i * h + k);
			rv[i][1] = mtp_v16_ld(r + i * h + k + 16);
		}
		for (int64_t j = 0; j < m; j++) {
			const __m512 pj = _mm512_set1_ps(post[j]);
			__m512 a = _mm512_mul_ps(pj, x0),
			       b = _mm512_mul_ps(pj, x1);

			for (int64_t i = 0; i < m; i++) {
				const __m512 c =
					_mm512_set1_ps(comb[i * m + j]);

				a = _mm512_fmadd_ps(c, rv[i][0], a);
				b = _mm512_fmadd_ps(c, rv[i][1], b);
			}
			mtp_v16_st(out + j * h + k, a, nt);
			mtp_v16_st(out + j * h + k + 16, b, nt);
		}
	}
	if (k < h)
		post_token_bf16(x + k, r + k, post, comb, m, h - k, h, false,
				out + k);
}
#endif

static void post_one(const void *ctx, int64_t t, float *buf)
{
	const struct post_args *g = ctx;
	const int64_t m = g->m, h = g->h, n = m * h;
	float *x = buf, *r = x + h, *o = r + n;

#if MTP_CPU_VEC
	if (mtp_cpu_vec(g->act) && m <= POST_MAXM) {
		const uint16_t *x16 = (const uint16_t *)g->x + t * h;
		const uint16_t *r16 = (const uint16_t *)g->residual + t * n;
		uint16_t *o16 = (uint16_t *)g->out + t * n;
		const float *post = g->post + t * m,
			    *comb = g->comb + t * m * m;

		if (mtp_cpu_vec512(g->act))
			post_token_512(x16, r16, post, comb, m, h, g->nt, o16);
		else
			post_token_bf16(x16, r16, post, comb, m, h, h, g->nt,
					o16);
		return;
	}
#endif
	mtp_cpu_load(g->act, g->x, t * h, h, x);
	mtp_cpu_load(g->act, g->residual, t * n, n, r);
	mtp_cpu_hc_post_token(x, r, g->post + t * m, g->comb + t * m * m, m, h,
			      o);
	mtp_cpu_store(g->act, g->out, t * n, n, o);
}

enum mtp_status mtp_cpu_hc_post_rows(enum mtp_dtype act, const void *x,
				     const void *residual, const float *post,
				     const float *comb, int64_t t, int64_t m,
				     int64_t h, void *out)
{
	const struct post_args g = {act,  x,	residual,
				    post, comb, out,
				    m,	  h,	mtp_cpu_nt(act, t * m * h)};

	return mtp_cpu_rows(t, m * h, (size_t)(h + 2 * m * h), post_one, &g);
}

enum mtp_status mtp_cpu_op_hc_post(const struct mtp_call *c)
{
	return mtp_cpu_hc_post_rows(
		c->act, mtp_cpu_in(c, "", "x"), mtp_cpu_in(c, "", "residual"),
		mtp_cpu_in(c, "", "post_mix"), mtp_cpu_in(c, "", "comb_mix"),
		c->dims.t, c->dims.m, c->dims.h, mtp_cpu_out(c, "", "out"));
}
