/*
 * The console. By default one line per result that did not pass (a SKIPPED
 * line said once per backend and reason, the repeats counted), on a terminal
 * a progress line rewritten in place, in a log a "progress:" line at most
 * every 30 s ($MTP_PROGRESS_S), and at the end a summary grouped by
 * verdict, diagnosis and backend. -v: every case and its outputs; -q: the
 * summary only.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runner_int.h"

#define MAX_GROUPS 64

/* Non-pass results with the same verdict, diagnosis (SKIPPED: reason) and
 * backend: counted, with the first one's case and repro. */
struct group {
	enum mtp_verdict v;
	char what[160], backend[128], example[200], repro[1200];
	int n;
};

static struct {
	const struct mtp_run *run;
	struct group g[MAX_GROUPS];
	int n, dropped;
	bool progress;	 /* a progress line is on screen */
	double t0, beat; /* the run's start; the last heartbeat (not a tty) */
	double every;	 /* heartbeat_s() */
} con;

/* A log (not a terminal) gets a heartbeat line at most this often, so that
 * a long run in CI shows it is alive and where it is; $MTP_PROGRESS_S sets
 * another interval (0: after every result but the last). */
#define HEARTBEAT_S 30.0

static double heartbeat_s(void)
{
	const char *e = getenv("MTP_PROGRESS_S");
	char *end;
	double v;

	if (!e || !*e)
		return HEARTBEAT_S;
	v = strtod(e, &end);
	return *end || !(v >= 0) ? HEARTBEAT_S : v; /* not a number >= 0 */
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static bool is_pass(enum mtp_verdict v)
{
	return v == MTP_PASSED;
}

/* Counts r in its group; true if its group is new (print its line). */
static bool group_add(const struct mtp_result *r)
{
	char what[160];

	snprintf(what, sizeof(what), "%.159s",
		 r->diag.diag && !r->diag.info
			 ? mtp_diag_info(r->diag.diag)->name
		 : r->verdict == MTP_SKIPPED ? r->message
					     : "");
	for (int i = 0; i < con.n; i++) {
		struct group *g = &con.g[i];

		if (g->v == r->verdict && !strcmp(g->what, what) &&
		    !strcmp(g->backend, r->backend)) {
			g->n++;
			return false;
		}
	}
	if (con.n == MAX_GROUPS) {
		con.dropped++;
		return true;
	}
	con.g[con.n] = (struct group){.v = r->verdict, .n = 1};
	snprintf(con.g[con.n].what, sizeof(con.g[0].what), "%s", what);
	snprintf(con.g[con.n].backend, sizeof(con.g[0].backend), "%s",
		 r->backend);
	snprintf(con.g[con.n].example, sizeof(con.g[0].example), "%.120s:%.78s",
		 r->file, r->case_id);
	snprintf(con.g[con.n].repro, sizeof(con.g[0].repro), "%s", r->repro);
	con.n++;
	return true;
}

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

/* "[12/40] 11 PASSED, 1 FAILED" */
static void print_counts(FILE *o, const struct mtp_run *run, int idx, int total)
{
	fprintf(o, "[%d/%d]", idx, total);
	for (int v = 0, first = 1; v < MTP_VERDICT_COUNT; v++) {
		if (!run->counts[v])
			continue;
		fprintf(o, "%s %d %s", first ? "" : ",", run->counts[v],
			mtp_verdict_name(v));
		first = 0;
	}
}

/* On a terminal: "[12/40] 11 PASSED, 1 FAILED  cpu file:case", in place. */
static void print_progress(FILE *o, const struct mtp_run *run,
			   const struct mtp_result *r, int idx, int total)
{
	fputs("\r\033[K", o);
	print_counts(o, run, idx, total);
	fprintf(o, "  %.20s %.60s", r->backend, r->case_id);
	fflush(o);
	con.progress = true;
}

/* In a log: "progress: [120/261] 118 PASSED, 2 FAILED after 61 s" at most
 * every HEARTBEAT_S, never for the last result (the summary follows). */
static void print_heartbeat(FILE *o, const struct mtp_run *run, int idx,
			    int total)
{
	double t = now_s();

	if (idx >= total || t - con.beat < con.every)
		return;
	con.beat = t;
	fputs("progress: ", o);
	print_counts(o, run, idx, total);
	fprintf(o, " after %.0f s\n", t - con.t0);
}

static void print_line(FILE *o, const struct mtp_run *run,
		       const struct mtp_result *r, int idx, int total)
{
	double worst = mtp_result_worst_headroom(r);
	char buf[200] = "";

	if (r->verdict == MTP_PASSED && r->n_cmp)
		snprintf(buf, sizeof(buf),
			 "worst %.2f of threshold, %d outputs", worst,
			 r->n_cmp);
	else if (r->verdict == MTP_PASSED) /* a rule alone (--weights-only) */
		snprintf(buf, sizeof(buf), "%.199s", r->message);
	fprintf(o, "[%*d/%d] %-13s %-10s %s:%s  %s (%.1f ms)\n",
		total >= 1000 ? 4 : 3, idx, total, mtp_verdict_name(r->verdict),
		r->backend, r->file, r->case_id,
		r->verdict == MTP_PASSED ? buf : r->message, r->seconds * 1e3);
	if (r->note[0])
		fprintf(o, "        note: %s\n", r->note);
	if (r->diag.diag)
		fprintf(o, "        %s: %s\n",
			r->diag.info ? "note" : "diagnosis", r->diag.text);
	if (r->verdict != MTP_PASSED || run->opts.verbose) {
		char agree[400];

		if (mtp_agreement_text(r->cmp, r->n_cmp, agree, sizeof(agree)))
			fprintf(o, "        draft agreement by step: %s\n",
				agree);
	}
	if (run->opts.verbose)
		print_outputs(o, r);
	if (r->partial)
		fprintf(o, "        note: partial: %s\n", r->judged);
	if (r->conventions[0] && r->verdict == MTP_PASSED)
		fprintf(o, "        note: conventions: %s\n", r->conventions);
	if (r->verdict != MTP_PASSED && r->verdict != MTP_SKIPPED &&
	    r->verdict != MTP_UNIMPLEMENTED)
		fprintf(o, "        repro: %s\n", r->repro);
}

void mtp_print_result(const struct mtp_run *run, const struct mtp_result *r,
		      int idx, int total)
{
	FILE *o = run->opts.out;
	bool tty = isatty(fileno(o)) && !run->opts.verbose;
	bool fresh, quiet_kind = r->verdict == MTP_SKIPPED ||
				 r->verdict == MTP_UNIMPLEMENTED;

	if (con.run != run || idx == 1) {
		memset(&con, 0, sizeof(con));
		con.t0 = con.beat = now_s();
		con.every = heartbeat_s();
	}
	con.run = run;
	fresh = !is_pass(r->verdict) && group_add(r);
	if (run->opts.quiet)
		return;
	if (run->opts.verbose ||
	    (!is_pass(r->verdict) && (fresh || !quiet_kind))) {
		if (con.progress)
			fputs("\r\033[K", o);
		con.progress = false;
		print_line(o, run, r, idx, total);
	}
	if (tty)
		print_progress(o, run, r, idx, total);
	else if (!run->opts.verbose)
		print_heartbeat(o, run, idx, total);
	fflush(o);
}

static void print_groups(FILE *o)
{
	if (!con.n)
		return;
	fprintf(o, "by verdict, diagnosis and backend:\n");
	for (int i = 0; i < con.n; i++) {
		const struct group *g = &con.g[i];

		fprintf(o, "  %-13s %5d x  %-28s [%s]  e.g. %s\n",
			mtp_verdict_name(g->v), g->n, *g->what ? g->what : "-",
			g->backend, g->example);
		if (!is_pass(g->v) && g->v != MTP_SKIPPED &&
		    g->v != MTP_UNIMPLEMENTED)
			fprintf(o, "        repro: %s\n", g->repro);
	}
	if (con.dropped)
		fprintf(o, "  (%d more kinds not shown: see the reports)\n",
			con.dropped);
}

void mtp_print_summary(const struct mtp_run *run)
{
	FILE *o = run->opts.out;
	bool first = true;

	if (con.progress)
		fputs("\r\033[K", o);
	con.progress = false;
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
	if (con.run == run)
		print_groups(o);
	memset(&con, 0, sizeof(con));
}
