/*
 * The runner end to end on hand-made fixtures: verdicts, exit codes, the
 * failure line (case, tensor, worst element, repro), verify on dumps, JSON.
 * Expected values are derived by hand: a row of equal values x with unit
 * weights normalises to x/sqrt(x^2+eps), which is 1.0 in bf16 for x = 2.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "mtp/backend.h"
#include "mtp/bench.h"
#include "mtp/runner.h"
#include "test_util.h"

struct outcome {
	enum mtp_exit code;
	char *console;
	int counts[MTP_VERDICT_COUNT];
};

static struct outcome run_with(const char *backends, const char *fixture,
			       bool verify, const char *json)
{
	struct mtp_run_opts o;
	struct mtp_run run = {0};
	struct outcome out = {0};
	char log[128], list[128];
	char err[MTP_ERR_MAX];

	mtp_run_opts_init(&o);
	tu_tmpname(log, sizeof(log), "console");
	o.out = fopen(log, "w");
	snprintf(list, sizeof(list), "%s", backends);
	for (char *t = strtok(list, ","); t; t = strtok(NULL, ","))
		o.backends[o.n_backends++] = t;
	o.inputs[o.n_inputs++] = fixture;
	o.verify = verify;
	mtp_run_execute(&run, &o);
	fclose(o.out);
	out.code = mtp_run_exit_code(&run);
	memcpy(out.counts, run.counts, sizeof(out.counts));
	if (json)
		cr_assert_eq(mtp_report_json(&run, json, err, sizeof(err)),
			     MTP_OK);
	mtp_run_fini(&run);
	out.console = tu_slurp(log);
	remove(log);
	return out;
}

Test(runner, correct_golden_passes)
{
	char path[128];
	struct mtp_case c;

	tu_tmpname(path, sizeof(path), "pass");
	tu_rmsnorm_case(&c, "rms.ok", 3, 16, 2.0, 1.0);
	tu_write_cases(path, &c, 1);
	struct outcome o = run_with("ref", path, false, NULL);

	cr_expect_eq(o.code, MTP_EXIT_OK, "%s", o.console);
	cr_expect_eq(o.counts[MTP_PASSED], 1);
	cr_expect(strstr(o.console, "PASSED") != NULL);
	free(o.console);
	mtp_case_fini(&c);
	remove(path);
}

Test(runner, wrong_golden_fails_with_tensor_element_and_repro)
{
	char path[128], want[300];
	struct mtp_case c;

	tu_tmpname(path, sizeof(path), "fail");
	tu_rmsnorm_case(&c, "rms.wrong", 2, 8, 2.0, 1.0);
	mtp_store(MTP_BF16, c.expected.items[0].t.data, 13, 1.5); /* y[1,5] */
	tu_write_cases(path, &c, 1);
	struct outcome o = run_with("ref", path, false, NULL);

	cr_expect_eq(o.code, MTP_EXIT_FAIL, "%s", o.console);
	cr_expect(strstr(o.console, "FAILED") != NULL, "%s", o.console);
	cr_expect(strstr(o.console, "rms.wrong") != NULL);
	cr_expect(strstr(o.console, "y[1,5]: got 1 want 1.5") != NULL, "%s",
		  o.console);
	snprintf(want, sizeof(want),
		 "repro: mtpcheck run --backend ref --fixtures %s --filter "
		 "rms.wrong",
		 path);
	cr_expect(strstr(o.console, want) != NULL, "%s", o.console);
	free(o.console);
	mtp_case_fini(&c);
	remove(path);
}

Test(runner, unavailable_backend_exits_125)
{
	char path[128];
	struct mtp_case c;

	setenv("MTP_BACKEND_PATH", "/nonexistent", 1);
	tu_tmpname(path, sizeof(path), "skip");
	tu_rmsnorm_case(&c, "rms.s", 1, 8, 2.0, 1.0);
	tu_write_cases(path, &c, 1);
	struct outcome o = run_with("cuda", path, false, NULL);

	cr_expect_eq(o.code, MTP_EXIT_UNTESTED, "%s", o.console);
	cr_expect_eq(o.counts[MTP_SKIPPED], 1);
	cr_expect(strstr(o.console, "SKIPPED") != NULL);
	free(o.console);
	/* with a working backend beside it, skips do not fail the run */
	o = run_with("ref,cuda", path, false, NULL);
	cr_expect_eq(o.code, MTP_EXIT_OK, "%s", o.console);
	free(o.console);
	mtp_case_fini(&c);
	remove(path);
}

Test(runner, unknown_backend_and_corrupt_fixture_exit_2)
{
	char path[128];
	FILE *f;
	struct mtp_case c;

	tu_tmpname(path, sizeof(path), "c");
	tu_rmsnorm_case(&c, "rms.c", 1, 8, 2.0, 1.0);
	tu_write_cases(path, &c, 1);
	struct outcome o = run_with("no_such_backend", path, false, NULL);

	cr_expect_eq(o.code, MTP_EXIT_USAGE);
	free(o.console);
	f = fopen(path, "wb");
	fputs("garbage", f);
	fclose(f);
	o = run_with("ref", path, false, NULL);
	cr_expect_eq(o.code, MTP_EXIT_USAGE);
	free(o.console);
	mtp_case_fini(&c);
	remove(path);
}

Test(runner, verify_judges_observed_and_wrong_shape_is_a_failure)
{
	char path[128], json[128];
	struct mtp_case c[2];
	int64_t good[2] = {2, 8}, bad[2] = {2, 4};
	double ones[16];

	for (int i = 0; i < 16; i++)
		ones[i] = 1.0;
	tu_rmsnorm_case(&c[0], "dump.ok", 2, 8, 2.0, 1.0);
	tu_rmsnorm_case(&c[1], "dump.shape", 2, 8, 2.0, 1.0);
	for (int i = 0; i < 2; i++) {
		mtp_list_fini(&c[i].expected);
		tu_add(&c[i].observed, "y", MTP_BF16, 2, i ? bad : good, ones);
	}
	tu_tmpname(path, sizeof(path), "dump");
	tu_tmpname(json, sizeof(json), "json");
	tu_write_cases(path, c, 2);
	struct outcome o = run_with("ref", path, true, json);
	char *js = tu_slurp(json);

	cr_expect_eq(o.code, MTP_EXIT_FAIL, "%s", o.console);
	cr_expect_eq(o.counts[MTP_PASSED], 1);
	cr_expect_eq(o.counts[MTP_FAILED], 1,
		     "a wrong shape is FAILED, not INVALID");
	cr_expect(strstr(o.console, "y: shape [2,4], expected [2,8]") != NULL,
		  "%s", o.console);
	cr_assert(js != NULL);
	cr_expect(strstr(js, "\"verdict\":\"FAILED\"") != NULL);
	cr_expect(strstr(js, "\"repro\":\"mtpcheck verify ") != NULL);
	cr_expect(strstr(js, "\"exit_code\":1") != NULL);
	free(js);
	free(o.console);
	mtp_case_fini(&c[0]);
	mtp_case_fini(&c[1]);
	remove(path);
	remove(json);
}

/* Nothing compared is never PASSED: an empty batch, in a fixture and in a
 * dump, is SKIPPED "nothing compared", 0 elements compared in the JSON, and
 * a run of nothing else exits 125; H = 0 is refused (exit 2). */
Test(runner, an_empty_batch_is_skipped_never_passed)
{
	char path[128], json[128];
	struct mtp_case c;

	tu_tmpname(path, sizeof(path), "empty");
	tu_tmpname(json, sizeof(json), "json");
	for (int verify = 0; verify < 2; verify++) {
		tu_rmsnorm_case(&c, "rms.empty", 0, 16, 2.0, 1.0);
		if (verify) {
			mtp_list_fini(&c.expected);
			tu_add(&c.observed, "y", MTP_BF16, 2,
			       (int64_t[]){0, 16}, NULL);
		}
		tu_write_cases(path, &c, 1);
		struct outcome o = run_with("ref", path, verify, json);
		char *js = tu_slurp(json);

		cr_expect_eq(o.code, MTP_EXIT_UNTESTED, "%s", o.console);
		cr_expect_eq(o.counts[MTP_PASSED], 0, "%s", o.console);
		cr_expect(strstr(o.console, "nothing compared: R = 0 (an "
					    "empty batch)") != NULL,
			  "%s", o.console);
		cr_assert(js != NULL);
		cr_expect(strstr(js, "\"compared_elements\":0,") != NULL);
		cr_expect(strstr(js, "\"elements\":0,") != NULL);
		free(js);
		free(o.console);
		mtp_case_fini(&c);
	}
	tu_rmsnorm_case(&c, "rms.h0", 3, 0, 2.0, 1.0);
	tu_write_cases(path, &c, 1);
	struct outcome o = run_with("ref", path, false, NULL);

	cr_expect_eq(o.code, MTP_EXIT_USAGE, "%s", o.console);
	free(o.console);
	mtp_case_fini(&c);
	remove(path);
	remove(json);
}

Test(runner, filter_globs_and_exact_ids)
{
	const char *pats[] = {"rms.*"};
	const char *exact[] = {"rms.a"};

	cr_expect(mtp_filter_match(pats, 1, "f.h5", "rms.b"));
	cr_expect(!mtp_filter_match(pats, 1, "f.h5", "hc_pre.a"));
	cr_expect(mtp_filter_match(exact, 1, "f.h5", "rms.a"));
	cr_expect(!mtp_filter_match(exact, 1, "f.h5", "rms.ab"),
		  "no substring match");
	cr_expect(mtp_filter_match(NULL, 0, "f.h5", "anything"));
}

Test(runner, shards_partition_the_suite_and_junit_names_failures)
{
	char path[128], xmlp[128];
	struct mtp_case c[5];
	int seen = 0;

	for (int i = 0; i < 5; i++) {
		char id[32];

		snprintf(id, sizeof(id), "rms.%d", i);
		tu_rmsnorm_case(&c[i], id, 1, 8, 2.0, i == 3 ? 1.5 : 1.0);
	}
	tu_tmpname(path, sizeof(path), "shard");
	tu_tmpname(xmlp, sizeof(xmlp), "junit");
	tu_write_cases(path, c, 5);
	for (int k = 0; k < 2; k++) {
		struct mtp_run_opts o;
		struct mtp_run run = {0};
		char err[MTP_ERR_MAX];

		mtp_run_opts_init(&o);
		o.backends[o.n_backends++] = "ref";
		o.inputs[o.n_inputs++] = path;
		o.shard_i = k;
		o.shard_n = 2;
		o.out = fopen("/dev/null", "w");
		mtp_run_execute(&run, &o);
		fclose(o.out);
		seen += run.n;
		cr_expect_eq(run.n, k == 0 ? 3 : 2, "shard %d/2", k);
		if (k == 1) {
			cr_assert_eq(
				mtp_report_junit(&run, xmlp, err, sizeof(err)),
				MTP_OK);
			char *x = tu_slurp(xmlp);

			cr_expect(strstr(x, "failures=\"1\"") != NULL, "%s", x);
			cr_expect(strstr(x, "message=\"FAILED: y[0,0]") != NULL,
				  "%s", x);
			cr_expect(strstr(x,
					 "repro: mtpcheck run --backend ref") !=
				  NULL);
			free(x);
		}
		mtp_run_fini(&run);
	}
	cr_expect_eq(seen, 5, "the shards cover the suite once");
	for (int i = 0; i < 5; i++)
		mtp_case_fini(&c[i]);
	remove(path);
	remove(xmlp);
}

Test(runner, html_report_is_self_contained_and_names_the_failure)
{
	char path[128], html[128], err[MTP_ERR_MAX];
	struct mtp_case c;
	struct mtp_run_opts o;
	struct mtp_run run = {0};

	tu_tmpname(path, sizeof(path), "h");
	tu_tmpname(html, sizeof(html), "html");
	tu_rmsnorm_case(&c, "rms.html_fail", 1, 8, 2.0, 1.5);
	tu_write_cases(path, &c, 1);
	mtp_run_opts_init(&o);
	o.backends[o.n_backends++] = "ref";
	o.inputs[o.n_inputs++] = path;
	o.out = fopen("/dev/null", "w");
	mtp_run_execute(&run, &o);
	fclose(o.out);
	cr_assert_eq(mtp_report_html(&run, html, err, sizeof(err)), MTP_OK,
		     "%s", err);
	char *h = tu_slurp(html);

	cr_assert(h != NULL);
	cr_expect(strncmp(h, "<!DOCTYPE html>", 15) == 0);
	cr_expect(strstr(h, "rms.html_fail") != NULL);
	cr_expect(strstr(h, ">FAILED<") != NULL);
	cr_expect(strstr(h, "repro: <code>mtpcheck run --backend ref") != NULL);
	cr_expect(strstr(h, "<svg") != NULL, "plots are inline SVG");
	cr_expect(strstr(h, "src=") == NULL && strstr(h, "<link") == NULL &&
			  strstr(h, "<script src") == NULL,
		  "nothing is fetched");
	free(h);
	mtp_run_fini(&run);
	mtp_case_fini(&c);
	remove(path);
	remove(html);
}

Test(runner, isolation_turns_crash_hang_and_device_error_into_verdicts)
{
	char path[128];
	struct mtp_case c[3];
	struct mtp_run_opts o;
	struct mtp_run run = {0};

	for (int i = 0; i < 3; i++) {
		char id[32];

		snprintf(id, sizeof(id), "rms.r%d", i + 1);
		tu_rmsnorm_case(&c[i], id, i + 1, 8, 2.0, 1.0);
	}
	tu_tmpname(path, sizeof(path), "faulty");
	tu_write_cases(path, c, 3);
	mtp_run_opts_init(&o);
	o.backends[o.n_backends++] = "faulty";
	o.backend_lib = MTP_FAULTY_PLUGIN;
	o.inputs[o.n_inputs++] = path;
	o.isolate = true;
	o.timeout = 2;
	o.out = fopen("/dev/null", "w");
	mtp_run_execute(&run, &o);
	fclose(o.out);
	cr_assert_eq(run.n, 3, "the run went on after the crash and the hang");
	cr_expect_eq(run.results[0].verdict, MTP_CRASHED, "%s",
		     run.results[0].message);
	/* a plain build reports the signal; under ASan its handler exits instead */
	cr_expect(strstr(run.results[0].message, "signal 11") != NULL ||
			  strstr(run.results[0].message, "exit status") != NULL,
		  "%s", run.results[0].message);
	cr_expect_eq(run.results[1].verdict, MTP_TIMEOUT, "%s",
		     run.results[1].message);
	cr_expect_eq(run.results[2].verdict, MTP_FAILED);
	cr_expect(strstr(run.results[2].message,
			 "faultyError: the device fell over") != NULL,
		  "the vendor's message: %s", run.results[2].message);
	cr_expect_eq(mtp_run_exit_code(&run), MTP_EXIT_FAIL);
	mtp_run_fini(&run);
	for (int i = 0; i < 3; i++)
		mtp_case_fini(&c[i]);
	remove(path);
}
