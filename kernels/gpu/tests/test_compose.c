/*
 * The GPU composition layer over a recording stand-in for a device
 * (fake.c): every op of the table composes to primitive calls; a failure of
 * any single primitive call of a step, a chain or a block is the launch's
 * status with the primitive's message (so no status is dropped), and the
 * launch's scratch is released whatever happened.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fake.h"
#include "mtp/config.h"
#include "mtp/fixture.h"

Test(compose, every_op_composes_and_releases_its_scratch)
{
	for (int id = 0; id < MTP_OP_COUNT; id++) {
		const struct mtp_op *op = mtp_op_get((enum mtp_op_id)id);
		struct mtp_backend be;
		struct fake f;
		struct gen g;

		gen(&g, op->name, DEFAULT_FAMILY, NULL);
		fake_init(&be, &f, 0);
		cr_expect(mtp_gpu_supports(&be, &g.cc.call), "%s", op->name);
		cr_expect_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK, "%s: %s",
			     op->name, be.error);
		cr_expect(f.calls > 0, "%s: no primitive called", op->name);
		cr_expect_eq(f.live, 0, "%s: scratch left", op->name);
		cr_expect_eq(f.gpu.n_scratch, 0, "%s", op->name);
		gen_fini(&g);
	}
}

Test(compose, a_failed_call_of_a_v3_step_is_the_verdict)
{
	fail_each("mtp_step", MTP_FAMILY_DEEPSEEK_V3, NULL);
}

Test(compose, a_failed_call_of_a_v4_step_is_the_verdict)
{
	fail_each("mtp_step", MTP_FAMILY_DEEPSEEK_V4, NULL);
}

Test(compose, a_failed_call_of_a_chain_is_the_verdict)
{
	fail_each("draft_chain", MTP_FAMILY_DEEPSEEK_V4, NULL);
	fail_each("draft_chain", MTP_FAMILY_DEEPSEEK_V3, NULL);
}

Test(compose, a_failed_call_of_a_v4_block_is_the_verdict)
{
	fail_each("mtp_block", MTP_FAMILY_DEEPSEEK_V4, "internal");
	fail_each("mtp_block", MTP_FAMILY_DEEPSEEK_V4, "deferred");
}

Test(compose, the_input_norms_are_one_call_of_two_jobs)
{
	static const char *const ops[] = {"fused_eh_norm",
					  "fused_embed_eh_norm",
					  "fused_mtp_input_rmsnorm"};

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		struct mtp_backend be;
		struct fake f;
		struct gen g;

		gen(&g, ops[i], DEFAULT_FAMILY, NULL);
		fake_init(&be, &f, 0);
		cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK);
		cr_expect_eq(f.norm_calls, 1, "%s", ops[i]);
		cr_expect_eq(f.norm_jobs_max, 2, "%s", ops[i]);
		gen_fini(&g);
	}
}

/* hc_fused_post_pre: one hc_pre call with hc_post's inputs where the
 * backend fuses the two, hc_post then hc_pre where it does not. */
Test(compose, the_fused_post_pre_is_one_call_where_the_backend_fuses_it)
{
	struct gpu_prims fused = fake_prims;

	fused.hc_pre_fuses_post = true;
	for (int fuses = 0; fuses <= 1; fuses++) {
		struct mtp_backend be;
		struct fake f;
		struct gen g;

		gen(&g, "hc_fused_post_pre", DEFAULT_FAMILY, NULL);
		fake_init(&be, &f, 0);
		if (fuses)
			f.gpu.prims = &fused;
		cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK);
		cr_expect_eq(f.hc_post_calls, !fuses, "fuses %d", fuses);
		cr_expect_eq(f.hc_pre_fused, fuses, "fuses %d", fuses);
		gen_fini(&g);
	}
}

Test(compose, releasing_scratch_frees_all_and_keeps_the_first_message)
{
	struct mtp_backend be;
	struct fake f;
	struct gpu_buf b;

	fake_init(&be, &f, 0);
	for (int i = 0; i < 3; i++)
		cr_assert_eq(mtp_gpu_scratch(&be, 16, &b), MTP_OK);
	f.fail_free_at = -1; /* every free fails */
	cr_expect_eq(mtp_gpu_scratch_release(&be), MTP_ERR_DEVICE);
	cr_expect_str_eq(be.error, "free 1 failed");
	cr_expect_eq(f.frees, 3);
	cr_expect_eq(f.gpu.n_scratch, 0);
}

Test(compose, scratch_is_bounded)
{
	struct mtp_backend be;
	struct fake f;
	struct gpu_buf b;

	fake_init(&be, &f, 0);
	for (int i = 0; i < GPU_SCRATCH_MAX; i++)
		cr_assert_eq(mtp_gpu_scratch(&be, 16, &b), MTP_OK);
	cr_expect_eq(mtp_gpu_scratch(&be, 16, &b), MTP_ERR_LIMIT);
	cr_expect_eq(mtp_gpu_scratch_release(&be), MTP_OK);
	cr_expect_eq(f.live, 0);
}

Test(compose, supports_follows_the_primitives_limits)
{
	static const struct gpu_prims narrow = {.max_m = 2, .max_rows = 2};
	struct mtp_backend be;
	struct fake f;
	struct gen g;

	gen(&g, "hc_pre", DEFAULT_FAMILY, NULL);
	fake_init(&be, &f, 0);
	cr_expect(mtp_gpu_supports(&be, &g.cc.call));
	f.gpu.prims = &narrow; /* hc_mult 4 > 2, T > 2 */
	cr_expect_not(mtp_gpu_supports(&be, &g.cc.call));
	gen_fini(&g);
}

/* The cases of a fixture file, each loaded into a host call in turn. */
struct fx_call {
	struct mtp_fixture fx;
	struct mtp_signature sig;
	struct mtp_tensor in[MTP_SIG_MAX], out[MTP_SIG_MAX];
	struct mtp_call call;
};

static void fx_call_load(struct fx_call *f, int i)
{
	struct mtp_case *c = &f->fx.cases[i];
	char err[MTP_ERR_MAX];

	cr_assert_eq(mtp_fixture_load(&f->fx, i, err, sizeof(err)), MTP_OK,
		     "%s", err);
	memset(&f->call, 0, sizeof(f->call));
	cr_assert_eq(mtp_case_check(c, &f->sig, &f->call.dims, &f->call.act,
				    err, sizeof(err)),
		     MTP_OK, "%s", err);
	f->call.op = c->op;
	f->call.params = &c->params;
	f->call.sig = &f->sig;
	f->call.n_in = f->sig.n_in;
	f->call.n_out = f->sig.n_out;
	f->call.in = f->in;
	f->call.out = f->out;
	for (int k = 0; k < f->sig.n_in; k++) {
		const struct mtp_named *n =
			mtp_list_find(&c->inputs, f->sig.in[k].name);

		memset(&f->in[k], 0, sizeof(f->in[k]));
		if (n)
			f->in[k] = n->t;
	}
	for (int k = 0; k < f->sig.n_out; k++) {
		const struct mtp_named *n =
			mtp_list_find(&c->expected, f->sig.out[k].name);

		memset(&f->out[k], 0, sizeof(f->out[k]));
		if (n)
			f->out[k] = n->t;
	}
}

/* [SPEC.md §12.2] Every float8 case of fixtures/fp8.h5 whose op is composed
 * here runs its quantized projections through linear_fp8, each with its
 * scale and the case's scheme; a backend without linear_fp8 is asked
 * nothing about them. */
Test(compose, fp8_projections_go_through_linear_fp8)
{
	struct gpu_prims with = fake_prims;
	struct mtp_limits lim = {1u << 30};
	struct fx_call *f = calloc(1, sizeof(*f));
	char err[MTP_ERR_MAX];
	int ran = 0;

	with.linear_fp8 = fake_linear_fp8;
	cr_assert_eq(mtp_fixture_open(MTP_SOURCE_DIR "/fixtures/fp8.h5", &lim,
				      &f->fx, err, sizeof(err)),
		     MTP_OK, "%s", err);
	for (int i = 0; i < f->fx.n_cases; i++) {
		const char *id = f->fx.cases[i].id;
		struct mtp_backend be;
		struct fake k;

		fx_call_load(f, i);
		fake_init(&be, &k, 0);
		cr_expect_not(mtp_gpu_supports(&be, &f->call), "%s", id);
		k.gpu.prims = &with;
		if (!mtp_gpu_supports(&be, &f->call)) {
			/* main_proj_norm: not composed here yet */
			cr_expect_str_eq(f->call.op->name, "main_proj_norm");
			mtp_fixture_unload(&f->fx, i);
			continue;
		}
		cr_expect_eq(mtp_gpu_launch(&be, &f->call), MTP_OK, "%s: %s",
			     id, be.error);
		cr_expect(k.fp8_calls > 0, "%s: no linear_fp8", id);
		cr_expect_eq(k.fp8_w8a8 > 0, strstr(id, "w8a8") != NULL, "%s",
			     id);
		cr_expect_eq(k.fp8_e8m0 > 0, strstr(id, "e8m0") != NULL, "%s",
			     id);
		cr_expect_eq(k.live, 0, "%s: scratch left", id);
		ran++;
		mtp_fixture_unload(&f->fx, i);
	}
	cr_expect_geq(ran, 10);
	mtp_fixture_close(&f->fx);
	free(f);
}

/* [§2.5] a declared order goes to reduce_ordered as it is; without the
 * primitive the op is declined; undeclared, the plain all_reduce. */
Test(compose, a_declared_reduction_order_is_honoured_or_declined)
{
	const struct gpu_prims core = core_prims();
	struct mtp_backend be;
	struct fake f;
	struct gen g;

	/* the generator keeps no reduce_order (tools/gen/tp.py writes such
	 * cases): the parsed attribute, set on the generated case */
	gen(&g, "all_reduce", DEFAULT_FAMILY, NULL);
	cr_assert_eq(g.cc.call.params, &g.c.params);
	g.c.params.tp.order = MTP_REDUCE_RING;
	fake_init(&be, &f, 0);
	cr_assert(mtp_gpu_supports(&be, &g.cc.call));
	cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK, "%s", be.error);
	cr_expect_eq(f.reduce_order, (int)MTP_REDUCE_RING);
	f.gpu.prims = &core;
	cr_expect_not(mtp_gpu_supports(&be, &g.cc.call));
	gen_fini(&g);

	gen(&g, "all_reduce", DEFAULT_FAMILY, NULL);
	fake_init(&be, &f, 0);
	cr_assert_eq(mtp_gpu_launch(&be, &g.cc.call), MTP_OK, "%s", be.error);
	cr_expect_eq(f.reduce_order, -1);
	gen_fini(&g);
}
