/*
 * mHC hc_head [SPEC.md §4.4.4]: collapses the M streams of a token into one
 * hidden with sigmoid weights, in fp32 per token. The CUDA (tilelang)
 * variant takes the mixes from the unrounded streams and scales them by rho
 * afterwards; the ROCm (triton) variant first rounds x*rho to the
 * activation dtype.
 */
#include "cpu_internal.h"
#include "vec.h"

struct head_args {
	enum mtp_dtype act;
	const void *x;
	const float *fn, *scale, *base;
	void *y;
	int64_t m, h;
	float rms_eps, hc_eps;
	enum mtp_hc_head_variant variant;
	int64_t t;
	bool nt;
};

/* The M sigmoid weights of one token's streams x [M*H]; xhat scratch. */
static void head_weights(const struct head_args *g, const float *x, float *xhat,
			 float *pre)
{
	const int64_t m = g->m, n = m * g->h;
	const float rho = mtp_cpu_rms_inv(x, n, g->rms_eps);

	if (g->variant == MTP_HC_HEAD_CUDA) {
		for (int64_t s = 0; s < m; s++)
			pre[s] = mtp_cpu_scaled_dot(rho, x, g->fn + s * n, n);
	} else {
		for (int64_t k = 0; k < n; k++)
			xhat[k] = x[k] * rho;
		mtp_cpu_round_row(g->act, xhat, n);
		for (int64_t s = 0; s < m; s++)
			pre[s] = mtp_cpu_scaled_dot(1.0f, xhat, g->fn + s * n,
						    n);
	}
	for (int64_t s = 0; s < m; s++)
		pre[s] = mtp_cpu_sigmoid(pre[s] * g->scale[0] + g->base[s]) +
			 g->hc_eps;
}

static void head_one(const void *ctx, int64_t t, float *buf)
{
	const struct head_args *g = ctx;
	const int64_t m = g->m, h = g->h, n = m * h;
	float *x = buf, *xhat = x + n, *y = xhat + n, *pre = y + h;

	mtp_cpu_load(g->act, g->x, t * n, n, x);
	head_weights(g, x, xhat, pre);
	mtp_cpu_collapse_row(x, pre, m, h, y);
	mtp_cpu_store(g->act, g->y, t * h, h, y);
}

#if MTP_CPU_VEC
#define HEAD_M 4
/* How far ahead pass 1 fetches x, in elements (see head_dots4_512) */
#define HEAD_AHEAD 1024

/* Tokens per pass-1 block: each fn vector (fn is [M, M*H] fp32, in L2) is
 * loaded once per block; AVX2 has registers for 2 tokens' 5 chains, AVX-512
 * for 4 (the L2 reads of fn bound the 2-token block at 16 lanes). */
#define HEAD_TB2 2
#define HEAD_TB4 4
/* acc of a block of tb tokens: tb sums of squares, then tb x HEAD_M dots */
#define HEAD_DOT(tb, t, s) ((tb) + (t)*HEAD_M + (s))

/* The elements [k, n) that the vector loops leave, one at a time. */
static void head_dots_tail(const uint16_t *const *x, int tb, const float *fn,
			   int64_t n, int64_t k, float *acc)
{
	for (; k < n; k++)
		for (int t = 0; t < tb; t++) {
			const float v = mtp_cpu_bf16_to_f32(x[t][k]);

			acc[t] += v * v;
			for (int s = 0; s < HEAD_M; s++)
				acc[HEAD_DOT(tb, t, s)] += v * fn[s * n + k];
		}
}

/* Pass 1 of 2 tokens' streams (n bf16 each): their sums of squares and
 * HEAD_M dots with fn, ten FMA chains. */
MTP_CPU_AVX2 static void head_dots2(const uint16_t *const x[HEAD_TB2],
				    const float *fn, int64_t n, float *acc)
{
	enum { TB = HEAD_TB2 };
	__m256 v[TB + TB * HEAD_M];
	int64_t k = 0;

	for (int i = 0; i < TB + TB * HEAD_M; i++)
		v[i] = _mm256_setzero_ps();
	for (; k + 8 <= n; k += 8) {
		__m256 xv[TB];

		for (int t = 0; t < TB; t++) {
			_mm_prefetch((const char *)(x[t] + k + HEAD_AHEAD),
				     _MM_HINT_T0);
			xv[t] = mtp_vec_ld(x[t] + k);
			v[t] = _mm256_fmadd_ps(xv[t], xv[t], v[t]);
		}
		for (int s = 0; s < HEAD_M; s++) {
			const __m256 f = _mm256_loadu_ps(fn + s * n + k);

			for (int t = 0; t < TB; t++)
				v[HEAD_DOT(TB, t, s)] = _mm256_fmadd_ps(
					xv[t], f, v[HEAD_DOT(TB, t, s)]);
		}
	}
	for (int i = 0; i < TB + TB * HEAD_M; i++)
		acc[i] = mtp_vec_hsum(v[i]);
	head_dots_tail(x, TB, fn, n, k, acc);
}

/* Pass 2: y = sum_s pre[s] * x[s], s ascending, x read again from L2;
 * h lanes of each stream, streams ld apart (the AVX-512 kernel's tail). */
MTP_CPU_AVX2 static void head_mix_ld(const uint16_t *x, const float *pre,
				     int64_t h, int64_t ld, bool nt,
				     uint16_t *y)
{
	int64_t i = 0;

	nt = mtp_vec_nt_ok(y, nt);
	for (; i + 16 <= h; i += 16) {
		__m256 a = _mm256_mul_ps(_mm256_set1_ps(pre[0]),
					 mtp_vec_ld(x + i));
		__m256 b = _mm256_mul_ps(_mm256_set1_ps(pre[0]),
					 mtp_vec_ld(x + i + 8));

		for (int s = 1; s < HEAD_M; s++) {
			const __m256 p = _mm256_set1_ps(pre[s]);

			a = _mm256_fmadd_ps(p, mtp_vec_ld(x + s * ld + i), a);
			b = _mm256_fmadd_ps(p, mtp_vec_ld(x + s * ld + i + 8),
					    b);
		}
		mtp_vec_st(y + i, a, b, nt);
	}
	for (; i < h; i++) {
		float v = pre[0] * mtp_cpu_bf16_to_f32(x[i]);

		for (int s = 1; s < HEAD_M; s++)
			v += pre[s] * mtp_cpu_bf16_to_f32(x[s * ld + i]);
		y[i] = mtp_cpu_f32_to_bf16(v);
	}
}

/* head_dots2 for 4 tokens at 16 lanes (AVX-512): twenty FMA chains; the
 * FMAs, six per element of x with pass 2, bound this op at 8 lanes. x is
 * fetched HEAD_AHEAD elements ahead: the hardware prefetcher alone left
 * DRAM idle for a third of the time (10.9 -> 7.6 ms at T=4096, H=7168). */
MTP_CPU_AVX512 static void head_dots4_512(const uint16_t *const x[HEAD_TB4],
					  const float *fn, int64_t n,
					  float *acc)
{
	enum { TB = HEAD_TB4 };
	__m512 v[TB + TB * HEAD_M];
	int64_t k = 0;

	for (int i = 0; i < TB + TB * HEAD_M; i++)
		v[i] = _mm512_setzero_ps();
	for (; k + 16 <= n; k += 16) {
		__m512 xv[TB];

		for (int t = 0; t < TB; t++) {
			_mm_prefetch((const char *)(x[t] + k + HEAD_AHEAD),
				     _MM_HINT_T0);
			xv[t] = mtp_v16_ld(x[t] + k);
			v[t] = _mm512_fmadd_ps(xv[t], xv[t], v[t]);
		}
		for (int s = 0; s < HEAD_M; s++) {
			const __m512 f = _mm512_loadu_ps(fn + s * n + k);

			for (int t = 0; t < TB; t++)
				v[HEAD_DOT(TB, t, s)] = _mm512_fmadd_ps(
					xv[t], f, v[HEAD_DOT(TB, t, s)]);
		}
	}
	for (int i = 0; i < TB + TB * HEAD_M; i++)
		acc[i] = _mm512_reduce_add_ps(v[i]);
	head_dots_tail(x, TB, fn, n, k, acc);
}

MTP_CPU_AVX512 static void head_mix_512(const uint16_t *x, const float *pre,
					int64_t h, bool nt, uint16_t *y)
{
	int64_t i = 0;

	nt = mtp_vec_nt_ok(y, nt);
	for (; i + 16 <= h; i += 16) {
		__m512 a = _mm512_mul_ps(_mm512_set1_ps(pre[0]),
					 mtp_v16_ld(x + i));

		for (int s = 1; s < HEAD_M; s++)
			a = _mm512_fmadd_ps(_mm512_set1_ps(pre[s]),
					    mtp_v16_ld(x + s * h + i), a);
		mtp_v16_st(y + i, a, nt);
	}
	if (i < h)
		head_mix_ld(x + i, pre, h - i, h, false, y + i);
}

/* The sigmoid weights of one token from its pass-1 sums; false if fp32
 * overflowed (the portable path redoes the token in double). */
static bool head_pre(const struct head_args *g, float ss, const float *dot,
		     float *pre)
{
	const int64_t n = g->m * g->h;
	const float rho = 1.0f / sqrtf(ss / (float)n + g->rms_eps);

	for (int s = 0; s < HEAD_M; s++) {
		if (!isfinite(ss) || !isfinite(dot[s]))
			return false;
		pre[s] = mtp_cpu_sigmoid(rho * dot[s] * g->scale[0] +
					 g->base[s]) +
			 g->hc_eps;
	}
	return true;
}

/* The pair kernel covers the CUDA variant at M = 4 (V4's hc_mult). */
static bool head_vec(const struct head_args *g)
{
	return mtp_cpu_vec(g->act) && g->m == HEAD_M &&
	       g->variant == MTP_HC_HEAD_CUDA;
}

/* Tokens [tb*b, tb*b + tb), tb = 4 with AVX-512, else 2 (missing ones at
 * the end repeat the last token and are not stored). */
static void head_block(const void *ctx, int64_t b, float *buf)
{
	const struct head_args *g = ctx;
	const bool wide = mtp_cpu_vec512(g->act);
	const int tb = wide ? HEAD_TB4 : HEAD_TB2;
	const int64_t h = g->h, n = HEAD_M * h, t0 = b * tb;
	const int nt = g->t - t0 < tb ? (int)(g->t - t0) : tb;
	const uint16_t *x[HEAD_TB4];
	float acc[HEAD_TB4 + HEAD_TB4 * HEAD_M], pre[HEAD_M];

	for (int i = 0; i < tb; i++)
		x[i] = (const uint16_t *)g->x +
		       (t0 + (i < nt ? i : nt - 1)) * n;
	if (wide)
		head_dots4_512(x, g->fn, n, acc);
	else
		head_dots2(x, g->fn, n, acc);
	for (int i = 0; i < nt; i++) {
		uint16_t *y = (uint16_t *)g->y + (t0 + i) * h;

		if (!head_pre(g, acc[i], acc + HEAD_DOT(tb, i, 0), pre))
			head_one(ctx, t0 + i, buf);
		else if (wide)
			head_mix_512(x[i], pre, h, g->nt, y);
		else
			head_mix_ld(x[i], pre, h, h, g->nt, y);
	}
}
#endif

enum mtp_status mtp_cpu_hc_head_rows(enum mtp_dtype act, const void *x,
				     const float *fn, const float *scale,
				     const float *base, int64_t t, int64_t m,
				     int64_t h, float rms_eps, float hc_eps,
				     enum mtp_hc_head_variant variant, void *y)
{
	const struct head_args g = {act,
				    x,
				    fn,
				    scale,
				    base,
				    y,
				    m,
				    h,
				    rms_eps,
				    hc_eps,
				    variant,
				    t,
				    mtp_cpu_nt(act, t * h)};
	const size_t scratch = (size_t)(2 * m * h + h + m);

#if MTP_CPU_VEC
	if (head_vec(&g)) {
		const int tb = mtp_cpu_vec512(act) ? HEAD_TB4 : HEAD_TB2;

		return mtp_cpu_rows((t + tb - 1) / tb, tb * m * h, scratch,
				    head_block, &g);
	}
#endif
	return mtp_cpu_rows(t, m * h, scratch, head_one, &g);
}

enum mtp_status mtp_cpu_op_hc_head(const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;

	return mtp_cpu_hc_head_rows(
		c->act, mtp_cpu_in(c, "", "x"), mtp_cpu_in(c, "", "fn"),
		mtp_cpu_in(c, "", "scale"), mtp_cpu_in(c, "", "base"),
		c->dims.t, c->dims.m, c->dims.h, (float)p->hc.rms_eps,
		(float)p->hc_eps, p->variant, mtp_cpu_out(c, "", "y"));
}
