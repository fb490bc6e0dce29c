/*
 * Tests of the GEMM ops (linear, eh_proj, eh_proj_hc) and all_reduce on
 * small hand-computed cases: one rounding of each GEMM result, and for
 * eh_proj_hc a rounding of each GEMM then of their sum [Step V4-3].
 */
#include <criterion/criterion.h>
#include <stdlib.h>

#include "test_util.h"

#define BF MTP_BF16
#define P9 (1.0 / 512) /* 2^-9: a quarter of the bf16 spacing at 1 */

Test(linear, hand_computed_2x3)
{
	/* w [2,3], x [2,3]: y[r,o] = sum_c w[o,c] x[r,c] */
	const double w[6] = {1, 2, 3, 4, 5, 6};
	const double x[6] = {1, 0, -1, 0.5, 0.25, 2};
	double y[4];

	mtp_ref_linear(x, w, 2, 3, 2, BF, y);
	cr_assert_eq(y[0], -2.0);  /* 1 - 3 */
	cr_assert_eq(y[1], -2.0);  /* 4 - 6 */
	cr_assert_eq(y[2], 7.0);   /* 0.5 + 0.5 + 6 */
	cr_assert_eq(y[3], 15.25); /* 2 + 1.25 + 12 */
}

Test(linear, one_rounding_of_the_sum)
{
	/* 1 + 3*2^-9 is 0.75 of a bf16 step above 1: rounds up to
	 * 1 + 2^-7 once, where rounding each partial sum would stay at 1. */
	const double w[4] = {1, 1, 1, 1}, x[4] = {1, P9, P9, P9};
	double y;

	mtp_ref_linear(x, w, 1, 4, 1, BF, &y);
	cr_assert_eq(y, 1.0078125);
	mtp_ref_linear(x, w, 1, 4, 1, MTP_F32, &y);
	cr_assert_eq(y, 1.0 + 3 * P9);
}

Test(linear, eh_proj_is_embedding_first)
{
	/* W = [ I | 2I ] over cat(e, p): y = e + 2p */
	enum { H = 3 };
	double w[H * 2 * H] = {0}, x[2 * H] = {1, -2, 0.5, 4, 0.25, 1};
	double y[H];

	for (int o = 0; o < H; o++) {
		w[o * 2 * H + o] = 1;
		w[o * 2 * H + H + o] = 2;
	}
	mtp_ref_eh_proj(x, w, 1, H, BF, y);
	cr_assert_eq(y[0], 9.0);
	cr_assert_eq(y[1], -1.5);
	cr_assert_eq(y[2], 2.5);
}

Test(eh_proj_hc, rounds_each_gemm_then_the_sum)
{
	/* H = 2, M = 2. h_proj = [[1,1],[0,1]], e_proj = I, e = [2^-8, 0].
	 * Stream 0, p = [1, 3*2^-9]: h_proj(p) = [1 + 3*2^-9, 3*2^-9] ->
	 * bf16 [1.0078125, 3*2^-9]; sum with e: 1.0078125 + 2^-8 =
	 * 1 + 1.5*2^-7, a tie -> 1.015625 (one rounding of the unrounded
	 * sum would give 1.0078125). Stream 1, p = [2, 0]: [2 + 2^-8 -> 2, 0]. */
	const double hw[4] = {1, 1, 0, 1}, ew[4] = {1, 0, 0, 1};
	const double e[2] = {2 * P9, 0}, p[4] = {1, 3 * P9, 2, 0};
	double x[4];

	mtp_ref_eh_proj_hc(e, p, ew, hw, 1, 2, 2, BF, x);
	cr_assert_eq(x[0], 1.015625);
	cr_assert_eq(x[1], 3 * P9);
	cr_assert_eq(x[2], 2.0);
	cr_assert_eq(x[3], 0.0);
}

Test(eh_proj_hc, broadcasts_e_over_streams)
{
	enum { T = 2, M = 4, H = 8 };
	struct test_rng g = test_rng_init(31);
	double e[T * H], p[T * M * H], ew[H * H], hw[H * H], x[T * M * H];
	double ep[T * H], hp[T * M * H];

	test_fill(&g, e, T * H, 1.0, BF);
	test_fill(&g, p, T * M * H, 1.0, BF);
	test_fill(&g, ew, H * H, 0.5, BF);
	test_fill(&g, hw, H * H, 0.5, BF);
	mtp_ref_eh_proj_hc(e, p, ew, hw, T, M, H, BF, x);
	mtp_ref_linear(e, ew, T, H, H, BF, ep);
	mtp_ref_linear(p, hw, T * M, H, H, BF, hp);
	for (int t = 0; t < T; t++)
		for (int s = 0; s < M; s++)
			for (int i = 0; i < H; i++) {
				const int k = (t * M + s) * H + i;

				cr_assert_eq(
					x[k],
					mtp_round(BF, hp[k] + ep[t * H + i]));
			}
}

Test(all_reduce, one_rounding_of_the_wide_sum)
{
	/* parts [4][1,2]: column 0 sums to 1 + 3*2^-9 -> 1.0078125;
	 * column 1 to 1 + 2 + 4 - 8 = -1 */
	const double parts[8] = {1, 1, P9, 2, P9, 4, P9, -8};
	double out[2];

	mtp_ref_all_reduce(parts, 4, 1, 2, BF, out);
	cr_assert_eq(out[0], 1.0078125);
	cr_assert_eq(out[1], -1.0);
	mtp_ref_all_reduce(parts, 1, 1, 2, BF, out);
	cr_assert_eq(out[0], 1.0);
	cr_assert_eq(out[1], 1.0);
}
