/*
 * Tests of rmsnorm [§2.1/§2.2], add_rmsnorm [§2.3] and target_handoff [§5.5],
 * with expected values derived by hand from the spec's formulas.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

#define BF MTP_BF16

Test(rmsnorm, constant_row_is_c_over_sqrt_c2_plus_eps)
{
	/* x = c everywhere, w = 1: y = act(c / sqrt(c^2 + eps)). With c = 1,
	 * eps = 3: exactly 1/2; with c = -3, eps = 7: -3/4. */
	const double w[4] = {1, 1, 1, 1};
	double x[4] = {1, 1, 1, 1}, y[4];

	for (int rnd = 0; rnd < 2; rnd++) {
		mtp_ref_rmsnorm(x, w, 1, 4, 3.0, rnd, BF, y);
		for (int i = 0; i < 4; i++)
			cr_assert_eq(y[i], 0.5);
	}
	for (int i = 0; i < 4; i++)
		x[i] = -3;
	mtp_ref_rmsnorm(x, w, 1, 4, 7.0, MTP_ROUNDING_EAGER, BF, y);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(y[i], -0.75);
	/* eps tiny: c/sqrt(c^2+eps) = 1 - 2e-6 rounds to 1 in bf16 */
	mtp_ref_rmsnorm(x, w, 1, 4, 1e-6, MTP_ROUNDING_FUSED, BF, y);
	cr_assert_eq(y[0], -1.0);
}

Test(rmsnorm, eager_and_fused_differ_as_derived_by_hand)
{
	/* x = [1, 253/256], eps 1e-6: r = 1/sqrt((1 + 0.97670)/2) = 1.005876.
	 * x0*r = 1.005876 -> bf16 1.0078125; eager: 1.0078125*1.5 =
	 * 1.51171875, a tie between 1.5078125 and 1.515625 -> even 1.515625.
	 * fused: 1.005876*1.5 = 1.508814 -> 1.5078125. x1*r = 0.994088 ->
	 * 0.9921875 both ways (w1 = 1). */
	const double x[2] = {1.0, 0.98828125}, w[2] = {1.5, 1.0};
	double ye[2], yf[2];

	mtp_ref_rmsnorm(x, w, 1, 2, 1e-6, MTP_ROUNDING_EAGER, BF, ye);
	mtp_ref_rmsnorm(x, w, 1, 2, 1e-6, MTP_ROUNDING_FUSED, BF, yf);
	cr_assert_eq(ye[0], 1.515625);
	cr_assert_eq(yf[0], 1.5078125);
	cr_assert_eq(ye[1], 0.9921875);
	cr_assert_eq(yf[1], 0.9921875);
}

Test(rmsnorm, eager_and_fused_within_one_ulp)
{
	enum { R = 4, H = 16 };
	struct test_rng g = test_rng_init(11);
	double x[R * H], w[H], ye[R * H], yf[R * H];
	int differ = 0;

	test_fill(&g, x, R * H, 3.0, BF);
	test_fill_around_one(&g, w, H, 0.9);
	mtp_ref_rmsnorm(x, w, R, H, 1e-6, MTP_ROUNDING_EAGER, BF, ye);
	mtp_ref_rmsnorm(x, w, R, H, 1e-6, MTP_ROUNDING_FUSED, BF, yf);
	for (int i = 0; i < R * H; i++) {
		cr_assert(test_bf16_ulps(ye[i], yf[i]) <= 1.0, "i=%d %g %g", i,
			  ye[i], yf[i]);
		cr_assert_eq(ye[i], mtp_round(BF, ye[i]));
		differ += ye[i] != yf[i];
	}
	cr_assert_lt(differ, R * H); /* not a different op altogether */
}

Test(rmsnorm, nan_stays_in_its_row)
{
	enum { R = 3, H = 8 };
	struct test_rng g = test_rng_init(12);
	double x[R * H], w[H], y[R * H];

	test_fill(&g, x, R * H, 1.0, BF);
	test_fill_around_one(&g, w, H, 0.5);
	x[1 * H + 3] = NAN;
	mtp_ref_rmsnorm(x, w, R, H, 1e-6, MTP_ROUNDING_EAGER, BF, y);
	for (int i = 0; i < R * H; i++)
		cr_assert_eq(isnan(y[i]) != 0, i / H == 1, "i=%d y=%g", i,
			     y[i]);
}

Test(rmsnorm, zero_row_gives_zeros)
{
	const double x[4] = {0}, w[4] = {2, -1, 3, 0.5};
	double y[4];

	mtp_ref_rmsnorm(x, w, 1, 4, 1e-6, MTP_ROUNDING_FUSED, BF, y);
	for (int i = 0; i < 4; i++)
		cr_assert_eq(y[i], 0.0);
}

Test(rmsnorm, float32_act_keeps_float32_precision)
{
	/* x = [1, 2], w = 1, eps = 0: r = 1/sqrt(2.5); y = f32(x*r). */
	const double x[2] = {1, 2}, w[2] = {1, 1};
	double y[2];

	mtp_ref_rmsnorm(x, w, 1, 2, 0.0, MTP_ROUNDING_EAGER, MTP_F32, y);
	cr_assert_eq(y[0], (double)(float)(1.0 / sqrt(2.5)));
	cr_assert_eq(y[1], (double)(float)(2.0 / sqrt(2.5)));
	cr_assert_neq(y[0], mtp_round(BF, y[0]));
}

Test(add_rmsnorm, residual_out_is_rounded_sum)
{
	enum { R = 3, H = 8 };
	struct test_rng g = test_rng_init(13);
	double x[R * H], res[R * H], w[H], y[R * H], ro[R * H];

	test_fill(&g, x, R * H, 1.0, BF);
	test_fill(&g, res, R * H, 4.0, BF);
	test_fill_around_one(&g, w, H, 0.5);
	mtp_ref_add_rmsnorm(x, res, w, R, H, 1e-6, MTP_ROUNDING_EAGER, BF, y,
			    ro);
	for (int i = 0; i < R * H; i++)
		cr_assert_eq(ro[i], mtp_round(BF, x[i] + res[i]), "i=%d", i);
}

Test(add_rmsnorm, variance_from_the_unrounded_sum)
{
	/* x = [1, 1], res = [3*2^-9, 0], eps = 0, w = 1.
	 * s = [1.005859375, 1]: residual_out = [1.0078125, 1].
	 * Unrounded variance: r = 1/sqrt((1.0117531 + 1)/2) = 0.9970746;
	 * y0 = 1.0078125*r = 1.004864 -> bf16 1.0078125 (0.62 ulp up).
	 * (With the variance of the rounded sum, r = 0.9961014 and
	 * y0 = 1.003883 -> 1.0: the test tells the two apart.)
	 * y1 = 0.9970746 -> 0.99609375. */
	const double x[2] = {1, 1}, res[2] = {0.005859375, 0};
	const double w[2] = {1, 1};
	double y[2], ro[2];

	for (int rnd = 0; rnd < 2; rnd++) {
		mtp_ref_add_rmsnorm(x, res, w, 1, 2, 0.0, rnd, BF, y, ro);
		cr_assert_eq(ro[0], 1.0078125);
		cr_assert_eq(ro[1], 1.0);
		cr_assert_eq(y[0], 1.0078125);
		cr_assert_eq(y[1], 0.99609375);
	}
}

Test(add_rmsnorm, zero_residual_is_plain_rmsnorm)
{
	enum { R = 2, H = 16 };
	struct test_rng g = test_rng_init(14);
	double x[R * H], zero[R * H] = {0}, w[H], y[R * H], ro[R * H];
	double ref[R * H];

	test_fill(&g, x, R * H, 2.0, BF);
	test_fill_around_one(&g, w, H, 0.5);
	for (int rnd = 0; rnd < 2; rnd++) {
		mtp_ref_add_rmsnorm(x, zero, w, R, H, 1e-6, rnd, BF, y, ro);
		mtp_ref_rmsnorm(x, w, R, H, 1e-6, rnd, BF, ref);
		test_assert_same(y, ref, R * H, "y");
		test_assert_same(ro, x, R * H, "residual_out");
	}
}

Test(target_handoff, post_norm_by_hand_and_pre_norm_is_the_sum)
{
	/* [§5.5] hidden = [1, 1], residual = [3*2^-9, 0], eps 0, w = 1: the
	 * hand-off is the final norm of the sum, derived by hand above
	 * (variance_from_the_unrounded_sum, convention residual): [1.0078125,
	 * 0.99609375]; HANDOFF_MISMATCH hands over the rounded sum [1.0078125,
	 * 1]. With w = [2, 0.5] each scales by its weight (exact in bf16). */
	const double x[2] = {1, 1}, res[2] = {0.005859375, 0};
	const double w1[2] = {1, 1}, w2[2] = {2, 0.5};
	double out[2];

	mtp_ref_target_handoff(x, res, w1, 1, 2, 0.0, MTP_ROUNDING_EAGER,
			       MTP_ADD_NORM_RESIDUAL, false, BF, out);
	cr_assert_eq(out[0], 1.0078125);
	cr_assert_eq(out[1], 0.99609375);
	mtp_ref_target_handoff(x, res, w2, 1, 2, 0.0, MTP_ROUNDING_EAGER,
			       MTP_ADD_NORM_RESIDUAL, false, BF, out);
	cr_assert_eq(out[0], 2.015625);
	cr_assert_eq(out[1], 0.498046875);
	mtp_ref_target_handoff(x, res, w2, 1, 2, 0.0, MTP_ROUNDING_EAGER,
			       MTP_ADD_NORM_RESIDUAL, true, BF, out);
	cr_assert_eq(out[0], 1.0078125);
	cr_assert_eq(out[1], 1.0);
}
