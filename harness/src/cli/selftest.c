/*
 * `mtpcheck selftest`: runs the suite on every correct base backend and on
 * every mutant over each base, and prints the detection matrix (mutant x
 * diagnosis named). It passes only if every mutant is caught and every case
 * it breaks is named as its own bug, and no diagnosis fires on a correct
 * backend (ARCHITECTURE.md "Rules and diagnoses"). The determinism mutants
 * stay within tolerance, so they run under their mode (--invariance,
 * --repeat 2 --bitwise) beside the base under both modes, whose own
 * determinism failures (a base that is not batch invariant) are shown and
 * allowed: the mutant must add failures named as itself.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/backend.h"
#include "mtp/meta.h"
#include "mtp/mutant.h"
#include "mtp/runner.h"
#include "mtp/textio.h"

struct tally {
	int named[MTP_DIAG_COUNT]; /* failures named as each diagnosis */
	int undiagnosed;	   /* failures named as nothing */
	int passed, other;
	int unimplemented; /* of the other: UNIMPLEMENTED on this backend */
	int n;		   /* results */
	double *print;	   /* per result: a fingerprint of its outcome */
	const char *row;   /* "ok", "NOT APPLICABLE", ... */
	char device[MTP_BACKEND_DEVICE_MAX]; /* its worker's, or "" */
};

/* One number per result that changes when the verdict or any error does:
 * a mutant whose every fingerprint equals its base's changed nothing. */
static double fingerprint(const struct mtp_result *r)
{
	double f = (double)r->verdict * 1e6 + r->diag.diag * 1e3;

	for (int i = 0; i < r->n_cmp; i++)
		f += r->cmp[i].headroom * (i + 1) + r->cmp[i].rel_norm +
		     (double)r->cmp[i].n_bad;
	return f;
}

static bool same_outcome(const struct tally *a, const struct tally *b)
{
	if (a->n != b->n || !a->print || !b->print)
		return false;
	for (int i = 0; i < a->n; i++)
		if (a->print[i] != b->print[i] &&
		    !(a->print[i] != a->print[i] && b->print[i] != b->print[i]))
			return false;
	return true;
}

static void run_quiet(const struct mtp_run_opts *base, const char *backend,
		      const struct mtp_determinism *det, struct tally *t)
{
	struct mtp_run_opts o = *base;
	struct mtp_run run = {0};

	if (det)
		o.det = *det;
	o.backends[0] = backend;
	o.n_backends = 1;
	o.out = fopen("/dev/null", "w");
	mtp_run_execute(&run, &o);
	if (o.out)
		fclose(o.out);
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < run.n_devices; i++)
		if (!strcmp(run.devices[i].name, backend))
			snprintf(t->device, sizeof(t->device), "%s",
				 run.devices[i].device);
	t->n = run.n;
	t->print = calloc((size_t)run.n + 1, sizeof(*t->print));
	for (int i = 0; i < run.n; i++) {
		const struct mtp_result *r = &run.results[i];

		if (t->print)
			t->print[i] = fingerprint(r);
		if (r->diag.diag && !r->diag.info)
			t->named[r->diag.diag]++;
		else if (r->verdict == MTP_FAILED || r->verdict == MTP_CRASHED)
			t->undiagnosed++;
		else if (r->verdict == MTP_PASSED)
			t->passed++;
		else
			t->other++;
		t->unimplemented += r->verdict == MTP_UNIMPLEMENTED;
	}
	mtp_run_fini(&run);
}

/* The mode a mutant is caught under into m (may be NULL): false for the
 * mutants that fail a plain run. */
static bool mode_of(int d, struct mtp_determinism *m)
{
	struct mtp_determinism k = {.repeat = 1};

	if (d == MTP_DIAG_BATCH_VARIANT)
		k.invariance = true;
	else if (d == MTP_DIAG_NONDETERMINISTIC)
		k.bitwise = true, k.repeat = 2;
	else
		return false;
	if (m)
		*m = k;
	return true;
}

/* The initials of a name (PRE_NORM_RECYCLE: PNR). */
static void initials_of(const char *name, char *buf)
{
	int k = 0;

	buf[k++] = name[0];
	for (const char *p = name; *p && k < 4; p++)
		if ((*p == '_' || *p == '.') && p[1]) /* .variant too */
			buf[k++] = p[1];
	buf[k] = 0;
}

/* Column head of diagnosis d: its initials, with the name's second letter
 * appended where an earlier diagnosis has the same (POST_NORM_RECYCLE:
 * PNRo beside PRE_NORM_RECYCLE's PNR). */
static void initials(int d, char *buf)
{
	const char *name = mtp_diag_info(d)->name;
	char other[8];

	initials_of(name, buf);
	for (int e = 1; e < d; e++) {
		initials_of(mtp_diag_info(e)->name, other);
		if (mtp_mutant_exists(e) && strcmp(other, buf) == 0) {
			size_t k = strlen(buf);

			buf[k] = (char)(name[1] | 0x20); /* lower case */
			buf[k + 1] = 0;
			return;
		}
	}
}

static void print_header(FILE *o)
{
	char ab[8];

	fprintf(o, "columns:");
	for (int d = 1; d < MTP_DIAG_COUNT; d++) {
		if (!mtp_mutant_exists(d))
			continue;
		initials(d, ab);
		fprintf(o, " %s=%s", ab, mtp_diag_info(d)->name);
	}
	fprintf(o, "\n\n%-42s", "backend \\ cases named as");
	for (int d = 1; d < MTP_DIAG_COUNT; d++) {
		if (!mtp_mutant_exists(d))
			continue;
		initials(d, ab);
		fprintf(o, " %5s", ab);
	}
	fprintf(o, " %6s %6s  verdict\n", "undiag", "passed");
}

/* One matrix row; returns whether it is as it must be. A mutant's row may
 * keep the base's own undiagnosed failures, but adds none. A mutant that
 * changes no result of the selection (filtered out) is NOT APPLICABLE, which
 * is a failure only on the whole, unfiltered suite, and only when the base
 * implements every case: over a backend with UNIMPLEMENTED cases (cuda has
 * no FP8 projection), the cases a mutant acts on may all be among them. The
 * reference implements everything, so a mutant that breaks nothing at all
 * still fails its row over ref. */
static bool print_row(FILE *o, const char *name, struct tally *t,
		      enum mtp_diag want, const struct tally *base, bool whole,
		      bool det_allowed)
{
	int wrong = 0;
	bool ok;

	if (want && same_outcome(t, base)) {
		fprintf(o, "%-42s", name);
		for (int d = 1; d < MTP_DIAG_COUNT; d++)
			if (mtp_mutant_exists(d))
				fprintf(o, " %5s", "-");
		t->row = "NOT APPLICABLE";
		fprintf(o, " %6d %6d  %s", t->undiagnosed, t->passed, t->row);
		if (whole && base->unimplemented)
			fprintf(o,
				" (breaks nothing this backend implements; "
				"%d cases UNIMPLEMENTED on it)\n",
				base->unimplemented);
		else
			fprintf(o, "%s\n",
				whole ? " (on the whole suite: a mutant that "
					"breaks nothing)"
				      : "");
		return !whole || base->unimplemented > 0;
	}
	fprintf(o, "%-42s", name);
	for (int d = 1; d < MTP_DIAG_COUNT; d++) {
		if (mtp_mutant_exists(d))
			fprintf(o, " %5d", t->named[d]);
		if (d != (int)want && !(det_allowed && mode_of(d, NULL)))
			wrong += t->named[d];
	}
	if (want)
		ok = t->named[want] > base->named[want] && wrong == 0 &&
		     t->undiagnosed <= base->undiagnosed;
	else
		ok = wrong == 0;
	t->row = ok ? "ok" : want ? "NOT CAUGHT AND NAMED" : "FALSE DIAGNOSIS";
	fprintf(o, " %6d %6d  %s\n", t->undiagnosed, t->passed, t->row);
	return ok;
}

struct row_json {
	char name[160];
	struct tally t;
};

/* The JSON document: the detection matrix under the run metadata, whose
 * backends are the rows' (each base and each mutant over it), with the
 * device line each one's worker sent. */
struct selftest_doc {
	const struct row_json *rows;
	int n;
	const struct mtp_run_opts *opts;
	int exit_code;
};

static void json_meta(FILE *f, const struct selftest_doc *d)
{
	const char **names = calloc((size_t)d->n + 1, sizeof(*names));
	const char **devices = calloc((size_t)d->n + 1, sizeof(*devices));
	int n = names && devices ? d->n : 0;

	for (int i = 0; i < n; i++) {
		names[i] = d->rows[i].name;
		devices[i] =
			d->rows[i].t.device[0] ? d->rows[i].t.device : NULL;
	}
	mtp_meta_json(f, d->opts->run_id, d->opts->seed, names, n, devices);
	free(names);
	free(devices);
}

static void json_body(FILE *f, const void *arg)
{
	const struct selftest_doc *d = arg;

	fputs("{\"format\":\"mtpcheck-selftest\",", f);
	json_meta(f, d);
	fprintf(f, ",\"exit_code\":%d,\"rows\":[", d->exit_code);
	for (int i = 0; i < d->n; i++) {
		const struct tally *t = &d->rows[i].t;

		fprintf(f, "%s\n{\"backend\":", i ? "," : "");
		mtp_json_str(f, d->rows[i].name);
		fputs(",\"named\":{", f);
		for (int g = 1, k = 0; g < MTP_DIAG_COUNT; g++)
			if (mtp_mutant_exists(g))
				fprintf(f, "%s\"%s\":%d", k++ ? "," : "",
					mtp_diag_info(g)->name, t->named[g]);
		fprintf(f,
			"},\"undiagnosed\":%d,\"passed\":%d,\"results\":%d,"
			"\"verdict\":",
			t->undiagnosed, t->passed, t->n);
		mtp_json_str(f, t->row ? t->row : "");
		fputs("}", f);
	}
	fputs("\n]}\n", f);
}

static int rows_max(const struct mtp_run_opts *opts)
{
	int n = 2; /* the base, plainly and under the determinism modes */

	for (int d = 1; d < MTP_DIAG_COUNT; d++)
		n += mtp_mutant_exists(d);
	return n * opts->n_backends + 1;
}

/* The base `bname` and every mutant over it, as rows from rows[*nr];
 * returns whether each row is as it must be. */
static bool selftest_base(const struct mtp_run_opts *opts, const char *bname,
			  struct row_json *rows, int *nr, int *applied,
			  bool whole)
{
	FILE *o = opts->out;
	struct mtp_determinism both = {2, true, true, 0, false}, m;
	struct row_json *base = &rows[(*nr)++], *bdet = NULL;
	char be[120];
	bool ok;

	snprintf(base->name, sizeof(base->name), "%s", bname);
	run_quiet(opts, bname, NULL, &base->t);
	ok = print_row(o, bname, &base->t, MTP_DIAG_NONE, &base->t, whole,
		       false);
	for (int d = 1; d < MTP_DIAG_COUNT; d++) {
		bool det = mode_of(d, &m);
		struct row_json *rw;

		if (!mtp_mutant_exists(d))
			continue;
		if (det && !bdet) {
			bdet = &rows[(*nr)++];
			snprintf(bdet->name, sizeof(bdet->name),
				 "%.60s --invariance --repeat 2 --bitwise",
				 bname);
			run_quiet(opts, bname, &both, &bdet->t);
			ok &= print_row(o, bdet->name, &bdet->t, MTP_DIAG_NONE,
					&bdet->t, whole, true);
		}
		rw = &rows[(*nr)++];
		snprintf(be, sizeof(be), "mutant:%s:%.60s",
			 mtp_diag_info(d)->name, bname);
		snprintf(rw->name, sizeof(rw->name), "%s%s", be,
			 !det		? ""
			 : m.invariance ? " --invariance"
					: " --bitwise");
		run_quiet(opts, be, det ? &m : NULL, &rw->t);
		ok &= print_row(o, rw->name, &rw->t, (enum mtp_diag)d,
				det ? &bdet->t : &base->t, whole, false);
		*applied += strcmp(rw->t.row, "NOT APPLICABLE") != 0;
	}
	return ok;
}

int mtp_selftest(const struct mtp_run_opts *opts)
{
	FILE *o = opts->out;
	bool all_ok = true, whole = !opts->n_filters && !opts->tags;
	struct row_json *rows = calloc((size_t)rows_max(opts), sizeof(*rows));
	int nr = 0, applied = 0, rc;
	struct selftest_doc doc;
	char err[MTP_ERR_MAX];

	if (!rows)
		return MTP_EXIT_USAGE;
	fprintf(o, "mtpcheck selftest: every mutant over each base backend, on "
		   "the suite\n\n");
	print_header(o);
	for (int b = 0; b < opts->n_backends; b++)
		all_ok &= selftest_base(opts, opts->backends[b], rows, &nr,
					&applied, whole);
	rc = !all_ok   ? MTP_EXIT_FAIL
	     : applied ? MTP_EXIT_OK
		       : MTP_EXIT_UNTESTED;
	fprintf(o,
		"\nselftest %s: each mutant's row must name only its own bug "
		"and add no\n"
		"undiagnosed failure to its base's; a base row must name "
		"none, but under\n"
		"the determinism modes it may name its own BATCH_VARIANT or "
		"NONDETERMINISTIC\n"
		"(the mutants there must add to them)\n",
		rc == MTP_EXIT_OK     ? "PASSED"
		: rc == MTP_EXIT_FAIL ? "FAILED"
				      : "NOT APPLICABLE (no mutant changes a "
					"selected case)");
	doc = (struct selftest_doc){rows, nr, opts, rc};
	if (opts->json_path && mtp_write_atomic(opts->json_path, json_body,
						&doc, err, sizeof(err))) {
		fprintf(stderr, "mtpcheck selftest: %s\n", err);
		rc = MTP_EXIT_USAGE;
	}
	for (int i = 0; i < nr; i++)
		free(rows[i].t.print);
	free(rows);
	return rc;
}
