/*
 * Tests of the teacher-forced draft chain [§5, FORMAT.md draft_chain]: a
 * one-step chain is one mtp_step; step s is one mtp_step fed next_tokens,
 * positions + s, step s-1's recycled hidden and layer s % L (or 0).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

#define BF MTP_BF16

static const struct mtp_ref_dims dims = {
	.t = 3, .h = 8, .m = 2, .v = 8, .f = 8};
static const int64_t input_ids[3] = {5, 1, 7};
static const int64_t positions[3] = {0, 3, 4};
static const int64_t next_tokens[2 * 3] = {2, 2, 6, 0, 3, 1};

struct chain_case {
	double table[8 * 8], prev[3 * 2 * 8];
	struct test_v3 v3[2];
	struct test_v4 v4[2];
	struct mtp_ref_v3_layer l3[2];
	struct mtp_ref_v4_layer l4[2];
	struct mtp_ref_chain_in in;
};

static void chain_init(struct chain_case *c, int64_t k, int64_t l, bool pass)
{
	struct test_rng g = test_rng_init(91);

	test_fill(&g, c->table, 64, 1.0, BF);
	test_fill(&g, c->prev, 48, 2.0, BF);
	for (int i = 0; i < 2; i++) {
		test_v3_init(&c->v3[i], &dims, 92 + i);
		test_v4_init(&c->v4[i], &dims, 94 + i);
		c->l3[i] = c->v3[i].layer;
		c->l4[i] = c->v4[i].layer;
	}
	c->in = (struct mtp_ref_chain_in){
		.k = k,
		.l = l,
		.pass_step_idx = pass,
		.embed_table = c->table,
		.input_ids = input_ids,
		.positions = positions,
		.prev_hidden = c->prev,
		.next_tokens = next_tokens,
		.v3 = c->l3,
		.v4 = c->l4,
	};
}

static void chain_fini(struct chain_case *c)
{
	for (int i = 0; i < 2; i++) {
		test_v3_fini(&c->v3[i]);
		test_v4_fini(&c->v4[i]);
	}
}

static struct mtp_ref_step_cfg cfg_of(enum mtp_family f)
{
	if (mtp_family_mhc(f))
		return test_cfg_v4(MTP_CONTRACT_DEFERRED, MTP_HC_HEAD_CUDA);
	struct mtp_ref_step_cfg c = test_cfg_v3();

	c.family = f;
	return c;
}

/* Step s of the chain computed by hand with mtp_step. */
static void step_by_hand(const struct chain_case *c, int64_t s, int64_t layer,
			 const double *prev, enum mtp_family f,
			 struct test_out *out)
{
	const struct mtp_ref_step_cfg cfg = cfg_of(f);
	double embeds[24];
	int64_t pos[3];
	struct mtp_ref_step_in in = {embeds, pos, prev};

	mtp_ref_embed(c->table, s ? next_tokens + (s - 1) * 3 : input_ids, 3, 8,
		      embeds);
	for (int i = 0; i < 3; i++)
		pos[i] = positions[i] + s;
	test_out_init(out, &dims, f);
	if (mtp_family_mhc(f))
		mtp_ref_mtp_step_v4(&in, &c->l4[layer], &dims, &cfg, &out->o);
	else
		mtp_ref_mtp_step_v3(&in, &c->l3[layer], &dims, &cfg, &out->o);
}

static void run_chain(struct chain_case *c, enum mtp_family f,
		      struct test_out *steps)
{
	const struct mtp_ref_step_cfg cfg = cfg_of(f);
	struct mtp_ref_step_out o[3];

	for (int64_t s = 0; s < c->in.k; s++) {
		test_out_init(&steps[s], &dims, f);
		o[s] = steps[s].o;
	}
	mtp_ref_draft_chain(&c->in, &dims, &cfg, o);
}

static void check_chain(enum mtp_family f, int64_t k, int64_t l, bool pass)
{
	struct chain_case c;
	struct test_out steps[3], hand;
	const double *prev;

	chain_init(&c, k, l, pass);
	run_chain(&c, f, steps);
	for (int64_t s = 0; s < k; s++) {
		prev = s ? steps[s - 1].o.recycled : c.prev;
		step_by_hand(&c, s, pass ? s % l : 0, prev, f, &hand);
		test_assert_same_out(&steps[s], &hand, &dims, f);
		test_out_fini(&hand);
	}
	for (int64_t s = 0; s < k; s++)
		test_out_fini(&steps[s]);
	chain_fini(&c);
}

Test(draft_chain, one_step_is_mtp_step)
{
	check_chain(MTP_FAMILY_DEEPSEEK_V3, 1, 1, false);
	check_chain(MTP_FAMILY_GLM, 1, 1, true);
	check_chain(MTP_FAMILY_DEEPSEEK_V4, 1, 1, false);
}

Test(draft_chain, steps_recycle_and_shift_positions)
{
	check_chain(MTP_FAMILY_DEEPSEEK_V3, 3, 1, false);
	check_chain(MTP_FAMILY_DEEPSEEK_V4, 3, 1, true);
}

Test(draft_chain, layer_selection)
{
	struct chain_case c;
	const int64_t want[2][4] = {{0, 0, 0, 0}, {0, 1, 0, 1}};

	for (int pass = 0; pass < 2; pass++) {
		chain_init(&c, 4, 2, pass);
		for (int64_t s = 0; s < 4; s++)
			cr_assert_eq(mtp_ref_chain_layer(&c.in, s),
				     want[pass][s]);
		chain_fini(&c);
	}
	check_chain(MTP_FAMILY_DEEPSEEK_V3, 3, 2, true);
	check_chain(MTP_FAMILY_DEEPSEEK_V3, 3, 2, false);
	check_chain(MTP_FAMILY_DEEPSEEK_V4, 3, 2, true);
}

Test(draft_chain, layer_one_is_really_used)
{
	/* With pass_step_idx and L = 2, step 1 must differ from what layer 0
	 * would give on the same inputs (the layers' weights differ). */
	struct chain_case c;
	struct test_out steps[3], l0;
	int differ = 0;

	chain_init(&c, 2, 2, true);
	run_chain(&c, MTP_FAMILY_DEEPSEEK_V4, steps);
	step_by_hand(&c, 1, 0, steps[0].o.recycled, MTP_FAMILY_DEEPSEEK_V4,
		     &l0);
	for (int i = 0; i < 3 * 8; i++)
		differ += steps[1].o.logits[i] != l0.o.logits[i];
	cr_assert_gt(differ, 0);
	test_out_fini(&l0);
	for (int s = 0; s < 2; s++)
		test_out_fini(&steps[s]);
	chain_fini(&c);
}
