/*
 * Tests of the logits path: lm_head (float32 logits, torch.argmax ties and
 * NaN) and the V4 shared head's fused RMSNorm [Step V3-6, §7.4].
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

Test(lm_head, logits_are_float32_not_bf16)
{
	/* x = [1, 2^-10], w = [[1, 1], [2, -1]]: logits 1 + 2^-10 (exact in
	 * float32, not in bf16) and 2 - 2^-10. */
	const double x[2] = {1, 1.0 / 1024}, w[4] = {1, 1, 2, -1};
	double logits[2];
	int64_t tok;

	mtp_ref_lm_head(x, w, 1, 2, 2, logits, &tok);
	cr_assert_eq(logits[0], 1.0 + 1.0 / 1024);
	cr_assert_eq(logits[1], 2.0 - 1.0 / 1024);
	cr_assert_eq(tok, 1);
}

/* With H = 1 and x = 1, the logits are the weights themselves. */
static int64_t argmax_of(const double *w, int64_t v)
{
	const double x = 1.0;
	double logits[8];
	int64_t tok;

	mtp_ref_lm_head(&x, w, 1, v, 1, logits, &tok);
	for (int64_t i = 0; i < v; i++)
		cr_assert(logits[i] == w[i] ||
			  (isnan(logits[i]) && isnan(w[i])));
	return tok;
}

Test(lm_head, argmax_first_index_on_ties)
{
	const double a[5] = {1, 3, -2, 3, 3},
		     b[3] = {-INFINITY, -INFINITY, -INFINITY};
	const double c[4] = {0, INFINITY, 5, INFINITY};

	cr_assert_eq(argmax_of(a, 5), 1);
	cr_assert_eq(argmax_of(b, 3), 0);
	cr_assert_eq(argmax_of(c, 4), 1);
}

Test(lm_head, nan_is_the_maximum_first_nan_wins)
{
	const double a[5] = {1, 9, NAN, 10, NAN}, b[3] = {NAN, INFINITY, NAN};
	const double c[3] = {INFINITY, 2, NAN};

	cr_assert_eq(argmax_of(a, 5), 2);
	cr_assert_eq(argmax_of(b, 3), 0);
	cr_assert_eq(argmax_of(c, 3), 2);
}

Test(lm_head, one_token_per_row)
{
	/* T = 3, V = 4, H = 4, w = identity: logits = x, token = argmax(x). */
	double w[16] = {0}, logits[12];
	const double x[12] = {0, 1, 2, 3, 5, -1, 5, 4, -3, -2, -9, -2.5};
	int64_t tok[3];

	for (int i = 0; i < 4; i++)
		w[i * 4 + i] = 1;
	mtp_ref_lm_head(x, w, 3, 4, 4, logits, tok);
	cr_assert_eq(tok[0], 3);
	cr_assert_eq(tok[1], 0);
	cr_assert_eq(tok[2], 1);
}

Test(mtp_shared_head_rmsnorm, is_the_fused_rmsnorm)
{
	/* the hand case of test_rmsnorm: 1.5078125 fused, not 1.515625 */
	const double x[2] = {1.0, 0.98828125}, w[2] = {1.5, 1.0};
	double y[2];

	mtp_ref_mtp_shared_head_rmsnorm(x, w, 1, 2, 1e-6, MTP_BF16, y);
	cr_assert_eq(y[0], 1.5078125);
	cr_assert_eq(y[1], 0.9921875);
}
