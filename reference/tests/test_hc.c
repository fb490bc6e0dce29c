/*
 * Tests of the mHC ops [§4.4]: hc_pre (mixes, Sinkhorn, layer input with and
 * without the fused norm), hc_post (orientation of comb), the fused
 * post+pre composition and both hc_head variants. Hand cases use fn = 0 so
 * that every mix is a function of base alone.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

#define BF MTP_BF16

static struct mtp_hc_params hc_params(double sinkhorn_eps, int iters)
{
	struct mtp_hc_params p = {
		.rms_eps = 1e-6,
		.pre_eps = 0.0,
		.sinkhorn_eps = sinkhorn_eps,
		.post_mult = 2.0,
		.sinkhorn_iters = iters,
		.norm_eps = 1e-6,
	};
	return p;
}

static double f32(double v)
{
	return mtp_round(MTP_F32, v);
}

Test(hc_pre, fn_zero_hand_case)
{
	/* M = 2, H = 4, fn = 0 so mu = 0: pre = sigmoid(0) = 1/2,
	 * post = 2*sigmoid(b) = [1, 2*0.75] (b = [0, ln 3]), L = b's last
	 * four = [[0, ln 3], [0, 0]]. Sinkhorn, eps 0.1: row softmax
	 * [1/4, 3/4] and [1/2, 1/2], + 0.1: [[0.35, 0.85], [0.6, 0.6]];
	 * column sums 0.95 and 1.45, + 0.1:
	 * C = [[0.35/1.05, 0.85/1.55], [0.6/1.05, 0.6/1.55]].
	 * Equal streams r: layer_input = (1/2 + 1/2) r = r. */
	enum { M = 2, H = 4 };
	double r[M * H] = {1, -2, 0.5, 3, 1, -2, 0.5, 3};
	double fn[8 * M * H] = {0}, scale[3] = {1, 1, 1};
	double base[8] = {0, 0, 0, log(3.0), 0, log(3.0), 0, 0};
	double post[M], comb[M * M], li[H];
	struct mtp_hc_params p = hc_params(0.1, 1);
	double c[4] = {0.35 / 1.05, 0.85 / 1.55, 0.6 / 1.05, 0.6 / 1.55};

	mtp_ref_hc_pre(r, fn, scale, base, NULL, &p, 1, M, H, BF, post, comb,
		       li);
	cr_assert_eq(post[0], 1.0);
	cr_assert_eq(post[1], 1.5);
	for (int k = 0; k < M * M; k++)
		cr_assert(fabs(comb[k] - c[k]) <= 1e-7, "%d: %g", k, comb[k]);
	test_assert_same(li, r, H, "layer_input");
	/* one more iteration: rows then columns, each over (sum + 0.1) */
	for (int i = 0; i < 2; i++) {
		const double s = c[2 * i] + c[2 * i + 1] + 0.1;

		c[2 * i] /= s;
		c[2 * i + 1] /= s;
	}
	for (int j = 0; j < 2; j++) {
		const double s = c[j] + c[2 + j] + 0.1;

		c[j] /= s;
		c[2 + j] /= s;
	}
	p.sinkhorn_iters = 2;
	mtp_ref_hc_pre(r, fn, scale, base, NULL, &p, 1, M, H, BF, post, comb,
		       li);
	for (int k = 0; k < M * M; k++)
		cr_assert(fabs(comb[k] - c[k]) <= 1e-7, "%d: %g", k, comb[k]);
}

Test(hc_pre, rho_and_scales_of_the_mixes)
{
	/* x = 1/2 everywhere (M*H = 4), rms_eps 0: rho = 2. Every pre/post
	 * row of fn picks one element: mu = rho * 1/2 = 1.
	 * pre = sigmoid(1*s0) with s0 = 2; post = 2 sigmoid(1*s1), s1 = 1/2.
	 * layer_input = (pre_0 + pre_1) * 1/2 = sigmoid(2). */
	enum { M = 2, H = 2, N = M * H };
	double x[N] = {0.5, 0.5, 0.5, 0.5}, fn[8 * N] = {0};
	double scale[3] = {2, 0.5, 1}, base[8] = {0};
	double post[M], comb[M * M], li[H];
	struct mtp_hc_params p = hc_params(1e-6, 20);

	p.rms_eps = 0.0;
	for (int o = 0; o < 2 * M; o++)
		fn[o * N + o] = 1.0;
	mtp_ref_hc_pre(x, fn, scale, base, NULL, &p, 1, M, H, BF, post, comb,
		       li);
	for (int m = 0; m < M; m++)
		cr_assert_eq(post[m], f32(2.0 / (1.0 + exp(-0.5))));
	for (int h = 0; h < H; h++)
		cr_assert_eq(li[h], mtp_round(BF, 1.0 / (1.0 + exp(-2.0))));
}

/* Random streams, fn and base for M = 4, H = 8, T = 3. */
struct hc_case {
	double r[3 * 4 * 8], fn[24 * 32], scale[3], base[24], w[8];
};

static void hc_case_init(struct hc_case *c, uint64_t seed)
{
	struct test_rng g = test_rng_init(seed);

	test_fill(&g, c->r, 3 * 4 * 8, 2.0, BF);
	test_fill(&g, c->fn, 24 * 32, 0.3, MTP_F32);
	test_fill(&g, c->base, 24, 1.0, MTP_F32);
	c->scale[0] = 1.0;
	c->scale[1] = 0.75;
	c->scale[2] = 1.5;
	test_fill_around_one(&g, c->w, 8, 0.5);
}

static void sums(const double *c, int m, double *row, double *col)
{
	for (int i = 0; i < m; i++) {
		row[i] = col[i] = 0.0;
		for (int j = 0; j < m; j++) {
			row[i] += c[i * m + j];
			col[i] += c[j * m + i];
		}
	}
}

Test(hc_pre, sinkhorn_column_sums)
{
	/* The last step is a column normalisation: sums S/(S+eps) = 1 -
	 * eps/(S+eps), with S the column sum before it (> 0.1 for these moderate logits): below 1
	 * by at most 1e-5 for eps = 1e-6 (plus float32 storage). After 20
	 * iterations the rows are normalised too. */
	struct hc_case c;
	struct mtp_hc_params p = hc_params(1e-6, 1);
	double post[12], comb[48], li[24], row[4], col[4];

	hc_case_init(&c, 41);
	mtp_ref_hc_pre(c.r, c.fn, c.scale, c.base, NULL, &p, 3, 4, 8, BF, post,
		       comb, li);
	for (int t = 0; t < 3; t++) {
		sums(comb + t * 16, 4, row, col);
		for (int j = 0; j < 4; j++)
			cr_assert(col[j] > 1.0 - 1e-5 && col[j] < 1.0 + 1e-6,
				  "col %.9g", col[j]);
	}
	p.sinkhorn_iters = 20;
	mtp_ref_hc_pre(c.r, c.fn, c.scale, c.base, NULL, &p, 3, 4, 8, BF, post,
		       comb, li);
	for (int t = 0; t < 3; t++) {
		sums(comb + t * 16, 4, row, col);
		for (int j = 0; j < 4; j++) {
			cr_assert(col[j] > 1.0 - 1e-5 && col[j] < 1.0 + 1e-6,
				  "col %.9g", col[j]);
			cr_assert(fabs(row[j] - 1.0) <= 1e-3, "row %g", row[j]);
		}
	}
	for (int k = 0; k < 12; k++)
		cr_assert(post[k] > 0.0 && post[k] < 2.0 &&
			  post[k] == f32(post[k]));
}

/* layer_input from the spec's formula when pre is known (fn = 0). */
static void expected_layer_input(const struct hc_case *c, const double *pre,
				 const double *w, double *out)
{
	for (int t = 0; t < 3; t++) {
		double u[8], ss = 0.0;

		for (int h = 0; h < 8; h++) {
			u[h] = 0.0;
			for (int m = 0; m < 4; m++)
				u[h] += pre[m] * c->r[(t * 4 + m) * 8 + h];
			ss += u[h] * u[h];
		}
		for (int h = 0; h < 8; h++) {
			double v = mtp_round(BF, u[h]);

			out[t * 8 + h] =
				w ? mtp_round(BF,
					      v * (1.0 / sqrt(ss / 8 + 1e-6)) *
						      w[h])
				  : v;
		}
	}
}

Test(hc_pre, layer_input_with_and_without_norm)
{
	struct hc_case c;
	struct mtp_hc_params p = hc_params(1e-6, 3);
	double post[12], comb[48], li[24], want[24], pre[4];

	hc_case_init(&c, 42);
	p.pre_eps = 0.01;
	for (int k = 0; k < 24 * 32; k++)
		c.fn[k] = 0.0;
	for (int m = 0; m < 4; m++)
		pre[m] = 1.0 / (1.0 + exp(-c.base[m])) + 0.01;
	for (int norm = 0; norm < 2; norm++) {
		mtp_ref_hc_pre(c.r, c.fn, c.scale, c.base, norm ? c.w : NULL,
			       &p, 3, 4, 8, BF, post, comb, li);
		expected_layer_input(&c, pre, norm ? c.w : NULL, want);
		test_assert_close(li, want, 24, 0.0, "layer_input");
	}
}

Test(hc_post, identity_comb_zero_post_returns_streams)
{
	struct hc_case c;
	struct test_rng g = test_rng_init(43);
	double x[24], post[12] = {0}, comb[48] = {0}, out[96];

	hc_case_init(&c, 43);
	test_fill(&g, x, 24, 5.0, BF);
	for (int t = 0; t < 3; t++)
		for (int i = 0; i < 4; i++)
			comb[t * 16 + i * 4 + i] = 1.0;
	mtp_ref_hc_post(x, c.r, post, comb, 3, 4, 8, BF, out);
	test_assert_same(out, c.r, 96, "out");
}

Test(hc_post, hand_case_row_is_source_column_is_destination)
{
	/* x = [1, 2], R0 = [1, 1], R1 = [2, 4], post = [1/2, 1],
	 * C = [[1, 1/2], [1/4, 2]] (C[i][j], i source):
	 * out0 = x/2 + 1*R0 + 1/4*R1 = [2, 3];
	 * out1 = x + 1/2*R0 + 2*R1 = [5.5, 10.5]. */
	const double x[2] = {1, 2}, r[4] = {1, 1, 2, 4};
	const double post[2] = {0.5, 1}, comb[4] = {1, 0.5, 0.25, 2};
	double out[4];

	mtp_ref_hc_post(x, r, post, comb, 1, 2, 2, BF, out);
	cr_assert_eq(out[0], 2.0);
	cr_assert_eq(out[1], 3.0);
	cr_assert_eq(out[2], 5.5);
	cr_assert_eq(out[3], 10.5);
}

Test(hc_fused_post_pre, is_post_then_pre_on_rounded_streams)
{
	struct hc_case c;
	struct test_rng g = test_rng_init(44);
	struct mtp_hc_params p = hc_params(1e-6, 20);
	double x[24], pin[12], cin[48], ro[96], pm[12], cm[48], li[24];
	double ro2[96], pm2[12], cm2[48], li2[24];

	hc_case_init(&c, 44);
	test_fill(&g, x, 24, 1.0, BF);
	test_fill(&g, pin, 12, 1.0, MTP_F32);
	test_fill(&g, cin, 48, 0.5, MTP_F32);
	mtp_ref_hc_fused_post_pre(x, c.r, pin, cin, c.fn, c.scale, c.base, c.w,
				  &p, 3, 4, 8, BF, ro, pm, cm, li);
	mtp_ref_hc_post(x, c.r, pin, cin, 3, 4, 8, BF, ro2);
	mtp_ref_hc_pre(ro2, c.fn, c.scale, c.base, c.w, &p, 3, 4, 8, BF, pm2,
		       cm2, li2);
	test_assert_same(ro, ro2, 96, "residual_out");
	test_assert_same(pm, pm2, 12, "post_mix");
	test_assert_same(cm, cm2, 48, "comb_mix");
	test_assert_same(li, li2, 24, "layer_input");
}

Test(hc_head, fn_zero_hand_case)
{
	/* fn = 0, hc_eps = 0: pre = sigmoid(b). M = 2, b = [0, ln 3]:
	 * pre = [1/2, 3/4]; Y0 = 1, Y1 = 2: out = 1/2 + 3/2 = 2.
	 * M = 4, b = 0: pre = 1/2 each, equal streams y: out = 2y. */
	double y2[4] = {1, 1, 2, 2}, fn[16] = {0}, s = 1.0;
	double b2[2] = {0, log(3.0)}, out[2];
	double y4[4 * 2] = {1.5, -3, 1.5, -3, 1.5, -3, 1.5, -3}, b4[4] = {0};
	double fn4[4 * 8] = {0};

	for (int v = 0; v < 2; v++) {
		mtp_ref_hc_head(y2, fn, &s, b2, 1, 2, 2, 1e-6, 0.0, v, BF, out);
		cr_assert_eq(out[0], 2.0);
		cr_assert_eq(out[1], 2.0);
		mtp_ref_hc_head(y4, fn4, &s, b4, 1, 4, 2, 1e-6, 0.0, v, BF,
				out);
		cr_assert_eq(out[0], 3.0);
		cr_assert_eq(out[1], -6.0);
	}
}

Test(hc_head, variants_agree_when_x_rho_is_exact)
{
	/* x = +-1/2 everywhere, rms_eps 0: rho = 2 and x*rho = +-1 exactly,
	 * so the ROCm rounding of x*rho changes nothing. */
	enum { T = 2, M = 4, H = 4, N = M * H };
	struct test_rng g = test_rng_init(45);
	double x[T * N], fn[M * N], b[M], s = 1.25, yc[T * H], yr[T * H];

	for (int k = 0; k < T * N; k++)
		x[k] = test_uniform(&g) < 0 ? -0.5 : 0.5;
	test_fill(&g, fn, M * N, 0.5, MTP_F32);
	test_fill(&g, b, M, 1.0, MTP_F32);
	mtp_ref_hc_head(x, fn, &s, b, T, M, H, 0.0, 1e-6, MTP_HC_HEAD_CUDA, BF,
			yc);
	mtp_ref_hc_head(x, fn, &s, b, T, M, H, 0.0, 1e-6, MTP_HC_HEAD_ROCM, BF,
			yr);
	test_assert_same(yc, yr, T * H, "y");
}

Test(hc_head, rocm_rounds_x_times_rho_first)
{
	/* M = 2, H = 2, both streams [1, 253/256], rms_eps = hc_eps = 0:
	 * rho = 1/sqrt((1 + 0.976700)/2) = 1.0058764, x0*rho -> bf16
	 * 1.0078125. fn picks x0 with weight 64 for pre_0, b = [-64, 0]:
	 * CUDA  z0 = 64*1.0058764 - 64 = 0.37609, pre_0 = 0.59293;
	 * ROCm  z0 = 64*1.0078125 - 64 = 0.5,     pre_0 = 0.62246;
	 * pre_1 = 1/2. out = (pre_0 + 1/2) * [1, 253/256]:
	 * CUDA [1.09293, 1.08012] -> [1.09375, 1.078125];
	 * ROCm [1.12246, 1.10931] -> [1.125, 1.109375]. */
	const double x[4] = {1, 0.98828125, 1, 0.98828125};
	double fn[2 * 4] = {64}, b[2] = {-64, 0}, s = 1.0, y[2];

	mtp_ref_hc_head(x, fn, &s, b, 1, 2, 2, 0.0, 0.0, MTP_HC_HEAD_CUDA, BF,
			y);
	cr_assert_eq(y[0], 1.09375);
	cr_assert_eq(y[1], 1.078125);
	mtp_ref_hc_head(x, fn, &s, b, 1, 2, 2, 0.0, 0.0, MTP_HC_HEAD_ROCM, BF,
			y);
	cr_assert_eq(y[0], 1.125);
	cr_assert_eq(y[1], 1.109375);
}

Test(hc_head, variants_close_on_random_streams)
{
	struct hc_case c;
	double s = 1.0, yc[24], yr[24];

	hc_case_init(&c, 46);
	mtp_ref_hc_head(c.r, c.fn, &s, c.base, 3, 4, 8, 1e-6, 1e-6,
			MTP_HC_HEAD_CUDA, BF, yc);
	mtp_ref_hc_head(c.r, c.fn, &s, c.base, 3, 4, 8, 1e-6, 1e-6,
			MTP_HC_HEAD_ROCM, BF, yr);
	for (int i = 0; i < 24; i++)
		cr_assert(test_bf16_ulps(yc[i], yr[i]) <= 2.0, "%g %g", yc[i],
			  yr[i]);
}
