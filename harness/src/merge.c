/*
 * `mtpcheck report`: merges JSON results files (one per vendor machine, or one
 * per night) into one run and renders it with the same writers as `run`.
 * Each file's backends become columns labelled backend@host; the same label
 * seen again (another night) gets the file's date, so the matrix shows the
 * trend side by side. Built with libcjson (merge_none.c stands in otherwise).
 */
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/* One result object into r; the outputs' worst headroom becomes one cmp. */
static bool take_result(const cJSON *o, const char *label, struct mtp_result *r)
{
	const cJSON *outs = cJSON_GetObjectItem(o, "outputs");
	const cJSON *diag = cJSON_GetObjectItem(o, "diagnosis");
	double worst = 0;

	memset(r, 0, sizeof(*r));
	snprintf(r->file, sizeof(r->file), "%s", str(o, "file"));
	snprintf(r->case_id, sizeof(r->case_id), "%s", str(o, "case"));
	snprintf(r->backend, sizeof(r->backend), "%s", label);
	snprintf(r->message, sizeof(r->message), "%s", str(o, "message"));
	snprintf(r->repro, sizeof(r->repro), "%s", str(o, "repro"));
	r->op = mtp_op_find(str(o, "op"));
	mtp_family_parse(str(o, "family"), &r->family);
	r->verdict = verdict_of(str(o, "verdict"));
	r->first_bad = -1;
	for (const cJSON *c = outs ? outs->child : NULL; c; c = c->next) {
		const cJSON *h = cJSON_GetObjectItem(c, "headroom");

		worst = cJSON_IsNumber(h)
				? (h->valuedouble > worst ? h->valuedouble
							  : worst)
			: cJSON_IsString(h) ? 1e300
					    : worst;
	}
	if (outs && outs->child) {
		r->cmp = calloc(1, sizeof(*r->cmp));
		if (!r->cmp)
			return false;
		r->n_cmp = 1;
		r->cmp[0].headroom = worst;
	}
	if (diag && cJSON_IsString(cJSON_GetObjectItem(diag, "code"))) {
		mtp_diag_parse(str(diag, "code"), &r->diag.diag);
		snprintf(r->diag.text, sizeof(r->diag.text), "%s",
			 str(diag, "text"));
		r->diag.info = r->diag.diag == MTP_DIAG_NORM_ROUNDING;
	}
	return true;
}

/* Whether an earlier file (results before `upto`) used this label. */
static bool label_used(const struct mtp_run *run, const char *label, int upto)
{
	for (int i = 0; i < upto; i++)
		if (!strcmp(run->results[i].backend, label))
			return true;
	return false;
}

static enum mtp_status add_file(struct mtp_run *run, const char *path,
				const cJSON *root, char *err, size_t errn)
{
	const cJSON *results = cJSON_GetObjectItem(root, "results");
	const cJSON *machine = cJSON_GetObjectItem(root, "machine");
	int base = run->n;

	if (strcmp(str(root, "format"), "mtpcheck-results") ||
	    !cJSON_IsArray(results)) {
		snprintf(err, errn, "%s: not an mtpcheck results file (format)",
			 path);
		return MTP_ERR_INVALID;
	}
	for (const cJSON *o = results->child; o; o = o->next) {
		char label[128];
		struct mtp_result *r;

		snprintf(label, sizeof(label), "%s@%s", str(o, "backend"),
			 str(machine, "host"));
		if (label_used(run, label, base)) /* another night of it */
			snprintf(label + strlen(label),
				 sizeof(label) - strlen(label), " %.16s",
				 str(root, "created"));
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
		if (!take_result(o, label, r))
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
			st = add_file(run, paths[i], root, err, errn);
		}
		cJSON_Delete(root);
		free(text);
	}
	return st;
}
