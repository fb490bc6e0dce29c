/*
 * The row helpers every CPU kernel is built from: aligned scratch, the
 * activation <-> fp32 row conversions, the fp32 sum of squares and dot
 * product, and the one RMSNorm row that all the norm ops share, so that
 * there is exactly one place where this backend's RMSNorm rounds.
 */
#include "cpu_internal.h"
#include "vec.h"

#include <assert.h>
#include <stdlib.h>

/* What this CPU has, asked once: 0 not yet, 1 portable, 2 AVX2, 3 AVX-512. */
static int vec_level(void)
{
#if MTP_CPU_VEC
	static int level;
	int l = __atomic_load_n(&level, __ATOMIC_RELAXED);

	if (!l) {
		l = 1;
		if (!getenv("MTP_CPU_NO_AVX2") &&
		    __builtin_cpu_supports("avx2") &&
		    __builtin_cpu_supports("fma"))
			l = 2;
		if (l == 2 && !getenv("MTP_CPU_NO_AVX512") &&
		    __builtin_cpu_supports("avx512f") &&
		    __builtin_cpu_supports("avx512bw"))
			l = 3;
		__atomic_store_n(&level, l, __ATOMIC_RELAXED);
	}
	return l;
#else
	return 1;
#endif
}

bool mtp_cpu_vec(enum mtp_dtype act)
{
	return act == MTP_BF16 && vec_level() >= 2;
}

bool mtp_cpu_vec512(enum mtp_dtype act)
{
	return act == MTP_BF16 && vec_level() >= 3;
}

enum mtp_cpu_lanes mtp_cpu_dot_lanes(void)
{
	const int level = vec_level();

	return level >= 3   ? MTP_CPU_LANES_16
	       : level >= 2 ? MTP_CPU_LANES_8
			    : MTP_CPU_LANES_1;
}

void mtp_cpu_fence(void)
{
#if MTP_CPU_VEC
	_mm_sfence();
#endif
}

void *mtp_cpu_alloc(size_t bytes)
{
	size_t n = (bytes + 63) & ~(size_t)63;

	return aligned_alloc(64, n ? n : 64);
}

void mtp_cpu_free(void *p)
{
	free(p);
}

float *mtp_cpu_floats(size_t n)
{
	return mtp_cpu_alloc(n * sizeof(float));
}

void *mtp_cpu_act_alloc(enum mtp_dtype act, size_t n)
{
	return mtp_cpu_alloc(n * mtp_dtype_size(act));
}

bool mtp_cpu_arena_init(struct mtp_cpu_arena *a, size_t bytes)
{
	a->base = mtp_cpu_alloc(bytes);
	a->size = bytes;
	a->used = 0;
	return a->base != NULL;
}

void *mtp_cpu_arena_take(struct mtp_cpu_arena *a, size_t bytes)
{
	void *p = a->base + a->used;

	a->used += MTP_CPU_PIECE(bytes);
	assert(a->used <= a->size);
	return p;
}

void mtp_cpu_arena_fini(struct mtp_cpu_arena *a)
{
	mtp_cpu_free(a->base);
	a->base = NULL;
}

MTP_CPU_HOT
void mtp_cpu_load(enum mtp_dtype act, const void *src, int64_t off, int64_t n,
		  float *dst)
{
	if (act == MTP_BF16) {
		const uint16_t *s = (const uint16_t *)src + off;

		for (int64_t i = 0; i < n; i++)
			dst[i] = mtp_cpu_bf16_to_f32(s[i]);
	} else if (act == MTP_F16) {
		const _Float16 *s = (const _Float16 *)src + off;

		for (int64_t i = 0; i < n; i++)
			dst[i] = (float)s[i];
	} else {
		memcpy(dst, (const float *)src + off,
		       (size_t)n * sizeof(float));
	}
}

MTP_CPU_HOT
void mtp_cpu_store(enum mtp_dtype act, void *dst, int64_t off, int64_t n,
		   const float *src)
{
	if (act == MTP_BF16) {
		uint16_t *d = (uint16_t *)dst + off;

		for (int64_t i = 0; i < n; i++)
			d[i] = mtp_cpu_f32_to_bf16(src[i]);
	} else if (act == MTP_F16) {
		_Float16 *d = (_Float16 *)dst + off;

		for (int64_t i = 0; i < n; i++)
			d[i] = (_Float16)src[i];
	} else {
		memcpy((float *)dst + off, src, (size_t)n * sizeof(float));
	}
}

/* [SPEC.md §2.6] The launching call's norm-weight offset (cpu_launch). */
static _Thread_local float norm_offset;

void mtp_cpu_set_norm_offset(float offset)
{
	norm_offset = offset;
}

float *mtp_cpu_widen(enum mtp_dtype act, const void *src, int64_t n)
{
	float *w = mtp_cpu_floats((size_t)n);

	if (w)
		mtp_cpu_load(act, src, 0, n, w);
	for (int64_t i = 0; w && norm_offset != 0.0f && i < n; i++)
		w[i] = norm_offset +
		       w[i]; /* f32(1 + w), as the engines form it */
	return w;
}

MTP_CPU_HOT
void mtp_cpu_round_row(enum mtp_dtype act, float *x, int64_t n)
{
	if (act == MTP_BF16) {
		for (int64_t i = 0; i < n; i++)
			x[i] = mtp_cpu_round(MTP_BF16, x[i]);
	} else if (act == MTP_F16) {
		for (int64_t i = 0; i < n; i++)
			x[i] = mtp_cpu_round(MTP_F16, x[i]);
	}
}

MTP_CPU_HOT
float mtp_cpu_sumsq(const float *x, int64_t n)
{
	float s = 0.0f;

#pragma omp simd reduction(+ : s)
	for (int64_t i = 0; i < n; i++)
		s += x[i] * x[i];
	return s;
}

static float dot_f32(const float *a, const float *b, int64_t n)
{
	float s = 0.0f;

#pragma omp simd reduction(+ : s)
	for (int64_t i = 0; i < n; i++)
		s += a[i] * b[i];
	return s;
}

/*
 * The fp32 reductions overflow where bf16 values near its limit (~3e38) are
 * squared or summed; only then, the row is summed again in double (the
 * result of every row that fp32 can hold is the plain fp32 one).
 */
double mtp_cpu_sumsq_wide(const float *a, const float *b, int64_t n)
{
	double s = 0.0;

	for (int64_t i = 0; i < n; i++) {
		const double v = (double)a[i] + (b ? (double)b[i] : 0.0);

		s += v * v;
	}
	return s;
}

float mtp_cpu_rms_from(double ss, int64_t n, float eps)
{
	return (float)(1.0 / sqrt(ss / (double)n + eps));
}

float mtp_cpu_rms_inv(const float *x, int64_t n, float eps)
{
	const float ss = mtp_cpu_sumsq(x, n);

	if (!isfinite(ss))
		return mtp_cpu_rms_from(mtp_cpu_sumsq_wide(x, NULL, n), n, eps);
	return 1.0f / sqrtf(ss / (float)n + eps);
}

MTP_CPU_HOT
float mtp_cpu_scaled_dot(float s, const float *a, const float *b, int64_t n)
{
	const float d = dot_f32(a, b, n);
	double w = 0.0;

	if (isfinite(d))
		return s * d;
	for (int64_t i = 0; i < n; i++)
		w += (double)a[i] * b[i];
	return (float)((double)s * w);
}

MTP_CPU_HOT
void mtp_cpu_norm_row(const float *x, float r, const float *w, int64_t h,
		      enum mtp_rounding rnd, enum mtp_dtype act, float *y)
{
	if (rnd == MTP_ROUNDING_FUSED || act == MTP_F32) {
		for (int64_t i = 0; i < h; i++)
			y[i] = x[i] * r * w[i];
	} else if (act == MTP_BF16) {
		for (int64_t i = 0; i < h; i++)
			y[i] = mtp_cpu_round(MTP_BF16, x[i] * r) * w[i];
	} else {
		for (int64_t i = 0; i < h; i++)
			y[i] = mtp_cpu_round(MTP_F16, x[i] * r) * w[i];
	}
}

#if MTP_CPU_VEC
/* Sum of squares of n bf16, fp32, four accumulators for the FMA latency. */
MTP_CPU_AVX2 static float sumsq_bf16(const uint16_t *x, int64_t n)
{
	__m256 a[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(),
		       _mm256_setzero_ps(), _mm256_setzero_ps()};
	int64_t i = 0;
	float s;

	for (; i + 32 <= n; i += 32) {
		for (int k = 0; k < 4; k++) {
			const __m256 v = mtp_vec_ld(x + i + 8 * k);

			a[k] = _mm256_fmadd_ps(v, v, a[k]);
		}
	}
	s = mtp_vec_hsum(_mm256_add_ps(_mm256_add_ps(a[0], a[1]),
				       _mm256_add_ps(a[2], a[3])));
	for (; i < n; i++) {
		const float v = mtp_cpu_bf16_to_f32(x[i]);

		s += v * v;
	}
	return s;
}

/* y = bf16(x*r*w), or bf16(bf16(x*r)*w) when eager: the row's second pass,
 * reading x again from L1 rather than from an fp32 copy. It also fetches
 * the next row of x (the row this thread most likely takes next), so that
 * DRAM keeps reading while this pass computes and writes. */
MTP_CPU_AVX2 static void norm_bf16(const uint16_t *x, float r, const float *w,
				   int64_t n, bool eager, bool nt, uint16_t *y)
{
	const __m256 rv = _mm256_set1_ps(r);
	int64_t i = 0;

	nt = mtp_vec_nt_ok(y, nt);
	for (; i + 16 <= n; i += 16) {
		__m256 a = _mm256_mul_ps(mtp_vec_ld(x + i), rv);
		__m256 b = _mm256_mul_ps(mtp_vec_ld(x + i + 8), rv);

		_mm_prefetch((const char *)(x + n + i), _MM_HINT_T0);
		if (eager) {
			a = mtp_vec_round(a);
			b = mtp_vec_round(b);
		}
		a = _mm256_mul_ps(a, _mm256_loadu_ps(w + i));
		b = _mm256_mul_ps(b, _mm256_loadu_ps(w + i + 8));
		mtp_vec_st(y + i, a, b, nt);
	}
	for (; i < n; i++) {
		const float v = mtp_cpu_bf16_to_f32(x[i]) * r;

		y[i] = mtp_cpu_f32_to_bf16(
			(eager ? mtp_cpu_round(MTP_BF16, v) : v) * w[i]);
	}
}

MTP_CPU_AVX512 static float sumsq_bf16_512(const uint16_t *x, int64_t n)
{
	__m512 a = _mm512_setzero_ps(), b = _mm512_setzero_ps();
	int64_t i = 0;
	float s;

	for (; i + 32 <= n; i += 32) {
		const __m512 u = mtp_v16_ld(x + i), v = mtp_v16_ld(x + i + 16);

		a = _mm512_fmadd_ps(u, u, a);
		b = _mm512_fmadd_ps(v, v, b);
	}
	s = _mm512_reduce_add_ps(_mm512_add_ps(a, b));
	for (; i < n; i++) {
		const float v = mtp_cpu_bf16_to_f32(x[i]);

		s += v * v;
	}
	return s;
}

/* norm_bf16 at 16 lanes; the scalar tail is norm_bf16's own. */
MTP_CPU_AVX512 static void norm_bf16_512(const uint16_t *x, float r,
					 const float *w, int64_t n, bool eager,
					 bool nt, uint16_t *y)
{
	const __m512 rv = _mm512_set1_ps(r);
	int64_t i = 0;

	nt = mtp_vec_nt_ok(y, nt);
	for (; i + 16 <= n; i += 16) {
		__m512 a = _mm512_mul_ps(mtp_v16_ld(x + i), rv);

		_mm_prefetch((const char *)(x + n + i), _MM_HINT_T0);
		if (eager)
			a = mtp_v16_round(a);
		mtp_v16_st(y + i, _mm512_mul_ps(a, _mm512_loadu_ps(w + i)), nt);
	}
	if (i < n)
		norm_bf16(x + i, r, w + i, n - i, eager, false, y + i);
}

/* The row straight from src to dst; false (nothing written) if the fp32
 * sum of squares overflowed, which the portable path redoes in double. */
static bool norm_row_vec(const uint16_t *x, const float *w, int64_t h,
			 float eps, bool eager, bool nt, uint16_t *y)
{
	const bool wide = mtp_cpu_vec512(MTP_BF16);
	const float ss = wide ? sumsq_bf16_512(x, h) : sumsq_bf16(x, h);
	const float r = 1.0f / sqrtf(ss / (float)h + eps);

	if (!isfinite(ss))
		return false;
	if (wide)
		norm_bf16_512(x, r, w, h, eager, nt, y);
	else
		norm_bf16(x, r, w, h, eager, nt, y);
	return true;
}
#endif

void mtp_cpu_norm_row_io(enum mtp_dtype act, const void *src, int64_t soff,
			 const float *w, int64_t h, float eps,
			 enum mtp_rounding rnd, bool nt, float *buf, void *dst,
			 int64_t doff)
{
#if MTP_CPU_VEC
	if (mtp_cpu_vec(act)) {
		const uint16_t *x = (const uint16_t *)src + soff;

		if (!src) { /* a zero row of bf16: x = +0 in buf */
			memset(buf, 0, (size_t)h * sizeof(uint16_t));
			x = (const uint16_t *)buf;
		}
		if (norm_row_vec(x, w, h, eps, rnd == MTP_ROUNDING_EAGER, nt,
				 (uint16_t *)dst + doff))
			return;
	}
#else
	(void)nt;
#endif
	if (src)
		mtp_cpu_load(act, src, soff, h, buf);
	else
		memset(buf, 0, (size_t)h * sizeof(*buf));
	mtp_cpu_norm_row(buf, mtp_cpu_rms_inv(buf, h, eps), w, h, rnd, act,
			 buf);
	mtp_cpu_store(act, dst, doff, h, buf);
}

enum mtp_status mtp_cpu_rows(int64_t rows, int64_t per_row, size_t scratch,
			     mtp_cpu_row_fn fn, const void *ctx)
{
	bool ok = true;

	const int64_t chunk = per_row >= 65536 ? 1 : 65536 / (per_row + 1) + 1;

#pragma omp parallel if (rows > 1 && rows * per_row >= MTP_CPU_PAR_MIN)
	{
		float *buf = mtp_cpu_floats(scratch);

		if (!buf) {
#pragma omp atomic write
			ok = false;
		}
#pragma omp for schedule(dynamic, chunk)
		for (int64_t r = 0; r < rows; r++) {
			if (buf)
				fn(ctx, r, buf);
		}
		mtp_cpu_fence();
		mtp_cpu_free(buf);
	}
	return ok ? MTP_OK : MTP_ERR_NOMEM;
}

#define ADD_CHUNK 4096

struct add_args {
	enum mtp_dtype act;
	const void *a, *b;
	void *out;
	int64_t n;
};

static void add_chunk(const void *ctx, int64_t k, float *buf)
{
	const struct add_args *g = ctx;
	const int64_t o = k * ADD_CHUNK;
	const int64_t len = g->n - o < ADD_CHUNK ? g->n - o : ADD_CHUNK;

	mtp_cpu_load(g->act, g->a, o, len, buf);
	mtp_cpu_load(g->act, g->b, o, len, buf + ADD_CHUNK);
	for (int64_t i = 0; i < len; i++)
		buf[i] += buf[ADD_CHUNK + i];
	mtp_cpu_store(g->act, g->out, o, len, buf);
}

enum mtp_status mtp_cpu_add(enum mtp_dtype act, const void *a, const void *b,
			    int64_t n, void *out)
{
	const struct add_args g = {act, a, b, out, n};

	return mtp_cpu_rows((n + ADD_CHUNK - 1) / ADD_CHUNK, ADD_CHUNK,
			    2 * ADD_CHUNK, add_chunk, &g);
}

int64_t *mtp_cpu_indices(const struct mtp_tensor *t)
{
	const int64_t n = mtp_tensor_numel(t);
	int64_t *ids = mtp_cpu_alloc((size_t)n * sizeof(*ids));

	if (!ids)
		return NULL;
	for (int64_t i = 0; i < n; i++)
		ids[i] = t->dtype == MTP_I32 ? ((const int32_t *)t->data)[i]
					     : ((const int64_t *)t->data)[i];
	return ids;
}
