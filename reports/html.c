/*
 * The self-contained HTML report of a run: one file, no scripts or fonts
 * fetched, readable offline. A summary, the case x backend matrix with each
 * cell's verdict and worst headroom (error / threshold), the diagnoses, and
 * every failure with its message and repro line. Plots are inline SVG bars.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "html_parts.h"
#include "mtp/bench.h"
#include "mtp/config.h"
#include "mtp/runner.h"
#include "mtp/textsafe.h"
#include "report_file.h"
#include "result_index.h"

static void esc(FILE *f, const char *s)
{
	mtp_xml_str(f, s);
}

static const char *color(enum mtp_verdict v)
{
	switch (v) {
	case MTP_PASSED: return "#2e7d32";
	case MTP_FAILED:
	case MTP_CRASHED:
	case MTP_TIMEOUT: return "#c62828";
	case MTP_INVALID: return "#6a1b9a";
	case MTP_MISTRUSTED: return "#ef6c00";
	default: return "#757575";
	}
}

static double worst_headroom(const struct mtp_result *r)
{
	double w = 0;

	for (int i = 0; i < r->n_cmp; i++)
		if (r->cmp[i].headroom > w)
			w = r->cmp[i].headroom;
	return w;
}

/* An inline SVG bar: headroom 0..1 fills green, beyond 1 the bar turns red. */
static void bar(FILE *f, double h)
{
	double w = isfinite(h) ? fmin(h, 2.0) / 2.0 * 60 : 60;

	fprintf(f,
		"<svg width=\"62\" height=\"10\"><rect x=\"0\" y=\"1\" "
		"width=\"60\" "
		"height=\"8\" fill=\"#eee\"/><rect x=\"0\" y=\"1\" "
		"width=\"%.1f\" height=\"8\" "
		"fill=\"%s\"/><line x1=\"30\" y1=\"0\" x2=\"30\" y2=\"10\" "
		"stroke=\"#000\"/></svg>",
		w, h <= 1 ? "#66bb6a" : "#e53935");
}

static int backend_list(const struct mtp_run *run, const char **names, int max)
{
	int n = 0;

	for (int i = 0; i < run->n; i++) {
		int k;

		for (k = 0; k < n && strcmp(names[k], run->results[i].backend);
		     k++)
			;
		if (k == n && n < max)
			names[n++] = run->results[i].backend;
	}
	return n;
}

static void head(FILE *f, const struct mtp_run *run)
{
	char when[32];
	time_t t = time(NULL);

	strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", gmtime(&t));
	fputs("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<title>mtpcheck report</title><style>"
	      "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#222}"
	      "table{border-collapse:collapse;margin:.5em 0}td,th{border:1px "
	      "solid #ccc;"
	      "padding:2px "
	      "6px;text-align:left;vertical-align:top}th{background:#f3f3f3}"
	      ".n td{white-space:nowrap}"
	      ".v{color:#fff;font-weight:600;padding:1px 5px;border-radius:3px}"
	      "code{font-size:12px;background:#f6f6f6;padding:1px "
	      "3px;word-break:break-all}",
	      f);
	fputs(mtp_html_css(), f);
	fputs("</style><meta name=\"viewport\" "
	      "content=\"width=device-width\"></head><body>\n",
	      f);
	fprintf(f,
		"<h1>mtpcheck %s%s</h1><p id=\"summary\">mtpcheck %s, %s. %d "
		"results%s",
		run->command, strcmp(run->command, "report") ? " report" : "",
		MTP_VERSION, when, run->n, run->n ? ":" : "");
	for (int v = 0; v < MTP_VERDICT_COUNT; v++)
		if (run->counts[v])
			fprintf(f,
				" <span class=\"v\" style=\"background:%s\">%d "
				"%s</span>",
				color(v), run->counts[v], mtp_verdict_name(v));
	if (run->bench && run->bench->n_points)
		fprintf(f,
			" and %d bench rows from %d night%s (<a "
			"href=\"#bench\">bench history</a>)",
			run->bench->n_points, run->bench->n_nights,
			run->bench->n_nights == 1 ? "" : "s");
	fprintf(f, " &mdash; exit code %d.</p>\n", (int)mtp_run_exit_code(run));
	mtp_html_meta(f, run);
	fputs("<input id=\"filt\" hidden placeholder=\"filter the tables\">\n",
	      f);
}

static void cell(FILE *f, const struct mtp_result *r)
{
	if (!r) {
		fputs("<td></td>", f);
		return;
	}
	double h = worst_headroom(r);

	fputs("<td title=\"", f);
	esc(f, r->message);
	fprintf(f, "\"><span class=\"v\" style=\"background:%s\">%s</span> ",
		color(r->verdict), mtp_verdict_name(r->verdict));
	if (r->n_cmp) {
		bar(f, h);
		fprintf(f, " %.2f", h);
	}
	if (r->diag.diag)
		fprintf(f, " <b>%s</b>", mtp_diag_info(r->diag.diag)->name);
	fputs("</td>", f);
}

static void matrix(FILE *f, const struct mtp_run *run, const char **be, int nb,
		   const struct mtp_result_index *ix)
{
	fputs("<h2>Cases &times; backends</h2><p>Each cell: the verdict and "
	      "the worst "
	      "error of the case as a fraction of its threshold (the bar's "
	      "middle line "
	      "is 1: past it the output fails). Hover for the "
	      "message.</p><table class=\"n st\" id=\"matrix\"><tr>"
	      "<th>case</th><th>op</th>",
	      f);
	for (int b = 0; b < nb; b++) {
		fputs("<th>", f);
		esc(f, be[b]);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (int i = 0; i < run->n; i++) {
		const struct mtp_result *r = &run->results[i];

		if (!mtp_result_index_first(ix, i))
			continue; /* one row per case, at its first result */
		fputs("<tr><td><code>", f);
		esc(f, r->file);
		fputs(":", f);
		esc(f, r->case_id);
		fputs("</code></td><td>", f);
		esc(f, r->op ? r->op->name : "");
		fputs("</td>", f);
		for (int b = 0; b < nb; b++)
			cell(f, mtp_result_index_find(ix, r->file, r->case_id,
						      be[b]));
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

/* Per op and backend: results passed out of run, and the worst headroom. */
static void by_op(FILE *f, const struct mtp_run *run, const char **be, int nb)
{
	fputs("<h2>By op</h2><table class=\"n st\" id=\"byop\"><tr><th>op</th>",
	      f);
	for (int b = 0; b < nb; b++) {
		fputs("<th>", f);
		esc(f, be[b]);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (int o = 0; o < MTP_OP_COUNT; o++) {
		const struct mtp_op *op = mtp_op_get((enum mtp_op_id)o);
		bool any = false;

		for (int i = 0; i < run->n && !any; i++)
			any = run->results[i].op == op;
		if (!any)
			continue;
		fprintf(f, "<tr><td>%s</td>", op->name);
		for (int b = 0; b < nb; b++) {
			int n = 0, pass = 0;
			double w = 0;

			for (int i = 0; i < run->n; i++) {
				const struct mtp_result *r = &run->results[i];

				if (r->op != op || strcmp(r->backend, be[b]))
					continue;
				n++;
				pass += r->verdict == MTP_PASSED;
				w = fmax(w, worst_headroom(r));
			}
			fprintf(f, "<td>%d/%d passed ", pass, n);
			if (n)
				bar(f, w);
			fprintf(f, " %.2f</td>", w);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void body(FILE *f, const struct mtp_run *run)
{
	const char *be[MTP_MAX_BACKENDS + 1];
	int nb = backend_list(run, be, MTP_MAX_BACKENDS + 1);
	struct mtp_result_index ix;

	mtp_result_index_init(&ix, run); /* without: rows per result */
	head(f, run);
	if (nb)
		mtp_html_trend(f, run, &ix, be, nb, color);
	if (nb)
		by_op(f, run, be, nb);
	if (run->n || !run->bench)
		mtp_html_failures(f, run, color);
	mtp_bench_history_html(f, run->bench);
	if (nb)
		matrix(f, run, be, nb, &ix);
	mtp_result_index_fini(&ix);
	fputs(mtp_html_script(), f);
	fputs("</body></html>\n", f);
}

enum mtp_status mtp_report_html(const struct mtp_run *run, const char *path,
				char *err, size_t errn)
{
	return mtp_report_write(run, path, body, err, errn);
}
