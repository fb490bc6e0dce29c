/*
 * Internal to mtpcheck bench: its state, shared by bench.c (the timing and
 * the rows), bench_args.c (the options and their defaults) and
 * bench_probe.c (the backends opened and probed).
 */
#ifndef MTP_BENCH_INT_H
#define MTP_BENCH_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mtp/baseline.h"
#include "mtp/bench.h"
#include "mtp/textio.h"
#include "mtp/timing.h"

#define MAXL 16
#define MAXO 64 /* outputs of one problem (a K-step chain has 7 K) */

struct bench {
	const char *backends[MAXL];
	char device[MAXL][256]; /* device line of each opened backend (JSON) */
	int n_backends;
	const struct mtp_op *ops[MTP_OP_COUNT];
	int n_ops;
	int64_t ts[MAXL], hs[MAXL];
	int n_t, n_h;
	int64_t m, v, f;
	bool check, unfused;
	uint64_t seed;
	struct mtp_timing_opts topt;
	const char *json_path;
	FILE *json; /* json_out.f: the rows stream into a temporary file,
		     * renamed at the end (a killed bench leaves no half-written
		     * file) */
	struct mtp_atomic_file json_out;
	int json_rows, failures;
	struct mtp_backend *be[MAXL];
	double peak[MAXL];	 /* copy probe of each backend, bytes/s */
	double fma_peak[MAXL];	 /* FMA probe where it is the host CPU */
	struct mtp_fma_peak fma; /* the host's FMA probe, once per run */
	const char *baseline_path;
	struct mtp_baseline base;
	bool gate, bisect; /* SLOWER fails; AMBIGUOUS is 125 */
	double min_effect; /* smallest change that is not SAME */
	char *owned[16]; /* the --backend and --op lists the names point into */
	int n_owned;
	int n_slower, n_ambiguous;
	const char *html_path;		/* --html: the rows as a page */
	const char *csv_path, *md_path; /* --csv, --md: the rows as tables */
	struct mtp_bench_row *kept;	/* every printed row, for --html */
	int n_kept, cap_kept;
};

/* Parses bench's options into b: -1 to go on, or the exit code to return
 * (2 for a usage error, 0 after --help). */
int mtp_bench_parse_args(struct bench *b, int argc, char **argv);
/* What the options left unset: the default ops, shapes and backends. */
void mtp_bench_defaults(struct bench *b);
/* Opens b's backends and probes them (bench_probe.c): the copy bandwidth of
 * each, the host's FMA peak for those on the host CPU; one that does not
 * open is SKIPPED on the console and left NULL. */
void mtp_bench_open_backends(struct bench *b);
/* The probes of the run, per backend: "inputs" of the JSON file. */
void mtp_bench_json_inputs(const struct bench *b);

#endif
