/*
 * Tests of one MTP step [§3, §4, §10]: the relations between its outputs
 * that the spec guarantees (V3: recycled is the post-norm hidden; V4: the
 * recycled streams carry exactly one final hc_post, and both block contracts
 * give the same step).
 */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>

#include "test_util.h"

#define BF MTP_BF16

static const struct mtp_ref_dims dims = {
	.t = 3, .h = 8, .m = 4, .v = 8, .f = 8};
static const int64_t positions[3] = {0, 4, 5};

/* Step inputs: embeds [T,H] (NaN in the position-0 row), prev [T, M*H]. */
struct step_case {
	double embeds[24], prev[96];
	struct mtp_ref_step_in in;
};

static void step_case_init(struct step_case *s, uint64_t seed)
{
	struct test_rng g = test_rng_init(seed);

	test_fill(&g, s->embeds, 24, 1.0, BF);
	test_fill(&g, s->prev, 96, 2.0, BF);
	s->embeds[3] = NAN;
	s->in.embeds = s->embeds;
	s->in.positions = positions;
	s->in.prev_hidden = s->prev;
}

static void assert_finite(const double *a, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++)
		cr_assert(isfinite(a[i]), "%s[%zu] = %g", what, i, a[i]);
}

Test(mtp_step_v3, outputs_hang_together)
{
	struct step_case s;
	struct test_v3 w;
	struct test_out o;
	struct mtp_ref_step_cfg c = test_cfg_v3();
	double want[24], logits[24];
	int64_t tok[3];

	step_case_init(&s, 71);
	test_v3_init(&w, &dims, 72);
	test_out_init(&o, &dims, MTP_FAMILY_DEEPSEEK_V3);
	mtp_ref_mtp_step_v3(&s.in, &w.layer, &dims, &c, &o.o);
	assert_finite(o.o.hidden_post, 24, "hidden_post"); /* NaN masked */
	for (int i = 0; i < 24; i++)
		cr_assert_eq(o.o.hidden_pre[i],
			     mtp_round(BF, o.o.block_residual[i] +
						   o.o.block_out[i]));
	mtp_ref_rmsnorm(o.o.hidden_pre, w.layer.shared_head_norm_w, 3, 8, c.eps,
			c.rounding, BF, want);
	test_assert_same(o.o.hidden_post, want, 24, "hidden_post");
	test_assert_same(o.o.recycled, o.o.hidden_post, 24, "recycled");
	mtp_ref_lm_head(o.o.hidden_post, w.layer.head_w, 3, 8, 8, logits, tok);
	test_assert_same(o.o.logits, logits, 24, "logits");
	for (int t = 0; t < 3; t++)
		cr_assert_eq(o.o.token[t], tok[t]);
	test_out_fini(&o);
	test_v3_fini(&w);
}

Test(mtp_step_v3, block_sees_eh_proj_of_normed_inputs)
{
	struct step_case s;
	struct test_v3 w;
	struct test_out o;
	struct mtp_ref_step_cfg c = test_cfg_v3();
	double z[48], x0[24], h[24], r[24];

	c.rounding = MTP_ROUNDING_FUSED;
	step_case_init(&s, 73);
	test_v3_init(&w, &dims, 74);
	test_out_init(&o, &dims, MTP_FAMILY_DEEPSEEK_V3);
	mtp_ref_mtp_step_v3(&s.in, &w.layer, &dims, &c, &o.o);
	/* with fused rounding the input norms are exactly fused_eh_norm */
	mtp_ref_fused_eh_norm(positions, s.embeds, s.prev, w.layer.enorm_w,
			      w.layer.hnorm_w, 3, 8, c.eps, BF, z);
	mtp_ref_eh_proj(z, w.layer.eh_proj_w, 3, 8, BF, x0);
	mtp_ref_v3_block(x0, NULL, &w.layer.block, &dims, &c, h, r);
	test_assert_same(o.o.block_out, h, 24, "block_out");
	test_assert_same(o.o.block_residual, r, 24, "block_residual");
	test_out_fini(&o);
	test_v3_fini(&w);
}

Test(mtp_step_v3, float32_activations)
{
	struct step_case s;
	struct test_v3 w;
	struct test_out o;
	struct mtp_ref_step_cfg c = test_cfg_v3();
	int not_bf16 = 0;

	c.act = MTP_F32;
	step_case_init(&s, 75);
	test_v3_init(&w, &dims, 76);
	test_out_init(&o, &dims, MTP_FAMILY_DEEPSEEK_V3);
	mtp_ref_mtp_step_v3(&s.in, &w.layer, &dims, &c, &o.o);
	assert_finite(o.o.logits, 24, "logits");
	test_assert_same(o.o.recycled, o.o.hidden_post, 24, "recycled");
	for (int i = 0; i < 24; i++) {
		cr_assert_eq(o.o.hidden_post[i],
			     mtp_round(MTP_F32, o.o.hidden_post[i]));
		not_bf16 +=
			o.o.hidden_post[i] != mtp_round(BF, o.o.hidden_post[i]);
	}
	cr_assert_gt(not_bf16, 12);
	test_out_fini(&o);
	test_v3_fini(&w);
}

static void run_v4(struct test_out *o, const struct test_v4 *w,
		   const struct step_case *s, enum mtp_contract k,
		   enum mtp_hc_head_variant v)
{
	struct mtp_ref_step_cfg c = test_cfg_v4(k, v);

	test_out_init(o, &dims, MTP_FAMILY_DEEPSEEK_V4);
	mtp_ref_mtp_step_v4(&s->in, &w->layer, &dims, &c, &o->o);
}

Test(mtp_step_v4, deferred_and_internal_contracts_agree)
{
	struct step_case s;
	struct test_v4 w;
	struct test_out a, b;

	step_case_init(&s, 77);
	test_v4_init(&w, &dims, 78);
	for (int v = 0; v < 2; v++) {
		run_v4(&a, &w, &s, MTP_CONTRACT_DEFERRED, v);
		run_v4(&b, &w, &s, MTP_CONTRACT_INTERNAL, v);
		test_assert_same_out(&a, &b, &dims, MTP_FAMILY_DEEPSEEK_V4);
		test_out_fini(&a);
		test_out_fini(&b);
	}
	test_v4_fini(&w);
}

Test(mtp_step_v4, exactly_one_final_post_and_recycled_streams)
{
	struct step_case s;
	struct test_v4 w;
	struct test_out o;
	const struct mtp_ref_step_out *r = &o.o;
	double streams[96], hh[24], hn[24], logits[24];
	int64_t tok[3];

	step_case_init(&s, 79);
	test_v4_init(&w, &dims, 80);
	run_v4(&o, &w, &s, MTP_CONTRACT_DEFERRED, MTP_HC_HEAD_ROCM);
	assert_finite(r->streams, 96, "streams");
	mtp_ref_hc_post(r->block_out, r->block_residual, r->post_mix,
			r->comb_mix, 3, 4, 8, BF, streams);
	test_assert_same(r->streams, streams, 96, "streams");
	test_assert_same(r->recycled, r->streams, 96, "recycled");
	mtp_ref_hc_head(r->streams, w.layer.hc_head_fn, w.layer.hc_head_scale,
			w.layer.hc_head_base, 3, 4, 8, 1e-6, 1e-6,
			MTP_HC_HEAD_ROCM, BF, hh);
	test_assert_same(r->head_hidden, hh, 24, "head_hidden");
	mtp_ref_rmsnorm(hh, w.layer.shared_head_norm_w, 3, 8, 1e-6,
			MTP_ROUNDING_EAGER, BF, hn);
	mtp_ref_lm_head(hn, w.layer.head_w, 3, 8, 8, logits, tok);
	test_assert_same(r->logits, logits, 24, "logits");
	for (int t = 0; t < 3; t++)
		cr_assert_eq(r->token[t], tok[t]);
	test_out_fini(&o);
	test_v4_fini(&w);
}

Test(mtp_step_v4, block_sees_the_broadcast_projection)
{
	/* With fused rounding the input norms are fused_mtp_input_rmsnorm. */
	struct step_case s;
	struct test_v4 w;
	struct test_out o;
	struct mtp_ref_step_cfg c =
		test_cfg_v4(MTP_CONTRACT_DEFERRED, MTP_HC_HEAD_CUDA);
	double e[24], p[96], x0[96], f[24], r1[96], pf[12], cf[48];

	c.rounding = MTP_ROUNDING_FUSED;
	step_case_init(&s, 81);
	test_v4_init(&w, &dims, 82);
	test_out_init(&o, &dims, MTP_FAMILY_DEEPSEEK_V4);
	mtp_ref_mtp_step_v4(&s.in, &w.layer, &dims, &c, &o.o);
	mtp_ref_fused_mtp_input_rmsnorm(s.embeds, positions, s.prev,
					w.layer.enorm_w, w.layer.hnorm_w, 3, 4,
					8, 1e-6, BF, e, p);
	mtp_ref_eh_proj_hc(e, p, w.layer.e_proj_w, w.layer.h_proj_w, 3, 4, 8,
			   BF, x0);
	mtp_ref_v4_block(x0, NULL, NULL, NULL, &w.layer.block, &dims, &c, f, r1,
			 pf, cf);
	test_assert_same(o.o.block_out, f, 24, "block_out");
	test_assert_same(o.o.block_residual, r1, 96, "block_residual");
	test_assert_same(o.o.post_mix, pf, 12, "post_mix");
	test_assert_same(o.o.comb_mix, cf, 48, "comb_mix");
	test_out_fini(&o);
	test_v4_fini(&w);
}
