/*
 * The rows of `mtpcheck bench` as data, for the writers that render them
 * (the console and JSON in bench.c, the HTML page in reports/bench_html.c).
 */
#ifndef MTP_BENCH_H
#define MTP_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include "mtp/status.h"

struct mtp_bench_row {
	char op[48], shape[64], backend[128];
	char check[16], note[96], vs_base[16];
	double median, iqr_pct; /* seconds per launch, % of the median */
	double gb_per_s, frac_peak, gflop_per_s;
	double speedup_vs_ref; /* 0 when the reference did not run */
};

/* A self-contained HTML page of the rows (offline, inline SVG bars of the
 * fraction of the copy bandwidth), written atomically. */
enum mtp_status mtp_bench_html(const struct mtp_bench_row *rows, int n,
			       const char *path, char *err, size_t errn);

/* The rows as CSV (md false) or a Markdown table, written atomically. */
enum mtp_status mtp_bench_table(const struct mtp_bench_row *rows, int n,
				const char *path, bool md, char *err,
				size_t errn);

#endif
