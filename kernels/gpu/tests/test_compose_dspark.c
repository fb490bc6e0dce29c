/*
 * The DSpark ops and the synthetic DSpark step [SPEC.md §13] in the GPU
 * composition layer, over the recording stand-in of fake.c: each is
 * declined where the backend lacks a primitive it needs, the step fails
 * call by call like the MTP steps, the logit scale is a primitive call, and
 * each Markov step is keyed on the token drawn before it.
 */
#include <criterion/criterion.h>
#include <string.h>

#include "fake.h"
#include "mtp/tensor.h"

Test(compose, a_failed_call_of_a_dspark_step_is_the_verdict)
{
	fail_each("dspark_step", DEFAULT_FAMILY, NULL);
}

/* An op that needs an optional primitive is declined where the backend has
 * none (HIP), never launched half; with them it composes. */
Test(compose, ops_without_their_primitives_are_declined)
{
	static const char *const ops[] = {"hc_pre_delayed", "hc_collapse",
					  "confidence", "markov_bias",
					  "dspark_step"};
	const struct gpu_prims core = core_prims();

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct mtp_backend be;
		struct fake f;
		struct gen g;

		gen(&g, ops[i], DEFAULT_FAMILY, NULL);
		fake_init(&be, &f, 0);
		cr_expect(mtp_gpu_supports(&be, &g.cc.call), "%s", ops[i]);
		f.gpu.prims = &core;
		cr_expect_not(mtp_gpu_supports(&be, &g.cc.call), "%s", ops[i]);
		gen_fini(&g);
	}
}

/* [§13 Step DS-6] logit_scale != 1 goes through the scale primitive (one
 * call), and is declined where the backend has none; scale 1 never asks
 * for it. */
Test(compose, the_markov_logit_scale_is_a_primitive_or_declined)
{
	struct gpu_prims no_scale = fake_prims;
	struct mtp_backend be;
	struct fake f;
	struct gen g;

	no_scale.scale = NULL;
	gen(&g, "markov_bias", DEFAULT_FAMILY, NULL);
	fake_init(&be, &f, 0);
	cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK, "%s", be.error);
	cr_expect_eq(f.scale_calls, 0);
	f.gpu.prims = &no_scale;
	cr_expect(mtp_gpu_supports(&be, &g.cc.call));
	g.c.params.logit_scale = 2.0;
	cr_expect_not(mtp_gpu_supports(&be, &g.cc.call));
	fake_init(&be, &f, 0);
	cr_assert(mtp_gpu_supports(&be, &g.cc.call));
	cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK, "%s", be.error);
	cr_expect_eq(f.scale_calls, 1);
	gen_fini(&g);
}

/* [§13.9] dspark_step: one attention per layer under the case's mask,
 * rope on the context keys, the queries and the block keys of each layer;
 * Markov position 0 keyed on ids[0], position k on the token drawn at
 * k - 1 (on the device, never ids[k]); at scale 2 one scale of the base
 * logits (the LogitsProcessor's, SPEC.md §13.9) and one per position. */
Test(compose, the_dspark_step_keys_each_markov_step_on_the_token_before)
{
	const char *masks[] = {"non_causal", "causal"};

	for (int causal = 0; causal < 2; causal++) {
		struct mtp_backend be;
		struct fake f;
		struct gen g;
		const struct mtp_tensor *ids, *tok;
		int64_t t, layers;
		size_t tb;

		gen(&g, "dspark_step", DEFAULT_FAMILY, NULL);
		g.c.params.block_mask = causal ? MTP_BLOCK_MASK_CAUSAL
					       : MTP_BLOCK_MASK_NON_CAUSAL;
		g.c.params.logit_scale = 2.0;
		t = g.cc.call.dims.t;
		layers = g.c.params.num_layers;
		ids = mtp_call_tensor(&g.cc.call, false, NULL, "ids");
		tok = mtp_call_tensor(&g.cc.call, true, NULL, "token");
		cr_assert(ids && tok && t >= 2 && t + 1 <= 64);
		tb = tok->dtype == MTP_I64 ? 8 : 4;
		fake_init(&be, &f, 0);
		cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK, "%s",
			     be.error);
		cr_expect_eq(f.attn_calls, layers, "%s", masks[causal]);
		cr_expect_eq(f.attn_causal, causal ? layers : 0);
		cr_expect_eq(f.rope_calls, 3 * layers);
		cr_expect_eq(f.scale_calls, 1 + t);
		/* the block's gather, then one per position */
		cr_assert_eq(f.n_embed, 1 + t);
		cr_expect_eq(f.embed_ids[1].mem, ids->data);
		cr_expect_eq(f.embed_ids[1].off, 0);
		for (int64_t k = 1; k < t; k++) {
			cr_expect_eq(f.embed_ids[1 + k].mem, tok->data,
				     "position %lld", (long long)k);
			cr_expect_eq(f.embed_ids[1 + k].off,
				     (size_t)(k - 1) * tb);
		}
		cr_expect_eq(f.live, 0);
		gen_fini(&g);
	}
}

/* The rows' internal attributes (SPEC.md §13.9, bugs/dspark.c): each is
 * honoured or declined, never run as the correct step (a mutant that the
 * self-test then reports as not caught). */
Test(compose, the_dspark_step_honours_or_declines_the_rows_changes)
{
	struct mtp_backend be;
	struct fake f;
	struct gen g;
	const struct mtp_tensor *ids;
	size_t ib;

	gen(&g, "dspark_step", DEFAULT_FAMILY, NULL);
	ids = mtp_call_tensor(&g.cc.call, false, NULL, "ids");
	cr_assert(ids && g.cc.call.dims.t >= 2);
	ib = ids->dtype == MTP_I64 ? 8 : 4;
	g.c.params.dspark.markov_on_ids = true; /* every key from ids[k] */
	fake_init(&be, &f, 0);
	cr_assert(mtp_gpu_supports(&be, &g.cc.call));
	cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK, "%s", be.error);
	cr_assert_eq(f.n_embed, 1 + g.cc.call.dims.t);
	for (int64_t k = 0; k < g.cc.call.dims.t; k++) {
		cr_expect_eq(f.embed_ids[1 + k].mem, ids->data);
		cr_expect_eq(f.embed_ids[1 + k].off, (size_t)k * ib);
	}
	g.c.params.dspark.markov_on_ids = false;
	cr_expect_eq(f.hc_pre_calls, 0); /* the delayed pre-mix alone */
	g.c.params.dspark.pre_mix_undelayed = true; /* + a plain hc_pre */
	cr_assert(mtp_gpu_supports(&be, &g.cc.call));
	cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK, "%s", be.error);
	cr_expect_eq(f.hc_pre_calls, 2 * g.c.params.num_layers,
		     "one plain hc_pre a sublayer");
	g.c.params.dspark.pre_mix_undelayed = false;
	g.c.params.v2.captured = true; /* §13.9.1: the cpu backend's alone */
	cr_expect_not(mtp_gpu_supports(&be, &g.cc.call));
	gen_fini(&g);
}
