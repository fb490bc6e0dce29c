/*
 * Implementation of the test helpers declared in test_util.h.
 */
#include "test_util.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct test_rng test_rng_init(uint64_t seed)
{
	struct test_rng g = {seed * 6364136223846793005ull +
			     1442695040888963407ull};

	return g;
}

double test_uniform(struct test_rng *g)
{
	g->s = g->s * 6364136223846793005ull + 1442695040888963407ull;
	return (double)(g->s >> 40) / 8388608.0 - 1.0; /* 24 bits / 2^23 */
}

void test_fill(struct test_rng *g, double *a, size_t n, double scale,
	       enum mtp_dtype act)
{
	for (size_t i = 0; i < n; i++)
		a[i] = mtp_round(act, scale * test_uniform(g));
}

void test_fill_around_one(struct test_rng *g, double *a, size_t n,
			  double spread)
{
	for (size_t i = 0; i < n; i++)
		a[i] = mtp_round(MTP_BF16, 1.0 + spread * test_uniform(g));
}

double *test_alloc(size_t n)
{
	double *p = calloc(n ? n : 1, sizeof(*p));

	if (!p)
		abort();
	return p;
}

int64_t *test_alloc_i64(size_t n)
{
	int64_t *p = calloc(n ? n : 1, sizeof(*p));

	if (!p)
		abort();
	return p;
}

static bool same_value(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

void test_assert_same(const double *a, const double *b, size_t n,
		      const char *what)
{
	for (size_t i = 0; i < n; i++)
		cr_assert(same_value(a[i], b[i]), "%s[%zu]: %.17g != %.17g",
			  what, i, a[i], b[i]);
}

void test_assert_close(const double *a, const double *b, size_t n, double tol,
		       const char *what)
{
	for (size_t i = 0; i < n; i++)
		cr_assert(fabs(a[i] - b[i]) <= tol,
			  "%s[%zu]: %.17g vs %.17g (tol %g)", what, i, a[i],
			  b[i], tol);
}

double test_bf16_ulps(double a, double b)
{
	double m = fmin(fabs(a), fabs(b));
	int e;

	if (a == b)
		return 0.0;
	if (m == 0.0)
		m = fmax(fabs(a), fabs(b));
	frexp(m, &e); /* m in [2^(e-1), 2^e): spacing 2^(e-1-7) */
	return fabs(a - b) / ldexp(1.0, e - 8);
}

double *test_bufs_take(struct test_bufs *b, size_t n)
{
	if (b->n == (int)(sizeof(b->p) / sizeof(b->p[0])))
		abort();
	b->p[b->n] = test_alloc(n);
	return b->p[b->n++];
}

void test_bufs_free(struct test_bufs *b)
{
	for (int i = 0; i < b->n; i++)
		free(b->p[i]);
	b->n = 0;
}

/* A GEMM weight [out,in] scaled so that outputs stay O(1). */
static double *gemm_w(struct test_bufs *b, struct test_rng *g, int64_t out,
		      int64_t in)
{
	double *w = test_bufs_take(b, (size_t)(out * in));

	test_fill(g, w, (size_t)(out * in), 1.5 / sqrt((double)in), MTP_BF16);
	return w;
}

static double *norm_w(struct test_bufs *b, struct test_rng *g, int64_t h)
{
	double *w = test_bufs_take(b, (size_t)h);

	test_fill_around_one(g, w, (size_t)h, 0.5);
	return w;
}

void test_v3_init(struct test_v3 *w, const struct mtp_ref_dims *d,
		  uint64_t seed)
{
	struct test_rng g = test_rng_init(seed);
	struct test_bufs *b = &w->bufs;
	struct mtp_ref_v3_layer *l = &w->layer;
	const int64_t h = d->h, f = d->f;

	memset(w, 0, sizeof(*w));
	l->enorm_w = norm_w(b, &g, h);
	l->hnorm_w = norm_w(b, &g, h);
	l->eh_proj_w = gemm_w(b, &g, h, 2 * h);
	l->block.w_in = norm_w(b, &g, h);
	l->block.W_a = gemm_w(b, &g, h, h);
	l->block.w_post = norm_w(b, &g, h);
	l->block.W_gate = gemm_w(b, &g, f, h);
	l->block.W_up = gemm_w(b, &g, f, h);
	l->block.W_down = gemm_w(b, &g, h, f);
	l->shared_head_norm_w = norm_w(b, &g, h);
	l->head_w = gemm_w(b, &g, d->v, h);
}

void test_v3_fini(struct test_v3 *w)
{
	test_bufs_free(&w->bufs);
}

/* fn [rows, M*H], scale [nscale], base [rows], float32 values. */
static void hc_weights(struct test_bufs *b, struct test_rng *g, int64_t rows,
		       int64_t mh, int64_t nscale, const double **fn,
		       const double **scale, const double **base)
{
	double *p = test_bufs_take(b, (size_t)(rows * mh));

	test_fill(g, p, (size_t)(rows * mh), 1.0 / sqrt((double)mh), MTP_F32);
	*fn = p;
	p = test_bufs_take(b, (size_t)nscale);
	for (int64_t i = 0; i < nscale; i++)
		p[i] = mtp_round(MTP_F32, 1.0 + 0.5 * test_uniform(g));
	*scale = p;
	p = test_bufs_take(b, (size_t)rows);
	test_fill(g, p, (size_t)rows, 0.5, MTP_F32);
	*base = p;
}

static void v4_block_init(struct test_bufs *b, struct test_rng *g,
			  const struct mtp_ref_dims *d,
			  struct mtp_ref_v4_block *k)
{
	const int64_t m = d->m, h = d->h, nmix = 2 * m + m * m;

	hc_weights(b, g, nmix, m * h, 3, &k->hc_attn_fn, &k->hc_attn_scale,
		   &k->hc_attn_base);
	hc_weights(b, g, nmix, m * h, 3, &k->hc_ffn_fn, &k->hc_ffn_scale,
		   &k->hc_ffn_base);
	k->attn_norm_w = norm_w(b, g, h);
	k->ffn_norm_w = norm_w(b, g, h);
	k->W_a = gemm_w(b, g, h, h);
	k->W_gate = gemm_w(b, g, d->f, h);
	k->W_up = gemm_w(b, g, d->f, h);
	k->W_down = gemm_w(b, g, h, d->f);
}

void test_v4_init(struct test_v4 *w, const struct mtp_ref_dims *d,
		  uint64_t seed)
{
	struct test_rng g = test_rng_init(seed);
	struct test_bufs *b = &w->bufs;
	struct mtp_ref_v4_layer *l = &w->layer;
	const int64_t h = d->h, m = d->m;

	memset(w, 0, sizeof(*w));
	l->enorm_w = norm_w(b, &g, h);
	l->hnorm_w = norm_w(b, &g, h);
	l->e_proj_w = gemm_w(b, &g, h, h);
	l->h_proj_w = gemm_w(b, &g, h, h);
	v4_block_init(b, &g, d, &l->block);
	hc_weights(b, &g, m, m * h, 1, &l->hc_head_fn, &l->hc_head_scale,
		   &l->hc_head_base);
	l->shared_head_norm_w = norm_w(b, &g, h);
	l->head_w = gemm_w(b, &g, d->v, h);
}

void test_v4_fini(struct test_v4 *w)
{
	test_bufs_free(&w->bufs);
}

void test_out_init(struct test_out *out, const struct mtp_ref_dims *d,
		   enum mtp_family family)
{
	struct test_bufs *b = &out->bufs;
	struct mtp_ref_step_out *o = &out->o;
	const size_t th = (size_t)(d->t * d->h), tm = (size_t)(d->t * d->m);

	memset(out, 0, sizeof(*out));
	o->block_out = test_bufs_take(b, th);
	o->logits = test_bufs_take(b, (size_t)(d->t * d->v));
	o->token = (int64_t *)test_bufs_take(b, (size_t)d->t);
	if (!mtp_family_mhc(family)) {
		o->block_residual = test_bufs_take(b, th);
		o->hidden_pre = test_bufs_take(b, th);
		o->hidden_post = test_bufs_take(b, th);
		o->recycled = test_bufs_take(b, th);
		return;
	}
	o->block_residual = test_bufs_take(b, th * (size_t)d->m);
	o->post_mix = test_bufs_take(b, tm);
	o->comb_mix = test_bufs_take(b, tm * (size_t)d->m);
	o->streams = test_bufs_take(b, th * (size_t)d->m);
	o->recycled = test_bufs_take(b, th * (size_t)d->m);
	o->head_hidden = test_bufs_take(b, th);
}

void test_out_fini(struct test_out *out)
{
	test_bufs_free(&out->bufs);
}

void test_assert_same_out(const struct test_out *a, const struct test_out *b,
			  const struct mtp_ref_dims *d, enum mtp_family family)
{
	const struct mtp_ref_step_out *x = &a->o, *y = &b->o;
	const size_t th = (size_t)(d->t * d->h), m = (size_t)d->m;

	test_assert_same(x->block_out, y->block_out, th, "block_out");
	test_assert_same(x->logits, y->logits, (size_t)(d->t * d->v), "logits");
	for (int64_t i = 0; i < d->t; i++)
		cr_assert_eq(x->token[i], y->token[i], "token[%lld]",
			     (long long)i);
	if (!mtp_family_mhc(family)) {
		test_assert_same(x->block_residual, y->block_residual, th,
				 "block_residual");
		test_assert_same(x->hidden_pre, y->hidden_pre, th,
				 "hidden_pre");
		test_assert_same(x->hidden_post, y->hidden_post, th,
				 "hidden_post");
		test_assert_same(x->recycled, y->recycled, th, "recycled");
		return;
	}
	test_assert_same(x->block_residual, y->block_residual, th * m,
			 "block_residual");
	test_assert_same(x->post_mix, y->post_mix, (size_t)d->t * m,
			 "post_mix");
	test_assert_same(x->comb_mix, y->comb_mix, (size_t)d->t * m * m,
			 "comb_mix");
	test_assert_same(x->streams, y->streams, th * m, "streams");
	test_assert_same(x->recycled, y->recycled, th * m, "recycled");
	test_assert_same(x->head_hidden, y->head_hidden, th, "head_hidden");
}

struct mtp_ref_step_cfg test_cfg_v3(void)
{
	struct mtp_ref_step_cfg c = {
		.family = MTP_FAMILY_DEEPSEEK_V3,
		.eps = 1e-6,
		.rounding = MTP_ROUNDING_EAGER,
		.act = MTP_BF16,
	};
	return c;
}

struct mtp_ref_step_cfg test_cfg_v4(enum mtp_contract contract,
				    enum mtp_hc_head_variant variant)
{
	struct mtp_ref_step_cfg c = {
		.family = MTP_FAMILY_DEEPSEEK_V4,
		.eps = 1e-6,
		.rounding = MTP_ROUNDING_EAGER,
		.act = MTP_BF16,
		.hc_eps = 1e-6,
		.sinkhorn_iters = 20,
		.post_mult = 2.0,
		.contract = contract,
		.hc_head_variant = variant,
	};
	return c;
}
