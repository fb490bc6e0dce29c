/*
 * `mtpcheck bench --csv` and `--md`: the rows of the bench table as CSV (one
 * header line, RFC 4180 quoting) or as a Markdown table. Noise is a column:
 * a row whose IQR is over 10 % of its median says "noisy", never only "ok".
 */
#include <stdio.h>
#include <string.h>

#include "bench_plot.h"
#include "mtp/bench.h"
#include "mtp/textio.h"

struct table {
	const struct mtp_bench_row *rows;
	int n;
	bool md;
};

/* A text cell: CSV quotes it when needed, Markdown escapes the bars. */
static void cell(FILE *f, const char *s, bool md)
{
	bool q = !md && strpbrk(s, ",\"\n\r") != NULL;

	if (q)
		fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' && q)
			fputc('"', f);
		if (md && *s == '|')
			fputc('\\', f);
		fputc(md && (*s == '\n' || *s == '\r') ? ' ' : *s, f);
	}
	if (q)
		fputc('"', f);
}

static void body(FILE *f, const void *arg)
{
	const struct table *t = arg;
	static const char *const cols[] = {
		"op",	       "shape",		 "backend",  "median_us",
		"iqr_pct",     "noisy",		 "gb_per_s", "fraction_of_peak",
		"gflop_per_s", "speedup_vs_ref", "check",    "vs_baseline"};
	const int nc = (int)(sizeof(cols) / sizeof(cols[0]));
	const char *sep = t->md ? " | " : ",";

	for (int c = 0; c < nc; c++)
		fprintf(f, "%s%s", c ? sep : (t->md ? "| " : ""), cols[c]);
	fputs(t->md ? " |\n" : "\n", f);
	for (int c = 0; t->md && c < nc; c++)
		fputs(c + 1 < nc ? "|---" : "|---|\n", f);
	for (int i = 0; i < t->n; i++) {
		const struct mtp_bench_row *r = &t->rows[i];

		fputs(t->md ? "| " : "", f);
		cell(f, r->op, t->md);
		fputs(sep, f);
		cell(f, r->shape, t->md);
		fputs(sep, f);
		cell(f, r->backend, t->md);
		fprintf(f, "%s%.3f%s%.1f%s%s%s%.4g%s%.4g%s%.4g%s%.4g%s", sep,
			r->median * 1e6, sep, r->iqr_pct, sep,
			mtp_bench_noisy(r) ? "noisy" : "", sep, r->gb_per_s,
			sep, r->frac_peak, sep, r->gflop_per_s, sep,
			r->speedup_vs_ref, sep);
		cell(f, r->check, t->md);
		fputs(sep, f);
		cell(f, r->vs_base, t->md);
		fputs(t->md ? " |\n" : "\n", f);
	}
}

enum mtp_status mtp_bench_table(const struct mtp_bench_row *rows, int n,
				const char *path, bool md, char *err,
				size_t errn)
{
	struct table t = {rows, n, md};

	return mtp_write_atomic(path, body, &t, err, errn);
}
