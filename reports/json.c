/*
 * The JSON results file of a run: machine and build facts, and every result
 * with its verdict, metrics, thresholds and their origin, and repro line. It
 * is written to a temporary file and renamed, so a crash never leaves a
 * partial report behind.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mtp/config.h"
#include "mtp/meta.h"
#include "mtp/runner.h"
#include "mtp/textio.h"
#include "report_file.h"

/* A token output's draft agreement (compare.h): rows per step, the rows
 * that agree at each step, the reference's margins. */
static void write_agreement(FILE *f, const struct mtp_agreement *a)
{
	fprintf(f, ",\"agreement\":{\"rows\":%lld,\"agree\":[",
		(long long)a->rows);
	for (int s = 0; s < a->steps; s++)
		fprintf(f, "%s%lld", s ? "," : "", (long long)a->agree[s]);
	fputs("],\"margin_min\":", f);
	mtp_json_num(f, a->margin_min);
	fputs(",\"margin_median\":", f);
	mtp_json_num(f, a->margin_median);
	fputs(",\"disagree_margin_max\":", f);
	mtp_json_num(f, a->disagree_margin_max);
	fputs("}", f);
}

static void write_cmp(FILE *f, const struct mtp_cmp *c)
{
	fputs("{\"tensor\":", f);
	mtp_json_str(f, c->name);
	fprintf(f, ",\"passed\":%s,\"shape_ok\":%s",
		c->passed ? "true" : "false", c->shape_ok ? "true" : "false");
	if (!c->shape_ok) {
		fputs(",\"shape_error\":", f);
		mtp_json_str(f, c->shape_msg);
	}
	fprintf(f, ",\"elements\":%lld,\"bad\":%lld,\"nan_inf_mismatch\":%lld",
		(long long)c->n, (long long)c->n_bad,
		(long long)c->n_special_mismatch);
	fputs(",\"max_abs\":", f);
	mtp_json_num(f, c->max_abs);
	fputs(",\"max_rel\":", f);
	mtp_json_num(f, c->max_rel);
	fputs(",\"headroom\":", f);
	mtp_json_num(f, c->headroom);
	fputs(",\"nmse\":", f);
	mtp_json_num(f, c->nmse);
	fputs(",\"normwise\":", f);
	mtp_json_num(f, c->rel_norm);
	fprintf(f, ",\"tokens_inside_margin\":%lld,\"compared\":%lld",
		(long long)c->n_ambiguous, (long long)mtp_cmp_judged(c));
	/* ROUNDING_BIAS (bias.h): z of the signed error, null when untested */
	fputs(",\"rounding_bias_z\":", f);
	if (c->bias.tested)
		mtp_json_num(f, c->bias.z);
	else
		fputs("null", f);
	fputs(",\"rounding_bias_mean_ulp\":", f);
	mtp_json_num(f, c->bias.mean);
	fprintf(f,
		",\"rounding_bias_n\":%lld,\"rounding_bias_mode\":\"%s\""
		",\"rounding_bias_fired\":%s",
		(long long)c->bias.n, c->bias.row_mode ? "rows" : "elements",
		c->bias.fired ? "true" : "false");
	fputs(",\"worst_index\":[", f);
	for (int d = 0; c->worst >= 0 && d < c->worst_ndim; d++)
		fprintf(f, "%s%lld", d ? "," : "",
			(long long)c->worst_coord[d]);
	fputs("],\"worst_got\":", f);
	mtp_json_num(f, c->worst_got);
	fputs(",\"worst_want\":", f);
	mtp_json_num(f, c->worst_want);
	fputs(",\"threshold\":{\"rtol\":", f);
	mtp_json_num(f, c->tol.rtol);
	fputs(",\"atol\":", f);
	mtp_json_num(f, c->tol.atol);
	if (c->tol.budget) {
		fputs(",\"normwise_max\":", f);
		mtp_json_num(f, c->tol.norm_max);
		fputs(",\"element_max_of_rms\":", f);
		mtp_json_num(f, c->tol.elem_max);
	}
	fputs(",\"origin\":", f);
	mtp_json_str(f, c->tol.origin);
	fputs("},\"ulp_histogram\":[", f);
	for (int i = 0; i < MTP_ULP_BUCKETS; i++)
		fprintf(f, "%s%lld", i ? "," : "", (long long)c->ulp_hist[i]);
	fputs("]", f);
	if (c->has_argmax)
		fprintf(f, ",\"argmax_rows\":%lld,\"argmax_agree\":%lld",
			(long long)c->argmax_rows, (long long)c->argmax_agree);
	if (c->agreement.steps)
		write_agreement(f, &c->agreement);
	fputs("}", f);
}

/* The claimed diagnosis (or null) and the error under every hypothesis. */
static void write_diag(FILE *f, const struct mtp_diag_result *d)
{
	fputs("{\"code\":", f);
	if (d->diag)
		mtp_json_str(f, mtp_diag_info(d->diag)->name);
	else
		fputs("null", f);
	fputs(",\"ratio\":", f);
	mtp_json_num(f, d->diag ? d->ratio : 0);
	fputs(",\"text\":", f);
	mtp_json_str(f, d->text);
	fputs(",\"hypotheses\":[", f);
	for (int i = 0; i < d->n_scores; i++) {
		const struct mtp_diag_score *s = &d->scores[i];

		fprintf(f, "%s{\"code\":", i ? "," : "");
		mtp_json_str(f, mtp_diag_info(s->diag)->name);
		fputs(",\"error_vs_hypothesis\":", f);
		mtp_json_num(f, s->err_hyp);
		fputs(",\"error_vs_reference\":", f);
		mtp_json_num(f, s->err_ref);
		fprintf(f, ",\"informative_outputs\":%d}", s->informative);
	}
	fputs("]}", f);
}

/* The elements judged over every output: 0 is never a PASSED (judge.c). */
static long long compared_elements(const struct mtp_result *r)
{
	long long n = 0;

	for (int i = 0; i < r->n_cmp; i++)
		n += (long long)mtp_cmp_judged(&r->cmp[i]);
	return n;
}

static void write_result(FILE *f, const struct mtp_result *r)
{
	fputs("{\"file\":", f);
	mtp_json_str(f, r->file);
	fputs(",\"case\":", f);
	mtp_json_str(f, r->case_id);
	fputs(",\"backend\":", f);
	mtp_json_str(f, r->backend);
	fputs(",\"op\":", f);
	mtp_json_str(f, r->op ? r->op->name : "");
	fputs(",\"family\":", f);
	mtp_json_str(f, mtp_family_name(r->family));
	fputs(",\"verdict\":", f);
	mtp_json_str(f, mtp_verdict_name(r->verdict));
	fputs(",\"message\":", f);
	mtp_json_str(f, r->message);
	if (r->note[0]) { /* partial judging (sampled vocabulary rows) */
		fprintf(f, ",\"partial\":%s,\"note\":",
			strncmp(r->note, "partial", 7) == 0 ? "true" : "false");
		mtp_json_str(f, r->note);
	}
	fputs(",\"first_bad_output\":", f);
	if (r->first_bad >= 0)
		mtp_json_str(f, r->cmp[r->first_bad].name);
	else
		fputs("null", f);
	fputs(",\"diagnosis\":", f);
	write_diag(f, &r->diag);
	if (r->partial) {
		fputs(",\"partial\":true,\"judged\":", f);
		mtp_json_str(f, r->judged);
	}
	if (r->conventions[0]) {
		fputs(",\"conventions_matched\":", f);
		mtp_json_str(f, r->conventions);
	}
	fputs(",\"repro\":", f);
	mtp_json_str(f, r->repro);
	fputs(",\"seconds\":", f);
	mtp_json_num(f, r->seconds);
	fprintf(f, ",\"compared_elements\":%lld", compared_elements(r));
	fputs(",\"outputs\":[", f);
	for (int i = 0; i < r->n_cmp; i++) {
		if (i)
			fputc(',', f);
		write_cmp(f, &r->cmp[i]);
	}
	fputs("]}", f);
}

/* A report's merge: how many files, the runs they came from, and where
 * each column came from (merge.c reads it back, so that a merged report
 * among the inputs of another gives its inputs' columns, and results of
 * one run are counted once). */
static void write_merge(FILE *f, const struct mtp_run *run)
{
	fprintf(f,
		",\"merge\":{\"inputs\":%d,\"repeats_dropped\":%d,"
		"\"runs\":[",
		run->n_merged, run->n_repeats);
	for (int i = 0, first = 1; i < run->n_devices; i++) {
		const char *id = run->devices[i].origin.run;
		bool again = false;

		for (int j = 0; j < i && !again; j++)
			again = !strcmp(run->devices[j].origin.run, id);
		if (again)
			continue;
		fputs(first ? "" : ",", f);
		mtp_json_str(f, id);
		first = 0;
	}
	fputs("],\"columns\":[", f);
	for (int i = 0; i < run->n_devices; i++) {
		const struct mtp_column_origin *o = &run->devices[i].origin;

		fputs(i ? ",{\"column\":" : "{\"column\":", f);
		mtp_json_str(f, run->devices[i].name);
		fputs(",\"backend\":", f);
		mtp_json_str(f, o->backend);
		fputs(",\"host\":", f);
		mtp_json_str(f, o->host);
		fputs(",\"run_id\":", f);
		mtp_json_str(f, o->run);
		fputs(",\"created\":", f);
		mtp_json_str(f, o->created);
		fprintf(f, ",\"weights_only\":%s}",
			o->weights_only ? "true" : "false");
	}
	fputs("]}", f);
}

static void write_header(FILE *f, const struct mtp_run *run)
{
	struct mtp_meta m;
	const char **names, **devices;
	int nb = mtp_report_backends(run, &names, &devices);

	mtp_meta_get(&m, run->opts.run_id);
	/* the 1.x top-level fields stay (older readers use them); meta has all */
	fputs("{\"format\":\"mtpcheck-results\",\"format_version\":2,", f);
	mtp_meta_json(f, run->opts.run_id, run->opts.seed, names,
		      nb > 0 ? nb : 0, devices);
	free(names);
	free(devices);
	fputs(",\"mtpcheck_version\":", f);
	mtp_json_str(f, MTP_VERSION);
	fputs(",\"command\":", f);
	mtp_json_str(f, run->command);
	fputs(",\"created\":", f);
	mtp_json_str(f, m.date);
	fputs(",\"machine\":{\"host\":", f);
	mtp_json_str(f, m.host);
	fputs(",\"system\":", f);
	mtp_json_str(f, m.system);
	fprintf(f, ",\"cpus\":%d},\"commit\":", m.cpus);
	mtp_json_str(f, m.commit);
	fprintf(f, ",\"seed\":%llu", (unsigned long long)run->opts.seed);
	fputs(",\"run_id\":", f);
	mtp_json_str(f, m.run_id);
	if (!strcmp(run->command, "report"))
		write_merge(f, run);
	fputs(",\"summary\":{", f);
	for (int v = 0, first = 1; v < MTP_VERDICT_COUNT; v++) {
		if (!run->counts[v])
			continue;
		fprintf(f, "%s\"%s\":%d", first ? "" : ",", mtp_verdict_name(v),
			run->counts[v]);
		first = 0;
	}
	fprintf(f, "},\"exit_code\":%d,", (int)mtp_run_exit_code(run));
	if (run->signal) /* as a bench file: the run stopped early */
		fprintf(f, "\"interrupted_by_signal\":%d,", run->signal);
}

static void body(FILE *f, const struct mtp_run *run)
{
	write_header(f, run);
	fputs("\"results\":[\n", f);
	for (int i = 0; i < run->n; i++) {
		write_result(f, &run->results[i]);
		fputs(i + 1 < run->n ? ",\n" : "\n", f);
	}
	fputs("]}\n", f);
}

enum mtp_status mtp_report_json(const struct mtp_run *run, const char *path,
				char *err, size_t errn)
{
	return mtp_report_write(run, path, body, err, errn);
}
