/*
 * The bench history of `mtpcheck report` over bench files (merge_bench.c
 * reads them): one row per op, shape and backend@host; per night, oldest
 * first, the median, the achieved GB/s and the fraction of the copy bandwidth
 * measured in that night's run; a sparkline of the median; and the change of
 * the newest night from the one before it, by the same test as `bench
 * --baseline` (Mann-Whitney U on the samples, p < 0.01, at least 5 %). The
 * devices each backend@host ran on, with the night a new line first appears
 * (a driver update explains a step). Inline SVG; readable without script.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_groups.h"
#include "bench_plot.h"
#include "mtp/bench.h"
#include "mtp/textsafe.h"
#include "mtp/timing.h"

#define MIN_EFFECT 0.05 /* as bench --min-effect's default */
#define ALPHA 0.01

static void esc(FILE *f, const char *s)
{
	mtp_xml_str(f, s);
}

/* Point b against the earlier point a: FASTER, SLOWER, SAME, AMBIGUOUS, or
 * MTP_VERDICT_COUNT when either has no samples to test. */
static enum mtp_verdict change(const struct mtp_bench_point *a,
			       const struct mtp_bench_point *b, double *p)
{
	double ratio;

	*p = 1;
	if (!a->n_samples || !b->n_samples)
		return MTP_VERDICT_COUNT;
	return mtp_perf_compare(a->samples, a->n_samples, b->samples,
				b->n_samples, MIN_EFFECT, ALPHA, &ratio, p);
}

static const char *change_color(enum mtp_verdict v)
{
	return v == MTP_SLOWER	    ? "#c62828"
	       : v == MTP_FASTER    ? "#2e7d32"
	       : v == MTP_AMBIGUOUS ? "#ef6c00"
				    : "#757575";
}

static void spark(FILE *f, const struct mtp_bench_history *h, const int *at)
{
	double top = 0;
	int prev = -1, w = h->n_nights * 16;

	for (int k = 0; k < h->n_nights; k++)
		if (at[k] >= 0)
			top = fmax(top, h->points[at[k]].row.median);
	fprintf(f,
		"<svg class=\"spark\" width=\"%d\" height=\"24\" role=\"img\">"
		"<title>median per night, oldest first (higher is slower)"
		"</title>",
		w < 32 ? 32 : w);
	for (int k = 0; k < h->n_nights; k++) {
		const struct mtp_bench_point *q;
		enum mtp_verdict v = MTP_VERDICT_COUNT;
		double y, p;

		if (at[k] < 0)
			continue;
		q = &h->points[at[k]];
		y = 22 - 20 * (top > 0 ? q->row.median / top : 0);
		if (prev >= 0) {
			const struct mtp_bench_point *a = &h->points[at[prev]];

			fprintf(f,
				"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
				"y2=\"%.1f\" stroke=\"#555\"/>",
				prev * 16 + 8,
				22 - 20 * (top > 0 ? a->row.median / top : 0),
				k * 16 + 8, y);
			v = change(a, q, &p);
		}
		fprintf(f,
			"<circle cx=\"%d\" cy=\"%.1f\" r=\"3\" fill=\"%s\">"
			"<title>",
			k * 16 + 8, y, change_color(v));
		esc(f, h->nights[k].label);
		fprintf(f, ": %.3g us, %.3g GB/s%s%s</title></circle>",
			q->row.median * 1e6, q->row.gb_per_s,
			v != MTP_VERDICT_COUNT ? ", " : "",
			v != MTP_VERDICT_COUNT ? mtp_verdict_name(v) : "");
		prev = k;
	}
	fputs("</svg>", f);
}

/* The newest night against the one before it where the row ran. */
static void newest_change(FILE *f, const struct mtp_bench_history *h,
			  const int *at)
{
	int last = -1, prev = -1;
	const struct mtp_bench_point *a, *b;
	enum mtp_verdict v;
	double p;

	for (int k = 0; k < h->n_nights; k++)
		if (at[k] >= 0) {
			prev = last;
			last = k;
		}
	if (prev < 0) {
		fputs("<td>one night</td>", f);
		return;
	}
	a = &h->points[at[prev]];
	b = &h->points[at[last]];
	v = change(a, b, &p);
	fputs("<td>", f);
	if (v != MTP_VERDICT_COUNT)
		fprintf(f,
			"<span class=\"v\" style=\"background:%s\">%s</span> ",
			change_color(v), mtp_verdict_name(v));
	if (a->row.median > 0)
		fprintf(f, "median %+.1f %%",
			100 * (b->row.median / a->row.median - 1));
	if (v != MTP_VERDICT_COUNT)
		fprintf(f, ", p %.2g", p);
	else
		fputs(" (no samples: not tested)", f);
	fputs("</td>", f);
}

static void night_cell(FILE *f, const struct mtp_bench_point *q)
{
	const struct mtp_bench_row *r;
	double us;

	if (!q) {
		fputs("<td>-</td>", f);
		return;
	}
	r = &q->row;
	us = r->median * 1e6;
	fprintf(f, "<td title=\"IQR %.1f %%\">%.*f µs<br><small>%.3g GB/s",
		r->iqr_pct,
		us < 1	   ? 3
		: us < 100 ? 2
			   : 1,
		us, r->gb_per_s);
	if (r->frac_peak > 0)
		fprintf(f, ", %.*f %% of copy", r->frac_peak < 0.01 ? 2 : 0,
			100 * r->frac_peak);
	fputs("</small>", f);
	if (r->iqr_pct > 10)
		fputs(" <strong>noisy</strong>", f);
	if (!strcmp(r->check, "FAILED"))
		fputs(" <strong style=\"color:#c62828\">FAILED</strong>", f);
	fputs("</td>", f);
}

/* Per backend@host its device lines, each with the night it first shows. */
static void devices(FILE *f, const struct mtp_bench_history *h)
{
	int n, *lines = mtp_bench_device_lines(h, &n);
	const char *be = NULL;

	fputs("<dl class=\"meta\" id=\"benchdev\">", f);
	for (int i = 0; lines && i < n; i++) {
		const struct mtp_bench_point *d = &h->points[lines[i]];
		bool later = be && !strcmp(be, d->row.backend);

		if (!later) {
			fputs("<dt>", f);
			esc(f, d->row.backend);
			fputs("</dt>", f);
			be = d->row.backend;
		}
		fputs("<dd>", f);
		esc(f, *d->device ? d->device : "(not recorded)");
		if (later) {
			fputs(" <small>(from ", f);
			esc(f, h->nights[d->night].label);
			fputs(")</small>", f);
		}
		fputs("</dd>", f);
	}
	fputs("</dl>\n", f);
	free(lines);
}

void mtp_bench_history_html(FILE *f, const struct mtp_bench_history *h)
{
	struct mtp_bench_groups g;
	int *at;

	if (!h || !h->n_points)
		return;
	at = malloc((size_t)h->n_nights * sizeof(*at));
	if (!at || !mtp_bench_groups_init(&g, h)) {
		free(at);
		fputs("<p id=\"bench\">Bench history: out of memory</p>\n", f);
		return;
	}
	fprintf(f,
		"<h2 id=\"bench\">Bench history</h2><p>%d bench rows from %d "
		"night%s, oldest first (the order the files were given; the "
		"files of one run id are one night). Each night: the median "
		"time per launch, the achieved GB/s and its fraction of the "
		"copy bandwidth measured on the device in that run. The change "
		"is the newest night's against the one before it: FASTER or "
		"SLOWER only when a Mann-Whitney U test on the samples gives "
		"p &lt; 0.01 and the medians differ by at least 5 %%, as "
		"<code>bench --baseline</code>; the sparkline's points are "
		"coloured the same way against the night before.</p>\n",
		h->n_points, h->n_nights, h->n_nights == 1 ? "" : "s");
	fputs("<details id=\"benchnights\"><summary>Nights and devices"
	      "</summary><ol>",
	      f);
	for (int k = 0; k < h->n_nights; k++) {
		fputs("<li>", f);
		esc(f, h->nights[k].label);
		fputs(": <code>", f);
		esc(f, h->nights[k].file);
		fputs("</code>", f);
		if (h->nights[k].run_id[0]) {
			fputs(", run id ", f);
			esc(f, h->nights[k].run_id);
		}
		fputs("</li>", f);
	}
	fputs("</ol>", f);
	devices(f, h);
	fputs("</details>\n<div class=\"w\"><table class=\"n st\" "
	      "id=\"benchhist\"><tr><th>op</th><th>shape</th><th>backend</th>"
	      "<th>median, night by night</th><th>newest vs before</th>",
	      f);
	for (int k = 0; k < h->n_nights; k++) {
		fprintf(f, "<th>#%d ", k + 1);
		esc(f, h->nights[k].label);
		fputs("</th>", f);
	}
	fputs("</tr>\n", f);
	for (int i = 0; i < g.n; i++) {
		mtp_bench_groups_nights(&g, i, h, at);
		mtp_bench_key_cells(f, &g.sorted[g.start[i]]->row);
		fputs("<td>", f);
		spark(f, h, at);
		fputs("</td>", f);
		newest_change(f, h, at);
		for (int k = 0; k < h->n_nights; k++)
			night_cell(f, at[k] >= 0 ? &h->points[at[k]] : NULL);
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n", f);
	mtp_bench_groups_fini(&g);
	free(at);
}
