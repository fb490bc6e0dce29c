/*
 * The row helpers every CPU kernel is built from: aligned scratch, the
 * activation <-> fp32 row conversions, the fp32 sum of squares and dot
 * product, and the one RMSNorm row that all the norm ops share, so that
 * there is exactly one place where this backend's RMSNorm rounds.
 */
#include "cpu_internal.h"

#include <assert.h>
#include <stdlib.h>

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
void mtp_cpu_load(enum mtp_dtype act, const void *src, int64_t off,
		  int64_t n, float *dst)
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
		memcpy(dst, (const float *)src + off, (size_t)n * sizeof(float));
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

float *mtp_cpu_widen(enum mtp_dtype act, const void *src, int64_t n)
{
	float *w = mtp_cpu_floats((size_t)n);

	if (w)
		mtp_cpu_load(act, src, 0, n, w);
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

void mtp_cpu_norm_row_io(enum mtp_dtype act, const void *src, int64_t soff,
			 const float *w, int64_t h, float eps,
			 enum mtp_rounding rnd, float *buf, void *dst,
			 int64_t doff)
{
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

#pragma omp parallel if (rows > 1 && rows * per_row >= MTP_CPU_PAR_MIN)
	{
		float *buf = mtp_cpu_floats(scratch);

		if (!buf) {
#pragma omp atomic write
			ok = false;
		}
#pragma omp for schedule(static)
		for (int64_t r = 0; r < rows; r++) {
			if (buf)
				fn(ctx, r, buf);
		}
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
