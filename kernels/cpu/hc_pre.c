/*
 * mHC hc_pre [SPEC.md §4.4.1], one token per task in fp32 as the tilelang
 * kernels do: the RMS scale and the 2M+M*M mixes from the M streams, pre and
 * post through sigmoids, the Sinkhorn-normalised comb matrix, and the layer
 * input sum_m pre_m * R[m], optionally with the fused RMSNorm. The token
 * kernel is shared with hc_fused_post_pre and the V4 block.
 */
#include "cpu_internal.h"
#include "vec.h"

void mtp_cpu_hc_pre_init(struct mtp_cpu_hc_pre *k, const float *fn,
			 const float *scale, const float *base,
			 const struct mtp_hc_params *p, int64_t m, int64_t h,
			 enum mtp_dtype act)
{
	k->fn = fn;
	k->scale = scale;
	k->base = base;
	k->norm_w = NULL;
	k->rms_eps = (float)p->rms_eps;
	k->pre_eps = (float)p->pre_eps;
	k->sinkhorn_eps = (float)p->sinkhorn_eps;
	k->post_mult = (float)p->post_mult;
	k->norm_eps = (float)p->norm_eps;
	k->iters = p->sinkhorn_iters;
	k->m = m;
	k->h = h;
	k->act = act;
}

/* c[i][j] /= (sum over row i, or over column j) + eps. */
static void normalise(float *c, int64_t m, bool rows, float eps)
{
	for (int64_t a = 0; a < m; a++) {
		float s = 0.0f;

		for (int64_t b = 0; b < m; b++)
			s += rows ? c[a * m + b] : c[b * m + a];
		for (int64_t b = 0; b < m; b++) {
			if (rows)
				c[a * m + b] /= s + eps;
			else
				c[b * m + a] /= s + eps;
		}
	}
}

/* Row softmax + eps, column normalise, then iters-1 row+column passes. */
static void sinkhorn(float *c, int64_t m, int iters, float eps)
{
	for (int64_t i = 0; i < m; i++) {
		float *row = c + i * m;
		float mx = row[0], s = 0.0f;

		for (int64_t j = 1; j < m; j++)
			mx = row[j] > mx ? row[j] : mx;
		for (int64_t j = 0; j < m; j++) {
			row[j] = expf(row[j] - mx);
			s += row[j];
		}
		for (int64_t j = 0; j < m; j++)
			row[j] = row[j] / s + eps;
	}
	normalise(c, m, false, eps);
	for (int it = 1; it < iters; it++) {
		normalise(c, m, true, eps);
		normalise(c, m, false, eps);
	}
}

/* u [H] = sum_s pre[s] * x[s], s ascending; li = u or its fused norm. */
static void layer_input(const struct mtp_cpu_hc_pre *k, const float *x,
			const float *pre, float *u, float *li)
{
	const int64_t h = k->h;

	for (int64_t i = 0; i < h; i++)
		u[i] = pre[0] * x[i];
	for (int64_t s = 1; s < k->m; s++)
		for (int64_t i = 0; i < h; i++)
			u[i] += pre[s] * x[s * h + i];
	if (!k->norm_w) {
		memcpy(li, u, (size_t)h * sizeof(*li));
		return;
	}
	/* variance from the unrounded u, applied to the rounded u */
	const float rho = mtp_cpu_rms_inv(u, h, k->norm_eps);

	for (int64_t i = 0; i < h; i++)
		li[i] = mtp_cpu_round(k->act, u[i]) * rho * k->norm_w[i];
}

/* Everything after the mixes: mu [2M+M*M] holds rho * (x . fn[o]). */
static void pre_finish(const struct mtp_cpu_hc_pre *k, const float *x,
		       float *mu, float *u, float *post, float *comb, float *li)
{
	const int64_t m = k->m;
	float *c = mu + 2 * m; /* the comb logits become C in place */

	for (int64_t s = 0; s < m; s++) {
		post[s] = mtp_cpu_sigmoid(mu[m + s] * k->scale[1] +
					  k->base[m + s]) *
			  k->post_mult;
		mu[s] = mtp_cpu_sigmoid(mu[s] * k->scale[0] + k->base[s]) +
			k->pre_eps; /* pre, in place */
	}
	for (int64_t i = 0; i < m * m; i++)
		c[i] = c[i] * k->scale[2] + k->base[2 * m + i];
	sinkhorn(c, m, k->iters, k->sinkhorn_eps);
	memcpy(comb, c, (size_t)(m * m) * sizeof(*comb));
	layer_input(k, x, mu, u, li);
}

void mtp_cpu_hc_pre_token(const struct mtp_cpu_hc_pre *k, const float *x,
			  float *mu, float *u, float *post, float *comb,
			  float *li)
{
	const int64_t m = k->m, n = m * k->h, nmix = 2 * m + m * m;
	const float rho = mtp_cpu_rms_inv(x, n, k->rms_eps);

	for (int64_t o = 0; o < nmix; o++)
		mu[o] = mtp_cpu_scaled_dot(rho, x, k->fn + o * n, n);
	pre_finish(k, x, mu, u, post, comb, li);
}

#if MTP_CPU_VEC
/*
 * The 2M+M*M dots of every token are a [T, M*H] x [M*H, 2M+M*M] product
 * that dominates hc_pre: it is done PRE_TB tokens at a time, the fp32
 * streams of the block in scratch, over K chunks of PRE_KC that keep the
 * block's x in L1, by a 4-token x 3-mix register tile (12 FMA chains),
 * so that each fn vector is loaded once per 4 tokens, each x vector once
 * per 3 mixes.
 */
#define PRE_TB 4
#define PRE_MB 3
#define PRE_KC 1024

MTP_CPU_AVX2 static void dots_4x3(const float *const x[PRE_TB],
				  const float *const f[PRE_MB], int64_t len,
				  float acc[PRE_TB][PRE_MB])
{
	__m256 v[PRE_TB][PRE_MB];
	int64_t k = 0;

	for (int t = 0; t < PRE_TB; t++)
		for (int d = 0; d < PRE_MB; d++)
			v[t][d] = _mm256_setzero_ps();
	for (; k + 8 <= len; k += 8) {
		const __m256 f0 = _mm256_loadu_ps(f[0] + k);
		const __m256 f1 = _mm256_loadu_ps(f[1] + k);
		const __m256 f2 = _mm256_loadu_ps(f[2] + k);

		for (int t = 0; t < PRE_TB; t++) {
			const __m256 xt = _mm256_loadu_ps(x[t] + k);

			v[t][0] = _mm256_fmadd_ps(xt, f0, v[t][0]);
			v[t][1] = _mm256_fmadd_ps(xt, f1, v[t][1]);
			v[t][2] = _mm256_fmadd_ps(xt, f2, v[t][2]);
		}
	}
	for (int t = 0; t < PRE_TB; t++)
		for (int d = 0; d < PRE_MB; d++) {
			float s = mtp_vec_hsum(v[t][d]);

			for (int64_t i = k; i < len; i++)
				s += x[t][i] * f[d][i];
			acc[t][d] += s;
		}
}

/* dots_4x3 at 16 lanes (AVX-512), where the FMAs bound it at 8. */
MTP_CPU_AVX512 static void dots_4x3_512(const float *const x[PRE_TB],
					const float *const f[PRE_MB],
					int64_t len, float acc[PRE_TB][PRE_MB])
{
	__m512 v[PRE_TB][PRE_MB];
	int64_t k = 0;

	for (int t = 0; t < PRE_TB; t++)
		for (int d = 0; d < PRE_MB; d++)
			v[t][d] = _mm512_setzero_ps();
	for (; k + 16 <= len; k += 16) {
		const __m512 f0 = _mm512_loadu_ps(f[0] + k);
		const __m512 f1 = _mm512_loadu_ps(f[1] + k);
		const __m512 f2 = _mm512_loadu_ps(f[2] + k);

		for (int t = 0; t < PRE_TB; t++) {
			const __m512 xt = _mm512_loadu_ps(x[t] + k);

			v[t][0] = _mm512_fmadd_ps(xt, f0, v[t][0]);
			v[t][1] = _mm512_fmadd_ps(xt, f1, v[t][1]);
			v[t][2] = _mm512_fmadd_ps(xt, f2, v[t][2]);
		}
	}
	for (int t = 0; t < PRE_TB; t++)
		for (int d = 0; d < PRE_MB; d++)
			acc[t][d] += _mm512_reduce_add_ps(v[t][d]);
	if (k < len) {
		const float *xt[PRE_TB], *fd[PRE_MB];

		for (int t = 0; t < PRE_TB; t++)
			xt[t] = x[t] + k;
		for (int d = 0; d < PRE_MB; d++)
			fd[d] = f[d] + k;
		dots_4x3(xt, fd, len - k, acc);
	}
}

/* dot[t][o] = x[t] . fn[o] for the block's tokens (missing ones repeat the
 * last); dot is [PRE_TB][nmix], zeroed here. */
static void block_dots(const struct mtp_cpu_hc_pre *k,
		       const float *const x[PRE_TB], int64_t nmix, float *dot)
{
	const int64_t n = k->m * k->h;
	const bool wide = mtp_cpu_vec512(k->act);

	memset(dot, 0, (size_t)(PRE_TB * nmix) * sizeof(*dot));
	for (int64_t kc = 0; kc < n; kc += PRE_KC) {
		const int64_t len = n - kc < PRE_KC ? n - kc : PRE_KC;
		const float *xc[PRE_TB];

		for (int t = 0; t < PRE_TB; t++)
			xc[t] = x[t] + kc;
		for (int64_t o = 0; o < nmix; o += PRE_MB) {
			const float *fc[PRE_MB];
			float acc[PRE_TB][PRE_MB] = {{0}};

			for (int d = 0; d < PRE_MB; d++)
				fc[d] = k->fn + (o + d < nmix ? o + d : o) * n +
					kc;
			(wide ? dots_4x3_512 : dots_4x3)(xc, fc, len, acc);
			for (int t = 0; t < PRE_TB; t++)
				for (int d = 0; d < PRE_MB && o + d < nmix; d++)
					dot[t * nmix + o + d] += acc[t][d];
		}
	}
}

/*
 * Decode sizes (fewer tokens than a block): the cost is streaming fn once
 * (2.75 MB at H = 7168, M = 4), which one thread cannot do at the memory's
 * speed. K is cut into PRE_DC fixed chunks that the threads share; each
 * chunk's partial dots go to their own slot and are added in chunk order,
 * so the result does not depend on the thread count. A token's dots are
 * PRE_DM mixes at a time (8 FMA chains, x loaded once per 8 fn vectors).
 */
#define PRE_DC 16
#define PRE_DM 8

MTP_CPU_AVX2 static void dots_1x8(const float *x, const float *const f[PRE_DM],
				  int64_t len, float acc[PRE_DM])
{
	__m256 v[PRE_DM];
	int64_t k = 0;

	for (int d = 0; d < PRE_DM; d++)
		v[d] = _mm256_setzero_ps();
	for (; k + 8 <= len; k += 8) {
		const __m256 xv = _mm256_loadu_ps(x + k);

		for (int d = 0; d < PRE_DM; d++)
			v[d] = _mm256_fmadd_ps(xv, _mm256_loadu_ps(f[d] + k),
					       v[d]);
	}
	for (int d = 0; d < PRE_DM; d++) {
		float s = mtp_vec_hsum(v[d]);

		for (int64_t i = k; i < len; i++)
			s += x[i] * f[d][i];
		acc[d] = s;
	}
}

/* part [PRE_DC][t][nmix]: chunk c's partial dots of every token and mix. */
static void decode_chunk(const struct mtp_cpu_hc_pre *k, const float *x,
			 int64_t t, int64_t c, float *part)
{
	const int64_t n = k->m * k->h, nmix = 2 * k->m + k->m * k->m;
	const int64_t clen = ((n + PRE_DC - 1) / PRE_DC + 7) / 8 * 8;
	const int64_t kc = c * clen, len = kc >= n	   ? 0
					   : n - kc < clen ? n - kc
							   : clen;
	float *pc = part + c * t * nmix;

	for (int64_t tok = 0; tok < t; tok++)
		for (int64_t o = 0; o < nmix; o += PRE_DM) {
			const float *f[PRE_DM];
			float acc[PRE_DM] = {0};

			for (int d = 0; d < PRE_DM; d++)
				f[d] = k->fn +
				       (o + d < nmix ? o + d : nmix - 1) * n +
				       (len ? kc : 0);
			if (len)
				dots_1x8(x + tok * n + kc, f, len, acc);
			for (int d = 0; d < PRE_DM && o + d < nmix; d++)
				pc[tok * nmix + o + d] = acc[d];
		}
}

static enum mtp_status pre_decode(const struct mtp_cpu_hc_pre *k,
				  const void *residual, int64_t t, float *post,
				  float *comb, void *layer_input)
{
	const int64_t m = k->m, h = k->h, n = m * h, nmix = 2 * m + m * m;
	float *x = mtp_cpu_floats(
		(size_t)(t * n + 2 * h + nmix + PRE_DC * t * nmix));
	float *u, *li, *mu, *part;

	if (!x)
		return MTP_ERR_NOMEM;
	u = x + t * n;
	li = u + h;
	mu = li + h;
	part = mu + nmix;
	mtp_cpu_load(k->act, residual, 0, t * n, x);
#pragma omp parallel for schedule(static) if (n * nmix >= MTP_CPU_PAR_MIN)
	for (int64_t c = 0; c < PRE_DC; c++)
		decode_chunk(k, x, t, c, part);
	for (int64_t tok = 0; tok < t; tok++) {
		const float *xt = x + tok * n;
		const float rho = mtp_cpu_rms_inv(xt, n, k->rms_eps);

		for (int64_t o = 0; o < nmix; o++) {
			float s = 0.0f;

			for (int64_t c = 0; c < PRE_DC; c++)
				s += part[(c * t + tok) * nmix + o];
			mu[o] = isfinite(s)
					? rho * s
					: mtp_cpu_scaled_dot(rho, xt,
							     k->fn + o * n, n);
		}
		pre_finish(k, xt, mu, u, post + tok * m, comb + tok * m * m,
			   li);
		mtp_cpu_store(k->act, layer_input, tok * h, h, li);
	}
	mtp_cpu_free(x);
	return MTP_OK;
}

#endif

struct pre_args {
	const struct mtp_cpu_hc_pre *k;
	const void *residual;
	float *post, *comb;
	void *li;
	int64_t t;
};

static void pre_one(const void *ctx, int64_t r, float *buf)
{
	const struct pre_args *g = ctx;
	const struct mtp_cpu_hc_pre *k = g->k;
	const int64_t m = k->m, h = k->h, n = m * h;
	float *x = buf, *u = x + n, *li = u + h, *mu = li + h;

	mtp_cpu_load(k->act, g->residual, r * n, n, x);
	mtp_cpu_hc_pre_token(k, x, mu, u, g->post + r * m, g->comb + r * m * m,
			     li);
	mtp_cpu_store(k->act, g->li, r * h, h, li);
}

#if MTP_CPU_VEC
/* Tokens [PRE_TB*b, PRE_TB*b + PRE_TB): buf holds their fp32 streams, then
 * u, li and the dots. */
static void pre_block(const void *ctx, int64_t b, float *buf)
{
	const struct pre_args *g = ctx;
	const struct mtp_cpu_hc_pre *k = g->k;
	const int64_t m = k->m, h = k->h, n = m * h, nmix = 2 * m + m * m;
	const int64_t t0 = b * PRE_TB;
	const int nt = g->t - t0 < PRE_TB ? (int)(g->t - t0) : PRE_TB;
	float *u = buf + PRE_TB * n, *li = u + h, *dot = li + h;
	const float *x[PRE_TB];

	for (int i = 0; i < PRE_TB; i++) {
		x[i] = buf + (i < nt ? i : nt - 1) * n;
		if (i < nt)
			mtp_cpu_load(k->act, g->residual, (t0 + i) * n, n,
				     buf + i * n);
	}
	block_dots(k, x, nmix, dot);
	for (int i = 0; i < nt; i++) {
		const int64_t t = t0 + i;
		const float rho = mtp_cpu_rms_inv(x[i], n, k->rms_eps);
		float *mu = dot + i * nmix;

		for (int64_t o = 0; o < nmix; o++)
			mu[o] = isfinite(mu[o])
					? rho * mu[o]
					: mtp_cpu_scaled_dot(rho, x[i],
							     k->fn + o * n, n);
		pre_finish(k, x[i], mu, u, g->post + t * m, g->comb + t * m * m,
			   li);
		mtp_cpu_store(k->act, g->li, t * h, h, li);
	}
}
#endif

enum mtp_status mtp_cpu_hc_pre_rows(const struct mtp_cpu_hc_pre *k,
				    const void *norm_w, const void *residual,
				    int64_t t, float *post, float *comb,
				    void *layer_input)
{
	const int64_t m = k->m, h = k->h, nmix = 2 * m + m * m;
	struct mtp_cpu_hc_pre kn = *k;
	const struct pre_args g = {&kn, residual, post, comb, layer_input, t};
	float *wf = NULL;
	enum mtp_status st;

	if (norm_w) {
		wf = mtp_cpu_widen(k->act, norm_w, h);
		if (!wf)
			return MTP_ERR_NOMEM;
		kn.norm_w = wf;
	}
#if MTP_CPU_VEC
	if (mtp_cpu_vec(k->act) && t < PRE_TB)
		st = pre_decode(&kn, residual, t, post, comb, layer_input);
	else if (mtp_cpu_vec(k->act))
		st = mtp_cpu_rows((t + PRE_TB - 1) / PRE_TB, PRE_TB * m * h,
				  (size_t)(PRE_TB * (m * h + nmix) + 2 * h),
				  pre_block, &g);
	else
#endif
		st = mtp_cpu_rows(t, m * h, (size_t)(m * h + 2 * h + nmix),
				  pre_one, &g);
	mtp_cpu_free(wf);
	return st;
}

enum mtp_status mtp_cpu_op_hc_pre(const struct mtp_call *c)
{
	struct mtp_cpu_hc_pre k;

	mtp_cpu_hc_pre_init(&k, mtp_cpu_in(c, "", "fn"),
			    mtp_cpu_in(c, "", "scale"),
			    mtp_cpu_in(c, "", "base"), &c->params->hc,
			    c->dims.m, c->dims.h, c->act);
	return mtp_cpu_hc_pre_rows(&k, mtp_cpu_in(c, "", "norm_weight"),
				   mtp_cpu_in(c, "", "residual"), c->dims.t,
				   mtp_cpu_out(c, "", "post_mix"),
				   mtp_cpu_out(c, "", "comb_mix"),
				   mtp_cpu_out(c, "", "layer_input"));
}
