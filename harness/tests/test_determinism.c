/* The determinism modes' pieces (run/determinism.h): the plan of the
 * --invariance calls for each rows property, the ulp distance that bounds
 * them, the row axis of the op table's shapes, and every op declaring how
 * its rows depend on each other. */
#include <criterion/criterion.h>
#include <stdint.h>
#include <string.h>

#include "determinism.h"
#include "mtp/op.h"

static struct mtp_op fake(enum mtp_rows rows)
{
	struct mtp_op op = *mtp_op_get(MTP_OP_RMSNORM);

	op.rows = rows;
	return op;
}

Test(determinism, independent_rows_alone_then_rotated)
{
	struct mtp_op op = fake(MTP_ROWS_INDEPENDENT);
	struct mtp_row_plan p;

	cr_assert_eq(mtp_row_plan_make(&op, 8, MTP_INVAR_SINGLES_MAX, &p),
		     MTP_OK);
	cr_assert(p.applicable);
	cr_assert_eq(p.n_calls, 9);
	for (int i = 0; i < 8; i++) {
		cr_assert_eq(p.calls[i].n, 1);
		cr_assert_eq(p.calls[i].rows[0], i);
	}
	cr_assert_eq(p.calls[8].n, 8);
	for (int j = 0; j < 8; j++)
		cr_assert_eq(p.calls[8].rows[j], (j + 1) % 8);
	mtp_row_plan_fini(&p);
}

Test(determinism, a_lone_row_is_also_run_twice)
{
	struct mtp_op op = fake(MTP_ROWS_INDEPENDENT);
	struct mtp_row_plan p;

	cr_assert_eq(mtp_row_plan_make(&op, 1, MTP_INVAR_SINGLES_MAX, &p),
		     MTP_OK);
	cr_assert_eq(p.n_calls, 2);
	cr_assert_eq(p.calls[1].n, 2);
	cr_assert_eq(p.calls[1].rows[0], 0);
	cr_assert_eq(p.calls[1].rows[1], 0);
	mtp_row_plan_fini(&p);
}

Test(determinism, many_rows_are_sampled_ends_included)
{
	struct mtp_op op = fake(MTP_ROWS_INDEPENDENT);
	struct mtp_row_plan p;

	cr_assert_eq(mtp_row_plan_make(&op, 4096, MTP_INVAR_SINGLES_MAX, &p),
		     MTP_OK);
	cr_assert_eq(p.n_calls, MTP_INVAR_SINGLES_MAX + 1);
	cr_assert_eq(p.calls[0].rows[0], 0);
	cr_assert_eq(p.calls[MTP_INVAR_SINGLES_MAX - 1].rows[0], 4095);
	for (int i = 1; i < MTP_INVAR_SINGLES_MAX; i++)
		cr_assert_gt(p.calls[i].rows[0], p.calls[i - 1].rows[0]);
	mtp_row_plan_fini(&p);
}

Test(determinism, a_byte_budget_calls_fewer_rows_alone)
{
	struct mtp_op op = fake(MTP_ROWS_INDEPENDENT);
	struct mtp_row_plan p;

	cr_assert_eq(mtp_row_plan_make(&op, 16, 4, &p), MTP_OK);
	cr_assert_eq(p.n_calls, 5);
	cr_assert_eq(p.calls[0].rows[0], 0);
	cr_assert_eq(p.calls[3].rows[0], 15);
	cr_assert_eq(p.calls[4].n, 16); /* the rotation keeps every row */
	mtp_row_plan_fini(&p);
}

Test(determinism, causal_ops_get_prefixes)
{
	struct mtp_op op = fake(MTP_ROWS_CAUSAL);
	struct mtp_row_plan p;
	int64_t want[3] = {1, 4, 7};

	cr_assert_eq(mtp_row_plan_make(&op, 8, MTP_INVAR_SINGLES_MAX, &p),
		     MTP_OK);
	cr_assert(p.applicable);
	cr_assert_eq(p.n_calls, 3);
	for (int i = 0; i < 3; i++) {
		cr_assert_eq(p.calls[i].n, want[i]);
		for (int64_t j = 0; j < want[i]; j++)
			cr_assert_eq(p.calls[i].rows[j], j);
	}
	mtp_row_plan_fini(&p);
	cr_assert_eq(mtp_row_plan_make(&op, 1, MTP_INVAR_SINGLES_MAX, &p),
		     MTP_OK);
	cr_assert_not(p.applicable);
	cr_assert(strstr(p.why, "no prefix"), "%s", p.why);
}

Test(determinism, mixed_undeclared_and_empty_are_never_silent)
{
	enum mtp_rows kinds[2] = {MTP_ROWS_MIXED, MTP_ROWS_UNDECLARED};
	struct mtp_row_plan p;

	for (int k = 0; k < 2; k++) {
		struct mtp_op op = fake(kinds[k]);

		cr_assert_eq(
			mtp_row_plan_make(&op, 8, MTP_INVAR_SINGLES_MAX, &p),
			MTP_OK);
		cr_assert_not(p.applicable);
		cr_assert_eq(p.n_calls, 0);
		cr_assert(strstr(p.why, "rmsnorm"), "%s", p.why);
	}
	struct mtp_op op = fake(MTP_ROWS_INDEPENDENT);

	cr_assert_eq(mtp_row_plan_make(&op, 0, MTP_INVAR_SINGLES_MAX, &p),
		     MTP_OK);
	cr_assert_not(p.applicable);
	cr_assert(strstr(p.why, "no rows"), "%s", p.why);
}

Test(determinism, every_op_declares_its_rows)
{
	for (int i = 0; i < MTP_OP_COUNT; i++)
		cr_expect_neq(mtp_op_get((enum mtp_op_id)i)->rows,
			      MTP_ROWS_UNDECLARED, "%s",
			      mtp_op_get((enum mtp_op_id)i)->name);
}

Test(determinism, ulps_between_elements)
{
	uint16_t bf[4] = {0x3f80, 0x3f81, 0x0000, 0x8000};
	uint16_t nan[2] = {0x7fc0, 0x3f80};
	float f[2] = {1.0f, 0};
	int64_t ids[2] = {3, 4};
	uint32_t sub[2] = {0x00000001u, 0x80000001u};

	cr_assert_eq(mtp_elem_ulps(MTP_BF16, bf, 0, bf, 0), 0);
	cr_assert_eq(mtp_elem_ulps(MTP_BF16, bf, 0, bf, 1), 1);
	cr_assert_eq(mtp_elem_ulps(MTP_BF16, bf, 1, bf, 0), 1);
	/* other bits: never 0, even where the values are equal */
	cr_assert_eq(mtp_elem_ulps(MTP_BF16, bf, 2, bf, 3), 1);
	cr_assert_eq(mtp_elem_ulps(MTP_BF16, nan, 0, nan, 1), INT64_MAX);
	cr_assert_eq(mtp_elem_ulps(MTP_I64, ids, 0, ids, 1), INT64_MAX);
	memcpy(&f[1], &(uint32_t){0x3f800003u}, 4);
	cr_assert_eq(mtp_elem_ulps(MTP_F32, f, 0, f, 1), 3);
	cr_assert_eq(mtp_elem_ulps(MTP_F32, sub, 0, sub, 1), 2);
}

Test(determinism, row_axis_of_shapes)
{
	/* a signature with T: its batch is T, and an R there is another size
	 * (DSpark's Markov rank: markov_w1 "V,R" is a weight) */
	struct mtp_signature sig = {.n_in = 1, .n_out = 1};
	const char *rules[] = {"T,H", "P,R,H", "K-1,T", "V,H", "2*M+M*M,M*H",
			       "T",   "T,M*H", "3",	"V,R", "T,R"};
	int want[] = {0, -1, 1, -1, -1, 0, 0, -1, -1, 0};

	sig.in[0] = (struct mtp_tspec){"x", "T,H", MTP_TC_ACT, false};
	for (int i = 0; i < 10; i++) {
		sig.out[0] =
			(struct mtp_tspec){"y", rules[i], MTP_TC_ACT, false};
		cr_expect_eq(mtp_tspec_row_axis(&sig, &sig.out[0]), want[i],
			     "%s", rules[i]);
	}
	/* a row op (no T anywhere): its batch is R */
	sig.in[0] = (struct mtp_tspec){"x", "R,H", MTP_TC_ACT, false};
	sig.out[0] = (struct mtp_tspec){"y", "P,R,H", MTP_TC_ACT, false};
	cr_expect_eq(mtp_sig_batch_dim(&sig), 'R');
	cr_expect_eq(mtp_tspec_row_axis(&sig, &sig.out[0]), 1);
}
