/*
 * The HTML page of `mtpcheck bench --html`: each row's median, spread,
 * bandwidth and its fraction of the copy bandwidth measured in the same run
 * (an inline SVG bar), the speedup over the reference, the check of the timed
 * outputs and the verdict against a baseline. One file, nothing fetched.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench_plot.h"
#include "html_parts.h"
#include "mtp/bench.h"
#include "mtp/meta.h"
#include "mtp/textio.h"
#include "mtp/textsafe.h"

struct page {
	const struct mtp_bench_row *rows;
	int n;
};

static void esc(FILE *f, const char *s)
{
	mtp_xml_str(f, s);
}

void mtp_bench_key_cells(FILE *f, const struct mtp_bench_row *r)
{
	fputs("<tr><td>", f);
	esc(f, r->op);
	fputs("</td><td>", f);
	esc(f, r->shape);
	fputs("</td><td>", f);
	esc(f, r->backend);
	fputs("</td>", f);
}

/* 0..100 % of peak as a bar 100 px wide; past 100 % the bar is full. */
static void peak_bar(FILE *f, double frac)
{
	double w = isfinite(frac) ? fmin(fmax(frac, 0), 1) * 100 : 0;

	fprintf(f,
		"<svg width=\"102\" height=\"10\"><rect width=\"100\" "
		"height=\"10\" fill=\"#eee\"/><rect width=\"%.1f\" "
		"height=\"10\" fill=\"%s\"/></svg> %.0f%%",
		w, frac >= 0.7 ? "#43a047" : "#fb8c00", 100 * frac);
}

static void row(FILE *f, const struct mtp_bench_row *r)
{
	mtp_bench_key_cells(f, r);
	fprintf(f, "<td>%.2f</td><td>%.1f</td><td>%.1f</td><td>",
		r->median * 1e6, r->iqr_pct, r->gb_per_s);
	if (r->frac_peak > 0)
		peak_bar(f, r->frac_peak);
	fprintf(f, "</td><td>%.1f</td><td>", r->gflop_per_s);
	if (r->speedup_vs_ref > 0)
		fprintf(f, "%.1fx", r->speedup_vs_ref);
	fprintf(f, "</td><td style=\"color:%s\">",
		strcmp(r->check, "FAILED") ? "inherit" : "#c62828");
	esc(f, r->check);
	if (mtp_bench_noisy(r))
		fputs(" <strong>noisy</strong>", f);
	if (r->note[0]) {
		fputs(" ", f);
		esc(f, r->note);
	}
	fputs("</td><td>", f);
	esc(f, r->vs_base);
	fputs("</td></tr>\n", f);
}

/* Device and copy peak per backend, and the run's metadata. */
static void bench_meta(FILE *f, const struct mtp_bench_row *rows, int n)
{
	struct mtp_meta m;

	mtp_meta_get(&m, NULL);
	fputs("<dl class=\"meta\" id=\"meta\">", f);
	for (int i = 0; i < n; i++) {
		bool first = true;

		for (int j = 0; j < i && first; j++)
			first = strcmp(rows[j].backend, rows[i].backend) != 0;
		if (!first || rows[i].frac_peak <= 0)
			continue;
		fputs("<dt>", f);
		esc(f, rows[i].backend);
		fprintf(f, "</dt><dd>copy peak %.3g GB/s</dd>",
			rows[i].gb_per_s / rows[i].frac_peak);
	}
	fputs("<dt>host</dt><dd>", f);
	esc(f, m.host);
	fputs("</dd><dt>CPU</dt><dd>", f);
	esc(f, m.cpu_model);
	fprintf(f, "</dd><dt>threads</dt><dd>%d</dd><dt>mtpcheck</dt><dd>",
		m.threads);
	esc(f, m.version);
	fputs(" ", f);
	esc(f, m.build_commit);
	fputs("</dd><dt>commit under test</dt><dd>", f);
	esc(f, *m.commit ? m.commit : "-");
	fputs("</dd><dt>date (UTC)</dt><dd>", f);
	esc(f, m.date);
	fputs("</dd><dt>command line</dt><dd>", f);
	esc(f, m.command_line);
	fputs("</dd></dl>\n", f);
}

static void body(FILE *f, const void *arg)
{
	const struct page *p = arg;

	fputs("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<title>mtpcheck bench</title><style>"
	      "body{font:14px/1.4 system-ui,sans-serif;margin:1.5em}"
	      "table{border-collapse:collapse}td,th{border:1px solid #ccc;"
	      "padding:2px 6px;white-space:nowrap}th{background:#f3f3f3}"
	      "figure.plot{display:inline-block;margin:.5em;max-width:100%}"
	      "figure svg{max-width:100%;height:auto}"
	      "@media (max-width:600px){body{margin:.5em}table{display:block;"
	      "overflow-x:auto}}",
	      f);
	fputs(mtp_html_css(), f);
	fputs("</style><meta name=\"viewport\" content=\"width=device-width\">"
	      "</head><body><h1>mtpcheck bench</h1>",
	      f);
	bench_meta(f, p->rows, p->n);
	fputs("<p>Median of the timed launches; % of peak = bytes an ideal "
	      "kernel moves / median, over the copy bandwidth measured on the "
	      "same device in the same run (the bar turns green at 70 %). "
	      "Every timed output is checked against the reference; a row "
	      "whose IQR is over 10 % of its median is marked noisy. vs "
	      "baseline: the change from the --baseline file to this run "
	      "(FASTER/SLOWER only when a Mann-Whitney U test says the two "
	      "sets of samples differ at p &lt; 0.01, i.e. a difference this "
	      "large would arise by chance less than 1 time in 100).</p>"
	      "<table class=\"st\" "
	      "id=\"rows\"><tr><th>op</th><th>shape</th><th>backend</th>"
	      "<th>median µs</th><th>IQR %</th><th>GB/s</th><th>of peak</th>"
	      "<th>GFLOP/s</th><th>vs ref</th><th>check</th>"
	      "<th>vs baseline</th></tr>\n",
	      f);
	for (int i = 0; i < p->n; i++)
		row(f, &p->rows[i]);
	fputs("</table>\n", f);
	mtp_bench_plots(f, p->rows, p->n);
	fputs(mtp_html_script(), f);
	fputs("</body></html>\n", f);
}

enum mtp_status mtp_bench_html(const struct mtp_bench_row *rows, int n,
			       const char *path, char *err, size_t errn)
{
	struct page p = {rows, n};

	return mtp_write_atomic(path, body, &p, err, errn);
}
