/*
 * The console: one line per result (verdict, worst error against its
 * threshold, diagnosis, repro) as the run goes, and the summary at the end.
 */
#include <stdio.h>

#include "runner_int.h"

/* -v: every output compared, with its error, threshold and origin. */
static void print_outputs(FILE *o, const struct mtp_result *r)
{
	for (int i = 0; i < r->n_cmp; i++) {
		const struct mtp_cmp *m = &r->cmp[i];

		if (!m->shape_ok)
			fprintf(o, "        %-24s FAILED %s\n", m->name,
				m->shape_msg);
		else
			fprintf(o,
				"        %-24s %s %.3g of threshold, %lld of "
				"%lld elements off; rtol %.3g atol %.3g (%s)\n",
				m->name, m->passed ? "ok    " : "FAILED",
				m->headroom, (long long)m->n_bad,
				(long long)m->n, m->tol.rtol, m->tol.atol,
				m->tol.origin);
	}
}

void mtp_print_result(const struct mtp_run *run, const struct mtp_result *r,
		      int idx, int total)
{
	FILE *o = run->opts.out;
	const char *where = "";
	double worst = mtp_result_worst_headroom(r);
	char buf[200] = "";

	if (r->verdict == MTP_PASSED && r->n_cmp)
		snprintf(buf, sizeof(buf),
			 "worst %.2f of threshold, %d outputs", worst,
			 r->n_cmp);
	else if (r->verdict == MTP_PASSED)
		snprintf(buf, sizeof(buf),
			 "empty outputs (T = 0): nothing to compare");
	where = r->verdict == MTP_PASSED ? buf : r->message;
	fprintf(o, "[%*d/%d] %-13s %-10s %s:%s  %s (%.1f ms)\n",
		total >= 1000 ? 4 : 3, idx, total, mtp_verdict_name(r->verdict),
		r->backend, r->file, r->case_id, where, r->seconds * 1e3);
	if (r->note[0])
		fprintf(o, "        note: %s\n", r->note);
	if (r->diag.diag)
		fprintf(o, "        %s: %s\n",
			r->diag.info ? "note" : "diagnosis", r->diag.text);
	if (run->opts.verbose)
		print_outputs(o, r);
	if (r->partial)
		fprintf(o, "        note: partial: %s\n", r->judged);
	if (r->conventions[0] && r->verdict == MTP_PASSED)
		fprintf(o, "        note: conventions: %s\n", r->conventions);
	if (r->verdict != MTP_PASSED && r->verdict != MTP_SKIPPED &&
	    r->verdict != MTP_UNIMPLEMENTED)
		fprintf(o, "        repro: %s\n", r->repro);
	fflush(o);
}

void mtp_print_summary(const struct mtp_run *run)
{
	FILE *o = run->opts.out;
	bool first = true;

	fprintf(o, "\nmtpcheck %s: %d result%s%s", run->command, run->n,
		run->n == 1 ? "" : "s", run->n ? ":" : "");
	for (int v = 0; v < MTP_VERDICT_COUNT; v++) {
		if (!run->counts[v])
			continue;
		fprintf(o, "%s %d %s", first ? "" : ",", run->counts[v],
			mtp_verdict_name(v));
		first = false;
	}
	if (run->n_invalid_inputs)
		fprintf(o, "; %d input file(s) invalid", run->n_invalid_inputs);
	if (run->n_unavailable)
		fprintf(o, "; %d backend(s) unavailable", run->n_unavailable);
	fprintf(o, "\n");
	for (int i = 0; i < run->n; i++) {
		const struct mtp_result *r = &run->results[i];

		if (r->verdict == MTP_FAILED || r->verdict == MTP_CRASHED ||
		    r->verdict == MTP_TIMEOUT || r->verdict == MTP_INVALID ||
		    r->verdict == MTP_MISTRUSTED)
			fprintf(o, "  %-10s %s:%s [%s]%s%s  repro: %s\n",
				mtp_verdict_name(r->verdict), r->file,
				r->case_id, r->backend,
				r->diag.diag ? "  diagnosis " : "",
				r->diag.diag ? mtp_diag_info(r->diag.diag)->name
					     : "",
				r->repro);
	}
}
