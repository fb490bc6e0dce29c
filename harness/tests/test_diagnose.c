/*
 * Diagnoses, end to end and in their parts:
 *  - the hand-built dumps of fixtures/dumps/bugs.h5 (made by the independent
 *    generator, tools/gen/bug_dumps.py) fail and are named as their bug;
 *  - the composite error budget lets a legitimate variant pass (the other
 *    RMSNorm rounding) and fails every bug hypothesis, on every bundled step;
 *  - the self-test over ref catches and names every mutant, and each
 *    mutant row is one change.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "mtp/config.h"
#include "mtp/mutant.h"
#include "mtp/runner.h"

#define DUMPS MTP_SOURCE_DIR "/fixtures/dumps/bugs.h5"

static struct mtp_run verify_dump(const char *path)
{
	struct mtp_run_opts o;
	struct mtp_run run = {0};

	mtp_run_opts_init(&o);
	o.verify = true;
	o.inputs[o.n_inputs++] = path;
	o.out = fopen("/dev/null", "w");
	mtp_run_execute(&run, &o);
	fclose(o.out);
	return run;
}

static void expect_case_in(const char *path, const char *id, enum mtp_verdict v,
			   const char *diag);

static void expect_case(const char *id, enum mtp_verdict v, const char *diag)
{
	expect_case_in(DUMPS, id, v, diag);
}

static void expect_case_in(const char *path, const char *id, enum mtp_verdict v,
			   const char *diag)
{
	struct mtp_run run = verify_dump(path);
	const struct mtp_result *r = NULL;

	for (int i = 0; i < run.n; i++)
		if (strcmp(run.results[i].case_id, id) == 0)
			r = &run.results[i];
	cr_assert(r != NULL, "case %s in %s", id, path);
	cr_expect_eq(r->verdict, v, "%s: %s (%s)", id,
		     mtp_verdict_name(r->verdict), r->message);
	cr_expect_str_eq(mtp_diag_info(r->diag.diag)->name, diag, "%s", id);
	if (diag[0] != 'N' && strcmp(diag, "SHARED_HEAD_UNINIT") != 0)
		cr_expect(r->diag.ratio >= MTP_DIAG_MIN_RATIO, "a clear match");
	mtp_run_fini(&run);
}

Test(diagnose, dump_pre_norm_recycle)
{
	expect_case("v3.pre_norm_recycle", MTP_FAILED, "PRE_NORM_RECYCLE");
}

Test(diagnose, dump_missing_hc_post)
{
	expect_case("v4.missing_hc_post", MTP_FAILED, "MISSING_HC_POST");
}

Test(diagnose, dump_missing_hc_post_wrong_width_is_a_failure_not_invalid)
{
	expect_case("v4.missing_hc_post_f", MTP_FAILED, "MISSING_HC_POST");
}

Test(diagnose, dump_hc_post_twice)
{
	expect_case("v4.hc_post_twice", MTP_FAILED, "HC_POST_TWICE");
}

Test(diagnose, dump_hc_head_owner)
{
	expect_case("v4.chain_hc_head_owner", MTP_FAILED, "HC_HEAD_OWNER");
}

Test(diagnose, dump_other_rounding_passes_with_a_note)
{
	struct mtp_run run = verify_dump(DUMPS);

	for (int i = 0; i < run.n; i++) {
		const struct mtp_result *r = &run.results[i];

		if (strcmp(r->case_id, "v3.other_rounding"))
			continue;
		cr_expect_eq(r->verdict, MTP_PASSED, "%s", r->message);
		cr_expect_eq(r->diag.diag, MTP_DIAG_NORM_ROUNDING);
		cr_expect(r->diag.info, "information, not a failure");
	}
	mtp_run_fini(&run);
}

Test(diagnose, dump_controls_pass_undiagnosed)
{
	expect_case("v3.ok", MTP_PASSED, "NONE");
	expect_case("v4.ok", MTP_PASSED, "NONE");
}

/* Each step case: the other rounding passes the budget, each bug fails it. */
static void check_budget_on(const char *file, int *legit, int *bugs)
{
	struct mtp_limits lim = {1u << 30};
	struct mtp_fixture fx;
	char err[MTP_ERR_MAX];

	cr_assert_eq(mtp_fixture_open(file, &lim, &fx, err, sizeof(err)),
		     MTP_OK, "%s", err);
	for (int i = 0; i < fx.n_cases; i++) {
		struct mtp_case *c = &fx.cases[i];
		static struct mtp_signature sig;
		struct mtp_tensor in[MTP_SIG_MAX] = {0}, out[MTP_SIG_MAX] = {0};
		struct mtp_tensor hyp[MTP_SIG_MAX] = {0},
				  want[MTP_SIG_MAX] = {0};
		struct mtp_call call = {0};

		cr_assert_eq(mtp_fixture_load(&fx, i, err, sizeof(err)), MTP_OK,
			     "%s", err);
		cr_assert_eq(mtp_case_check(c, &sig, &call.dims, &call.act, err,
					    sizeof(err)),
			     MTP_OK);
		call.op = c->op;
		call.params = &c->params;
		call.sig = &sig;
		call.n_in = sig.n_in;
		call.n_out = sig.n_out;
		call.in = in;
		call.out = out;
		for (int k = 0; k < sig.n_in; k++) {
			const struct mtp_named *n =
				mtp_list_find(&c->inputs, sig.in[k].name);

			if (n)
				in[k] = n->t;
		}
		for (int k = 0; k < sig.n_out; k++) {
			const struct mtp_named *n =
				mtp_list_find(&c->expected, sig.out[k].name);

			out[k].dtype = mtp_tspec_dtype(&sig.out[k], call.act);
			mtp_tspec_shape(&sig.out[k], &call.dims, &out[k].ndim,
					out[k].shape);
			if (n)
				want[k] = n->t;
		}
		for (int d = 1; d < MTP_DIAG_COUNT; d++) {
			bool legit_variant = d == MTP_DIAG_NORM_ROUNDING;
			bool any_fail = false;

			if (!mtp_diag_applies(d, &call) ||
			    mtp_diag_hypothesis(d, &call, hyp))
				continue;
			for (int k = 0; k < sig.n_out; k++) {
				struct mtp_tol tol;
				struct mtp_cmp cmp;

				if (!want[k].data ||
				    !mtp_dtype_is_float(want[k].dtype))
					continue;
				mtp_tol_for(&call, sig.out[k].name,
					    want[k].dtype, NULL, &tol);
				if (strstr(c->id, "fp8_w8a8") &&
				    strcmp(sig.out[k].name,
					   "step.1/block_out") == 0)
					cr_expect(strstr(tol.origin,
							 "2 FP8 activation"),
						  "%s: %s", c->id, tol.origin);
				mtp_compare(sig.out[k].name, &hyp[k], &want[k],
					    &tol, false, &cmp);
				any_fail |= !cmp.passed;
				if (legit_variant)
					cr_expect(cmp.passed,
						  "%s: %s with the other "
						  "rounding is legitimate but "
						  "fails the budget (normwise "
						  "%.3g, headroom %.3g)",
						  c->id, sig.out[k].name,
						  cmp.rel_norm, cmp.headroom);
			}
			if (!legit_variant) {
				cr_expect(any_fail,
					  "%s: bug %s passes the budget", c->id,
					  mtp_diag_info(d)->name);
				*bugs += 1;
			} else {
				*legit += 1;
			}
			for (int k = 0; k < sig.n_out; k++)
				mtp_tensor_fini(&hyp[k]);
		}
		mtp_fixture_unload(&fx, i);
	}
	mtp_fixture_close(&fx);
}

Test(diagnose, error_budget_passes_legit_variants_and_fails_bugs)
{
	int legit = 0, bugs = 0;

	check_budget_on(MTP_SOURCE_DIR "/fixtures/steps_v3.h5", &legit, &bugs);
	check_budget_on(MTP_SOURCE_DIR "/fixtures/steps_v4.h5", &legit, &bugs);
	check_budget_on(MTP_SOURCE_DIR "/fixtures/chains.h5", &legit, &bugs);
	/* W8A8: the budget's allowance for the activation quantizations
	 * (compare.c) still fails every bug */
	check_budget_on(MTP_SOURCE_DIR "/fixtures/fp8.h5", &legit, &bugs);
	cr_expect(legit >= 20, "legitimate variants checked: %d", legit);
	cr_expect(bugs >= 40, "bug hypotheses checked: %d", bugs);
}

int mtp_selftest(const struct mtp_run_opts *opts);

Test(diagnose, selftest_names_every_mutant_over_ref)
{
	struct mtp_run_opts o;

	mtp_run_opts_init(&o);
	o.backends[o.n_backends++] = "ref";
	o.inputs[o.n_inputs++] = MTP_SOURCE_DIR "/fixtures";
	/* generated problems of ops without a bundled golden (target_handoff, dspark_step) */
	o.case_file = MTP_SOURCE_DIR "/cases/selftest.case";
	o.out = fopen("/dev/null", "w");
	cr_expect_eq(mtp_selftest(&o), 0);
	fclose(o.out);
}

/* A mutant row's bug is one change the judge and the mutant both call
 * (mtp/bugclass.h): an edit, an after_step, partials (the all-reduce
 * classes), an after_run or a refusal; a row whose change can be tried as
 * a hypothesis says where (applies). */
Test(diagnose, every_mutant_row_is_one_change)
{
	for (int d = 1; d < MTP_DIAG_COUNT; d++) {
		const struct mtp_bug_class *b = mtp_diag_info(d);
		int hyp = !!b->edit + !!b->after_step + !!b->partials;

		if (!mtp_mutant_exists(d))
			continue;
		cr_expect(hyp + !!b->after_run + !!b->refuses >= 1,
			  "%s: no change", b->name);
		cr_expect(hyp <= 1, "%s: two changes", b->name);
		cr_expect(!hyp || b->applies, "%s: no applies", b->name);
	}
}

/* ---- the bugs seen in the field (SPEC.md §12.4): fixtures/dumps/field.h5,
 * made by tools/gen/field_dumps.py ---------------------------------------- */

#define FIELD MTP_SOURCE_DIR "/fixtures/dumps/field.h5"

Test(diagnose, field_dumps_are_named)
{
	static const char *const cases[][2] = {
		{"field.layer_reuse", "SPEC_STEP_LAYER_REUSE"},
		{"field.head_overwrite", "SHARED_HEAD_OVERWRITE"},
		{"field.head_uninit_zero", "SHARED_HEAD_UNINIT"},
		{"field.head_uninit_garbage", "SHARED_HEAD_UNINIT"},
		{"field.embed_uninit", "SHARED_HEAD_UNINIT"},
		{"field.scale_dropped", "QUANT_SCALE_DROPPED"},
		{"field.scale_reciprocal", "QUANT_SCALE_DROPPED.reciprocal"},
		{"field.scale_transposed", "QUANT_SCALE_DROPPED.transposed"},
		{"field.scale_other_layer", "QUANT_SCALE_DROPPED.other_layer"},
		{"field.truncating", "ROUNDING_BIAS"},
		{"field.truncating_rmsnorm", "ROUNDING_BIAS"},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		expect_case_in(FIELD, cases[i][0], MTP_FAILED, cases[i][1]);
	expect_case_in(FIELD, "field.ok", MTP_PASSED, "NONE");
}

Test(diagnose, truncation_fails_although_every_element_is_within_tolerance)
{
	struct mtp_run run = verify_dump(FIELD);

	for (int i = 0; i < run.n; i++) {
		const struct mtp_result *r = &run.results[i];

		if (strcmp(r->case_id, "field.truncating_rmsnorm") != 0)
			continue;
		cr_expect_eq(r->verdict, MTP_FAILED);
		cr_expect_eq(r->first_bad, -1, "no element out of tolerance");
		cr_expect(r->n_cmp == 1 && r->cmp[0].bias.fired &&
			  r->cmp[0].bias.toward_zero && r->cmp[0].bias.z < -6);
	}
	mtp_run_fini(&run);
}
