/*
 * The bench page's plots (bench_html.c): per op, achieved GB/s against T
 * (log axis) for every backend, the IQR as whiskers, and the copy bandwidth
 * measured in the same run as the roofline. Inline SVG, nothing fetched.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_plot.h"

#define W 360
#define H 180
#define L 40 /* left margin */

static const char *const palette[] = {"#1e88e5", "#e53935", "#43a047",
				      "#8e24aa", "#fb8c00", "#00897b"};

static double t_of(const struct mtp_bench_row *r)
{
	const char *t = strstr(r->shape, "T=");

	return t ? atof(t + 2) : 0;
}

bool mtp_bench_noisy(const struct mtp_bench_row *r)
{
	return r->iqr_pct > MTP_BENCH_NOISY_PCT;
}

static double xpos(double t, double t0, double t1)
{
	double span = log10(t1) - log10(t0);

	return L +
	       (span > 0 ? (log10(t) - log10(t0)) / span : 0.5) * (W - L - 10);
}

static double ypos(double g, double top)
{
	return H - 20 - (top > 0 ? g / top : 0) * (H - 30);
}

static void plot_op(FILE *f, const struct mtp_bench_row *rows, int n,
		    const char *op)
{
	double t0 = INFINITY, t1 = 0, top = 0, peak = 0;
	const char *bes[6];
	int nb = 0;

	for (int i = 0; i < n; i++) {
		const struct mtp_bench_row *r = &rows[i];
		double t = t_of(r);
		int k = 0;

		if (strcmp(r->op, op) || t <= 0)
			continue;
		t0 = fmin(t0, t);
		t1 = fmax(t1, t);
		top = fmax(top, r->gb_per_s * (1 + r->iqr_pct / 200));
		if (r->frac_peak > 0)
			peak = fmax(peak, r->gb_per_s / r->frac_peak);
		while (k < nb && strcmp(bes[k], r->backend))
			k++;
		if (k == nb && nb < 6)
			bes[nb++] = r->backend;
	}
	if (!nb)
		return;
	top = fmax(top, peak) * 1.1;
	fprintf(f,
		"<figure class=\"plot\"><figcaption>%s: GB/s vs T</figcaption>"
		"<svg viewBox=\"0 0 %d %d\" width=\"%d\" role=\"img\">"
		"<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" "
		"stroke=\"#888\"/>",
		op, W, H, W, L, H - 20, W, H - 20);
	fprintf(f, "<text x=\"2\" y=\"12\" font-size=\"10\">%.3g GB/s</text>",
		top);
	if (peak > 0)
		fprintf(f,
			"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" "
			"stroke=\"#000\" stroke-dasharray=\"4\"/><text "
			"x=\"%d\" "
			"y=\"%.1f\" font-size=\"10\">copy %.3g GB/s</text>",
			L, ypos(peak, top), W, ypos(peak, top), L + 2,
			ypos(peak, top) - 2, peak);
	for (int b = 0; b < nb; b++) {
		const char *c = palette[b];
		double px = -1, py = 0;

		for (int i = 0; i < n; i++) {
			const struct mtp_bench_row *r = &rows[i];
			double x, y, lo, hi;

			if (strcmp(r->op, op) || strcmp(r->backend, bes[b]) ||
			    t_of(r) <= 0)
				continue;
			x = xpos(t_of(r), t0, t1);
			y = ypos(r->gb_per_s, top);
			lo = ypos(r->gb_per_s * fmax(0, 1 - r->iqr_pct / 200),
				  top);
			hi = ypos(r->gb_per_s * (1 + r->iqr_pct / 200), top);
			if (px >= 0)
				fprintf(f,
					"<line x1=\"%.1f\" y1=\"%.1f\" "
					"x2=\"%.1f\" "
					"y2=\"%.1f\" stroke=\"%s\"/>",
					px, py, x, y, c);
			fprintf(f,
				"<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
				"y2=\"%.1f\" stroke=\"%s\"/><circle "
				"cx=\"%.1f\" "
				"cy=\"%.1f\" r=\"3\" fill=\"%s\"><title>%s %s: "
				"%.3g GB/s, IQR %.1f %%</title></circle>",
				x, lo, x, hi, c, x, y, c, r->backend, r->shape,
				r->gb_per_s, r->iqr_pct);
			fprintf(f,
				"<text x=\"%.1f\" y=\"%d\" font-size=\"9\" "
				"text-anchor=\"middle\">%g</text>",
				x, H - 8, t_of(r));
			px = x;
			py = y;
		}
		fprintf(f,
			"<text x=\"%d\" y=\"%d\" font-size=\"10\" fill=\"%s\">"
			"&#9679; %s</text>",
			W - 90, 14 + 12 * b, c, bes[b]);
	}
	fputs("</svg></figure>\n", f);
}

void mtp_bench_plots(FILE *f, const struct mtp_bench_row *rows, int n)
{
	fputs("<h2 id=\"plots\">Bandwidth against T</h2><p>Points: median; "
	      "whiskers: the interquartile range; dashed: the copy bandwidth "
	      "measured on the device in this run (the roofline).</p>"
	      "<div class=\"plots\">",
	      f);
	for (int i = 0; i < n; i++) {
		bool first = true;

		for (int j = 0; j < i && first; j++)
			first = strcmp(rows[j].op, rows[i].op) != 0;
		if (first)
			plot_op(f, rows, n, rows[i].op);
	}
	fputs("</div>\n", f);
}
