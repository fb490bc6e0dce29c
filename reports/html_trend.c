/*
 * The trend section of a merged report (mtpcheck report over several
 * nights): columns of one backend@host from different runs are its nights,
 * in the order the files were given (oldest first). Per case and backend:
 * new failures, fixes and still-failing; per op: a sparkline of the worst
 * headroom (error / threshold) night by night.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "html_parts.h"
#include "result_index.h"
#include "mtp/textsafe.h"

#define MAXC 64

static bool bad(enum mtp_verdict v)
{
	return v == MTP_FAILED || v == MTP_CRASHED || v == MTP_TIMEOUT ||
	       v == MTP_INVALID || v == MTP_MISTRUSTED;
}

/* The column's backend@host: up to the date a later night adds. */
static size_t base_len(const char *col)
{
	return strcspn(col, " ");
}

static const struct mtp_result *at(const struct mtp_result_index *ix, int i,
				   const char *col)
{
	const struct mtp_result *r = &ix->run->results[i];

	return mtp_result_index_find(ix, r->file, r->case_id, col);
}

/* The nights of the base of column c: indices into cols, in order. */
static int nights(const char **cols, int nc, int c, int *out)
{
	int n = 0;
	size_t l = base_len(cols[c]);

	for (int k = 0; k < nc; k++)
		if (base_len(cols[k]) == l && !strncmp(cols[k], cols[c], l))
			out[n++] = k;
	return n;
}

static void history(FILE *f, const struct mtp_result_index *ix, int i,
		    const char **cols, const int *nt, int n,
		    const char *(*color)(enum mtp_verdict))
{
	for (int k = 0; k < n; k++) {
		const struct mtp_result *q = at(ix, i, cols[nt[k]]);

		fprintf(f,
			"<span class=\"v\" title=\"%s\" "
			"style=\"background:%s\">"
			"%c</span>",
			q ? mtp_verdict_name(q->verdict) : "absent",
			q ? color(q->verdict) : "#ddd",
			q ? mtp_verdict_name(q->verdict)[0] : '-');
	}
}

static void changes(FILE *f, const struct mtp_result_index *ix,
		    const char **cols, int nc,
		    const char *(*color)(enum mtp_verdict))
{
	const struct mtp_run *run = ix->run;
	int rows = 0, nt[MAXC];

	fputs("<table class=\"st\" id=\"trend\"><tr><th>change</th><th>case"
	      "</th><th>backend</th><th>nights, oldest first</th></tr>\n",
	      f);
	for (int i = 0; i < run->n; i++) {
		const struct mtp_result *r = &run->results[i], *p, *l;
		int c = 0, n;
		const char *what;

		while (c < nc && strcmp(cols[c], r->backend))
			c++;
		n = nights(cols, nc, c, nt);
		if (n < 2 || nt[0] != c)
			continue; /* one row per case and base, at its first */
		p = at(ix, i, cols[nt[n - 2]]);
		l = at(ix, i, cols[nt[n - 1]]);
		what = !l || !p				     ? NULL
		       : bad(l->verdict) && !bad(p->verdict) ? "new failure"
		       : !bad(l->verdict) && bad(p->verdict) ? "fixed"
		       : bad(l->verdict)		     ? "still failing"
							     : NULL;
		if (!what)
			continue;
		fprintf(f, "<tr><td>%s</td><td><code>", what);
		mtp_xml_str(f, r->file);
		fputs(":", f);
		mtp_xml_str(f, r->case_id);
		fprintf(f, "</code></td><td>%.*s</td><td>",
			(int)base_len(cols[c]), cols[c]);
		history(f, ix, i, cols, nt, n, color);
		fputs("</td></tr>\n", f);
		rows++;
	}
	fprintf(f, "</table>%s\n",
		rows ? ""
		     : "<p>No change and nothing failing in the last "
		       "night.</p>");
}

/* Worst headroom of op on column col, or -1 if it did not run there. */
static double worst(const struct mtp_run *run, const struct mtp_op *op,
		    const char *col)
{
	double w = -1;

	for (int i = 0; i < run->n; i++) {
		const struct mtp_result *r = &run->results[i];

		if (r->op != op || strcmp(r->backend, col))
			continue;
		w = fmax(w, 0);
		for (int k = 0; k < r->n_cmp; k++)
			w = fmax(w, isnan(r->cmp[k].headroom)
					    ? INFINITY
					    : r->cmp[k].headroom);
	}
	return w;
}

static void spark(FILE *f, const struct mtp_run *run, const struct mtp_op *op,
		  const char **cols, const int *nt, int n)
{
	fprintf(f,
		"<svg class=\"spark\" width=\"%d\" height=\"24\" role=\"img\">"
		"<title>worst headroom per night (line: 1 = threshold)"
		"</title><line x1=\"0\" y1=\"12\" x2=\"%d\" y2=\"12\" "
		"stroke=\"#bbb\" stroke-dasharray=\"2\"/>",
		n * 16, n * 16);
	for (int k = 0; k < n; k++) {
		double w = worst(run, op, cols[nt[k]]);
		double y = 22 - 20 * fmin(isfinite(w) ? w : 2, 2) / 2;

		if (w < 0)
			continue;
		if (k > 0 && worst(run, op, cols[nt[k - 1]]) >= 0) {
			double pw = worst(run, op, cols[nt[k - 1]]);

			fprintf(f,
				"<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" "
				"y2=\"%.1f\" "
				"stroke=\"#555\"/>",
				(k - 1) * 16 + 8,
				22 - 20 * fmin(isfinite(pw) ? pw : 2, 2) / 2,
				k * 16 + 8, y);
		}
		fprintf(f,
			"<circle cx=\"%d\" cy=\"%.1f\" r=\"3\" fill=\"%s\">"
			"<title>%.3g</title></circle>",
			k * 16 + 8, y, w <= 1 ? "#43a047" : "#e53935", w);
	}
	fputs("</svg>", f);
}

static void sparklines(FILE *f, const struct mtp_run *run, const char **cols,
		       int nc)
{
	int nt[MAXC];

	fputs("<h3>Worst headroom per op, night by night</h3><table "
	      "class=\"st\" id=\"sparks\"><tr><th>op</th><th>backend</th>"
	      "<th>headroom</th></tr>\n",
	      f);
	for (int c = 0; c < nc; c++) {
		int n = nights(cols, nc, c, nt);

		if (n < 2 || nt[0] != c)
			continue;
		for (int o = 0; o < MTP_OP_COUNT; o++) {
			const struct mtp_op *op = mtp_op_get((enum mtp_op_id)o);
			bool any = false;

			for (int k = 0; k < n && !any; k++)
				any = worst(run, op, cols[nt[k]]) >= 0;
			if (!any)
				continue;
			fprintf(f, "<tr><td>%s</td><td>%.*s</td><td>", op->name,
				(int)base_len(cols[c]), cols[c]);
			spark(f, run, op, cols, nt, n);
			fputs("</td></tr>\n", f);
		}
	}
	fputs("</table>\n", f);
}

void mtp_html_trend(FILE *f, const struct mtp_run *run,
		    const struct mtp_result_index *ix, const char **cols,
		    int nc, const char *(*color)(enum mtp_verdict))
{
	int nt[MAXC];
	bool any = false;

	nc = nc < MAXC ? nc : MAXC;
	for (int c = 0; c < nc && !any; c++)
		any = nights(cols, nc, c, nt) >= 2;
	if (!any)
		return;
	fputs("<h2 id=\"trends\">Trend over the nights merged</h2>"
	      "<p>Columns of the same backend@host are its nights, in the "
	      "order "
	      "the files were given; shards of one run (one run_id) are one "
	      "night.</p>\n",
	      f);
	changes(f, ix, cols, nc, color);
	sparklines(f, run, cols, nc);
}
