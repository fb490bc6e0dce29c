/*
 * The captured-block form (SPEC.md §12.3, FORMAT.md version 2), end to
 * end on the independent generator's dumps (tools/gen/captured.py):
 *  - every control passes, every glue bug fails and is named as the bug its
 *    case id ends with (the block is a mixer only the generator knows);
 *  - a chain whose only trace of the bug is step 1's captured block input
 *    is caught there (the glue fed the recomputed recycled state);
 *  - the goldens pass on the reference and are unimplemented elsewhere;
 *  - a large vocabulary is judged on sampled rows, said in the result.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "mtp/config.h"
#include "mtp/quant.h"
#include "mtp/runner.h"

#define DUMPS MTP_SOURCE_DIR "/fixtures/dumps/captured_bugs.h5"
#define GOLDEN MTP_SOURCE_DIR "/fixtures/captured.h5"

static struct mtp_run run_on(const char *path, bool verify, const char *be)
{
	struct mtp_run_opts o;
	struct mtp_run run = {0};

	mtp_run_opts_init(&o);
	o.verify = verify;
	o.inputs[o.n_inputs++] = path;
	o.backends[o.n_backends++] = be;
	o.out = fopen("/dev/null", "w");
	mtp_run_execute(&run, &o);
	fclose(o.out);
	return run;
}

Test(captured, every_dump_is_judged_as_its_id_says)
{
	struct mtp_run run = run_on(DUMPS, true, "ref");

	cr_assert_geq(run.n, 17);
	for (int i = 0; i < run.n; i++) {
		const struct mtp_result *r = &run.results[i];
		const char *bug = strrchr(r->case_id, '.') + 1;

		if (strcmp(bug, "ok") == 0) {
			cr_expect_eq(r->verdict, MTP_PASSED, "%s: %s",
				     r->case_id, r->message);
			cr_expect_eq(r->diag.diag, MTP_DIAG_NONE, "%s",
				     r->case_id);
			continue;
		}
		cr_expect_eq(r->verdict, MTP_FAILED, "%s", r->case_id);
		cr_expect_str_eq(mtp_diag_info(r->diag.diag)->name, bug, "%s",
				 r->case_id);
		/* a rule over the dump's weights claims without a ratio */
		if (!strstr(r->diag.text, "weight sanity rule"))
			cr_expect_geq(r->diag.ratio, MTP_DIAG_MIN_RATIO, "%s",
				      r->case_id);
	}
	mtp_run_fini(&run);
}

Test(captured, a_chain_is_caught_at_the_next_steps_block_input)
{
	struct mtp_run run = run_on(DUMPS, true, "ref");
	bool seen = false;

	for (int i = 0; i < run.n; i++) {
		const struct mtp_result *r = &run.results[i];

		if (!strstr(r->case_id, "norecycled"))
			continue;
		seen = true;
		cr_assert_geq(r->first_bad, 0);
		cr_expect_str_eq(r->cmp[r->first_bad].name, "step.1/block_in");
	}
	cr_expect(seen);
	mtp_run_fini(&run);
}

/* ref and cpu (kernels/cpu/captured.c) implement the captured form, and
 * so do the GPU modules (kernels/gpu/step.c); a backend not written for it
 * is never asked (mtp_backend_reads_captured). */
Test(captured, goldens_pass_on_ref_and_cpu)
{
	static const char *const names[] = {"ref", "cpu"};

	for (int b = 0; b < 2; b++) {
		struct mtp_run run = run_on(GOLDEN, false, names[b]);

		cr_assert_geq(run.n, 7);
		for (int i = 0; i < run.n; i++)
			cr_expect(run.results[i].verdict == MTP_PASSED ||
					  (b == 1 && run.results[i].verdict ==
							     MTP_SKIPPED),
				  "%s on %s: %s: %s", run.results[i].case_id,
				  names[b],
				  mtp_verdict_name(run.results[i].verdict),
				  run.results[i].message);
		mtp_run_fini(&run);
	}
	/* the GPU modules too (kernels/gpu/step.c: suite.opencl runs these
	 * goldens); an external plugin is never asked */
	cr_expect(mtp_backend_reads_captured("python"));
	cr_expect(mtp_backend_reads_captured("opencl"));
	cr_expect(mtp_backend_reads_captured("cuda"));
	cr_expect(!mtp_backend_reads_captured("a_plugin"));
}
