/* Element and tensor comparison: thresholds, NaN/Inf parity, worst element,
 * ULP histogram, argmax agreement. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/compare.h"
#include "mtp/fixture.h"
#include "mtp/generate.h"

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

/* A chain's tokens [K = 2, T = 3] against the reference's, and its logits
 * [2, 3, 4]: the agreement per step, the reference's margins, and the
 * margin of the missed token's row (issue 30, "draft agreement"). */
Test(compare, draft_agreement_per_step_and_margins)
{
	double got[6] = {1, 2, 3, 0, 0, 3}, want[6] = {1, 2, 3, 1, 0, 2};
	/* rows' margins: 7, 6, 5 (step 0); 2, 3, 1 (step 1) */
	double lg[24] = {0, 9, 1, 2, 0, 0, 8, 2, 0, 1, 2, 7,
			 0, 4, 2, 1, 5, 1, 0, 2, 1, 1, 2, 0.5};
	struct mtp_tensor tg = make(MTP_I64, 2, 3, got),
			  tw = make(MTP_I64, 2, 3, want), tl = {0};
	int64_t ls[3] = {2, 3, 4};
	struct mtp_cmp c = {0};
	char text[200];

	mtp_tensor_alloc(&tl, MTP_F32, 3, ls);
	for (int i = 0; i < 24; i++)
		mtp_store(MTP_F32, tl.data, (size_t)i, lg[i]);
	mtp_cmp_agreement(&c, &tg, &tw, &tl);
	cr_expect_eq(c.agreement.steps, 2);
	cr_expect_eq(c.agreement.rows, 3);
	cr_expect_eq(c.agreement.agree[0], 3, "step 0: every token agrees");
	cr_expect_eq(c.agreement.agree[1], 1, "step 1: rows 0 and 2 differ");
	cr_expect_float_eq(c.agreement.margin_min, 1.0, 1e-12);
	cr_expect_float_eq(c.agreement.margin_median, 4.0, 1e-12,
			   "median of 7 6 5 2 3 1");
	cr_expect_float_eq(c.agreement.disagree_margin_max, 2.0, 1e-12,
			   "rows 3 (margin 2) and 5 (margin 1) missed");
	cr_expect(mtp_agreement_text(&c, 1, text, sizeof(text)));
	cr_expect(strstr(text, "3/3, 1/3") != NULL, "%s", text);
	/* no token missed, beside an output that is no token: no margin */
	struct mtp_cmp two[2];

	memset(two, 0, sizeof(two));

	mtp_cmp_agreement(&two[0], &tw, &tw, &tl);
	cr_expect(mtp_agreement_text(two, 2, text, sizeof(text)));
	cr_expect_str_eq(text, "3/3, 3/3");
	/* no logits: the counts, no margins */
	mtp_cmp_agreement(&c, &tg, &tw, NULL);
	cr_expect_eq(c.agreement.agree[1], 1);
	cr_expect(isnan(c.agreement.margin_median));
	mtp_tensor_fini(&tg);
	mtp_tensor_fini(&tw);
	mtp_tensor_fini(&tl);
}

Test(compare, accumulation_allowance_widens_only_its_product)
{
	/* y [2, 2]: row norms 1, 2; column norms 3, 4; acc_u 1e-3: element
	 * (1, 1) may differ by a further 8e-3 */
	double a[4] = {0, 0, 0, 0.009}, b[4] = {0, 0, 0, 0};
	double rows[2] = {1, 2}, cols[2] = {3, 4};
	struct mtp_tensor ta = make(MTP_F32, 2, 2, a),
			  tb = make(MTP_F32, 2, 2, b);
	struct mtp_tol tol = {.atol = 1e-3, .origin = "test"};
	struct mtp_cmp c;

	mtp_compare("y", &ta, &tb, &tol, false, &c);
	cr_expect(!c.passed, "0.009 > atol 1e-3 without the allowance");
	tol.acc_row = rows;
	tol.acc_col = cols;
	tol.acc_rows = 2;
	tol.acc_cols = 2;
	tol.acc_u = 1e-3;
	mtp_compare("y", &ta, &tb, &tol, false, &c);
	cr_expect(c.passed, "0.009 <= 1e-3 + 8e-3");
	cr_expect_float_eq(c.headroom, 1.0, 1e-6); /* 0.009 in float32 */
	a[3] = 0.0091;
	mtp_tensor_fini(&ta);
	ta = make(MTP_F32, 2, 2, a);
	mtp_compare("y", &ta, &tb, &tol, false, &c);
	cr_expect(!c.passed, "0.0091 > 9e-3: the allowance is a bound too");
	/* an output of another shape does not take norms of another product */
	tol.acc_rows = 4;
	tol.acc_cols = 1;
	a[3] = 0.009;
	mtp_tensor_fini(&ta);
	ta = make(MTP_F32, 2, 2, a);
	mtp_compare("y", &ta, &tb, &tol, false, &c);
	cr_expect(!c.passed, "shape mismatch: no allowance");
	mtp_tensor_fini(&ta);
	mtp_tensor_fini(&tb);
}

/* A generated case of op with t tokens (and rows), hidden size h and
 * vocabulary v (0: the default), and its call. */
static void generated_call(const char *op, int64_t t, int64_t h, int64_t v,
			   struct mtp_case *cs, struct mtp_case_call *cc)
{
	struct mtp_gen_spec spec;
	char err[MTP_ERR_MAX] = "";

	mtp_gen_spec_init(&spec, mtp_op_find(op));
	spec.t = t;
	spec.rows = t;
	spec.h = h;
	if (v)
		spec.v = v;
	cr_assert_eq(mtp_case_generate(&spec, cs, err, sizeof(err)), MTP_OK,
		     "%s", err);
	cr_assert_eq(mtp_case_call_init(cs, cc, err, sizeof(err)), MTP_OK, "%s",
		     err);
}

Test(compare, accumulation_allowance_of_eh_proj)
{
	struct mtp_case cs;
	struct mtp_case_call cc;
	struct mtp_tol tol;
	double *acc = NULL;

	generated_call("eh_proj", 3, 64, 0, &cs, &cc);
	const struct mtp_call *c = &cc.call;
	const struct mtp_tensor *x = mtp_call_tensor(c, false, NULL, "x");

	mtp_tol_for(c, "y", MTP_BF16, NULL, &tol);
	cr_assert(mtp_tol_accum(c, "y", &tol, &acc));
	cr_assert(acc && tol.acc_row == acc && tol.acc_cols == 64 &&
		  tol.acc_rows == 3);
	cr_expect_float_eq(tol.acc_u, sqrt(128.0) * ldexp(1, -24), 1e-18);
	double s = 0;

	for (int k = 0; k < 128; k++) {
		double v = mtp_load(x->dtype, x->data, (size_t)(128 + k));

		s += v * v;
	}
	cr_expect_float_eq(acc[1], sqrt(s), 1e-12, "row 1's norm");
	cr_expect(strstr(tol.origin, "float32 sums of 128"), "%s", tol.origin);
	free(acc);
	/* other outputs and ops: none */
	mtp_tol_for(c, "y", MTP_BF16, NULL, &tol);
	cr_assert(mtp_tol_accum(c, "x", &tol, &acc));
	cr_expect(!acc && !tol.acc_row);
	mtp_case_call_fini(&cc);
	mtp_case_fini(&cs);
}

Test(compare, accumulation_allowance_of_lm_head_logits)
{
	/* the same sums behind the logits: [T, V] from x [T, H] and the head
	 * [V, H] (cuBLAS failed T >= 512 at H = 7168 on the H200 without it) */
	struct mtp_case cs;
	struct mtp_case_call cc;
	struct mtp_tol tol;
	double *acc = NULL;

	generated_call("lm_head", 2, 64, 97, &cs, &cc);
	const struct mtp_call *c = &cc.call;

	mtp_tol_for(c, "logits", MTP_F32, NULL, &tol);
	cr_assert(mtp_tol_accum(c, "logits", &tol, &acc));
	cr_assert(acc && tol.acc_rows == 2 && tol.acc_cols == 97);
	cr_expect_float_eq(tol.acc_u, sqrt(64.0) * ldexp(1, -24), 1e-18);
	cr_expect(strstr(tol.origin, "float32 sums of 64"), "%s", tol.origin);
	free(acc);
	mtp_tol_for(c, "token", MTP_I64, NULL, &tol);
	cr_assert(mtp_tol_accum(c, "token", &tol, &acc));
	cr_expect(!acc && !tol.acc_row, "the token is no sum");
	mtp_case_call_fini(&cc);
	mtp_case_fini(&cs);
}

Test(compare, budget_allows_one_ulp_flip_of_a_large_element)
{
	/* 99 ones and a 64 (RMS 6.48); bf16 ulp at 64 is 0.5 */
	double a[100], b[100];

	for (int i = 0; i < 100; i++)
		a[i] = b[i] = 1.0;
	b[99] = 64.0;
	a[99] = 64.5;
	struct mtp_tensor ta = make(MTP_BF16, 1, 100, a),
			  tb = make(MTP_BF16, 1, 100, b);
	struct mtp_tol tol = {.budget = true,
			      .norm_max = 1.0,
			      .elem_max = 1e-3,
			      .origin = "test"};
	struct mtp_cmp c;

	mtp_compare("y", &ta, &tb, &tol, false, &c);
	cr_expect(c.passed, "one flip: 0.5 <= 1e-3 * 6.48 + 0.5");
	a[99] = 65.0;
	mtp_tensor_fini(&ta);
	ta = make(MTP_BF16, 1, 100, a);
	mtp_compare("y", &ta, &tb, &tol, false, &c);
	cr_expect(!c.passed, "two ulps fail: headroom %g", c.headroom);
	cr_expect_float_eq(c.headroom, 1.0 / (1e-3 * sqrt(4195.0 / 100) + 0.5),
			   1e-9);
	mtp_tensor_fini(&ta);
	mtp_tensor_fini(&tb);
}
