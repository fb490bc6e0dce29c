/*
 * The timing engine (ARCHITECTURE.md "Timing"), shared by every backend: warm-up,
 * then repeated launches until both a minimum count and a minimum time;
 * median and IQR; device timers where the backend has them, the monotonic
 * clock otherwise; input rotation (several input sets on the device, cycled)
 * so a kernel is not timed on warm caches unless asked; bytes and flops from
 * the op table turned into GB/s and GFLOP/s and a fraction of the copy
 * bandwidth measured on the same device in the same run. The outputs of the
 * timed launches are brought back so that the caller can check them.
 */
#ifndef MTP_TIMING_H
#define MTP_TIMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mtp/backend.h"
#include "mtp/status.h"

struct mtp_timing_opts {
	int warmup;	    /* launches before timing (default 3) */
	int min_reps;	    /* at least this many timed launches (default 10) */
	int max_reps;	    /* at most (default 1000) */
	double min_seconds; /* and at least this long in all (default 0.2) */
	bool warm;	    /* time on hot caches: no input rotation */
	bool graph;	    /* time graph replays (backends that have them) */
	uint64_t rotate_bytes; /* rotate input sets until they span this many
				* bytes (default 256 MiB: past any cache) */
	int launches; /* > 1 (with graph): that many launches in one graph,
		       * launch i on input set i mod sets; a sample is one
		       * replay divided by launches (default 1) */
};

struct mtp_timing {
	int reps, sets;		    /* timed launches, input sets rotated */
	double median, q1, q3, min; /* seconds per launch */
	double iqr_pct;		    /* (q3 - q1) / median * 100 */
	bool device_timer;	    /* device events (else the host clock) */
	bool graph;		    /* graph replay was used */
	int launches;		    /* launches per graph (1: one each) */
	double *samples;	    /* every timed launch, sorted (owned) */
};

void mtp_timing_opts_init(struct mtp_timing_opts *o);
void mtp_timing_fini(struct mtp_timing *t);

/* Compares timings against a baseline (ARCHITECTURE.md "Timing"): a two-sided
 * Mann-Whitney U test on the raw samples at level alpha, and the ratio of
 * medians. FASTER/SLOWER need both significance and a change of at least
 * min_effect (0.03 = 3 %); SAME when the change is below min_effect;
 * AMBIGUOUS when it is not below min_effect but not significant either.
 * *ratio = median(cur) / median(base); *p = the test's p-value. */
enum mtp_verdict mtp_perf_compare(const double *base, int nb, const double *cur,
				  int nc, double min_effect, double alpha,
				  double *ratio, double *p);

/* The gate's verdict (docs/BENCHMARKS.md "Method"): rep[0..n_rep) are
 * repeats of one measurement (each a mtp_timing with its samples), base
 * the baseline's samples and base_spread its run-to-run spread (0 when it
 * recorded none). The noise floor, *floor, is the largest of min_effect,
 * base_spread and the repeats' own spread, (max median - min median) / min
 * median. Each repeat is compared with the baseline (mtp_perf_compare at
 * that floor): SLOWER or FASTER only if every repeat says so, SAME if one
 * says SAME or two point opposite ways (the effect is not above the
 * noise), AMBIGUOUS otherwise. *ratio = median of the pooled repeats over
 * the baseline's median; *p = the largest p of the repeats. With one repeat
 * and no base_spread it is mtp_perf_compare. */
enum mtp_verdict mtp_perf_gate(const double *base, int nb, double base_spread,
			       const struct mtp_timing *rep, int n_rep,
			       double min_effect, double alpha, double *ratio,
			       double *p, double *floor);
/* (max - min) / min of the medians of rep[0..n): the run-to-run spread. */
double mtp_timing_spread(const struct mtp_timing *rep, int n);
/* All the samples of rep[0..n) as one timing, into out (free it with
 * mtp_timing_fini); the flags are rep[0]'s. */
enum mtp_status mtp_timing_pool(const struct mtp_timing *rep, int n,
				struct mtp_timing *out);

/* How `this` compares with `other` (seconds each) in words: "1.22x faster"
 * when it takes less time (other / this), "1.22x slower" when it takes more
 * (this / other); "-" when either time is not positive. */
void mtp_speed_words(double this_s, double other_s, char *buf, size_t n);

/* Bytes an ideal kernel moves (every input read once, every output written
 * once) and the flops of the math, from the op table. */
void mtp_op_cost(const struct mtp_call *c, double *bytes, double *flops);

/* Times host call c on be (inputs are host tensors; copies are made and
 * rotated on the device). The outputs of the last timed launch are returned
 * in out (host tensors, allocated here, signature order). */
enum mtp_status mtp_time_call(struct mtp_backend *be, const struct mtp_call *c,
			      const struct mtp_timing_opts *o,
			      struct mtp_timing *t, struct mtp_tensor *out);

/* Device copy bandwidth in bytes/s (read + write counted) over a buffer of
 * `bytes`; 0 if the backend has no copy. */
enum mtp_status mtp_probe_copy_bandwidth(struct mtp_backend *be, size_t bytes,
					 double *bytes_per_s);

/* The fp32 FMA peak of the host CPU, measured: the threads a host backend
 * runs (OMP_NUM_THREADS, else the online CPUs), each on chains of fused
 * multiply-adds in registers, at 8 lanes (ymm) and 16 (zmm, with
 * AVX-512); 2 flops per lane. All 0 where there is neither (not x86-64, no
 * AVX2+FMA). */
struct mtp_fma_peak {
	double flops_per_s; /* the larger of ymm and zmm */
	double ymm, zmm;
	int threads;
};
void mtp_probe_fma_host(struct mtp_fma_peak *p);

#endif
