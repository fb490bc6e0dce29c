/*
 * The runner: expands fixtures and filters into problems, runs each on every
 * selected backend (or judges a dump's observed outputs), compares with the
 * judge, and keeps every result as data (struct mtp_result) for the console,
 * JSON and later writers to render. It decides the exit code.
 */
#ifndef MTP_RUNNER_H
#define MTP_RUNNER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mtp/backend.h"
#include "mtp/compare.h"
#include "mtp/diagnose.h"
#include "mtp/fixture.h"
#include "mtp/status.h"

#define MTP_MAX_BACKENDS 16
#define MTP_DEFAULT_TIMEOUT 600.0 /* seconds a case may take on a backend */
#define MTP_MAX_INPUTS 64

/* The determinism modes of a run (docs/DIAGNOSES.md "Determinism"); each
 * acts on a case that passed, with extra calls to the same worker. */
struct mtp_determinism {
	int repeat;	 /* --repeat N: runs of each case (1: once) */
	bool bitwise;	 /* --bitwise: the reruns compared bit for bit */
	bool invariance; /* --invariance: rows alone, moved, or a prefix */
	int64_t ulps;	 /* --invariance-ulps: its bound (0: bitwise) */
	bool ulps_set;	 /* --invariance-ulps was given */
};

struct mtp_run_opts {
	const char *backends[MTP_MAX_BACKENDS];
	int n_backends;
	const char *backend_lib;
	const char *inputs[MTP_MAX_INPUTS]; /* fixture files or folders */
	int n_inputs;
	const char *filters[MTP_MAX_INPUTS];
	int n_filters;
	const char *case_file; /* --cases: a case file (docs/CASES.md) */
	const char *tags;      /* --tags: select its entries by tag */
	const char *json_path;
	const char *junit_path; /* --junit: JUnit XML for CI systems */
	const char *html_path;	/* --html: the self-contained HTML report */
	int shard_i, shard_n;	/* --shard i/n: every n-th problem from i */
	bool isolate;		/* --isolate: each case in its own process */
	double timeout;		/* --timeout: seconds a case may take */
	bool verify;		/* judge observed/ against the reference */
	bool weights_only; /* verify: only the weight sanity rule (diag_field.c) */
	bool list_only;	   /* print the selected problems and stop */
	bool verbose;
	bool full_logits; /* --full-logits: no sampled vocabulary rows */
	bool quiet;	  /* -q: the summary only */
	const char *ops;  /* --op: comma-separated op names (NULL: all) */
	uint64_t seed;
	struct mtp_limits limits;
	FILE *out;		 /* console */
	bool seed_set;		 /* --seed given: generated cases use it */
	const char *mem_limit;	 /* --mem-limit as given (for repro lines) */
	const char *run_id;	 /* --run-id, shared by the shards of a run
				  (NULL: the JSON writer makes one) */
	const char *weights_dir; /* --weights: weights by reference */
	struct mtp_determinism det;
};

struct mtp_result {
	char file[MTP_PATH_MAX];
	char case_id[128];
	char backend[128];
	const struct mtp_op *op;
	enum mtp_family family;
	enum mtp_verdict verdict;
	char message[MTP_ERR_MAX]; /* why, for anything but PASSED */
	int n_cmp;
	struct mtp_cmp *cmp; /* outputs compared, in flow order */
	int first_bad;	     /* index into cmp, or -1 */
	char repro[1200];
	double seconds;
	bool generated;		     /* made in process from a case file */
	struct mtp_diag_result diag; /* for a failure: the known bug matched */
	char note[240]; /* information on any verdict: partial judging */
	/* verify: the undeclared conventions the op uses, with the values
	 * the outputs matched ("add_norm_input=sum"); empty if none */
	char conventions[200];
	/* verify with weights by subset: what was judged */
	bool partial;
	char judged[480];
};

/* A backend of the run and the device it ran on: the device line its
 * worker sent (cleaned), "not opened: why" if it never opened, "" if no
 * worker started (the writers then describe it themselves); in a merged
 * report, a column backend@host and the device its file recorded. */
struct mtp_run_device {
	char name[128];
	char device[MTP_BACKEND_DEVICE_MAX];
	/* report: where the column came from (empty otherwise), written with
	 * the merged results so that reading them again gives their inputs'
	 * columns: the backend and host that ran it, its run (the run_id, else
	 * command|created), the date of its file, and whether that run was a
	 * verify --weights-only (its results compare no output) */
	struct mtp_column_origin {
		char backend[64], host[64], run[160], created[24];
		bool weights_only;
	} origin;
};

struct mtp_bench_history; /* bench files read by report (mtp/bench.h) */

struct mtp_run {
	struct mtp_run_opts opts;
	int n, cap;
	struct mtp_result *results;
	int counts[MTP_VERDICT_COUNT];
	int n_invalid_inputs; /* fixtures that could not be opened */
	int n_unavailable;    /* backends that could not be opened */
	int n_usage;	      /* usage errors found while running */
	int signal;	      /* SIGINT/SIGTERM stopped the run: exit 128+it */
	char command[64];     /* "run" or "verify" */
	int n_devices;	      /* 0: verify, or a report of files without */
	struct mtp_run_device *devices;	 /* malloc'ed, n_devices */
	struct mtp_bench_history *bench; /* report: bench nights, or NULL */
	int n_merged;  /* report: the files merged (0: not a report) */
	int n_repeats; /* report: results dropped as another input's */
	/* verify: the merged rank files (FORMAT.md, one file per rank) and
	 * their paths, one a line, rank order; valid while the run executes */
	const char *tp_merged, *tp_ranks;
};

void mtp_run_opts_init(struct mtp_run_opts *o);
/* Runs everything; the results stay in run until mtp_run_fini. */
void mtp_run_execute(struct mtp_run *run, const struct mtp_run_opts *o);
enum mtp_exit mtp_run_exit_code(const struct mtp_run *run);
/* Records (or renames the device of) a backend of the run; false when out
 * of memory. The device line is cleaned and cut (textsafe.h). */
bool mtp_run_set_device(struct mtp_run *run, const char *name,
			const char *device);
void mtp_run_fini(struct mtp_run *run);

/* Writes the JSON results file atomically (temporary file + rename). */
enum mtp_status mtp_report_json(const struct mtp_run *run, const char *path,
				char *err, size_t errn);

/* Writes JUnit XML (a testsuite per backend, a testcase per result),
 * atomically. */
enum mtp_status mtp_report_junit(const struct mtp_run *run, const char *path,
				 char *err, size_t errn);

/* Writes the self-contained HTML report (offline, inline SVG), atomically. */
enum mtp_status mtp_report_html(const struct mtp_run *run, const char *path,
				char *err, size_t errn);

/* Reads JSON results files (mtpcheck run --json) into one run, for the
 * report writers: columns are backend@host, later nights dated. Bench files
 * (mtpcheck bench --json) among them go into run->bench, one night per file
 * (per run_id), in the order given. */
enum mtp_status mtp_run_merge(struct mtp_run *run, const char *const *paths,
			      int n, char *err, size_t errn);

/* Glob match of a case against --filter patterns (any matches; none: all). */
bool mtp_filter_match(const char *const *pats, int n, const char *file,
		      const char *case_id);

/* SIGINT/SIGTERM handling for the span of a run or a bench (run/isolate.c);
 * SIGPIPE is ignored (a dead worker's pipe is an error, not a death).
 * Spans nest: the handling ends with the outermost mtp_signals_end. */
void mtp_signals_begin(void);
void mtp_signals_end(void);
/* The signal that asked the run to stop, or 0. */
int mtp_signals_caught(void);
/* What is left is writing the reports: until the outermost end, a further
 * signal is held, not fatal, so that they are always complete. */
void mtp_signals_hold(void);

/* Describes how a child that did not report ended: "the backend crashed:
 * Segmentation fault (signal 11)" or "the backend ended the process (exit
 * status 0) before reporting" (the run's workers, bench's supervisor). */
void mtp_child_describe(int status, char *buf, size_t n);

#endif
