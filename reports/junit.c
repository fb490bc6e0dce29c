/*
 * JUnit XML for CI systems (Jenkins, GitLab, GitHub annotations, CTest's
 * consumers): one testsuite per backend, one testcase per result. FAILED is a
 * <failure>, CRASHED/TIMEOUT/INVALID an <error>, SKIPPED/UNIMPLEMENTED/
 * MISTRUSTED <skipped>; the message carries the worst element, the diagnosis
 * and the repro line. Written to a temporary file and renamed.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mtp/meta.h"
#include "mtp/runner.h"
#include "mtp/textsafe.h"
#include "report_file.h"

static void xml(FILE *f, const char *s)
{
	mtp_xml_str(f, s);
}

static const char *kind_of(enum mtp_verdict v)
{
	switch (v) {
	case MTP_FAILED: return "failure";
	case MTP_CRASHED:
	case MTP_TIMEOUT:
	case MTP_INVALID: return "error";
	case MTP_SKIPPED:
	case MTP_UNIMPLEMENTED:
	case MTP_MISTRUSTED: return "skipped";
	default: return NULL;
	}
}

static void write_case(FILE *f, const struct mtp_result *r)
{
	const char *kind = kind_of(r->verdict);

	fputs("    <testcase classname=\"mtpcheck.", f);
	xml(f, r->backend);
	fputs(".", f);
	xml(f, r->op ? r->op->name : "case");
	fputs("\" name=\"", f);
	xml(f, r->file);
	fputs(":", f);
	xml(f, r->case_id);
	fprintf(f, "\" time=\"%.6f\"", r->seconds);
	if (!kind) {
		fputs("/>\n", f);
		return;
	}
	fprintf(f, ">\n      <%s", kind);
	if (strcmp(kind,
		   "skipped")) /* the diagnosis if claimed, else verdict */
		fprintf(f, " type=\"%s\"",
			r->diag.diag && !r->diag.info
				? mtp_diag_info(r->diag.diag)->name
				: mtp_verdict_name(r->verdict));
	fprintf(f, " message=\"%s: ", mtp_verdict_name(r->verdict));
	xml(f, r->message);
	fputs("\">", f);
	xml(f, r->message);
	if (r->diag.diag) {
		fputs("\ndiagnosis: ", f);
		xml(f, r->diag.text);
	}
	fputs("\nrepro: ", f);
	xml(f, r->repro);
	fprintf(f, "</%s>\n    </testcase>\n", kind);
}

static void write_suite(FILE *f, const struct mtp_run *run, const char *backend)
{
	int n = 0, fail = 0, err = 0, skip = 0, nb;
	double t = 0;
	struct mtp_meta m;
	const char **names, **devices;

	mtp_meta_get(&m, run->opts.run_id);

	for (int i = 0; i < run->n; i++) {
		const struct mtp_result *r = &run->results[i];
		const char *k = kind_of(r->verdict);

		if (strcmp(r->backend, backend))
			continue;
		n++;
		t += r->seconds;
		fail += k && !strcmp(k, "failure");
		err += k && !strcmp(k, "error");
		skip += k && !strcmp(k, "skipped");
	}
	fputs("  <testsuite name=\"mtpcheck.", f);
	xml(f, backend);
	fprintf(f,
		"\" tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" "
		"time=\"%.6f\" hostname=\"",
		n, fail, err, skip, t);
	xml(f, m.host);
	fprintf(f, "\" timestamp=\"%.19s\">\n", m.date); /* no Z: xs:dateTime */
	nb = mtp_report_backends(run, &names, &devices);
	mtp_meta_junit(f, run->opts.run_id, run->opts.seed, names,
		       nb > 0 ? nb : 0, devices);
	free(names);
	free(devices);
	for (int i = 0; i < run->n; i++)
		if (!strcmp(run->results[i].backend, backend))
			write_case(f, &run->results[i]);
	fputs("  </testsuite>\n", f);
}

static void body(FILE *f, const struct mtp_run *run)
{
	fprintf(f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites "
		"name=\"mtpcheck %s\">\n",
		run->command);
	for (int i = 0; i < run->n; i++) {
		bool first = true;

		for (int j = 0; j < i && first; j++)
			first = strcmp(run->results[j].backend,
				       run->results[i].backend) != 0;
		if (first)
			write_suite(f, run, run->results[i].backend);
	}
	fputs("</testsuites>\n", f);
}

enum mtp_status mtp_report_junit(const struct mtp_run *run, const char *path,
				 char *err, size_t errn)
{
	return mtp_report_write(run, path, body, err, errn);
}
