/* Element and tensor comparison: thresholds, NaN/Inf parity, worst element,
 * ULP histogram, argmax agreement. */
#include <criterion/criterion.h>
#include <math.h>

#include "mtp/compare.h"

static struct mtp_tensor make(enum mtp_dtype dt, int64_t r, int64_t c,
			      const double *v)
{
	struct mtp_tensor t = {0};
	int64_t s[2] = {r, c};

	mtp_tensor_alloc(&t, dt, 2, s);
	for (int64_t i = 0; i < r * c; i++)
		mtp_store(dt, t.data, (size_t)i, v[i]);
	return t;
}

Test(compare, threshold_is_atol_plus_rtol_times_reference)
{
	double a[4] = {1.0, 2.0, 100.0, -4.0}, b[4] = {1.0, 2.0, 101.0, -4.0};
	struct mtp_tensor ta = make(MTP_F32, 2, 2, a),
			  tb = make(MTP_F32, 2, 2, b);
	struct mtp_tol tol = {.rtol = 0.01, .atol = 0.0, .origin = "test"};
	struct mtp_cmp c;

	/* |100 - 101| = 1 <= 0.01 * 101 = 1.01: passes with headroom 1/1.01 */
	mtp_compare("y", &ta, &tb, &tol, false, &c);
	cr_expect(c.passed);
	cr_expect_float_eq(c.headroom, 1.0 / 1.01, 1e-12);
	cr_expect_eq(c.worst_coord[0], 1);
	cr_expect_eq(c.worst_coord[1], 0);
	tol.rtol = 0.009; /* 1 > 0.909: fails, one bad element */
	mtp_compare("y", &ta, &tb, &tol, false, &c);
	cr_expect(!c.passed);
	cr_expect_eq(c.n_bad, 1);
	cr_expect_eq(c.max_abs, 1.0);
	mtp_tensor_fini(&ta);
	mtp_tensor_fini(&tb);
}

Test(compare, nan_and_inf_must_match_in_place_and_sign)
{
	double a[4] = {NAN, INFINITY, 1, 2}, b[4] = {NAN, INFINITY, 1, 2};
	double c2[4] = {NAN, -INFINITY, 1, 2}, d[4] = {1, INFINITY, 1, NAN};
	struct mtp_tensor ta = make(MTP_BF16, 1, 4, a),
			  tb = make(MTP_BF16, 1, 4, b);
	struct mtp_tensor tc = make(MTP_BF16, 1, 4, c2),
			  td = make(MTP_BF16, 1, 4, d);
	struct mtp_tol tol = {.rtol = 1.6e-2, .atol = 1e-5, .origin = "test"};
	struct mtp_cmp c;

	mtp_compare("y", &ta, &tb, &tol, false, &c);
	cr_expect(c.passed, "same specials in the same places");
	mtp_compare("y", &tc, &tb, &tol, false, &c);
	cr_expect(!c.passed && c.n_special_mismatch == 1, "Inf sign differs");
	mtp_compare("y", &td, &tb, &tol, false, &c);
	cr_expect(!c.passed && c.n_special_mismatch == 2, "NaN moved");
	mtp_tensor_fini(&ta);
	mtp_tensor_fini(&tb);
	mtp_tensor_fini(&tc);
	mtp_tensor_fini(&td);
}

Test(compare, ulp_histogram_counts_bf16_steps)
{
	/* around 1.0 a bf16 ulp is 2^-7 */
	double a[4] = {1.0, 1.0 + 1.0 / 128, 1.0 + 2.0 / 128, 1.0 + 8.0 / 128};
	double b[4] = {1.0, 1.0, 1.0, 1.0};
	struct mtp_tensor ta = make(MTP_BF16, 1, 4, a),
			  tb = make(MTP_BF16, 1, 4, b);
	struct mtp_tol tol = {.rtol = 1.0, .atol = 0, .origin = "test"};
	struct mtp_cmp c;

	mtp_compare("y", &ta, &tb, &tol, false, &c);
	cr_expect_eq(c.ulp_hist[0], 1);
	cr_expect_eq(c.ulp_hist[1], 1);
	cr_expect_eq(c.ulp_hist[2], 1);
	cr_expect_eq(c.ulp_hist[4], 1, "8 ulps falls in the 5-8 bucket");
	mtp_tensor_fini(&ta);
	mtp_tensor_fini(&tb);
}

Test(compare, argmax_agreement_per_row_and_shape_mismatch)
{
	double a[6] = {0, 5, 1, 3, 2, 9}, b[6] = {0, 4, 1, 9, 2, 3};
	struct mtp_tensor ta = make(MTP_F32, 2, 3, a),
			  tb = make(MTP_F32, 2, 3, b);
	struct mtp_tensor tc = make(MTP_F32, 3, 2, a);
	struct mtp_tol tol = {.rtol = 1.3e-6, .atol = 1e-5, .origin = "test"};
	struct mtp_cmp c;

	mtp_compare("logits", &ta, &tb, &tol, true, &c);
	cr_expect(c.has_argmax);
	cr_expect_eq(c.argmax_rows, 2);
	cr_expect_eq(c.argmax_agree, 1, "row 0 agrees (col 1), row 1 does not");
	mtp_compare("logits", &tc, &tb, &tol, true, &c);
	cr_expect(!c.shape_ok && !c.passed);
	mtp_tensor_fini(&ta);
	mtp_tensor_fini(&tb);
	mtp_tensor_fini(&tc);
}
