/*
 * Residual add fused with RMSNorm [SPEC.md §2.3], single pass: the fp32 sum
 * gives the variance, the rounded sum is the new residual and is what gets
 * normalised, as in vLLM's fused_add_rms_norm; or, under the convention
 * add_norm_input = sum (§12.1, vLLM's native path), the unrounded sum.
 */
#include "cpu_internal.h"
#include "vec.h"

struct add_norm_args {
	enum mtp_dtype act;
	const void *x, *res;
	const float *w;
	void *y, *res_out;
	int64_t h;
	float eps;
	enum mtp_rounding rnd;
	bool nt;
	bool sum_input; /* §12.1 add_norm_input = sum: normalise the fp32 sum */
};

#if MTP_CPU_VEC
/* Pass 1: s = x + res in fp32, its sum of squares (from the unrounded s),
 * and res_out = bf16(s). */
MTP_CPU_AVX2 static float add_pass(const uint16_t *x, const uint16_t *res,
				   int64_t h, bool nt, uint16_t *res_out)
{
	__m256 a = _mm256_setzero_ps(), b = _mm256_setzero_ps();
	int64_t k = 0;
	float ss;

	nt = mtp_vec_nt_ok(res_out, nt);
	for (; k + 16 <= h; k += 16) {
		const __m256 s0 =
			_mm256_add_ps(mtp_vec_ld(x + k), mtp_vec_ld(res + k));
		const __m256 s1 = _mm256_add_ps(mtp_vec_ld(x + k + 8),
						mtp_vec_ld(res + k + 8));

		a = _mm256_fmadd_ps(s0, s0, a);
		b = _mm256_fmadd_ps(s1, s1, b);
		mtp_vec_st(res_out + k, s0, s1, nt);
	}
	ss = mtp_vec_hsum(_mm256_add_ps(a, b));
	for (; k < h; k++) {
		const float s =
			mtp_cpu_bf16_to_f32(x[k]) + mtp_cpu_bf16_to_f32(res[k]);

		ss += s * s;
		res_out[k] = mtp_cpu_f32_to_bf16(s);
	}
	return ss;
}

/* Pass 2: y = RMSNorm of bf16(x + res), the sum recomputed from the two
 * rows still in L1 instead of read back from res_out; it fetches the next
 * rows, so that DRAM keeps reading while this pass computes. */
MTP_CPU_AVX2 static void norm_pass(const uint16_t *x, const uint16_t *res,
				   const float *w, int64_t h, float r,
				   bool eager, bool nt, uint16_t *y)
{
	const __m256 rv = _mm256_set1_ps(r);
	int64_t k = 0;

	nt = mtp_vec_nt_ok(y, nt);
	for (; k + 16 <= h; k += 16) {
		__m256 a = mtp_vec_round(
			_mm256_add_ps(mtp_vec_ld(x + k), mtp_vec_ld(res + k)));
		__m256 b = mtp_vec_round(_mm256_add_ps(
			mtp_vec_ld(x + k + 8), mtp_vec_ld(res + k + 8)));

		_mm_prefetch((const char *)(x + h + k), _MM_HINT_T0);
		_mm_prefetch((const char *)(res + h + k), _MM_HINT_T0);
		a = _mm256_mul_ps(a, rv);
		b = _mm256_mul_ps(b, rv);
		if (eager) {
			a = mtp_vec_round(a);
			b = mtp_vec_round(b);
		}
		a = _mm256_mul_ps(a, _mm256_loadu_ps(w + k));
		b = _mm256_mul_ps(b, _mm256_loadu_ps(w + k + 8));
		mtp_vec_st(y + k, a, b, nt);
	}
	for (; k < h; k++) {
		float v = mtp_cpu_round(MTP_BF16,
					mtp_cpu_bf16_to_f32(x[k]) +
						mtp_cpu_bf16_to_f32(res[k]));

		v *= r;
		y[k] = mtp_cpu_f32_to_bf16(
			(eager ? mtp_cpu_round(MTP_BF16, v) : v) * w[k]);
	}
}

/* Both passes at 16 lanes (AVX-512); the scalar tails are the AVX2 ones'. */
MTP_CPU_AVX512 static float add_pass_512(const uint16_t *x, const uint16_t *res,
					 int64_t h, bool nt, uint16_t *res_out)
{
	__m512 a = _mm512_setzero_ps();
	int64_t k = 0;

	nt = mtp_vec_nt_ok(res_out, nt);
	for (; k + 16 <= h; k += 16) {
		const __m512 s =
			_mm512_add_ps(mtp_v16_ld(x + k), mtp_v16_ld(res + k));

		a = _mm512_fmadd_ps(s, s, a);
		mtp_v16_st(res_out + k, s, nt);
	}
	return _mm512_reduce_add_ps(a) +
	       (k < h ? add_pass(x + k, res + k, h - k, false, res_out + k)
		      : 0.0f);
}

MTP_CPU_AVX512 static void norm_pass_512(const uint16_t *x, const uint16_t *res,
					 const float *w, int64_t h, float r,
					 bool eager, bool nt, uint16_t *y)
{
	const __m512 rv = _mm512_set1_ps(r);
	int64_t k = 0;

	nt = mtp_vec_nt_ok(y, nt);
	for (; k + 16 <= h; k += 16) {
		__m512 a = mtp_v16_round(
			_mm512_add_ps(mtp_v16_ld(x + k), mtp_v16_ld(res + k)));

		_mm_prefetch((const char *)(x + h + k), _MM_HINT_T0);
		_mm_prefetch((const char *)(res + h + k), _MM_HINT_T0);
		a = _mm512_mul_ps(a, rv);
		if (eager)
			a = mtp_v16_round(a);
		mtp_v16_st(y + k, _mm512_mul_ps(a, _mm512_loadu_ps(w + k)), nt);
	}
	if (k < h)
		norm_pass(x + k, res + k, w + k, h - k, r, eager, false, y + k);
}

/* One row straight from memory to memory; false (nothing but res_out
 * written) if the fp32 sum of squares overflowed. */
static bool add_norm_vec(const struct add_norm_args *g, int64_t o)
{
	const uint16_t *x = (const uint16_t *)g->x + o;
	const uint16_t *res = (const uint16_t *)g->res + o;
	const bool wide = mtp_cpu_vec512(MTP_BF16);
	uint16_t *ro = (uint16_t *)g->res_out + o, *y = (uint16_t *)g->y + o;
	const float ss = wide ? add_pass_512(x, res, g->h, g->nt, ro)
			      : add_pass(x, res, g->h, g->nt, ro);
	const float r = 1.0f / sqrtf(ss / (float)g->h + g->eps);
	const bool eager = g->rnd == MTP_ROUNDING_EAGER;

	if (!isfinite(ss))
		return false;
	if (wide)
		norm_pass_512(x, res, g->w, g->h, r, eager, g->nt, y);
	else
		norm_pass(x, res, g->w, g->h, r, eager, g->nt, y);
	return true;
}
#endif

static void add_norm_one(const void *ctx, int64_t r, float *buf)
{
	const struct add_norm_args *g = ctx;
	const int64_t h = g->h, o = r * h;
	float *x = buf, *b = buf + h, *s = b + h;
	float ss, rinv;

#if MTP_CPU_VEC
	/* res_out must not alias an input: pass 2 reads them again */
	if (!g->sum_input && mtp_cpu_vec(g->act) && g->res_out != g->x &&
	    g->res_out != g->res && add_norm_vec(g, o))
		return;
#endif
	mtp_cpu_load(g->act, g->x, o, h, x);
	mtp_cpu_load(g->act, g->res, o, h, b);
	for (int64_t i = 0; i < h; i++)
		s[i] = x[i] + b[i];
	ss = mtp_cpu_sumsq(s, h); /* the unrounded sum */
	rinv = isfinite(ss) ? 1.0f / sqrtf(ss / (float)h + g->eps)
			    : mtp_cpu_rms_from(mtp_cpu_sumsq_wide(x, b, h), h,
					       g->eps);
	if (g->sum_input)
		memcpy(x, s, (size_t)h * sizeof(*x)); /* x is free: the sum */
	mtp_cpu_round_row(g->act, s, h);
	mtp_cpu_store(g->act, g->res_out, o, h, s);
	mtp_cpu_norm_row(g->sum_input ? x : s, rinv, g->w, h, g->rnd, g->act,
			 s);
	mtp_cpu_store(g->act, g->y, o, h, s);
}

enum mtp_status mtp_cpu_add_rmsnorm_rows(enum mtp_dtype act, const void *x,
					 const void *res, const void *w,
					 int64_t rows, int64_t h, float eps,
					 enum mtp_rounding rnd, void *y,
					 void *res_out)
{
	return mtp_cpu_add_rmsnorm_conv_rows(act, x, res, w, rows, h, eps, rnd,
					     MTP_ADD_NORM_RESIDUAL, y, res_out);
}

enum mtp_status mtp_cpu_add_rmsnorm_conv_rows(enum mtp_dtype act, const void *x,
					      const void *res, const void *w,
					      int64_t rows, int64_t h,
					      float eps, enum mtp_rounding rnd,
					      enum mtp_add_norm_input in,
					      void *y, void *res_out)
{
	struct add_norm_args g = {act,
				  x,
				  res,
				  NULL,
				  y,
				  res_out,
				  h,
				  eps,
				  rnd,
				  mtp_cpu_nt(act, rows * h),
				  in == MTP_ADD_NORM_SUM};
	float *wf = mtp_cpu_widen(act, w, h);
	enum mtp_status st;

	if (!wf)
		return MTP_ERR_NOMEM;
	g.w = wf;
	st = mtp_cpu_rows(rows, h, 3 * (size_t)h, add_norm_one, &g);
	mtp_cpu_free(wf);
	return st;
}

enum mtp_status mtp_cpu_op_add_rmsnorm(const struct mtp_call *c)
{
	return mtp_cpu_add_rmsnorm_rows(
		c->act, mtp_cpu_in(c, "", "x"), mtp_cpu_in(c, "", "residual"),
		mtp_cpu_in(c, "", "weight"), c->dims.r, c->dims.h,
		(float)c->params->eps, c->params->rounding,
		mtp_cpu_out(c, "", "y"), mtp_cpu_out(c, "", "residual_out"));
}

/* [SPEC.md §5.5] the target's final add + norm: the hidden step 0
 * receives (handoff_pre_norm: the rounded sum itself, HANDOFF_MISMATCH). */
enum mtp_status mtp_cpu_op_target_handoff(const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;
	const bool pre = mtp_params_handoff_pre_norm(p);
	int64_t n = c->dims.t * c->dims.h;
	void *out = mtp_cpu_out(c, "", "handoff");
	void *other = mtp_cpu_act_alloc(c->act, (size_t)(n ? n : 1));
	enum mtp_status st = MTP_ERR_NOMEM;

	if (other)
		st = mtp_cpu_add_rmsnorm_conv_rows(
			c->act, mtp_cpu_in(c, "", "target_hidden"),
			mtp_cpu_in(c, "", "target_residual"),
			mtp_cpu_in(c, "", "target_norm_weight"), c->dims.t,
			c->dims.h, (float)p->eps, p->rounding,
			p->conv.add_norm_input, pre ? other : out,
			pre ? out : other);
	mtp_cpu_free(other);
	return st;
}
