/*
 * Tests of the synthetic decoder blocks [§10.1, §10.2]: a hand SwiGLU, the
 * optional residual/state arguments (first-layer calls must equal calls
 * with neutral state) and the two V4 call contracts.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

#define BF MTP_BF16

static const struct mtp_ref_dims dims = {
	.t = 3, .h = 8, .m = 4, .v = 8, .f = 8};

Test(v3_block, hand_swiglu)
{
	/* H = F = 1, x = 3, w_in = 1: xn = bf16(3/sqrt(9+1e-6)) = 1;
	 * W_a = 0: a = 0; r1 = bf16(0 + 3) = 3, x1 = bf16(1 * w_post) = 2;
	 * gate = 2, up = 1.5*2 = 3, g = bf16(silu(2)*3) = bf16(6 sigmoid(2));
	 * h = W_down g = g. */
	const struct mtp_ref_dims d = {.t = 1, .h = 1, .m = 1, .v = 1, .f = 1};
	const double x = 3, one = 1, zero = 0, two = 2, up = 1.5;
	const struct mtp_ref_v3_block b = {
		.w_in = &one,
		.W_a = &zero,
		.w_post = &two,
		.W_gate = &one,
		.W_up = &up,
		.W_down = &one,
	};
	struct mtp_ref_step_cfg c = test_cfg_v3();
	double h, r;

	mtp_ref_v3_block(&x, NULL, &b, &d, &c, &h, &r);
	cr_assert_eq(r, 3.0);
	cr_assert_eq(h, mtp_round(BF, 6.0 / (1.0 + exp(-2.0))));
	cr_assert_eq(h, 5.28125);
}

Test(v3_block, zero_residual_equals_first_layer_call)
{
	struct test_v3 w;
	struct test_rng g = test_rng_init(51);
	double x[24], zero[24] = {0}, h0[24], r0[24], h1[24], r1[24];

	test_v3_init(&w, &dims, 52);
	test_fill(&g, x, 24, 2.0, BF);
	for (int rnd = 0; rnd < 2; rnd++) {
		struct mtp_ref_step_cfg c = test_cfg_v3();

		c.rounding = rnd;
		mtp_ref_v3_block(x, NULL, &w.layer.block, &dims, &c, h0, r0);
		mtp_ref_v3_block(x, zero, &w.layer.block, &dims, &c, h1, r1);
		test_assert_same(h0, h1, 24, "h");
		test_assert_same(r0, r1, 24, "r");
	}
	test_v3_fini(&w);
}

Test(v3_block, is_the_composition_of_its_steps)
{
	struct test_v3 w;
	struct test_rng g = test_rng_init(53);
	struct mtp_ref_step_cfg c = test_cfg_v3();
	const struct mtp_ref_v3_block *b = &w.layer.block;
	double x[24], res[24], h[24], r[24], xn[24], r0[24], a[24], x1[24];
	double r1[24], gate[24], up[24], gg[24], want[24];

	test_v3_init(&w, &dims, 54);
	test_fill(&g, x, 24, 2.0, BF);
	test_fill(&g, res, 24, 2.0, BF);
	mtp_ref_v3_block(x, res, b, &dims, &c, h, r);
	mtp_ref_add_rmsnorm(x, res, b->w_in, 3, 8, c.eps, c.rounding, BF, xn,
			    r0);
	mtp_ref_linear(xn, b->W_a, 3, 8, 8, BF, a);
	mtp_ref_add_rmsnorm(a, r0, b->w_post, 3, 8, c.eps, c.rounding, BF, x1,
			    r1);
	mtp_ref_linear(x1, b->W_gate, 3, 8, 8, BF, gate);
	mtp_ref_linear(x1, b->W_up, 3, 8, 8, BF, up);
	for (int i = 0; i < 24; i++)
		gg[i] = mtp_round(BF, gate[i] * (1.0 / (1.0 + exp(-gate[i]))) *
					      up[i]);
	mtp_ref_linear(gg, b->W_down, 3, 8, 8, BF, want);
	test_assert_same(r, r1, 24, "r");
	test_assert_close(h, want, 24, 0.0, "h");
	test_v3_fini(&w);
}

/* Random streams X0 [T,M,H] for the V4 block tests. */
static void v4_x0(double *x0, uint64_t seed)
{
	struct test_rng g = test_rng_init(seed);

	test_fill(&g, x0, 96, 1.0, BF);
}

Test(v4_block, neutral_state_equals_first_layer_call)
{
	/* x = 0 [T,H], residual = X0, res_mix = I, post_mix finite:
	 * R0 = bf16(post*0 + X0) = X0. */
	struct test_v4 w;
	struct mtp_ref_step_cfg c =
		test_cfg_v4(MTP_CONTRACT_DEFERRED, MTP_HC_HEAD_CUDA);
	double x0[96], zero[24] = {0}, post[12], res_mix[48] = {0};
	double a[4][96], b[4][96];
	struct test_rng g = test_rng_init(55);

	test_v4_init(&w, &dims, 56);
	v4_x0(x0, 57);
	test_fill(&g, post, 12, 2.0, MTP_F32);
	for (int t = 0; t < 3; t++)
		for (int i = 0; i < 4; i++)
			res_mix[t * 16 + i * 5] = 1.0;
	for (int k = 0; k < 2; k++) {
		c.contract = k;
		mtp_ref_v4_block(x0, NULL, NULL, NULL, &w.layer.block, &dims,
				 &c, a[0], a[1], a[2], a[3]);
		mtp_ref_v4_block(zero, post, res_mix, x0, &w.layer.block, &dims,
				 &c, b[0], b[1], b[2], b[3]);
		test_assert_same(a[0], b[0], k ? 96 : 24, "x_out");
		test_assert_same(a[1], b[1], 96, "residual_out");
		test_assert_same(a[2], b[2], 12, "post_out");
		test_assert_same(a[3], b[3], 48, "comb_out");
	}
	test_v4_fini(&w);
}

Test(v4_block, state_is_posted_into_the_streams)
{
	/* With state (x [T,H], post, res_mix, residual) the block's input
	 * streams are hc_post(x, residual, post, res_mix) [ref.h]. */
	struct test_v4 w;
	struct mtp_ref_step_cfg c =
		test_cfg_v4(MTP_CONTRACT_INTERNAL, MTP_HC_HEAD_CUDA);
	struct test_rng g = test_rng_init(62);
	double x[24], res[96], post[12], mix[48], r0[96];
	double a[4][96], b[4][96];

	test_v4_init(&w, &dims, 63);
	test_fill(&g, x, 24, 1.0, BF);
	test_fill(&g, res, 96, 1.0, BF);
	test_fill(&g, post, 12, 2.0, MTP_F32);
	test_fill(&g, mix, 48, 0.5, MTP_F32);
	mtp_ref_v4_block(x, post, mix, res, &w.layer.block, &dims, &c, a[0],
			 a[1], a[2], a[3]);
	mtp_ref_hc_post(x, res, post, mix, 3, 4, 8, BF, r0);
	mtp_ref_v4_block(r0, NULL, NULL, NULL, &w.layer.block, &dims, &c, b[0],
			 b[1], b[2], b[3]);
	test_assert_same(a[0], b[0], 96, "x_out");
	test_assert_same(a[1], b[1], 96, "residual_out");
	test_assert_same(a[2], b[2], 12, "post_out");
	test_assert_same(a[3], b[3], 48, "comb_out");
	test_v4_fini(&w);
}

Test(v4_block, internal_contract_applies_the_final_post_once)
{
	struct test_v4 w;
	struct mtp_ref_step_cfg c =
		test_cfg_v4(MTP_CONTRACT_DEFERRED, MTP_HC_HEAD_CUDA);
	double x0[96], f[24], r1[96], pf[12], cf[48];
	double x2[96], r1i[96], pfi[12], cfi[48], want[96];

	test_v4_init(&w, &dims, 58);
	v4_x0(x0, 59);
	mtp_ref_v4_block(x0, NULL, NULL, NULL, &w.layer.block, &dims, &c, f, r1,
			 pf, cf);
	c.contract = MTP_CONTRACT_INTERNAL;
	mtp_ref_v4_block(x0, NULL, NULL, NULL, &w.layer.block, &dims, &c, x2,
			 r1i, pfi, cfi);
	mtp_ref_hc_post(f, r1, pf, cf, 3, 4, 8, BF, want);
	test_assert_same(x2, want, 96, "x_out");
	test_assert_same(r1i, r1, 96, "residual_out");
	test_assert_same(pfi, pf, 12, "post_out");
	test_assert_same(cfi, cf, 48, "comb_out");
	test_v4_fini(&w);
}

Test(v4_block, deferred_is_the_composition_of_its_steps)
{
	struct test_v4 w;
	struct mtp_ref_step_cfg c =
		test_cfg_v4(MTP_CONTRACT_DEFERRED, MTP_HC_HEAD_CUDA);
	const struct mtp_ref_v4_block *b = &w.layer.block;
	const struct mtp_hc_params p = {
		.rms_eps = 1e-6,
		.pre_eps = 1e-6,
		.sinkhorn_eps = 1e-6,
		.post_mult = 2.0,
		.sinkhorn_iters = 20,
		.norm_eps = 1e-6,
	};
	double x0[96], f[24], r1[96], pf[12], cf[48];
	double pa[12], ca[48], u[24], v[24], a[24], r1w[96], pfw[12], cfw[48];

	c.rounding = MTP_ROUNDING_FUSED;
	test_v4_init(&w, &dims, 60);
	v4_x0(x0, 61);
	mtp_ref_v4_block(x0, NULL, NULL, NULL, b, &dims, &c, f, r1, pf, cf);
	mtp_ref_hc_pre(x0, b->hc_attn_fn, b->hc_attn_scale, b->hc_attn_base,
		       NULL, &p, 3, 4, 8, BF, pa, ca, u);
	mtp_ref_rmsnorm(u, b->attn_norm_w, 3, 8, 1e-6, MTP_ROUNDING_FUSED, BF,
			v);
	mtp_ref_linear(v, b->W_a, 3, 8, 8, BF, a);
	mtp_ref_hc_post(a, x0, pa, ca, 3, 4, 8, BF, r1w);
	mtp_ref_hc_pre(r1w, b->hc_ffn_fn, b->hc_ffn_scale, b->hc_ffn_base, NULL,
		       &p, 3, 4, 8, BF, pfw, cfw, u);
	test_assert_same(r1, r1w, 96, "R1");
	test_assert_same(pf, pfw, 12, "post_f");
	test_assert_same(cf, cfw, 48, "C_f");
	test_v4_fini(&w);
}
