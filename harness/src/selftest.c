/*
 * `mtpcheck selftest`: runs the suite on every correct base backend and on
 * every mutant over each base, and prints the detection matrix (mutant x
 * diagnosis named). It passes only if every mutant is caught and every case
 * it breaks is named as its own bug, and no diagnosis fires on a correct
 * backend (DESIGN.md: "Each diagnosis is demonstrated by a mutant").
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/mutant.h"
#include "mtp/runner.h"

struct tally {
	int named[MTP_DIAG_COUNT]; /* failures named as each diagnosis */
	int undiagnosed;	   /* failures named as nothing */
	int passed, other;
};

static void run_quiet(const struct mtp_run_opts *base, const char *backend,
		      struct tally *t)
{
	struct mtp_run_opts o = *base;
	struct mtp_run run = {0};

	o.backends[0] = backend;
	o.n_backends = 1;
	o.out = fopen("/dev/null", "w");
	mtp_run_execute(&run, &o);
	if (o.out)
		fclose(o.out);
	memset(t, 0, sizeof(*t));
	for (int i = 0; i < run.n; i++) {
		const struct mtp_result *r = &run.results[i];

		if (r->diag.diag && !r->diag.info)
			t->named[r->diag.diag]++;
		else if (r->verdict == MTP_FAILED || r->verdict == MTP_CRASHED)
			t->undiagnosed++;
		else if (r->verdict == MTP_PASSED)
			t->passed++;
		else
			t->other++;
	}
	mtp_run_fini(&run);
}

/* Column heads: the initials of each diagnosis (PRE_NORM_RECYCLE: PNR). */
static void initials(const char *name, char *buf)
{
	int k = 0;

	buf[k++] = name[0];
	for (const char *p = name; *p && k < 4; p++)
		if ((*p == '_' || *p == '.') && p[1]) /* .variant too */
			buf[k++] = p[1];
	buf[k] = 0;
}

static void print_header(FILE *o)
{
	char ab[8];

	fprintf(o, "columns:");
	for (int d = 1; d < MTP_DIAG_COUNT; d++) {
		if (!mtp_mutant_exists(d))
			continue;
		initials(mtp_diag_info(d)->name, ab);
		fprintf(o, " %s=%s", ab, mtp_diag_info(d)->name);
	}
	fprintf(o, "\n\n%-42s", "backend \\ cases named as");
	for (int d = 1; d < MTP_DIAG_COUNT; d++) {
		if (!mtp_mutant_exists(d))
			continue;
		initials(mtp_diag_info(d)->name, ab);
		fprintf(o, " %5s", ab);
	}
	fprintf(o, " %6s %6s  verdict\n", "undiag", "passed");
}

/* One matrix row; returns whether it is as it must be. */
/* One matrix row; returns whether it is as it must be. A mutant's row may
 * keep the base's own undiagnosed failures, but adds none. */
static bool print_row(FILE *o, const char *name, const struct tally *t,
		      enum mtp_diag want, const struct tally *base)
{
	int wrong = 0;
	bool ok;

	fprintf(o, "%-42s", name);
	for (int d = 1; d < MTP_DIAG_COUNT; d++) {
		if (mtp_mutant_exists(d))
			fprintf(o, " %5d", t->named[d]);
		if (d != (int)want)
			wrong += t->named[d];
	}
	if (want)
		ok = t->named[want] > 0 && wrong == 0 &&
		     t->undiagnosed <= base->undiagnosed;
	else
		ok = wrong == 0;
	fprintf(o, " %6d %6d  %s\n", t->undiagnosed, t->passed,
		ok     ? "ok"
		: want ? "NOT CAUGHT AND NAMED"
		       : "FALSE DIAGNOSIS");
	return ok;
}

int mtp_selftest(const struct mtp_run_opts *opts)
{
	FILE *o = opts->out;
	bool all_ok = true;
	char name[160];
	struct tally t, base;

	fprintf(o, "mtpcheck selftest: every mutant over each base backend, on "
		   "the suite\n\n");
	print_header(o);
	for (int b = 0; b < opts->n_backends; b++) {
		run_quiet(opts, opts->backends[b], &base);
		all_ok &= print_row(o, opts->backends[b], &base, MTP_DIAG_NONE,
				    &base);
		for (int d = 1; d < MTP_DIAG_COUNT; d++) {
			if (!mtp_mutant_exists(d))
				continue;
			snprintf(name, sizeof(name), "mutant:%s:%s",
				 mtp_diag_info(d)->name, opts->backends[b]);
			run_quiet(opts, name, &t);
			all_ok &=
				print_row(o, name, &t, (enum mtp_diag)d, &base);
		}
	}
	fprintf(o,
		"\nselftest %s: each mutant's row must name only its own bug "
		"and add no\n"
		"undiagnosed failure to its base's; a base row must name "
		"none\n",
		all_ok ? "PASSED" : "FAILED");
	return all_ok ? 0 : 1;
}
