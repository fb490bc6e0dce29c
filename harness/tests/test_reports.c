/*
 * The reports of a run end to end on hand-made fixtures: mtpcheck report
 * merging results files by machine and night, the device line of every
 * backend in the JSON, JUnit and HTML, and the bench history of bench files.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "mtp/backend.h"
#include "mtp/bench.h"
#include "mtp/runner.h"
#include "test_util.h"

/* One rmsnorm case `id` (expected y all yval) written to path and run on
 * ref into run. */
static void run_on_ref(struct mtp_run *run, struct mtp_case *c,
		       const char *path, const char *id, double yval)
{
	struct mtp_run_opts o;

	tu_rmsnorm_case(c, id, 1, 8, 2.0, yval);
	tu_write_cases(path, c, 1);
	mtp_run_opts_init(&o);
	o.backends[o.n_backends++] = "ref";
	o.inputs[o.n_inputs++] = path;
	o.out = fopen("/dev/null", "w");
	mtp_run_execute(run, &o);
	fclose(o.out);
}

Test(runner, report_merges_results_files_by_machine_and_night)
{
	char path[128], j1[128], j2[128], html[128], err[MTP_ERR_MAX];
	struct mtp_case c;
	struct mtp_run run = {0}, merged = {0};

	tu_tmpname(path, sizeof(path), "m");
	tu_tmpname(j1, sizeof(j1), "j1");
	tu_tmpname(html, sizeof(html), "mh");
	run_on_ref(&run, &c, path, "rms.m", 1.5);
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
	tu_write_cases(path, &c, 1);
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
	char b1[128], b2[128], b3[128], res[128], html[128];
	char err[MTP_ERR_MAX], path[128];
	struct mtp_case c;
	struct mtp_run run = {0}, merged = {0};

	tu_tmpname(b1, sizeof(b1), "b1");
	tu_tmpname(b2, sizeof(b2), "b2");
	tu_tmpname(b3, sizeof(b3), "b3");
	tu_tmpname(res, sizeof(res), "bres");
	tu_tmpname(html, sizeof(html), "bhtml");
	tu_tmpname(path, sizeof(path), "bcase");
	bench_file(b1, "n1", "2026-12-01T02:00:00Z", 10e-6, true);
	bench_file(b2, "n2", "2026-12-02T02:00:00Z", 20e-6, true);
	bench_file(b3, "n2", "2026-12-02T02:05:00Z", 20e-6, true); /* shard */
	run_on_ref(&run, &c, path, "rms.b", 1.0);
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

out:
	mtp_run_fini(&merged);
	mtp_run_fini(&run);
	mtp_case_fini(&c);
	remove(b1);
	remove(b2);
	remove(b3);
	remove(res);
	remove(html);
	remove(path);
}

/* Bench files alone: exit 0, no failures section. */
Test(runner, report_of_bench_files_alone)
{
	char b1[128], b2[128], err[MTP_ERR_MAX];
	struct mtp_run merged = {0};
	const char *only[2] = {b1, b2};
	enum mtp_status st;

	tu_tmpname(b1, sizeof(b1), "ab1");
	tu_tmpname(b2, sizeof(b2), "ab2");
	bench_file(b1, "n1", "2026-12-01T02:00:00Z", 10e-6, false);
	bench_file(b2, "n2", "2026-12-02T02:00:00Z", 20e-6, true);
	st = mtp_run_merge(&merged, only, 2, err, sizeof(err));
	if (st == MTP_ERR_UNSUPPORTED) { /* a build without libcjson */
		cr_expect(strstr(err, "libcjson") != NULL);
	} else {
		cr_expect_eq(st, MTP_OK, "%s", err);
		cr_expect_eq(mtp_run_exit_code(&merged), MTP_EXIT_OK);
	}
	mtp_run_fini(&merged);
	remove(b1);
	remove(b2);
}

/* The bench file `text` is refused with one line naming it and `what`. */
static void expect_bad_bench(const char *text, const char *what)
{
	char bad[128], err[MTP_ERR_MAX];
	struct mtp_run merged = {0};
	const char *bf[1] = {bad};
	enum mtp_status st;

	tu_tmpname(bad, sizeof(bad), "bbad");
	write_text(bad, text);
	st = mtp_run_merge(&merged, bf, 1, err, sizeof(err));
	if (st == MTP_ERR_UNSUPPORTED) { /* a build without libcjson */
		cr_expect(strstr(err, "libcjson") != NULL);
	} else {
		cr_expect_eq(st, MTP_ERR_INVALID, "%s", text);
		cr_expect(strstr(err, bad) && strstr(err, what) &&
				  !strchr(err, '\n'),
			  "%s", err);
	}
	mtp_run_fini(&merged);
	remove(bad);
}

/* A row without its median, a newer schema, rows not an array: one line
 * naming the file and the field. */
Test(runner, report_refuses_a_malformed_bench_file)
{
	expect_bad_bench(
		"{\"format\":\"mtpcheck-bench\",\"schema_version\":"
		"\"2.1\",\"rows\":[{\"op\":\"rmsnorm\",\"shape\":\"T=1\","
		"\"backend\":\"cpu\",\"median_s\":\"fast\"}]}",
		"rows[0].median_s: not a number");
	expect_bad_bench("{\"format\":\"mtpcheck-bench\",\"schema_version\":"
			 "\"3.0\",\"rows\":[]}",
			 "newer");
	expect_bad_bench("{\"format\":\"mtpcheck-bench\",\"rows\":{}}",
			 "rows: not an array");
}

/* A results file given twice, or beside the report merged from it, counts
 * each result once; a PASSED whose outputs compared no element is not a
 * pass (SKIPPED, "nothing compared"). */
Test(runner, report_counts_each_result_once)
{
	char path[128], j1[128], j2[128], j3[128], err[MTP_ERR_MAX];
	struct mtp_case c;
	struct mtp_run run = {0}, m = {0};

	tu_tmpname(path, sizeof(path), "once");
	tu_tmpname(j1, sizeof(j1), "once1");
	tu_tmpname(j2, sizeof(j2), "once2");
	tu_tmpname(j3, sizeof(j3), "once3");
	run_on_ref(&run, &c, path, "rms.once", 1.0);
	run.opts.run_id = "n1";
	cr_assert_eq(mtp_report_json(&run, j1, err, sizeof(err)), MTP_OK);
	cr_assert_eq(run.counts[MTP_PASSED], 1);

	const char *twice[2] = {j1, j1};

	if (mtp_run_merge(&m, twice, 2, err, sizeof(err)) ==
	    MTP_ERR_UNSUPPORTED)
		goto out; /* a build without libcjson */
	cr_expect_eq(m.n, 1, "one result, not %d", m.n);
	cr_expect_eq(m.n_repeats, 1);
	cr_assert_eq(mtp_report_json(&m, j2, err, sizeof(err)), MTP_OK);
	mtp_run_fini(&m);

	const char *beside[2] = {j2, j1}; /* the merged report and its input */

	cr_assert_eq(mtp_run_merge(&m, beside, 2, err, sizeof(err)), MTP_OK,
		     "%s", err);
	cr_expect_eq(m.n, 1);
	cr_expect_eq(m.counts[MTP_PASSED], 1);
	cr_expect(!strchr(m.results[0].backend + 4, '@'), "one @host: %s",
		  m.results[0].backend);
	mtp_run_fini(&m);

	run.results[0].cmp[0].n = 0; /* an output of no element */
	cr_assert_eq(mtp_report_json(&run, j3, err, sizeof(err)), MTP_OK);
	const char *none[1] = {j3};

	cr_assert_eq(mtp_run_merge(&m, none, 1, err, sizeof(err)), MTP_OK, "%s",
		     err);
	cr_expect_eq(m.results[0].verdict, MTP_SKIPPED);
	cr_expect(!strncmp(m.results[0].message, "nothing compared", 16), "%s",
		  m.results[0].message);
	cr_expect_eq(mtp_run_exit_code(&m), MTP_EXIT_UNTESTED);
out:
	mtp_run_fini(&m);
	mtp_run_fini(&run);
	mtp_case_fini(&c);
	remove(path);
	remove(j1);
	remove(j2);
	remove(j3);
}
