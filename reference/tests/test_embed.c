/*
 * Tests of embed, the position-0 mask and the fused input-norm kernels
 * [Steps V3-0..2, §7.1-§7.3]: the mask is a select, and the fused kernels
 * are their unfused compositions with fused (§2.2) rounding.
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

#define BF MTP_BF16

Test(embed, copies_rows_exactly)
{
	enum { V = 5, H = 4, T = 3 };
	struct test_rng g = test_rng_init(21);
	const int64_t ids[T] = {4, 0, 4};
	double table[V * H], out[T * H];

	test_fill(&g, table, V * H, 10.0, BF);
	mtp_ref_embed(table, ids, T, H, out);
	for (int t = 0; t < T; t++)
		test_assert_same(out + t * H, table + ids[t] * H, H, "row");
}

Test(embed, pos0_mask_is_a_select)
{
	enum { T = 3, H = 4 };
	const int64_t pos[T] = {7, 0, 1};
	double e[T * H], out[T * H];

	for (int i = 0; i < T * H; i++)
		e[i] = i + 1;
	e[1 * H + 0] = NAN;
	e[1 * H + 1] = INFINITY;
	mtp_ref_pos0_mask(e, pos, T, H, out);
	for (int i = 0; i < T * H; i++) {
		if (i / H == 1) {
			cr_assert_eq(out[i], 0.0);
			cr_assert(!signbit(out[i]));
		} else {
			cr_assert_eq(out[i], i + 1);
		}
	}
}

/* T=3 tokens of H=8 with position 0 in the middle, NaN in that embedding. */
struct eh_case {
	int64_t pos[3], ids[3];
	double table[5 * 8], embeds[3 * 8], prev[3 * 8], ew[8], hw[8];
};

static void eh_case_init(struct eh_case *c)
{
	struct test_rng g = test_rng_init(22);
	const int64_t pos[3] = {3, 0, 9}, ids[3] = {2, 4, 2};

	for (int i = 0; i < 3; i++) {
		c->pos[i] = pos[i];
		c->ids[i] = ids[i];
	}
	test_fill(&g, c->table, 5 * 8, 2.0, BF);
	c->table[4 * 8 + 2] = NAN;
	test_fill(&g, c->prev, 3 * 8, 5.0, BF);
	test_fill_around_one(&g, c->ew, 8, 0.7);
	test_fill_around_one(&g, c->hw, 8, 0.7);
	mtp_ref_embed(c->table, c->ids, 3, 8, c->embeds);
}

Test(fused_eh_norm, masks_then_norms_both_halves)
{
	struct eh_case c;
	double out[3 * 16], e[8], p[8];

	eh_case_init(&c);
	mtp_ref_fused_eh_norm(c.pos, c.embeds, c.prev, c.ew, c.hw, 3, 8, 1e-6,
			      BF, out);
	for (int t = 0; t < 3; t++) {
		mtp_ref_rmsnorm(c.embeds + t * 8, c.ew, 1, 8, 1e-6,
				MTP_ROUNDING_FUSED, BF, e);
		mtp_ref_rmsnorm(c.prev + t * 8, c.hw, 1, 8, 1e-6,
				MTP_ROUNDING_FUSED, BF, p);
		for (int i = 0; i < 8; i++) {
			if (c.pos[t] == 0)
				cr_assert_eq(out[t * 16 + i], 0.0, "t=%d", t);
			else
				cr_assert_eq(out[t * 16 + i], e[i]);
			cr_assert_eq(out[t * 16 + 8 + i], p[i]);
		}
	}
}

Test(fused_eh_norm, embed_variant_is_bit_identical)
{
	struct eh_case c;
	double a[3 * 16], b[3 * 16];

	eh_case_init(&c);
	mtp_ref_fused_eh_norm(c.pos, c.embeds, c.prev, c.ew, c.hw, 3, 8, 1e-6,
			      BF, a);
	mtp_ref_fused_embed_eh_norm(c.pos, c.ids, c.table, c.prev, c.ew, c.hw,
				    3, 8, 1e-6, BF, b);
	test_assert_same(a, b, 3 * 16, "out");
}

Test(fused_eh_norm, uses_fused_rounding)
{
	/* The hand case of test_rmsnorm: embedding [1, 253/256], w [1.5, 1]
	 * gives 1.5078125 fused (1.515625 would be eager). */
	const int64_t pos[1] = {1};
	const double e[2] = {1.0, 0.98828125}, w[2] = {1.5, 1.0};
	double out[4];

	mtp_ref_fused_eh_norm(pos, e, e, w, w, 1, 2, 1e-6, BF, out);
	cr_assert_eq(out[0], 1.5078125);
	cr_assert_eq(out[2], 1.5078125);
}

Test(fused_mtp_input_rmsnorm, per_stream_norms_and_mask)
{
	enum { T = 3, M = 4, H = 8 };
	struct eh_case c;
	double prev[T * M * H], eo[T * H], ho[T * M * H], ref[H];
	struct test_rng g = test_rng_init(23);

	eh_case_init(&c);
	test_fill(&g, prev, T * M * H, 3.0, BF);
	for (int i = 0; i < H; i++) /* one stream of a different scale */
		prev[(1 * M + 2) * H + i] *= 64.0;
	mtp_ref_fused_mtp_input_rmsnorm(c.embeds, c.pos, prev, c.ew, c.hw, T, M,
					H, 1e-6, BF, eo, ho);
	for (int t = 0; t < T; t++) {
		mtp_ref_rmsnorm(c.embeds + t * H, c.ew, 1, H, 1e-6,
				MTP_ROUNDING_FUSED, BF, ref);
		for (int i = 0; i < H; i++)
			cr_assert_eq(eo[t * H + i], c.pos[t] ? ref[i] : 0.0);
		for (int s = 0; s < M; s++) {
			mtp_ref_rmsnorm(prev + (t * M + s) * H, c.hw, 1, H,
					1e-6, MTP_ROUNDING_FUSED, BF, ref);
			test_assert_same(ho + (t * M + s) * H, ref, H, "hnorm");
		}
	}
}
