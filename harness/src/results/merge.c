/*
 * `mtpcheck report`: merges JSON results files (one per vendor machine, or one
 * per night) into one run and renders it with the same writers as `run`.
 * Each file's backends become columns labelled backend@host, with the device
 * line the file recorded; the same label seen again (another night) gets the
 * file's date, so the matrix shows the trend side by side. Bench files among
 * the inputs become the bench history (merge_bench.c). Built with libcjson
 * (merge_none.c stands in otherwise).
 */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge_int.h"
#include "mtp/meta.h"
#include "mtp/runner.h"
#include "mtp/textio.h"

static const char *str(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);

	return cJSON_IsString(v) ? v->valuestring : "";
}

static enum mtp_verdict verdict_of(const char *s)
{
	for (int v = 0; v < MTP_VERDICT_COUNT; v++)
		if (!strcmp(mtp_verdict_name(v), s))
			return (enum mtp_verdict)v;
	return MTP_INVALID;
}

/* A number as the writer keeps it: a JSON number, or "inf"/"-inf"/"nan". */
static double num(const cJSON *o, const char *k)
{
	const cJSON *v = cJSON_GetObjectItem(o, k);

	if (cJSON_IsNumber(v))
		return v->valuedouble;
	if (cJSON_IsString(v))
		return !strcmp(v->valuestring, "-inf")	? -INFINITY
		       : !strcmp(v->valuestring, "nan") ? NAN
							: INFINITY;
	return 0;
}

static bool flag(const cJSON *o, const char *k)
{
	return cJSON_IsTrue(cJSON_GetObjectItem(o, k));
}

/* One output object, as far as the reports show it. */
static void take_cmp(const cJSON *c, struct mtp_cmp *m)
{
	const cJSON *th = cJSON_GetObjectItem(c, "threshold");
	const cJSON *wi = cJSON_GetObjectItem(c, "worst_index");
	const cJSON *h = cJSON_GetObjectItem(c, "ulp_histogram");
	int k = 0;

	snprintf(m->name, sizeof(m->name), "%s", str(c, "tensor"));
	snprintf(m->shape_msg, sizeof(m->shape_msg), "%s",
		 str(c, "shape_error"));
	m->passed = flag(c, "passed");
	m->shape_ok = flag(c, "shape_ok");
	m->n = (int64_t)num(c, "elements");
	m->n_bad = (int64_t)num(c, "bad");
	m->max_abs = num(c, "max_abs");
	m->headroom = num(c, "headroom");
	m->rel_norm = num(c, "normwise");
	m->worst_got = num(c, "worst_got");
	m->worst_want = num(c, "worst_want");
	m->tol.rtol = num(th, "rtol");
	m->tol.atol = num(th, "atol");
	m->tol.budget = cJSON_GetObjectItem(th, "normwise_max") != NULL;
	m->tol.norm_max = num(th, "normwise_max");
	snprintf(m->tol.origin, sizeof(m->tol.origin), "%s", str(th, "origin"));
	for (const cJSON *d = wi ? wi->child : NULL; d && k < MTP_MAX_DIMS;
	     d = d->next)
		m->worst_coord[k++] = (int64_t)d->valuedouble;
	m->worst_ndim = k;
	m->worst = k ? 0 : -1;
	k = 0;
	for (const cJSON *b = h ? h->child : NULL; b && k < MTP_ULP_BUCKETS;
	     b = b->next)
		m->ulp_hist[k++] = (int64_t)b->valuedouble;
}

/* One result object into r, with its outputs. */
static bool take_result(const cJSON *o, const char *label, struct mtp_result *r)
{
	const cJSON *outs = cJSON_GetObjectItem(o, "outputs");
	const cJSON *diag = cJSON_GetObjectItem(o, "diagnosis");
	int n = cJSON_IsArray(outs) ? cJSON_GetArraySize(outs) : 0;

	memset(r, 0, sizeof(*r));
	snprintf(r->file, sizeof(r->file), "%s", str(o, "file"));
	snprintf(r->case_id, sizeof(r->case_id), "%s", str(o, "case"));
	snprintf(r->backend, sizeof(r->backend), "%s", label);
	snprintf(r->message, sizeof(r->message), "%s", str(o, "message"));
	snprintf(r->repro, sizeof(r->repro), "%s", str(o, "repro"));
	r->op = mtp_op_find(str(o, "op"));
	mtp_family_parse(str(o, "family"), &r->family);
	r->verdict = verdict_of(str(o, "verdict"));
	r->seconds = num(o, "seconds");
	r->first_bad = -1;
	if (n > 0) {
		int i = 0;

		r->cmp = calloc((size_t)n, sizeof(*r->cmp));
		if (!r->cmp)
			return false;
		for (const cJSON *c = outs->child; c; c = c->next, i++) {
			take_cmp(c, &r->cmp[i]);
			if (r->first_bad < 0 && !r->cmp[i].passed)
				r->first_bad = i;
		}
		r->n_cmp = n;
		if (r->verdict == MTP_PASSED && r->first_bad >= 0) {
			r->verdict = MTP_INVALID; /* a pass its outputs deny */
			snprintf(r->message, sizeof(r->message),
				 "PASSED in the results file, but its output "
				 "'%.64s' did not pass",
				 r->cmp[r->first_bad].name);
		}
	} else if (r->verdict == MTP_PASSED) { /* nothing compared */
		r->verdict = MTP_INVALID;
		snprintf(r->message, sizeof(r->message),
			 "PASSED in the results file, but with no output "
			 "compared");
	}
	if (diag && cJSON_IsString(cJSON_GetObjectItem(diag, "code"))) {
		mtp_diag_parse(str(diag, "code"), &r->diag.diag);
		snprintf(r->diag.text, sizeof(r->diag.text), "%s",
			 str(diag, "text"));
		r->diag.info = r->diag.diag == MTP_DIAG_NORM_ROUNDING;
	}
	return true;
}

/* The labels earlier files used, and the run each came from: a shard of
 * the same run (same run_id; without one, the same host, command and
 * minute of creation) shares its column, another run gets a dated one. */
struct seen {
	int n, cap;
	struct {
		char label[128], run[160], column[128];
	} * v;
};

static void run_key(const cJSON *root, char *key, size_t n)
{
	const char *id = str(root, "run_id");

	if (*id)
		snprintf(key, n, "%s", id);
	else
		snprintf(key, n, "%s|%.16s", str(root, "command"),
			 str(root, "created"));
}

/* The column of (label, run): the one this run got before (a shard), the
 * label itself if no other run used it, else the label dated. */
static const char *column(struct seen *s, const char *label, const char *run,
			  const char *created)
{
	bool other = false;

	for (int i = 0; i < s->n; i++) {
		if (strcmp(s->v[i].label, label))
			continue;
		if (!strcmp(s->v[i].run, run))
			return s->v[i].column;
		other = true;
	}
	if (s->n == s->cap) {
		int cap = s->cap ? 2 * s->cap : 32;
		void *v = realloc(s->v, (size_t)cap * sizeof(*s->v));

		if (!v)
			return NULL;
		s->v = v;
		s->cap = cap;
	}
	snprintf(s->v[s->n].label, sizeof(s->v[s->n].label), "%s", label);
	snprintf(s->v[s->n].run, sizeof(s->v[s->n].run), "%s", run);
	snprintf(s->v[s->n].column, sizeof(s->v[s->n].column), "%.110s%s%.16s",
		 label, other ? " " : "", other ? created : "");
	for (int i = 0; other && i < s->n; i++) /* two runs in one minute */
		if (!strcmp(s->v[i].column, s->v[s->n].column))
			snprintf(s->v[s->n].column, sizeof(s->v[s->n].column),
				 "%.80s %.40s", label, run);
	return s->v[s->n++].column;
}

/* Column col's device: the one its file's meta records for the backend
 * (first seen wins: the shards of a run share their devices). */
static bool add_device(struct mtp_run *run, const cJSON *root, const char *col,
		       const char *backend)
{
	const cJSON *bes = cJSON_GetObjectItem(
		cJSON_GetObjectItem(root, "meta"), "backends");
	const char *dev = "unknown (the results file records no device)";

	for (int i = 0; i < run->n_devices; i++)
		if (!strcmp(run->devices[i].name, col))
			return true;
	for (const cJSON *b = cJSON_IsArray(bes) ? bes->child : NULL; b;
	     b = b->next)
		if (!strcmp(str(b, "name"), backend) && *str(b, "device"))
			dev = str(b, "device");
	return mtp_run_set_device(run, col, dev);
}

static enum mtp_status add_file(struct mtp_run *run, const char *path,
				const cJSON *root, struct seen *seen, char *err,
				size_t errn)
{
	const cJSON *results = cJSON_GetObjectItem(root, "results");
	const cJSON *machine = cJSON_GetObjectItem(root, "machine");
	char key[160];

	const cJSON *sv = cJSON_GetObjectItem(root, "schema_version");

	if (!mtp_schema_accept(path, cJSON_GetStringValue(sv), sv, err, errn))
		return MTP_ERR_INVALID;
	if (!strcmp(str(root, "format"), "mtpcheck-bench"))
		return mtp_merge_bench(run, path, root, err, errn);
	run_key(root, key, sizeof(key));
	if (strcmp(str(root, "format"), "mtpcheck-results")) {
		snprintf(err, errn,
			 "%s: format: not an mtpcheck results or bench file "
			 "(mtpcheck-results, mtpcheck-bench)",
			 path);
		return MTP_ERR_INVALID;
	}
	if (!cJSON_IsArray(results)) {
		snprintf(err, errn, "%s: results: %s", path,
			 results ? "not an array" : "missing");
		return MTP_ERR_INVALID;
	}
	for (const cJSON *o = results->child; o; o = o->next) {
		char label[128];
		const char *col;
		struct mtp_result *r;

		snprintf(label, sizeof(label), "%s@%s", str(o, "backend"),
			 str(machine, "host"));
		col = column(seen, label, key, str(root, "created"));
		if (!col || !add_device(run, root, col, str(o, "backend")))
			return MTP_ERR_NOMEM;
		if (run->n == run->cap) {
			int cap = run->cap ? 2 * run->cap : 256;
			struct mtp_result *v =
				realloc(run->results, (size_t)cap * sizeof(*v));

			if (!v)
				return MTP_ERR_NOMEM;
			run->results = v;
			run->cap = cap;
		}
		r = &run->results[run->n];
		if (!take_result(o, col, r))
			return MTP_ERR_NOMEM;
		run->counts[r->verdict]++;
		run->n++;
	}
	return MTP_OK;
}

enum mtp_status mtp_run_merge(struct mtp_run *run, const char *const *paths,
			      int n, char *err, size_t errn)
{
	enum mtp_status st = MTP_OK;
	struct seen seen = {0};

	snprintf(run->command, sizeof(run->command), "report");
	for (int i = 0; !st && i < n; i++) {
		char *text = mtp_read_text(paths[i]);
		cJSON *root = text ? cJSON_Parse(text) : NULL;

		if (!root) {
			snprintf(err, errn, "%s: %s", paths[i],
				 text ? "not valid JSON"
				      : "cannot read the file");
			st = MTP_ERR_INVALID;
		} else {
			st = add_file(run, paths[i], root, &seen, err, errn);
		}
		cJSON_Delete(root);
		free(text);
	}
	free(seen.v);
	return st;
}
