/*
 * One result object of a results file, read for `mtpcheck report`: every
 * field checked as it is read (merge_field.c), so that an edited or foreign
 * file is refused with one line naming the field instead of turning into
 * silent INVALIDs; and the file's verdict weighed against its own outputs:
 * a PASSED that an output denies is INVALID, one that compared no element
 * is SKIPPED ("nothing compared"), except where the run checked the
 * weights only (verify --weights-only compares no output by design).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge_int.h"

enum {
	REQ = MTP_JW_REQUIRED | MTP_JW_SPECIAL, /* a metric the writer keeps */
	OPT = MTP_JW_SPECIAL			/* one added later */
};

static bool take_threshold(const struct mtp_jwhere *w, const cJSON *c,
			   struct mtp_cmp *m)
{
	struct mtp_jwhere t = *w;
	const cJSON *th;

	if (!mtp_jw_kind(w, c, "threshold", true, true, &th))
		return false;
	snprintf(t.at, sizeof(t.at), "%.80s.threshold", w->at);
	m->tol.budget =
		cJSON_GetObjectItemCaseSensitive(th, "normwise_max") != NULL;
	return mtp_jw_num(&t, th, "rtol", REQ, &m->tol.rtol) &&
	       mtp_jw_num(&t, th, "atol", REQ, &m->tol.atol) &&
	       mtp_jw_num(&t, th, "normwise_max", OPT, &m->tol.norm_max) &&
	       mtp_jw_num(&t, th, "element_max_of_rms", OPT,
			  &m->tol.elem_max) &&
	       mtp_jw_text(&t, th, "origin", true, m->tol.origin,
			   sizeof(m->tol.origin));
}

/* A token output's optional draft agreement (schema 2.2). */
static bool take_agreement(const struct mtp_jwhere *w, const cJSON *c,
			   struct mtp_agreement *a)
{
	struct mtp_jwhere t = *w;
	const cJSON *o;

	if (!mtp_jw_kind(w, c, "agreement", false, true, &o))
		return false;
	if (!o)
		return true;
	snprintf(t.at, sizeof(t.at), "%.80s.agreement", w->at);
	if (!mtp_jw_count(&t, o, "rows", true, &a->rows) ||
	    !mtp_jw_counts(&t, o, "agree", true, -MTP_AGREE_STEPS, a->agree,
			   &a->steps) ||
	    !mtp_jw_num(&t, o, "margin_min", REQ, &a->margin_min) ||
	    !mtp_jw_num(&t, o, "margin_median", REQ, &a->margin_median) ||
	    !mtp_jw_num(&t, o, "disagree_margin_max", REQ,
			&a->disagree_margin_max))
		return false;
	for (int s = 0; s < a->steps; s++)
		if (a->agree[s] > a->rows)
			return mtp_jw_refuse(&t, "agree",
					     "more rows agree than there are");
	return true;
}

/* One output object (w->at names it), as far as the reports show it. */
static bool take_cmp(const struct mtp_jwhere *w, const cJSON *c,
		     struct mtp_cmp *m)
{
	int n_hist;

	if (!cJSON_IsObject(c))
		return mtp_jw_refuse(w, NULL, "not an object");
	m->has_argmax =
		cJSON_GetObjectItemCaseSensitive(c, "argmax_rows") != NULL;
	if (!mtp_jw_text(w, c, "tensor", true, m->name, sizeof(m->name)) ||
	    !mtp_jw_bool(w, c, "passed", true, &m->passed) ||
	    !mtp_jw_bool(w, c, "shape_ok", true, &m->shape_ok) ||
	    !mtp_jw_text(w, c, "shape_error", false, m->shape_msg,
			 sizeof(m->shape_msg)) ||
	    !mtp_jw_count(w, c, "elements", true, &m->n) ||
	    !mtp_jw_count(w, c, "bad", true, &m->n_bad) ||
	    !mtp_jw_count(w, c, "nan_inf_mismatch", false,
			  &m->n_special_mismatch) ||
	    !mtp_jw_count(w, c, "tokens_inside_margin", false,
			  &m->n_ambiguous) ||
	    !mtp_jw_count(w, c, "argmax_rows", false, &m->argmax_rows) ||
	    !mtp_jw_count(w, c, "argmax_agree", false, &m->argmax_agree) ||
	    !mtp_jw_num(w, c, "max_abs", REQ, &m->max_abs) ||
	    !mtp_jw_num(w, c, "max_rel", REQ, &m->max_rel) ||
	    !mtp_jw_num(w, c, "headroom", REQ, &m->headroom) ||
	    !mtp_jw_num(w, c, "nmse", REQ, &m->nmse) ||
	    !mtp_jw_num(w, c, "normwise", OPT, &m->rel_norm) ||
	    !mtp_jw_num(w, c, "worst_got", REQ, &m->worst_got) ||
	    !mtp_jw_num(w, c, "worst_want", REQ, &m->worst_want) ||
	    !mtp_jw_counts(w, c, "worst_index", true, -MTP_MAX_DIMS,
			   m->worst_coord, &m->worst_ndim) ||
	    !mtp_jw_counts(w, c, "ulp_histogram", false, MTP_ULP_BUCKETS,
			   m->ulp_hist, &n_hist) ||
	    !take_threshold(w, c, m) || !take_agreement(w, c, &m->agreement))
		return false;
	m->worst = m->worst_ndim ? 0 : -1;
	return true;
}

static bool take_outputs(const struct mtp_jwhere *w, const cJSON *outs,
			 struct mtp_result *r)
{
	struct mtp_jwhere at = *w;
	int n = cJSON_GetArraySize(outs), i = 0;

	if (!n)
		return true;
	r->cmp = calloc((size_t)n, sizeof(*r->cmp));
	if (!r->cmp)
		return mtp_jw_refuse(w, "outputs", "out of memory");
	for (const cJSON *c = outs->child; c; c = c->next, i++) {
		snprintf(at.at, sizeof(at.at), "%.70s.outputs[%d]", w->at, i);
		r->n_cmp = i + 1;
		if (!take_cmp(&at, c, &r->cmp[i]))
			return false;
		if (r->first_bad < 0 && !r->cmp[i].passed)
			r->first_bad = i;
	}
	return true;
}

/* The diagnosis, where the file names one (code null: none matched). */
static bool take_diag(const struct mtp_jwhere *w, const cJSON *o,
		      struct mtp_result *r)
{
	struct mtp_jwhere at = *w;
	const cJSON *d;
	const char *code;

	if (!mtp_jw_kind(w, o, "diagnosis", false, true, &d))
		return false;
	snprintf(at.at, sizeof(at.at), "%.80s.diagnosis", w->at);
	if (!d)
		return true;
	if (!mtp_jw_str(&at, d, "code", false, &code) ||
	    !mtp_jw_text(&at, d, "text", false, r->diag.text,
			 sizeof(r->diag.text)))
		return false;
	if (*code)
		mtp_diag_parse(code, &r->diag.diag);
	r->diag.info = r->diag.diag == MTP_DIAG_NORM_ROUNDING;
	return true;
}

/* The verdict the file claims, against what its outputs show. */
static void weigh_claim(struct mtp_result *r, bool weights_only)
{
	bool compared = false; /* an element of some output */

	if (r->verdict != MTP_PASSED)
		return;
	for (int i = 0; i < r->n_cmp; i++)
		compared = compared || r->cmp[i].n > 0;
	if (r->first_bad >= 0) {
		r->verdict = MTP_INVALID;
		snprintf(r->message, sizeof(r->message),
			 "PASSED in the results file, but its output "
			 "'%.64s' did not pass",
			 r->cmp[r->first_bad].name);
	} else if (!compared && !weights_only) {
		r->verdict = MTP_SKIPPED;
		snprintf(r->message, sizeof(r->message),
			 "nothing compared: PASSED in the results file, but "
			 "%s",
			 r->n_cmp ? "its outputs compared no element"
				  : "with no output compared");
	}
}

static bool take_verdict(const struct mtp_jwhere *w, const cJSON *o,
			 struct mtp_result *r)
{
	const char *s;

	if (!mtp_jw_str(w, o, "verdict", true, &s))
		return false;
	for (int v = 0; v < MTP_VERDICT_COUNT; v++)
		if (!strcmp(mtp_verdict_name(v), s)) {
			r->verdict = (enum mtp_verdict)v;
			return true;
		}
	return mtp_jw_refuse(w, "verdict",
			     "not a verdict (PASSED, FAILED, MISTRUSTED, "
			     "UNIMPLEMENTED, SKIPPED, CRASHED, TIMEOUT, "
			     "INVALID)");
}

static bool take_result(const struct mtp_jwhere *w, const cJSON *o,
			const char *col, const struct mtp_merge_origin *from,
			struct mtp_result *r)
{
	const cJSON *outs;
	const char *op, *family;

	memset(r, 0, sizeof(*r));
	r->first_bad = -1;
	snprintf(r->backend, sizeof(r->backend), "%s", col);
	if (!cJSON_IsObject(o))
		return mtp_jw_refuse(w, NULL, "not an object");
	if (!mtp_jw_text(w, o, "file", true, r->file, sizeof(r->file)) ||
	    !mtp_jw_text(w, o, "case", true, r->case_id, sizeof(r->case_id)) ||
	    !mtp_jw_str(w, o, "op", true, &op) ||
	    !mtp_jw_str(w, o, "family", true, &family) ||
	    !take_verdict(w, o, r) ||
	    !mtp_jw_text(w, o, "message", true, r->message,
			 sizeof(r->message)) ||
	    !mtp_jw_text(w, o, "repro", true, r->repro, sizeof(r->repro)) ||
	    !mtp_jw_num(w, o, "seconds", MTP_JW_REQUIRED | MTP_JW_FINITE_NONNEG,
			&r->seconds) ||
	    !mtp_jw_text(w, o, "note", false, r->note, sizeof(r->note)) ||
	    !mtp_jw_text(w, o, "judged", false, r->judged, sizeof(r->judged)) ||
	    !mtp_jw_text(w, o, "conventions_matched", false, r->conventions,
			 sizeof(r->conventions)) ||
	    !take_diag(w, o, r) ||
	    !mtp_jw_kind(w, o, "outputs", true, false, &outs) ||
	    !take_outputs(w, outs, r))
		return false;
	r->op = mtp_op_find(op); /* NULL: an op this mtpcheck lacks */
	mtp_family_parse(family, &r->family);
	r->partial = cJSON_GetObjectItemCaseSensitive(o, "judged") != NULL;
	weigh_claim(r, from->weights_only);
	return true;
}

bool mtp_merge_result(const struct mtp_jwhere *w, const cJSON *o,
		      const char *col, const struct mtp_merge_origin *from,
		      struct mtp_result *r)
{
	if (take_result(w, o, col, from, r))
		return true;
	free(r->cmp);
	r->cmp = NULL;
	r->n_cmp = 0;
	return false;
}
