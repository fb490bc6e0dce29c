/*
 * The rows of `mtpcheck bench` as data, for the writers that render them
 * (the console and JSON in bench.c, the HTML page in reports/bench_html.c).
 */
#ifndef MTP_BENCH_H
#define MTP_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "mtp/status.h"

struct mtp_bench_row {
	char op[48], shape[64], backend[128];
	char check[16], note[96], vs_base[16];
	double median, iqr_pct; /* seconds per launch, % of the median */
	double gb_per_s, frac_peak, gflop_per_s;
	double speedup_vs_ref; /* 0 when the reference did not run */
};

/* `mtpcheck report` over bench files: every file is a night (files of one
 * run_id are one night), in the order given (oldest first); a row is one
 * op, shape and backend@host on one night. */
/* What a bench file's optional "record" object says about its run
 * (docs/RESULTS.md, "Bench records"): where the figures sit on the
 * benchmarks page, what was predicted and why a miss missed; the machine,
 * commit, command and date default to the file's meta. Each is cleaned
 * text (malloc'ed) or NULL; notes are paragraphs joined by blank lines. */
struct mtp_bench_record {
	char *section, *title, *date, *variant, *machine, *commit, *command;
	char *prediction, *reason, *notes;
};

struct mtp_bench_night {
	char label[64];	  /* the file's date (UTC), else its name */
	char run_id[128]; /* "" for a file written before schema 2.0 */
	char file[160];	  /* the first file of the night (its name) */
	struct mtp_bench_record rec;
};

struct mtp_bench_point {
	int night;		  /* index into nights */
	struct mtp_bench_row row; /* row.backend is backend@host */
	char device[256];	  /* the file's device line of the backend */
	int n_samples;
	double *samples;	   /* samples_s, malloc'ed; NULL without */
	char *prediction, *reason; /* the row's own (record), or NULL */
};

struct mtp_bench_history {
	int n_nights, n_points, cap_points;
	struct mtp_bench_night *nights; /* malloc'ed */
	struct mtp_bench_point *points; /* malloc'ed, in file order */
};

/* Frees what point p holds (not p). */
void mtp_bench_point_fini(struct mtp_bench_point *p);
/* Frees h and everything it holds (NULL: nothing). */
void mtp_bench_history_free(struct mtp_bench_history *h);

/* The report page's bench-history section (id "bench"): per op, shape and
 * backend@host the median, GB/s and fraction of the copy bandwidth of every
 * night, a sparkline of the median, and the change of the newest night
 * from the one before (Mann-Whitney U on the samples, as --baseline). */
void mtp_bench_history_html(FILE *f, const struct mtp_bench_history *h);

/* The benchmarks page (Markdown, `report --markdown`): per section of the
 * records the newest figure of every row, each with its run's machine,
 * commit and command, its prediction and the reason for a miss; the runs
 * newest first; and every row's earlier figures. Written atomically. */
enum mtp_status mtp_bench_history_markdown(const struct mtp_bench_history *h,
					   const char *path, char *err,
					   size_t errn);

/* A self-contained HTML page of the rows (offline, inline SVG bars of the
 * fraction of the copy bandwidth), written atomically. */
enum mtp_status mtp_bench_html(const struct mtp_bench_row *rows, int n,
			       const char *path, char *err, size_t errn);

/* The rows as CSV (md false) or a Markdown table, written atomically. */
enum mtp_status mtp_bench_table(const struct mtp_bench_row *rows, int n,
				const char *path, bool md, char *err,
				size_t errn);

#endif
