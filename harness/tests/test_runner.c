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

static void write_cases(const char *path, struct mtp_case *c, int n)
{
	char err[MTP_ERR_MAX];

	cr_assert_eq(mtp_fixture_write(path, "test", c, n, err, sizeof(err)),
		     MTP_OK);
}

Test(runner, correct_golden_passes)
{
	char path[128];
	struct mtp_case c;

	tu_tmpname(path, sizeof(path), "pass");
	tu_rmsnorm_case(&c, "rms.ok", 3, 16, 2.0, 1.0);
	write_cases(path, &c, 1);
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
	write_cases(path, &c, 1);
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
	write_cases(path, &c, 1);
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
	write_cases(path, &c, 1);
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
	write_cases(path, c, 2);
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
	write_cases(path, c, 5);
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
	write_cases(path, &c, 1);
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
	write_cases(path, c, 3);
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

Test(runner, report_merges_results_files_by_machine_and_night)
{
	char path[128], j1[128], j2[128], html[128], err[MTP_ERR_MAX];
	struct mtp_case c;
	struct mtp_run_opts o;
	struct mtp_run run = {0}, merged = {0};

	tu_tmpname(path, sizeof(path), "m");
	tu_tmpname(j1, sizeof(j1), "j1");
	tu_tmpname(html, sizeof(html), "mh");
	tu_rmsnorm_case(&c, "rms.m", 1, 8, 2.0, 1.5);
	write_cases(path, &c, 1);
	mtp_run_opts_init(&o);
	o.backends[o.n_backends++] = "ref";
	o.inputs[o.n_inputs++] = path;
	o.out = fopen("/dev/null", "w");
	mtp_run_execute(&run, &o);
	fclose(o.out);
	cr_assert_eq(mtp_report_json(&run, j1, err, sizeof(err)), MTP_OK);
	tu_tmpname(j2, sizeof(j2), "j2");
	run.opts.run_id = "another night"; /* one file twice is one run */
	cr_assert_eq(mtp_report_json(&run, j2, err, sizeof(err)), MTP_OK);
	const char *files[2] = {j1, j2};
	enum mtp_status st = mtp_run_merge(&merged, files, 2, err, sizeof(err));

	if (st == MTP_ERR_UNSUPPORTED) { /* a build without libcjson says so */
		cr_expect(strstr(err, "libcjson") != NULL);
	} else {
		cr_assert_eq(st, MTP_OK, "%s", err);
		cr_expect_eq(merged.n, 2);
		cr_expect_eq(merged.counts[MTP_FAILED], 2);
		cr_expect(strncmp(merged.results[0].backend, "ref@", 4) == 0);
		cr_expect(
			strcmp(merged.results[0].backend,
			       merged.results[1].backend) != 0,
			"a second night of the same machine is its own column");
		cr_expect_str_eq(merged.results[1].repro, run.results[0].repro);
		cr_expect_eq(mtp_report_html(&merged, html, err, sizeof(err)),
			     MTP_OK);
	}
	const char *bad[1] = {path}; /* an HDF5 file is not a results file */

	mtp_run_fini(&merged);
	cr_expect_neq(mtp_run_merge(&merged, bad, 1, err, sizeof(err)), MTP_OK);
	cr_expect(strstr(err, path) != NULL, "%s", err);
	mtp_run_fini(&merged);
	mtp_run_fini(&run);
	mtp_case_fini(&c);
	remove(path);
	remove(j1);
	remove(j2);
	remove(html);
}

static bool have_builtin(const char *name)
{
	for (int i = 0; i < mtp_backend_builtin_count(); i++)
		if (!strcmp(mtp_backend_builtin(i)->name, name))
			return true;
	return false;
}

/* The device lines come from the workers' hellos (run.devices is filled in
 * the runner, before any writer could open a backend itself), and reach the
 * JSON, the JUnit properties and the HTML header. */
Test(runner, a_run_records_the_device_of_every_backend)
{
	char path[128], j[128], x[128], h[128], err[MTP_ERR_MAX];
	struct mtp_case c;
	struct mtp_run_opts o;
	struct mtp_run run = {0};
	bool cpu = have_builtin("cpu");

	tu_tmpname(path, sizeof(path), "dev");
	tu_tmpname(j, sizeof(j), "devj");
	tu_tmpname(x, sizeof(x), "devx");
	tu_tmpname(h, sizeof(h), "devh");
	tu_rmsnorm_case(&c, "rms.dev", 1, 8, 2.0, 1.0);
	write_cases(path, &c, 1);
	mtp_run_opts_init(&o);
	o.backends[o.n_backends++] = "ref";
	if (cpu)
		o.backends[o.n_backends++] = "cpu";
	o.backends[o.n_backends++] = "faulty"; /* a module: no device_info */
	o.backend_lib = MTP_FAULTY_PLUGIN;
	o.inputs[o.n_inputs++] = path;
	o.timeout = 5;
	o.out = fopen("/dev/null", "w");
	mtp_run_execute(&run, &o);
	fclose(o.out);
	cr_assert_eq(run.n_devices, o.n_backends);
	cr_expect_str_eq(run.devices[0].name, "ref");
	cr_expect(strncmp(run.devices[0].device, "scalar C reference", 18) == 0,
		  "%s", run.devices[0].device);
	if (cpu)
		cr_expect(strncmp(run.devices[1].device, "host CPU", 8) == 0,
			  "%s", run.devices[1].device);
	cr_expect_str_eq(run.devices[o.n_backends - 1].device,
			 "a broken backend for the tests",
			 "the module's line (its description) came from its "
			 "worker");
	cr_assert_eq(mtp_report_json(&run, j, err, sizeof(err)), MTP_OK);
	cr_assert_eq(mtp_report_junit(&run, x, err, sizeof(err)), MTP_OK);
	cr_assert_eq(mtp_report_html(&run, h, err, sizeof(err)), MTP_OK);
	char *js = tu_slurp(j), *xs = tu_slurp(x), *hs = tu_slurp(h);

	cr_expect(strstr(js, "{\"name\":\"ref\",\"device\":\"scalar C "
			     "reference") != NULL,
		  "%s", js);
	if (cpu)
		cr_expect(
			strstr(js, "{\"name\":\"cpu\",\"device\":\"host CPU") !=
				NULL,
			"%s", js);
	cr_expect(strstr(js, "module backend (no worker") == NULL,
		  "the module's device is its worker's");
	cr_expect(strstr(xs, "<property name=\"device.ref\" value=\"scalar "
			     "C reference") != NULL,
		  "%s", xs);
	cr_expect(!cpu || strstr(xs, "name=\"device.cpu\" value=\"host "
				     "CPU") != NULL);
	cr_expect(strstr(hs, "device of ref</dt><dd class=\"device\">scalar "
			     "C reference") != NULL);
	free(js);
	free(xs);
	free(hs);
	mtp_run_fini(&run);

	/* a backend that never opens says why, in place of a device */
	mtp_run_opts_init(&o);
	o.backends[0] = "ref";
	o.backends[1] = "faulty";
	o.n_backends = 2;
	o.backend_lib = "/nonexistent/plugin.so";
	o.inputs[o.n_inputs++] = path;
	o.out = fopen("/dev/null", "w");
	memset(&run, 0, sizeof(run));
	mtp_run_execute(&run, &o);
	fclose(o.out);
	if (run.n_devices == 2)
		cr_expect(strncmp(run.devices[1].device, "not opened: ", 12) ==
				  0,
			  "%s", run.devices[1].device);
	mtp_run_fini(&run);
	mtp_case_fini(&c);
	remove(path);
	remove(j);
	remove(x);
	remove(h);
}

static void write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	cr_assert(f != NULL);
	fputs(text, f);
	fclose(f);
}

/* A bench file of one night: rmsnorm on cpu@box, median m seconds, with
 * samples around it (or none). */
static void bench_file(const char *path, const char *run_id, const char *date,
		       double m, bool with_samples)
{
	char text[4096];
	int at;

	at = snprintf(
		text, sizeof(text),
		"{\"format\":\"mtpcheck-bench\",\"format_version\":2,"
		"\"schema_version\":\"2.0\",\"meta\":{\"run_id\":\"%s\","
		"\"host\":\"box\",\"date\":\"%s\",\"backends\":[{\"name\":"
		"\"cpu\",\"device\":\"host CPU, driver <%s>\"}]},"
		"\"rows\":[{\"op\":\"rmsnorm\",\"shape\":\"T=1 H=256\","
		"\"backend\":\"cpu\",\"median_s\":%g,\"iqr_pct\":2,"
		"\"gb_per_s\":%g,\"fraction_of_peak\":%g,\"check\":\"ok\"",
		run_id, date, run_id, m, 1e-3 / m, 1e-6 / m);
	if (with_samples) {
		at += snprintf(text + at, sizeof(text) - (size_t)at,
			       ",\"samples_s\":[");
		for (int i = 0; i < 20; i++)
			at += snprintf(text + at, sizeof(text) - (size_t)at,
				       "%s%g", i ? "," : "",
				       m * (1 + 0.001 * (i % 5)));
		at += snprintf(text + at, sizeof(text) - (size_t)at, "]");
	}
	snprintf(text + at, sizeof(text) - (size_t)at, "}]}\n");
	write_text(path, text);
}

Test(runner, report_shows_the_bench_history_of_bench_files)
{
	char b1[128], b2[128], b3[128], res[128], html[128], bad[128];
	char err[MTP_ERR_MAX], path[128];
	struct mtp_case c;
	struct mtp_run_opts o;
	struct mtp_run run = {0}, merged = {0};

	tu_tmpname(b1, sizeof(b1), "b1");
	tu_tmpname(b2, sizeof(b2), "b2");
	tu_tmpname(b3, sizeof(b3), "b3");
	tu_tmpname(res, sizeof(res), "bres");
	tu_tmpname(html, sizeof(html), "bhtml");
	tu_tmpname(bad, sizeof(bad), "bbad");
	tu_tmpname(path, sizeof(path), "bcase");
	bench_file(b1, "n1", "2026-12-01T02:00:00Z", 10e-6, true);
	bench_file(b2, "n2", "2026-12-02T02:00:00Z", 20e-6, true);
	bench_file(b3, "n2", "2026-12-02T02:05:00Z", 20e-6, true); /* shard */
	tu_rmsnorm_case(&c, "rms.b", 1, 8, 2.0, 1.0);
	write_cases(path, &c, 1);
	mtp_run_opts_init(&o);
	o.backends[o.n_backends++] = "ref";
	o.inputs[o.n_inputs++] = path;
	o.out = fopen("/dev/null", "w");
	mtp_run_execute(&run, &o);
	fclose(o.out);
	cr_assert_eq(mtp_report_json(&run, res, err, sizeof(err)), MTP_OK);

	const char *files[4] = {res, b1, b2, b3};
	enum mtp_status st = mtp_run_merge(&merged, files, 4, err, sizeof(err));

	if (st == MTP_ERR_UNSUPPORTED) { /* a build without libcjson */
		cr_expect(strstr(err, "libcjson") != NULL);
		goto out;
	}
	cr_assert_eq(st, MTP_OK, "%s", err);
	cr_expect_eq(merged.n, 1, "the results part as before");
	cr_assert(merged.bench != NULL);
	cr_expect_eq(merged.bench->n_nights, 2, "one run id is one night");
	cr_expect_eq(merged.bench->n_points, 2,
		     "a row given twice is kept once");
	cr_expect_str_eq(merged.bench->points[0].row.backend, "cpu@box");
	cr_expect_str_eq(merged.bench->nights[1].label, "2026-12-02 02:00");
	cr_expect_eq(mtp_run_exit_code(&merged), MTP_EXIT_OK);
	cr_assert_eq(mtp_report_html(&merged, html, err, sizeof(err)), MTP_OK,
		     "%s", err);
	char *h = tu_slurp(html);

	cr_expect(strstr(h, "id=\"benchhist\"") != NULL);
	cr_expect(strstr(h, "id=\"matrix\"") != NULL, "the results too");
	cr_expect(strstr(h, "10.00 µs") != NULL && strstr(h, "20.00 µs"),
		  "both nights' medians");
	cr_expect(strstr(h, ">SLOWER</span> median +100.0 %") != NULL,
		  "the newest night against the one before");
	cr_expect(strstr(h, "10 % of copy") != NULL, "fraction of the copy "
						     "bandwidth");
	cr_expect(
		strstr(h, "driver &lt;n2&gt; <small>(from 2026-12-02 02:00)") !=
				NULL &&
			strstr(h, "<script src") == NULL,
		"devices escaped, nothing fetched");
	cr_expect(strstr(h, "<svg class=\"spark\"") != NULL);
	free(h);
	mtp_run_fini(&merged);

	/* bench files alone: exit 0, no failures section */
	const char *only[2] = {b1, b2};

	cr_assert_eq(mtp_run_merge(&merged, only, 2, err, sizeof(err)), MTP_OK);
	cr_expect_eq(mtp_run_exit_code(&merged), MTP_EXIT_OK);
	mtp_run_fini(&merged);

	/* a row without its median, a newer schema: one line naming them */
	write_text(bad,
		   "{\"format\":\"mtpcheck-bench\",\"schema_version\":"
		   "\"2.1\",\"rows\":[{\"op\":\"rmsnorm\",\"shape\":\"T=1\","
		   "\"backend\":\"cpu\",\"median_s\":\"fast\"}]}");
	const char *bf[1] = {bad};

	cr_expect_eq(mtp_run_merge(&merged, bf, 1, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, bad) && strstr(err, "rows[0].median_s: not a "
						  "number"),
		  "%s", err);
	mtp_run_fini(&merged);
	write_text(bad, "{\"format\":\"mtpcheck-bench\",\"schema_version\":"
			"\"3.0\",\"rows\":[]}");
	cr_expect_eq(mtp_run_merge(&merged, bf, 1, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "newer") != NULL && !strchr(err, '\n'), "%s",
		  err);
	mtp_run_fini(&merged);
	write_text(bad, "{\"format\":\"mtpcheck-bench\",\"rows\":{}}");
	cr_expect_eq(mtp_run_merge(&merged, bf, 1, err, sizeof(err)),
		     MTP_ERR_INVALID);
	cr_expect(strstr(err, "rows: not an array") != NULL, "%s", err);
out:
	mtp_run_fini(&merged);
	mtp_run_fini(&run);
	mtp_case_fini(&c);
	remove(b1);
	remove(b2);
	remove(b3);
	remove(res);
	remove(html);
	remove(bad);
	remove(path);
}
