/*
 * `mtpcheck bench`: times ops x shapes x backends on generated problems with
 * the timing engine, checks the outputs of the timed launches against the
 * reference, and prints one row per problem and backend: median and IQR,
 * GB/s and GFLOP/s from the op table's cost, the fraction of the copy
 * bandwidth measured on the same device in the same run, the speedup over the
 * reference, and for fused ops the same math as a sequence of unfused ops.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/compare.h"
#include "mtp/backend.h"
#include "mtp/baseline.h"
#include "mtp/meta.h"
#include "mtp/bench.h"
#include "mtp/generate.h"
#include "mtp/runner.h"
#include "mtp/timing.h"

#include "bench_int.h"

/* A generated problem of op at (t, h), as a host call. */
struct problem {
	struct mtp_case c;
	struct mtp_case_call cc;
};

static void problem_fini(struct problem *p)
{
	mtp_case_call_fini(&p->cc);
	mtp_case_fini(&p->c);
}

static enum mtp_status problem_make(const struct bench *b,
				    const struct mtp_op *op, int64_t t,
				    int64_t rows, int64_t h, int64_t parts,
				    struct problem *p, char *err, size_t errn)
{
	struct mtp_gen_spec spec;
	enum mtp_status st;

	memset(p, 0, sizeof(*p));
	mtp_gen_spec_init(&spec, op);
	spec.t = t;
	spec.rows = rows;
	spec.h = h;
	spec.m = b->m;
	spec.v = b->v;
	spec.f = b->f;
	spec.parts = parts;
	spec.seed = b->seed;
	st = mtp_case_generate(&spec, &p->c, err, errn);
	return st ? st : mtp_case_call_init(&p->c, &p->cc, err, errn);
}

static void free_outputs(struct mtp_tensor *t, int n)
{
	for (int i = 0; i < n; i++)
		mtp_tensor_fini(&t[i]);
}

/* Checks timed outputs against the judge; returns the first bad output's
 * name, or NULL. */
static const char *check_outputs(const struct mtp_call *c,
				 const struct mtp_tensor *got,
				 const struct mtp_tensor *want)
{
	for (int i = 0; i < c->n_out; i++) {
		struct mtp_tol tol;
		struct mtp_cmp cmp;

		if (c->sig->out[i].cls == MTP_TC_TOKEN)
			continue; /* tokens are judged through the logits' margin */
		double *acc = NULL;

		mtp_tol_for(c, c->sig->out[i].name, want[i].dtype, NULL, &tol);
		mtp_tol_accum(c, c->sig->out[i].name, &tol, &acc);
		mtp_compare(c->sig->out[i].name, &got[i], &want[i], &tol, false,
			    &cmp);
		free(acc);
		if (!cmp.passed)
			return c->sig->out[i].name;
	}
	return NULL;
}

struct row {
	int bi;			      /* the backend's index */
	const struct mtp_timing *rep; /* the repeats pooled in t */
	int n_rep;
	const char *op, *backend, *check;
	char shape[64];
	struct mtp_timing t;
	double bytes, flops, peak, ref_median;
	double fma_peak; /* flop/s, or 0 where the FMA probe does not apply */
	double warm_median; /* --launches: the same graph on one input set */
	const char *note;
};

/* The verdict against the baseline row of the same op, shape and backend;
 * writes a short text into buf. */
static void vs_baseline(struct bench *b, const struct row *r, char *buf,
			size_t n, enum mtp_verdict *v)
{
	const struct mtp_baseline_row *br =
		mtp_baseline_find(&b->base, r->op, r->shape, r->backend);
	double ratio, p, floor;

	*v = MTP_VERDICT_COUNT;
	buf[0] = 0;
	if (!b->baseline_path)
		return;
	if (!br) {
		snprintf(buf, n, "  base: none");
		return;
	}
	*v = mtp_perf_gate(br->samples, br->n, br->spread, r->rep, r->n_rep,
			   b->min_effect, 0.01, &ratio, &p, &floor);
	/* speed of new over base (>1 = faster); p: the chance of samples this
	 * different if the speed had not changed (the largest of the
	 * repeats'); floor: the noise floor, the smallest change that counts */
	snprintf(buf, n,
		 "  base vs new: %.3fx (>1 = faster) %s, p %.2g, floor %.0f %% "
		 "(%d repeat%s)",
		 ratio > 0 ? 1 / ratio : NAN, mtp_verdict_name(*v), p,
		 100 * floor, r->n_rep, r->n_rep > 1 ? "s" : "");
	b->n_slower += *v == MTP_SLOWER;
	b->n_ambiguous += *v == MTP_AMBIGUOUS;
}

/* Whether the row is compute-bound on its device: its flops take longer at
 * the FMA probe's rate than its bytes at the copy probe's (a roofline). */
static bool compute_bound(const struct row *r)
{
	return r->fma_peak > 0 && r->peak > 0 &&
	       r->flops / r->fma_peak > r->bytes / r->peak;
}

/* The row as data, for the pages the parent writes. */
static void fill_row(const struct row *r, double gbs, double gfs,
		     enum mtp_verdict v, struct mtp_bench_row *k)
{
	memset(k, 0, sizeof(*k));
	snprintf(k->op, sizeof(k->op), "%s", r->op);
	snprintf(k->shape, sizeof(k->shape), "%s", r->shape);
	snprintf(k->backend, sizeof(k->backend), "%s", r->backend);
	snprintf(k->check, sizeof(k->check), "%s", r->check);
	snprintf(k->note, sizeof(k->note), "%s", r->note ? r->note : "");
	if (v != MTP_VERDICT_COUNT)
		snprintf(k->vs_base, sizeof(k->vs_base), "%s",
			 mtp_verdict_name(v));
	k->median = r->t.median;
	k->iqr_pct = r->t.iqr_pct;
	k->gb_per_s = gbs;
	k->gflop_per_s = gfs;
	k->frac_peak = r->peak > 0 ? r->bytes / r->t.median / r->peak : 0;
	k->speedup_vs_ref = r->ref_median > 0 ? r->ref_median / r->t.median : 0;
}

/* The row on the console, and as JSON and data to the parent. */
static void print_row(struct bench *b, const struct row *r)
{
	struct mtp_bench_row k;
	double gbs = r->t.median > 0 ? r->bytes / r->t.median / 1e9 : 0;
	double gfs = r->t.median > 0 ? r->flops / r->t.median / 1e9 : 0;
	char pk[16] = "-", fp[16] = "-", sp[16] = "-", cmp[160];
	enum mtp_verdict v;
	const bool cb = compute_bound(r);

	if (r->peak > 0)
		snprintf(pk, sizeof(pk), "%.1f",
			 100 * r->bytes / r->t.median / r->peak);
	if (cb)
		snprintf(fp, sizeof(fp), "%.1f",
			 100 * r->flops / r->t.median / r->fma_peak);
	if (r->ref_median > 0 && r->t.median > 0)
		snprintf(sp, sizeof(sp), "%.1fx", r->ref_median / r->t.median);
	vs_baseline(b, r, cmp, sizeof(cmp), &v);
	fill_row(r, gbs, gfs, v, &k);
	printf("%-24s %-18s %-8s %11.2f %6.1f %8.1f %6s %9.1f %5s %8s  "
	       "%s%s%s%s%s\n",
	       r->op, r->shape, r->backend, r->t.median * 1e6, r->t.iqr_pct,
	       gbs, pk, gfs, fp, sp, r->check,
	       r->t.iqr_pct > 10 ? " noisy (IQR > 10 %)" : "",
	       r->note ? " " : "", r->note ? r->note : "", cmp);
	if (r->t.launches > 1 && r->warm_median > 0)
		printf("%-24s %-18s %-8s %11.2f   per launch, %d launches in "
		       "one graph on one input set (rotated over %d sets: "
		       "%.2fx this)\n",
		       "  same graph, warm", r->shape, r->backend,
		       r->warm_median * 1e6, r->t.launches, r->t.sets,
		       r->t.median / r->warm_median);
	fflush(stdout);
	fprintf(b->json,
		"{\"op\":\"%s\",\"shape\":\"%s\",\"backend\":\"%s\",\"median_"
		"s\":%.9g,"
		"\"q1_s\":%.9g,\"q3_s\":%.9g,\"iqr_pct\":%.3g,\"reps\":%d,"
		"\"input_sets\":%d,"
		"\"device_timer\":%s,\"graph\":%s,\"bytes\":%.0f,\"flops\":%."
		"0f,\"gb_per_s\":%.4g,"
		"\"peak_copy_gb_per_s\":%.4g,\"fraction_of_peak\":%.4g,"
		"\"speedup_vs_ref\":%.4g,"
		"\"check\":\"%s\",\"note\":\"%s\"",
		r->op, r->shape, r->backend, r->t.median, r->t.q1, r->t.q3,
		r->t.iqr_pct, r->t.reps, r->t.sets,
		r->t.device_timer ? "true" : "false",
		r->t.graph ? "true" : "false", r->bytes, r->flops, gbs,
		r->peak / 1e9,
		r->peak > 0 ? r->bytes / r->t.median / r->peak : 0,
		r->ref_median > 0 ? r->ref_median / r->t.median : 0, r->check,
		r->note ? r->note : "");
	if (r->fma_peak > 0)
		fprintf(b->json,
			",\"peak_fma_gflop_per_s\":%.4g,\"bound\":\"%s\","
			"\"fraction_of_fma_peak\":%.4g",
			r->fma_peak / 1e9, cb ? "compute" : "memory",
			r->flops / r->t.median / r->fma_peak);
	if (r->t.launches > 1)
		fprintf(b->json, ",\"launches\":%d,\"warm_median_s\":%.9g",
			r->t.launches, r->warm_median);
	fprintf(b->json, ",\"noisy\":%s", /* IQR over 10 % of the median */
		r->t.iqr_pct > 10 ? "true" : "false");
	if (v != MTP_VERDICT_COUNT)
		fprintf(b->json, ",\"vs_baseline\":\"%s\"",
			mtp_verdict_name(v));
	for (int i = 0; r->n_rep > 1 && i < r->n_rep; i++)
		fprintf(b->json, "%s%.9g", i ? "," : ",\"repeat_medians_s\":[",
			r->rep[i].median);
	fputs(r->n_rep > 1 ? "]" : "", b->json);
	fputs(",\"samples_s\":[", b->json);
	for (int i = 0; i < r->t.reps; i++)
		fprintf(b->json, "%s%.9g", i ? "," : "", r->t.samples[i]);
	fputs("]}", b->json);
	mtp_bench_sup_row(b, r->bi, &k);
}

/* Times p on backend i; the outputs come back in out. */
static enum mtp_status time_on(struct bench *b, int i, struct problem *p,
			       struct mtp_timing *t, struct mtp_tensor *out)
{
	struct mtp_timing_opts o = b->topt;

	if (mtp_backend_is_reference(b->be[i])) {
		o.warmup =
			0; /* the scalar reference is slow: one launch will do */
		o.min_reps = 1;
		o.min_seconds = 0;
		o.graph = false;
	}
	if (o.graph && !b->be[i]->iface->graph_capture)
		o.graph = false;
	return mtp_time_call(b->be[i], &p->cc.call, &o, t, out);
}

/* Times p on backend i b->repeats times (once for ref), each into rep;
 * t pools their samples. The outputs are the first repeat's. */
static enum mtp_status time_repeats(struct bench *b, int i, struct problem *p,
				    struct mtp_timing *t,
				    struct mtp_timing *rep, int *n_rep,
				    struct mtp_tensor *out)
{
	bool ref = mtp_backend_is_reference(b->be[i]);
	enum mtp_status st = time_on(b, i, p, &rep[0], out);

	for (*n_rep = 1; !st && !ref && *n_rep < b->repeats; ++*n_rep) {
		struct mtp_tensor more[MAXO] = {{0}};

		st = time_on(b, i, p, &rep[*n_rep], more);
		free_outputs(more, st ? 0 : p->cc.call.n_out);
	}
	if (!st)
		st = mtp_timing_pool(rep, *n_rep, t);
	for (int k = 0; st && k < *n_rep; k++)
		mtp_timing_fini(&rep[k]);
	if (st && *n_rep > 1)
		free_outputs(out, p->cc.call.n_out);
	return st;
}

/* With --launches N (and rotation): the same graph of N launches on one
 * input set, timed for the row (0 when not asked or it failed). */
static double warm_beside(struct bench *b, int i, struct problem *p,
			  const struct mtp_timing *rot)
{
	struct mtp_timing_opts o = b->topt;
	struct mtp_tensor out[MAXO] = {{0}};
	struct mtp_timing t;
	double med;

	if (rot->launches <= 1 || o.warm)
		return 0;
	o.warm = true;
	if (mtp_time_call(b->be[i], &p->cc.call, &o, &t, out))
		return 0;
	med = t.median;
	mtp_timing_fini(&t);
	free_outputs(out, p->cc.call.n_out);
	return med;
}

/* The same math as unfused ops, the op row's sequence (op->unfused): returns
 * the sum of their medians, or 0. */
static double unfused_time(struct bench *b, int i, const struct mtp_op *op,
			   int64_t t, int64_t h, const char **what)
{
	const struct mtp_op_unfused *seq = op->unfused;
	double sum = 0;

	if (!seq[0].op)
		return 0;
	*what = op->unfused_what;
	for (int k = 0; k < MTP_OP_UNFUSED_MAX && seq[k].op; k++) {
		struct problem p;
		struct mtp_timing tm;
		struct mtp_tensor out[MAXO] = {0};
		char err[MTP_ERR_MAX];

		if (problem_make(b, mtp_op_find(seq[k].op), t,
				 seq[k].per_stream ? t * b->m : t, h,
				 seq[k].parts, &p, err, sizeof(err)) ||
		    !mtp_backend_supports(b->be[i], &p.cc.call) ||
		    time_on(b, i, &p, &tm, out)) {
			problem_fini(&p);
			return 0;
		}
		sum += tm.median;
		mtp_timing_fini(&tm);
		free_outputs(out, p.cc.call.n_out);
		problem_fini(&p);
	}
	return sum;
}

/* The unfused comparison row under a fused op's row r (not for ref). */
static void print_unfused(struct bench *b, int i, const struct mtp_op *op,
			  int64_t t, int64_t h, const struct row *r)
{
	const char *what = NULL;
	char words[32];
	double uf = b->unfused && !mtp_backend_is_reference(b->be[i])
			    ? unfused_time(b, i, op, t, h, &what)
			    : 0;

	mtp_speed_words(r->t.median, uf, words, sizeof(words));
	if (uf > 0)
		printf("%-24s %-18s %-8s %11.2f   unfused (%s): fused is %s\n",
		       "  same math, unfused", r->shape, r->backend, uf * 1e6,
		       what, words);
}

/* Judge outputs: the ref backend's if it ran, else the reference once. */
static enum mtp_status judge_outputs(struct problem *p,
				     struct mtp_tensor *ref_out, bool have_ref,
				     struct mtp_tensor *judge)
{
	struct mtp_call *c = &p->cc.call;
	enum mtp_status st = MTP_OK;

	if (have_ref) {
		memcpy(judge, ref_out, (size_t)c->n_out * sizeof(*judge));
		return MTP_OK;
	}
	for (int i = 0; !st && i < c->n_out; i++) {
		judge[i] = c->out[i];
		judge[i].data = NULL;
		st = mtp_tensor_alloc(&judge[i], c->out[i].dtype,
				      c->out[i].ndim, c->out[i].shape);
	}
	struct mtp_call jc = *c;

	jc.out = judge;
	return st ? st : mtp_reference_run(&jc);
}

static void bench_problem(struct bench *b, const struct mtp_op *op, int64_t t,
			  int64_t h)
{
	struct problem p;
	struct mtp_tensor outs[MAXL][MAXO] = {{{0}}}, judge[MAXO] = {{0}};
	struct row r = {.op = op->name};
	double ref_median = 0;
	bool ran[MAXL] = {0}, have_ref = false;
	char err[MTP_ERR_MAX];
	struct mtp_timing tms[MAXL], reps[MAXL][BENCH_MAX_REPEATS];
	int n_rep[MAXL];

	if (problem_make(b, op, t, t, h, 2, &p, err, sizeof(err))) {
		printf("%-24s T=%lld H=%lld: cannot generate: %s\n", op->name,
		       (long long)t, (long long)h, err);
		b->failures++;
		return;
	}
	if (p.cc.call.n_out > MAXO) {
		printf("%-24s T=%lld H=%lld: cannot bench %d outputs (at most "
		       "%d)\n",
		       op->name, (long long)t, (long long)h, p.cc.call.n_out,
		       MAXO);
		b->failures++;
		problem_fini(&p);
		return;
	}
	snprintf(r.shape, sizeof(r.shape), "T=%lld H=%lld%s", (long long)t,
		 (long long)h, p.cc.call.dims.m > 1 ? " M=4" : "");
	if (p.cc.call.dims.m > 1)
		snprintf(r.shape, sizeof(r.shape), "T=%lld H=%lld M=%lld",
			 (long long)t, (long long)h,
			 (long long)p.cc.call.dims.m);
	r.bytes = 0;
	mtp_op_cost(&p.cc.call, &r.bytes, &r.flops);
	for (int i = 0; i < b->n_backends; i++) {
		if (!b->be[i] || !mtp_bench_sup_step(b, i, op->name, r.shape) ||
		    !mtp_backend_supports(b->be[i], &p.cc.call))
			continue;
		if (time_repeats(b, i, &p, &tms[i], reps[i], &n_rep[i],
				 outs[i])) {
			printf("%-24s %-18s %-8s FAILED: %s\n", op->name,
			       r.shape, b->backends[i], b->be[i]->error);
			b->failures++;
			mtp_bench_sup_row(b, i, NULL); /* done, without a row */
			continue;
		}
		ran[i] = true;
		if (mtp_backend_is_reference(b->be[i])) {
			ref_median = tms[i].median;
			have_ref = true;
			memcpy(judge, outs[i], sizeof(judge));
		}
	}
	mtp_bench_sup_step(b, -1, op->name, r.shape); /* the judge */
	bool judged = b->check && !judge_outputs(&p, judge, have_ref, judge);

	for (int i = 0; i < b->n_backends; i++) {
		const char *bad =
			ran[i] && judged
				? check_outputs(&p.cc.call, outs[i], judge)
				: NULL;

		if (!ran[i])
			continue;
		mtp_bench_sup_step(b, i, op->name, r.shape);
		r.bi = i;
		r.backend = b->backends[i];
		r.t = tms[i];
		r.rep = reps[i];
		r.n_rep = n_rep[i];
		r.peak = b->peak[i];
		r.fma_peak = b->fma_peak[i];
		r.ref_median = ref_median;
		r.check = !judged ? "unchecked" : bad ? "FAILED" : "ok";
		r.note = bad;
		b->failures += bad != NULL;
		r.warm_median = warm_beside(b, i, &p, &tms[i]);
		print_row(b, &r);
		print_unfused(b, i, op, t, h, &r);
	}
	for (int i = 0; i < b->n_backends; i++) {
		for (int k = 0; ran[i] && k < n_rep[i]; k++)
			mtp_timing_fini(&reps[i][k]);
		if (ran[i])
			mtp_timing_fini(&tms[i]);
		if (ran[i] && !(have_ref && mtp_backend_is_reference(b->be[i])))
			free_outputs(outs[i], p.cc.call.n_out);
	}
	free_outputs(judge, p.cc.call.n_out);
	problem_fini(&p);
}

void mtp_bench_child(struct bench *b)
{
	int p = 0;

	mtp_bench_open_backends(b);
	for (int i = 0; i < b->n_backends; i++)
		b->opened += b->be[i] != NULL;
	mtp_bench_sup_head(b);
	if (!b->head_done)
		printf("\n%-24s %-18s %-8s %11s %6s %8s %6s %9s %5s %8s  %s\n",
		       "op", "shape", "backend", "median_us", "IQR%", "GB/s",
		       "%peak", "GFLOP/s", "%fma", "vs_ref", "check");
	for (int o = 0; b->opened && o < b->n_ops && !mtp_signals_caught(); o++)
		for (int h = 0; h < b->n_h && !mtp_signals_caught(); h++)
			for (int t = 0; t < b->n_t && !mtp_signals_caught();
			     t++, p++) {
				if (p < b->resume)
					continue; /* done by an earlier child */
				b->problem = p;
				bench_problem(b, b->ops[o], b->ts[t], b->hs[h]);
			}
	for (int i = 0; i < b->n_backends; i++)
		mtp_backend_close(b->be[i]);
}

static int bench_main(struct bench *b, const struct mtp_bench_opts *o)
{
	int sig;

	mtp_bench_take_opts(b, o);
	mtp_bench_defaults(b);
	if (b->baseline_path) {
		char err[MTP_ERR_MAX];

		if (mtp_baseline_load(b->baseline_path, &b->base, err,
				      sizeof(err))) {
			fprintf(stderr, "mtpcheck bench: %s\n", err);
			return 2;
		}
	}
	/* SIGINT/SIGTERM (a CI job's time limit) from here on end the bench
	 * after the row in progress, with the JSON closed: the rows so far
	 * stay readable. From before the backends open and the probes run,
	 * which take seconds (under ASan on 2 loaded cores, more than the 2 s
	 * of inputs.bench_interrupt_twice, which then found no JSON at all) */
	mtp_signals_begin();
	if (b->json_path) {
		char err[MTP_ERR_MAX];

		if (mtp_atomic_open(&b->json_out, b->json_path, err,
				    sizeof(err))) {
			fprintf(stderr, "mtpcheck bench: %s\n", err);
			mtp_signals_end();
			return 2;
		}
	}
	sig = mtp_bench_supervise(b, mtp_bench_child);
	mtp_signals_end();
	mtp_baseline_free(&b->base);
	if (mtp_bench_write_pages(b))
		b->failures++;
	free(b->kept);
	if (b->baseline_path)
		printf("\nagainst %s: %d SLOWER, %d AMBIGUOUS\n",
		       b->baseline_path, b->n_slower, b->n_ambiguous);
	if (!b->opened && !b->failures)
		return 125;
	if (sig)
		return 128 + sig;
	if (b->failures || (b->gate && b->n_slower))
		return 1;
	return b->bisect && b->n_ambiguous ? 125 : 0;
}

int mtp_bench_main(const struct mtp_bench_opts *o)
{
	struct bench b = {0};

	return bench_main(&b, o);
}
