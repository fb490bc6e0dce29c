/*
 * Tests of the inkling row's two choices [SPEC.md Step V3-9]: the embedding
 * normed by the target's embed_norm, rounded, before the layer's enorm, the
 * halves hidden first; and the logits divided by logits_mup before their one
 * rounding, the token unmoved. Each is also shown to change the step, so
 * that a backend that drops it cannot pass.
 */
#include <criterion/criterion.h>
#include <math.h>

#include "mtp/family.h"
#include "test_util.h"

#define BF MTP_BF16

static const struct mtp_ref_dims dims = {
	.t = 3, .h = 8, .m = 1, .v = 8, .f = 8};
static const int64_t positions[3] = {3, 4, 5};

struct ink_case {
	double embeds[24], prev[24], pre_w[8];
	struct mtp_ref_step_in in;
	struct test_v3 w;
	struct mtp_ref_step_cfg c;
};

static void ink_init(struct ink_case *k, uint64_t seed)
{
	struct test_rng g = test_rng_init(seed);

	test_fill(&g, k->embeds, 24, 0.05, BF);
	test_fill(&g, k->prev, 24, 2.0, BF);
	for (int i = 0; i < 8; i++) /* far from 1: the inner norm shows */
		k->pre_w[i] = mtp_round(BF, 0.25 + 0.5 * i);
	k->in.embeds = k->embeds;
	k->in.positions = positions;
	k->in.prev_hidden = k->prev;
	test_v3_init(&k->w, &dims, seed + 1);
	k->w.layer.embed_pre_norm_w = k->pre_w;
	k->c = test_cfg_v3();
	k->c.family = MTP_FAMILY_INKLING;
	k->c.rounding = MTP_ROUNDING_FUSED;
}

Test(inkling, row_choices)
{
	cr_assert(mtp_family_embed_pre_norm(MTP_FAMILY_INKLING));
	cr_assert(mtp_family_logits_mup(MTP_FAMILY_INKLING));
	cr_assert(mtp_family_hidden_first(MTP_FAMILY_INKLING));
	cr_assert_not(mtp_family_recycles_pre_norm(MTP_FAMILY_INKLING));
	for (int i = 0; i < MTP_FAMILY_COUNT; i++)
		cr_assert_eq(mtp_family_embed_pre_norm(i) ||
				     mtp_family_logits_mup(i),
			     i == MTP_FAMILY_INKLING);
	cr_assert_not(mtp_family_embed_pre_norm(MTP_FAMILY_COUNT));
	cr_assert_not(mtp_family_logits_mup(MTP_FAMILY_COUNT));
}

/* The block's input is input_proj([hnorm(P) | enorm(round(pre(E)))]). */
Test(inkling, block_sees_two_embedding_norms_hidden_first)
{
	struct ink_case k;
	struct test_out o, once;
	double e1[24], e2[24], p[24], z[48], x0[24], h[24], r[24];
	bool differs = false;

	ink_init(&k, 91);
	test_out_init(&o, &dims, MTP_FAMILY_INKLING);
	mtp_ref_mtp_step_v3(&k.in, &k.w.layer, &dims, &k.c, &o.o);
	mtp_ref_rmsnorm(k.embeds, k.pre_w, 3, 8, k.c.eps, k.c.rounding, BF, e1);
	mtp_ref_rmsnorm(e1, k.w.layer.enorm_w, 3, 8, k.c.eps, k.c.rounding, BF,
			e2);
	mtp_ref_rmsnorm(k.prev, k.w.layer.hnorm_w, 3, 8, k.c.eps, k.c.rounding,
			BF, p);
	for (int r = 0; r < 3; r++) /* the hidden first */
		for (int i = 0; i < 8; i++) {
			z[r * 16 + i] = p[r * 8 + i];
			z[r * 16 + 8 + i] = e2[r * 8 + i];
		}
	mtp_ref_eh_proj(z, k.w.layer.eh_proj_w, 3, 8, BF, x0);
	mtp_ref_v3_block(x0, NULL, &k.w.layer.block, &dims, &k.c, h, r);
	test_assert_same(o.o.block_out, h, 24, "block_out");
	test_assert_same(o.o.block_residual, r, 24, "block_residual");
	/* the embedding normed once (mimo: the same glue without the inner
	 * norm) is another step */
	k.c.family = MTP_FAMILY_MIMO;
	test_out_init(&once, &dims, MTP_FAMILY_MIMO);
	mtp_ref_mtp_step_v3(&k.in, &k.w.layer, &dims, &k.c, &once.o);
	for (int i = 0; i < 24; i++)
		differs |= once.o.block_out[i] != o.o.block_out[i];
	cr_assert(differs, "the inner embedding norm changed nothing");
	test_out_fini(&once);
	test_out_fini(&o);
	test_v3_fini(&k.w);
}

/* logits = f32((h_post . W) / mup): one rounding after the division; the
 * greedy token is the undivided logits' (a positive scale). */
Test(inkling, logits_divided_by_mup)
{
	struct ink_case k;
	struct test_out plain, mup;
	double want[24];
	int64_t tok[3];

	ink_init(&k, 93);
	test_out_init(&plain, &dims, MTP_FAMILY_INKLING);
	test_out_init(&mup, &dims, MTP_FAMILY_INKLING);
	mtp_ref_mtp_step_v3(&k.in, &k.w.layer, &dims, &k.c, &plain.o);
	k.c.logits_mup = 4.0;
	mtp_ref_mtp_step_v3(&k.in, &k.w.layer, &dims, &k.c, &mup.o);
	test_assert_same(mup.o.hidden_post, plain.o.hidden_post, 24,
			 "hidden_post");
	mtp_ref_lm_head_dt(plain.o.hidden_post, k.w.layer.head_w, 3, 8, 8,
			   MTP_F64, want, tok);
	for (int i = 0; i < 24; i++) {
		cr_assert_eq(mup.o.logits[i], mtp_round(MTP_F32, want[i] / 4.0),
			     "logits[%d]", i);
		cr_assert_neq(mup.o.logits[i], plain.o.logits[i]);
	}
	for (int t = 0; t < 3; t++)
		cr_assert_eq(mup.o.token[t], plain.o.token[t]);
	test_out_fini(&mup);
	test_out_fini(&plain);
	test_v3_fini(&k.w);
}
