/*
 * Subsystem bench: mtpcheck bench: each op timed on each backend over
 * generated inputs, its outputs checked, against an optional baseline
 * (baseline_none.c stands in without libcjson).
 *
 * May depend on: core, ops, refglue, judge, fixture, backends, cases, timing, reports, run, util
 * Its interface: mtp/bench.h, mtp/baseline.h, and here its options and
 * entry point (the CLI's option table fills them).
 */
#ifndef MTP_SUBSYSTEM_BENCH_H
#define MTP_SUBSYSTEM_BENCH_H

#include <stdbool.h>
#include <stdint.h>

#include "mtp/baseline.h"
#include "mtp/bench.h"
#include "mtp/op.h"
#include "mtp/timing.h"

#define MTP_BENCH_MAXL 16	/* backends, tokens and hidden sizes */
#define MTP_BENCH_MAX_REPEATS 9 /* --gate-repeats */

/* What `mtpcheck bench`'s options select (the CLI's option table fills it;
 * docs/BENCHMARKS.md); what is left 0 gets bench's defaults. */
struct mtp_bench_opts {
	const char *backends[MTP_BENCH_MAXL];
	int n_backends;
	const struct mtp_op *ops[MTP_OP_COUNT];
	int n_ops;
	int64_t ts[MTP_BENCH_MAXL], hs[MTP_BENCH_MAXL];
	int n_t, n_h;
	int64_t m, v, f; /* hc_mult, vocabulary, FFN width */
	bool check, unfused;
	uint64_t seed;
	struct mtp_timing_opts topt;
	const char *json_path, *html_path, *csv_path, *md_path;
	const char *baseline_path;
	bool gate, bisect; /* SLOWER fails; AMBIGUOUS is 125 */
	double min_effect; /* smallest change that is not SAME */
	int repeats;	   /* --gate-repeats (0: unset) */
};

/* The options' defaults, before they are parsed. */
void mtp_bench_opts_init(struct mtp_bench_opts *o);
/* `mtpcheck bench` with the options o: its exit code. */
int mtp_bench_main(const struct mtp_bench_opts *o);

#endif
