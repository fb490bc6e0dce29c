/*
 * mHC hc_pre [SPEC.md §4.4.1], one token per task in fp32 as the tilelang
 * kernels do: the RMS scale and the 2M+M*M mixes from the M streams, pre and
 * post through sigmoids, the Sinkhorn-normalised comb matrix, and the layer
 * input sum_m pre_m * R[m], optionally with the fused RMSNorm. The token
 * kernel is shared with hc_fused_post_pre and the V4 block.
 */
#include <omp.h>

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

void mtp_cpu_hc_layer_input(const struct mtp_cpu_hc_pre *k, const float *x,
			    const float *pre, float *u, float *li)
{
	const int64_t h = k->h;

	if (pre)
		mtp_cpu_collapse_row(x, pre, k->m, h, u);
	else /* DSpark layer 0's identity pre-mix (§13 DS-4): a select */
		memcpy(u, x, (size_t)h * sizeof(*u));
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
	mtp_cpu_hc_layer_input(k, x, mu, u, li);
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
#define PRE_TB MTP_DOT_TR
#define PRE_MB MTP_DOT_TO
#define PRE_KC MTP_DOT_KC
#define PRE_SB 32 /* tokens per block (block_dots) */

/*
 * The dots of a block of nt <= PRE_SB tokens, their fp32 streams in xb
 * [nt][ld]: for each K chunk, every 3-mix group of fn's chunk (12 KB, in
 * L1) is multiplied with the block's slices (128 KB, in L2) 4 tokens at a
 * time (missing ones repeat the last): fn comes from L3 once per block,
 * not once per 4 tokens. Each dot is still the sum, chunk by chunk, of the
 * same register tile's partials, so the grouping of tokens does not change
 * it. dot is [nt][nmix], zeroed here.
 */
static void block_dots(const struct mtp_cpu_hc_pre *k, const float *xb,
		       int64_t ld, int nt, float *dot)
{
	const int64_t n = k->m * k->h, nmix = 2 * k->m + k->m * k->m;
	const enum mtp_cpu_lanes lanes = mtp_cpu_dot_lanes();

	memset(dot, 0, (size_t)(nt * nmix) * sizeof(*dot));
	for (int64_t kc = 0; kc < n; kc += PRE_KC) {
		const int64_t len = n - kc < PRE_KC ? n - kc : PRE_KC;

		for (int64_t o = 0; o < nmix; o += PRE_MB) {
			const float *fc[PRE_MB];

			for (int d = 0; d < PRE_MB; d++)
				fc[d] = k->fn + (o + d < nmix ? o + d : o) * n +
					kc;
			for (int q = 0; q < nt; q += PRE_TB) {
				const float *xc[PRE_TB];
				float acc[PRE_TB][PRE_MB] = {{0}};

				for (int t = 0; t < PRE_TB; t++)
					xc[t] = xb +
						(q + t < nt ? q + t : nt - 1) *
							ld +
						kc;
				mtp_cpu_dots_4x3(xc, fc, len, lanes, acc);
				for (int t = 0; t < PRE_TB && q + t < nt; t++)
					for (int d = 0;
					     d < PRE_MB && o + d < nmix; d++)
						dot[(q + t) * nmix + o + d] +=
							acc[t][d];
			}
		}
	}
}

/*
 * Decode sizes (fewer tokens than a block): the cost is streaming fn once
 * (2.75 MB at H = 7168, M = 4) from DRAM, or from L3 when warm. K is cut
 * into the same MTP_DOT_KC chunks as the block path, which the threads
 * share, each thread a contiguous range of them; each chunk's partial dots
 * go to their own slot and are added in chunk order, as block_dots adds
 * them, so a token's mixes have the same bits here, in a block, and for any
 * thread count (`run --invariance`). A thread first converts its chunks'
 * slices of the residual, then walks fn PRE_DM rows at a time across its
 * whole chunk range, so that each fn row is one long stream per thread.
 */
#define PRE_DM MTP_DOT_WO

static int64_t decode_chunks_of(int64_t n)
{
	return (n + PRE_KC - 1) / PRE_KC;
}

/* Chunks [c0, c1) of the decode path: converts their slices of every
 * token's streams into x, then part [chunks][t][nmix] gets their partial
 * dots, mix group by mix group so that each fn row is one stream. */
static void decode_chunks(const struct mtp_cpu_hc_pre *k, const void *residual,
			  float *x, int64_t t, int64_t c0, int64_t c1,
			  float *part)
{
	const int64_t n = k->m * k->h, nmix = 2 * k->m + k->m * k->m;
	const enum mtp_cpu_lanes lanes = mtp_cpu_dot_lanes();

	for (int64_t c = c0; c < c1; c++)
		for (int64_t tok = 0; tok < t; tok++) {
			const int64_t kc = c * PRE_KC;

			mtp_cpu_load(k->act, residual, tok * n + kc,
				     n - kc < PRE_KC ? n - kc : PRE_KC,
				     x + tok * n + kc);
		}
	for (int64_t o = 0; o < nmix; o += PRE_DM)
		for (int64_t c = c0; c < c1; c++)
			for (int64_t tok = 0; tok < t; tok++) {
				const int64_t kc = c * PRE_KC,
					      len = n - kc < PRE_KC ? n - kc
								    : PRE_KC;
				/* the last group repeats the last row */
				const int64_t o0 =
					o + PRE_DM <= nmix ? o : nmix - PRE_DM;
				float acc[PRE_DM] = {0};

				mtp_cpu_dots_1x8(x + tok * n + kc,
						 k->fn + o0 * n + kc, n, len,
						 lanes, acc);
				for (int64_t o2 = o;
				     o2 < o + PRE_DM && o2 < nmix; o2++)
					part[(c * t + tok) * nmix + o2] =
						acc[o2 - o0];
			}
}

static enum mtp_status pre_decode(const struct mtp_cpu_hc_pre *k,
				  const void *residual, int64_t t, float *post,
				  float *comb, void *layer_input)
{
	const int64_t m = k->m, h = k->h, n = m * h, nmix = 2 * m + m * m;
	const int64_t nc = decode_chunks_of(n);
	float *x =
		mtp_cpu_floats((size_t)(t * n + 2 * h + nmix + nc * t * nmix));
	float *u, *li, *mu, *part;

	if (!x)
		return MTP_ERR_NOMEM;
	u = x + t * n;
	li = u + h;
	mu = li + h;
	part = mu + nmix;
#pragma omp parallel if (n * nmix >= MTP_CPU_PAR_MIN)
	{
		const int64_t nt = omp_get_num_threads(),
			      id = omp_get_thread_num();

		decode_chunks(k, residual, x, t, nc * id / nt,
			      nc * (id + 1) / nt, part);
	}
	for (int64_t tok = 0; tok < t; tok++) {
		const float *xt = x + tok * n;
		const float rho = mtp_cpu_rms_inv(xt, n, k->rms_eps);

		for (int64_t o = 0; o < nmix; o++) {
			float s = 0.0f;

			for (int64_t c = 0; c < nc; c++)
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
	int64_t sb; /* tokens per block (pre_block) */
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
/* Rows of a block's fp32 streams, PRE_PAD floats longer than the M*H of a
 * token: at M*H = 28672 the rows are 112 KiB apart, a multiple of 4 KiB,
 * and the 4 rows of a tile and the 3 of fn fell into one set of L1. */
#define PRE_PAD 16

/* Tokens [sb*b, sb*b + sb): buf holds their fp32 streams, rows ld apart,
 * then u, li, the dots and the RMS scales. */
static void pre_block(const void *ctx, int64_t b, float *buf)
{
	const struct pre_args *g = ctx;
	const struct mtp_cpu_hc_pre *k = g->k;
	const int64_t m = k->m, h = k->h, n = m * h, nmix = 2 * m + m * m;
	const int64_t ld = n + PRE_PAD, t0 = b * g->sb;
	const int nt = g->t - t0 < g->sb ? (int)(g->t - t0) : (int)g->sb;
	float *u = buf + nt * ld, *li = u + h, *dot = li + h,
	      *rho = dot + nt * nmix;

	for (int i = 0; i < nt; i++) { /* the RMS while x is in L2 */
		mtp_cpu_load(k->act, g->residual, (t0 + i) * n, n,
			     buf + i * ld);
		rho[i] = mtp_cpu_rms_inv(buf + i * ld, n, k->rms_eps);
	}
	block_dots(k, buf, ld, nt, dot);
	for (int i = 0; i < nt; i++) {
		const int64_t t = t0 + i;
		const float *x = buf + i * ld;
		float *mu = dot + i * nmix;

		for (int64_t o = 0; o < nmix; o++)
			mu[o] = isfinite(mu[o])
					? rho[i] * mu[o]
					: mtp_cpu_scaled_dot(rho[i], x,
							     k->fn + o * n, n);
		pre_finish(k, x, mu, u, g->post + t * m, g->comb + t * m * m,
			   li);
		mtp_cpu_store(k->act, g->li, t * h, h, li);
	}
}

/* Tokens per block: PRE_SB, or fewer (a multiple of PRE_TB) so that every
 * thread has a block. */
static int64_t pre_block_size(int64_t t)
{
	const int64_t th = omp_get_max_threads();
	const int64_t per = (t + th - 1) / th;
	const int64_t sb = (per + PRE_TB - 1) / PRE_TB * PRE_TB;

	return sb < PRE_TB ? PRE_TB : sb > PRE_SB ? PRE_SB : sb;
}
#endif

enum mtp_status mtp_cpu_hc_pre_rows(const struct mtp_cpu_hc_pre *k,
				    const void *norm_w, const void *residual,
				    int64_t t, float *post, float *comb,
				    void *layer_input)
{
	const int64_t m = k->m, h = k->h, nmix = 2 * m + m * m;
	struct mtp_cpu_hc_pre kn = *k;
	struct pre_args g = {&kn, residual, post, comb, layer_input, t, 0};
	float *wf = NULL;
	enum mtp_status st;

	if (norm_w) {
		wf = mtp_cpu_widen(k->act, norm_w, h);
		if (!wf)
			return MTP_ERR_NOMEM;
		kn.norm_w = wf;
	}
#if MTP_CPU_VEC
	if (mtp_cpu_vec(k->act) && t < PRE_TB && nmix >= PRE_DM)
		st = pre_decode(&kn, residual, t, post, comb, layer_input);
	else if (mtp_cpu_vec(k->act)) {
		g.sb = pre_block_size(t);
		st = mtp_cpu_rows(
			(t + g.sb - 1) / g.sb, g.sb * m * h,
			(size_t)(g.sb * (m * h + PRE_PAD + nmix + 1) + 2 * h),
			pre_block, &g);
	} else
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
