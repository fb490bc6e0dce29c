/*
 * mHC hc_head [MTP-SPEC §4.4.4]: collapses the M streams of a token into one
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
static void head_weights(const struct head_args *g, const float *x,
			 float *xhat, float *pre)
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
	for (int64_t i = 0; i < h; i++)
		y[i] = pre[0] * x[i];
	for (int64_t s = 1; s < m; s++)
		for (int64_t i = 0; i < h; i++)
			y[i] += pre[s] * x[s * h + i];
	mtp_cpu_store(g->act, g->y, t * h, h, y);
}

#if MTP_CPU_VEC
#define HEAD_M 4
/* Software prefetch distance in elements of x in pass 1 */
#define HEAD_AHEAD 1024

/* The elements [k, n) that the vector loops leave, one at a time. */
static void head_dots2_tail(const uint16_t *a, const uint16_t *b,
			    const float *fn, int64_t n, int64_t k,
			    float acc[2 + 2 * HEAD_M])
{
	for (; k < n; k++) {
		const float xa = mtp_cpu_bf16_to_f32(a[k]);
		const float xb = mtp_cpu_bf16_to_f32(b[k]);

		acc[0] += xa * xa;
		acc[1] += xb * xb;
		for (int s = 0; s < HEAD_M; s++) {
			acc[2 + s] += xa * fn[s * n + k];
			acc[2 + HEAD_M + s] += xb * fn[s * n + k];
		}
	}
}

/*
 * Pass 1 of two tokens' streams a, b (n bf16 each) at once: the sums of
 * squares and the HEAD_M dots with fn, so that each fn vector (fn is
 * [M, n] fp32, in L2) is loaded once for both tokens: ten FMA chains, and
 * the loads stay below the FMA rate. acc: ss_a, ss_b, dots of a, of b.
 */
MTP_CPU_AVX2 static void head_dots2(const uint16_t *a, const uint16_t *b,
				    const float *fn, int64_t n,
				    float acc[2 + 2 * HEAD_M])
{
	__m256 v[2 + 2 * HEAD_M];
	int64_t k = 0;

	for (int i = 0; i < 2 + 2 * HEAD_M; i++)
		v[i] = _mm256_setzero_ps();
	for (; k + 8 <= n; k += 8) {
		const __m256 xa = mtp_vec_ld(a + k), xb = mtp_vec_ld(b + k);

		v[0] = _mm256_fmadd_ps(xa, xa, v[0]);
		v[1] = _mm256_fmadd_ps(xb, xb, v[1]);
		for (int s = 0; s < HEAD_M; s++) {
			const __m256 f = _mm256_loadu_ps(fn + s * n + k);

			v[2 + s] = _mm256_fmadd_ps(xa, f, v[2 + s]);
			v[2 + HEAD_M + s] = _mm256_fmadd_ps(xb, f, v[2 + HEAD_M + s]);
		}
	}
	for (int i = 0; i < 2 + 2 * HEAD_M; i++)
		acc[i] = mtp_vec_hsum(v[i]);
	head_dots2_tail(a, b, fn, n, k, acc);
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
		__m256 a = _mm256_mul_ps(_mm256_set1_ps(pre[0]), mtp_vec_ld(x + i));
		__m256 b = _mm256_mul_ps(_mm256_set1_ps(pre[0]),
					 mtp_vec_ld(x + i + 8));

		for (int s = 1; s < HEAD_M; s++) {
			const __m256 p = _mm256_set1_ps(pre[s]);

			a = _mm256_fmadd_ps(p, mtp_vec_ld(x + s * ld + i), a);
			b = _mm256_fmadd_ps(p, mtp_vec_ld(x + s * ld + i + 8), b);
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

/* head_dots2 and head_mix at 16 lanes (AVX-512): the FMAs, six per element
 * of x, bound this op at 8 lanes. Tails go to the 8-lane kernels. */
MTP_CPU_AVX512 static void head_dots2_512(const uint16_t *a,
					  const uint16_t *b, const float *fn,
					  int64_t n, float acc[2 + 2 * HEAD_M])
{
	__m512 v[2 + 2 * HEAD_M];
	int64_t k = 0;

	for (int i = 0; i < 2 + 2 * HEAD_M; i++)
		v[i] = _mm512_setzero_ps();
	for (; k + 16 <= n; k += 16) {
		const __m512 xa = mtp_v16_ld(a + k), xb = mtp_v16_ld(b + k);

		_mm_prefetch((const char *)(a + k + HEAD_AHEAD), _MM_HINT_T0);
		_mm_prefetch((const char *)(b + k + HEAD_AHEAD), _MM_HINT_T0);
		v[0] = _mm512_fmadd_ps(xa, xa, v[0]);
		v[1] = _mm512_fmadd_ps(xb, xb, v[1]);
		for (int s = 0; s < HEAD_M; s++) {
			const __m512 f = _mm512_loadu_ps(fn + s * n + k);

			v[2 + s] = _mm512_fmadd_ps(xa, f, v[2 + s]);
			v[2 + HEAD_M + s] = _mm512_fmadd_ps(xb, f, v[2 + HEAD_M + s]);
		}
	}
	for (int i = 0; i < 2 + 2 * HEAD_M; i++)
		acc[i] = _mm512_reduce_add_ps(v[i]);
	head_dots2_tail(a, b, fn, n, k, acc);
}

MTP_CPU_AVX512 static void head_mix_512(const uint16_t *x, const float *pre,
					int64_t h, bool nt, uint16_t *y)
{
	int64_t i = 0;

	nt = mtp_vec_nt_ok(y, nt);
	for (; i + 16 <= h; i += 16) {
		__m512 a = _mm512_mul_ps(_mm512_set1_ps(pre[0]), mtp_v16_ld(x + i));

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

/* Tokens 2p and 2p+1 (the last one alone when T is odd). */
static void head_pair(const void *ctx, int64_t p, float *buf)
{
	const struct head_args *g = ctx;
	const int64_t h = g->h, n = HEAD_M * h, ta = 2 * p;
	const int64_t tb = ta + 1 < g->t ? ta + 1 : ta;
	const uint16_t *x = g->x;
	float acc[2 + 2 * HEAD_M], pre[2][HEAD_M];

	if (mtp_cpu_vec512(g->act))
		head_dots2_512(x + ta * n, x + tb * n, g->fn, n, acc);
	else
		head_dots2(x + ta * n, x + tb * n, g->fn, n, acc);
	for (int i = 0; i < 1 + (tb != ta); i++) {
		const int64_t t = ta + i;
		uint16_t *y = (uint16_t *)g->y + t * h;

		if (!head_pre(g, acc[i], acc + 2 + i * HEAD_M, pre[i]))
			head_one(ctx, t, buf);
		else if (mtp_cpu_vec512(g->act))
			head_mix_512(x + t * n, pre[i], h, g->nt, y);
		else
			head_mix_ld(x + t * n, pre[i], h, h, g->nt, y);
	}
}
#endif

enum mtp_status mtp_cpu_hc_head_rows(enum mtp_dtype act, const void *x,
				     const float *fn, const float *scale,
				     const float *base, int64_t t, int64_t m,
				     int64_t h, float rms_eps, float hc_eps,
				     enum mtp_hc_head_variant variant, void *y)
{
	const struct head_args g = {act, x, fn, scale, base, y, m, h,
				    rms_eps, hc_eps, variant, t,
				    mtp_cpu_nt(act, t * h)};
	const size_t scratch = (size_t)(2 * m * h + h + m);

#if MTP_CPU_VEC
	if (head_vec(&g))
		return mtp_cpu_rows((t + 1) / 2, 2 * m * h, scratch, head_pair,
				    &g);
#endif
	return mtp_cpu_rows(t, m * h, scratch, head_one, &g);
}

enum mtp_status mtp_cpu_op_hc_head(const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;

	return mtp_cpu_hc_head_rows(c->act, mtp_cpu_in(c, "", "x"),
				    mtp_cpu_in(c, "", "fn"),
				    mtp_cpu_in(c, "", "scale"),
				    mtp_cpu_in(c, "", "base"), c->dims.t,
				    c->dims.m, c->dims.h, (float)p->hc.rms_eps,
				    (float)p->hc_eps, p->variant,
				    mtp_cpu_out(c, "", "y"));
}
