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
#include "bench.h"

#define MAXL MTP_BENCH_MAXL
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
	FILE *json; /* in the bench process: the JSON text of the next frame
		     * (bench_sup.c), a memory stream on json_buf */
	char *json_buf;
	size_t json_len;
	struct mtp_atomic_file json_out; /* in the parent: the rows stream
					  * into a temporary file, renamed at
					  * the end */
	int json_rows, failures;
	struct mtp_backend *be[MAXL];
	double peak[MAXL];	 /* copy probe of each backend, bytes/s */
	double fma_peak[MAXL];	 /* FMA probe where it is the host CPU */
	struct mtp_fma_peak fma; /* the host's FMA probe, once per run */
	const char *baseline_path;
	struct mtp_baseline base;
	bool gate, bisect; /* SLOWER fails; AMBIGUOUS is 125 */
	double min_effect; /* smallest change that is not SAME */
	int repeats;	   /* --gate-repeats: timings of each row (0: unset) */
	int n_slower, n_ambiguous;
	const char *html_path;		/* --html: the rows as a page */
	const char *csv_path, *md_path; /* --csv, --md: the rows as tables */
	struct mtp_bench_row *kept;	/* every printed row, for --html */
	int n_kept, cap_kept;
	/* bench_sup.c: the backends run in a child process (a new one after
	 * one dies) that streams its rows to the parent, which writes them */
	int sup_fd;			    /* child: the pipe to the parent */
	void (*child_run)(struct bench *b); /* what each child runs */
	int problem,
		resume; /* child: the problem in flight, the first to run */
	int n_problems, opened;
	unsigned char *skip; /* [problem * MAXL + backend]: row received, or
			      * crashed */
	bool no_open[MAXL];  /* died while opening: not opened again */
	int sent[3];	     /* child: failures, n_slower, n_ambiguous sent */
	bool head_done;	     /* parent: the JSON's opening is written */
	int child_sig;	     /* parent: a signal the child reported */
	struct bench_crash *crashes;
	int n_crashes;
};

#define BENCH_MAX_CRASHES 256
#define BENCH_MAX_REPEATS MTP_BENCH_MAX_REPEATS

/* A problem and backend whose bench process died (JSON "crashed"). */
struct bench_crash {
	char op[48], shape[64];
	int backend; /* -1: outside the backends */
	char why[160];
};

/* Takes the parsed options o into b. */
void mtp_bench_take_opts(struct bench *b, const struct mtp_bench_opts *o);
/* What the options left unset: the default ops, shapes and backends. */
void mtp_bench_defaults(struct bench *b);
/* Opens b's backends and probes them (bench_probe.c): the copy bandwidth of
 * each, the host's FMA peak for those on the host CPU; one that does not
 * open is SKIPPED on the console and left NULL. */
void mtp_bench_open_backends(struct bench *b);

/* bench.c, in the child: opens the backends and times every problem from
 * b->resume on, but the pairs b->skip names. */
void mtp_bench_child(struct bench *b);
/* bench_sup.c. The parent: runs the bench in children, each calling run
 * (mtp_bench_child: a pointer, so that bench_sup.c needs nothing of
 * bench.c), until it is done (one that dies costs the problem and backend in
 * flight: CRASHED), writes and closes the JSON; returns the signal that
 * stopped it, or 0. */
int mtp_bench_supervise(struct bench *b, void (*run)(struct bench *b));
/* --html, --csv, --md from the kept rows; 1 if one could not be written. */
int mtp_bench_write_pages(const struct bench *b);
/* The child, each before it does it: opening backend i; the header
 * (once the backends are open); a step of the problem in flight on backend i
 * (-1: outside the backends; false: a pair to skip); a row, whose JSON text
 * is in b->json (k NULL: the pair is done without a row, FAILED). */
void mtp_bench_sup_open(struct bench *b, int i);
void mtp_bench_sup_head(struct bench *b);
bool mtp_bench_sup_step(struct bench *b, int i, const char *op,
			const char *shape);
void mtp_bench_sup_row(struct bench *b, int i, const struct mtp_bench_row *k);

#endif
