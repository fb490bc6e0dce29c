/*
 * Tests of the declared reduction orders [SPEC.md §2.5] on hand-derived
 * sums: B = 2^25 is past fp32's 24 bits from 0.5 (B + 0.5 rounds to B in
 * fp32; the bf16 spacing at B is 2^18), so each order keeps other halves.
 */
#include <criterion/criterion.h>

#include "test_util.h"

#define BF MTP_BF16
#define B 33554432.0 /* 2^25 */
#define S 0.5

/* parts [4][1,4]: every column holds parts a, the first two columns are in
 * chunks 0 and 1 (4 columns, 4 ranks: chunk = column) */
static void sum4(const double a[4], enum mtp_reduce_order o, double out[4])
{
	double parts[16];

	for (int k = 0; k < 4; k++)
		for (int i = 0; i < 4; i++)
			parts[k * 4 + i] = a[k];
	mtp_ref_all_reduce_order(parts, 4, 1, 4, o, BF, NULL, out);
}

Test(all_reduce_order, b_s_minus_b_s)
{
	const double a[4] = {B, S, -B, S};
	double out[4];

	sum4(a, MTP_REDUCE_EXACT, out);
	cr_assert_eq(out[0], 1.0);
	/* ((B + s) - B) + s: B + s is B in fp32 */
	sum4(a, MTP_REDUCE_ONE_SHOT, out);
	cr_assert_eq(out[0], 0.5);
	cr_assert_eq(out[1], 0.5);
	/* chunk 1 starts at its owner: ((s - B) + s) + B = 0 */
	sum4(a, MTP_REDUCE_TWO_SHOT, out);
	cr_assert_eq(out[0], 0.5);
	cr_assert_eq(out[1], 0.0);
	/* chunk 0 from rank 1: s, bf16(s - B) = -B, bf16(-B + s) = -B, 0 */
	sum4(a, MTP_REDUCE_RING, out);
	cr_assert_eq(out[0], 0.0);
	/* bf16(B + s) = B, bf16(-B + s) = -B, then 0 */
	sum4(a, MTP_REDUCE_TREE, out);
	cr_assert_eq(out[0], 0.0);
}

Test(all_reduce_order, s_s_b_minus_b)
{
	const double a[4] = {S, S, B, -B};
	double out[4];
	double u[4];
	double parts[16];

	/* one-shot: (s + s) + B = B, then 0 */
	sum4(a, MTP_REDUCE_ONE_SHOT, out);
	cr_assert_eq(out[0], 0.0);
	/* ring, chunk 0 from rank 1: s, bf16(s + B) = B, 0, bf16(0 + s) */
	sum4(a, MTP_REDUCE_RING, out);
	cr_assert_eq(out[0], 0.5);
	/* tree: bf16(s + s) = 1, bf16(B - B) = 0, 1 */
	sum4(a, MTP_REDUCE_TREE, out);
	cr_assert_eq(out[0], 1.0);
	/* P = 3 carries the unpaired rank up: bf16(s + s) = 1, then 1 + B */
	for (int k = 0; k < 3; k++)
		parts[k] = a[k];
	mtp_ref_all_reduce_order(parts, 3, 1, 1, MTP_REDUCE_TREE, BF, u, out);
	cr_assert_eq(u[0], B); /* 1 + 2^25 in fp32 */
	cr_assert_eq(out[0], B);
}

Test(all_reduce_order, two_parts_agree)
{
	/* P = 2: every order is one fp32 add of two values, rounded once */
	const double parts[4] = {B, 3.0, -B, 1.0};
	double out[2];

	for (int o = MTP_REDUCE_EXACT; o <= MTP_REDUCE_TREE; o++) {
		mtp_ref_all_reduce_order(parts, 2, 1, 2,
					 (enum mtp_reduce_order)o, BF, NULL,
					 out);
		cr_assert_eq(out[0], 0.0);
		cr_assert_eq(out[1], 4.0);
	}
}
