/*
 * Weights by subset (FORMAT.md v2, rules 1-3 and 6): an mtp_step whose
 * head_weight holds only the rows listed in head_rows (full_rows = V on the
 * weight) and whose observed logits are stored at the rows of logits_rows
 * only. The reference runs on the subset (V bound to the number of head
 * rows); the judge sees its logits at the logits_rows columns, and the token
 * as a necessary condition: it must be listed in logits_rows and be the
 * argmax over those rows (a tie at the maximum accepted). Tokens are
 * compared as columns of logits_rows. The result says the judgement is
 * partial, and what was judged.
 *
 * Not yet: subsets of embed_table, eh_proj / e_proj / h_proj and chains;
 * those are refused with one line.
 */
#include "judge.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct mtp_named *companion(const struct mtp_case *c,
					 const char *name)
{
	return mtp_list_find(&c->companions, name);
}

bool mtp_subset_present(const struct mtp_case *c)
{
	return c->companions.n > 0;
}

static int64_t at(const struct mtp_tensor *t, int64_t i)
{
	return (int64_t)mtp_load(t->dtype, t->data, (size_t)i);
}

static bool increasing_below(const struct mtp_tensor *t, int64_t lim)
{
	for (int64_t i = 0; i < mtp_tensor_numel(t); i++)
		if (at(t, i) < 0 || at(t, i) >= lim ||
		    (i && at(t, i) <= at(t, i - 1)))
			return false;
	return true;
}

/* Position of id in the sorted rows, or -1. */
static int64_t find_row(const struct mtp_tensor *rows, int64_t id)
{
	int64_t lo = 0, hi = mtp_tensor_numel(rows) - 1;

	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2, v = at(rows, mid);

		if (v == id)
			return mid;
		if (v < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

static enum mtp_status refuse(char *err, size_t errn, const char *what,
			      const char *why)
{
	snprintf(err, errn, "%s: %s", what, why);
	return MTP_ERR_INVALID;
}

enum mtp_status mtp_subset_check(const struct mtp_case *c, char *err,
				 size_t errn)
{
	const struct mtp_named *hr = companion(c, "inputs/head_rows");
	const struct mtp_named *hw = mtp_list_find(&c->inputs, "head_weight");

	if (!mtp_subset_present(c))
		return MTP_OK;
	for (int i = 0; i < c->companions.n; i++) {
		const char *n = c->companions.items[i].name;

		if (strcmp(n, "inputs/head_rows") &&
		    strcmp(n, "observed/logits_rows")) {
			snprintf(err, errn,
				 "%s: this subset is not judged yet (only "
				 "head_rows and observed/logits_rows of an "
				 "mtp_step)",
				 n);
			return MTP_ERR_UNSUPPORTED;
		}
	}
	if (c->op->id != MTP_OP_MTP_STEP)
		return refuse(err, errn, c->op->name,
			      "weights by subset are judged on mtp_step only");
	if (!hr || !hw || c->head_full_rows <= 0)
		return refuse(err, errn, "inputs/head_rows",
			      "a head subset needs head_weight with full_rows "
			      "and head_rows");
	if (hr->t.ndim != 1 || hr->t.dtype != MTP_I64 || hw->t.ndim != 2 ||
	    hr->t.shape[0] != hw->t.shape[0] ||
	    hw->t.shape[0] > c->head_full_rows)
		return refuse(err, errn, "inputs/head_rows",
			      "int64 [R] with R = the rows of head_weight, at "
			      "most full_rows");
	for (int i = 0; i < c->companions.n; i++) {
		const struct mtp_tensor *t = &c->companions.items[i].t;

		if (t->ndim != 1 || t->dtype != MTP_I64)
			return refuse(err, errn, c->companions.items[i].name,
				      "must be int64 [R]");
	}
	return MTP_OK;
}

enum mtp_status mtp_subset_check_values(const struct mtp_case *c, char *err,
					size_t errn)
{
	const struct mtp_named *hr = companion(c, "inputs/head_rows");

	if (!hr)
		return MTP_OK;
	if (!increasing_below(&hr->t, c->head_full_rows))
		return refuse(err, errn, "inputs/head_rows",
			      "not strictly increasing in [0, full_rows)");
	for (int i = 0; i < c->companions.n; i++) {
		const struct mtp_named *l = &c->companions.items[i];

		if (l == hr)
			continue;
		if (!increasing_below(&l->t, c->head_full_rows))
			return refuse(err, errn, l->name,
				      "not strictly increasing in [0, V)");
		for (int64_t k = 0; k < mtp_tensor_numel(&l->t); k++)
			if (find_row(&hr->t, at(&l->t, k)) < 0)
				return refuse(err, errn, l->name,
					      "lists a row that head_rows "
					      "does not");
	}
	return MTP_OK;
}

/* want_logits [T,R] from the reference's [T,Rh] at the logits_rows. */
static enum mtp_status project(const struct mtp_tensor *ref,
			       const struct mtp_tensor *hr,
			       const struct mtp_tensor *lr,
			       struct mtp_tensor *out)
{
	int64_t t = ref->shape[0], rh = ref->shape[1];
	int64_t r = mtp_tensor_numel(lr), shape[2] = {t, r};
	enum mtp_status st = mtp_tensor_alloc(out, ref->dtype, 2, shape);

	for (int64_t i = 0; !st && i < t; i++)
		for (int64_t j = 0; j < r; j++)
			mtp_store(out->dtype, out->data, (size_t)(i * r + j),
				  mtp_load(ref->dtype, ref->data,
					   (size_t)(i * rh +
						    find_row(hr, at(lr, j)))));
	return st;
}

/* Tokens as columns of logits_rows: want = the lowest column among the
 * maxima of the projected logits; got = the column of the observed id, or
 * R (outside every row) when it is not listed. */
static enum mtp_status token_columns(const struct mtp_tensor *want_logits,
				     const struct mtp_tensor *lr,
				     const struct mtp_tensor *got_ids,
				     struct mtp_tensor *want,
				     struct mtp_tensor *got)
{
	int64_t t = want_logits->shape[0], r = want_logits->shape[1];
	enum mtp_status st = mtp_tensor_alloc(want, MTP_I64, 1, &t);

	if (!st)
		st = mtp_tensor_alloc(got, MTP_I64, got_ids->ndim,
				      got_ids->shape);
	for (int64_t i = 0; !st && i < t; i++) {
		int64_t best = 0;

		for (int64_t j = 1; j < r; j++)
			if (mtp_load(want_logits->dtype, want_logits->data,
				     (size_t)(i * r + j)) >
			    mtp_load(want_logits->dtype, want_logits->data,
				     (size_t)(i * r + best)))
				best = j;
		((int64_t *)want->data)[i] = best;
	}
	for (int64_t i = 0; !st && i < mtp_tensor_numel(got); i++) {
		int64_t col = find_row(lr, at(got_ids, i));

		((int64_t *)got->data)[i] = col < 0 ? r : col;
	}
	return st;
}

struct view {
	struct mtp_tensor *want;    /* signature order: views, two owned */
	struct mtp_tensor_list obs; /* views, the token owned */
	struct mtp_tensor owned[3]; /* logits, want token, got token */
};

static void view_fini(struct view *v)
{
	for (int i = 0; i < 3; i++)
		mtp_tensor_fini(&v->owned[i]);
	free(v->want);
	free(v->obs.items);
}

/* The observed outputs as views, less the token (re-added as columns) and,
 * without logits_rows, the logits (rule 3: they cannot be placed). */
static enum mtp_status view_obs(const struct mtp_case *c, bool rows,
				struct view *v)
{
	mtp_list_init(&v->obs);
	for (int i = 0; i < c->observed.n; i++) {
		const struct mtp_named *n = &c->observed.items[i];
		struct mtp_named *e;

		if (!strcmp(n->name, "token") ||
		    (!rows && !strcmp(n->name, "logits")))
			continue;
		e = mtp_list_add(&v->obs, n->name);
		if (!e)
			return MTP_ERR_NOMEM;
		*e = *n;
	}
	return MTP_OK;
}

static enum mtp_status build_view(const struct mtp_case *c,
				  const struct mtp_case_call *p,
				  const struct mtp_tensor *ref, struct view *v)
{
	const struct mtp_named *lr = companion(c, "observed/logits_rows");
	const struct mtp_named *tok = mtp_list_find(&c->observed, "token");
	int il = mtp_call_out_index(&p->call, "logits");
	int it = mtp_call_out_index(&p->call, "token");
	enum mtp_status st;

	v->want = calloc((size_t)p->call.n_out + 1, sizeof(*v->want));
	if (!v->want)
		return MTP_ERR_NOMEM;
	memcpy(v->want, ref, (size_t)p->call.n_out * sizeof(*ref));
	st = view_obs(c, lr != NULL, v);
	if (st || !lr || il < 0 || it < 0)
		return st; /* no logits_rows: logits and token not judged */
	st = project(&ref[il], &companion(c, "inputs/head_rows")->t, &lr->t,
		     &v->owned[0]);
	v->want[il] = v->owned[0];
	if (!st && tok) {
		struct mtp_named *e = mtp_list_add(&v->obs, "token");

		st = e ? token_columns(&v->owned[0], &lr->t, &tok->t,
				       &v->owned[1], &v->owned[2])
		       : MTP_ERR_NOMEM;
		if (!st) {
			*e = *tok;
			e->t = v->owned[2];
			v->want[it] = v->owned[1];
		}
	}
	return st;
}

static void describe_partial(struct mtp_result *r, const struct mtp_case *c)
{
	const struct mtp_named *lr = companion(c, "observed/logits_rows");
	const struct mtp_named *hr = companion(c, "inputs/head_rows");

	r->partial = true;
	snprintf(r->judged, sizeof(r->judged),
		 "head_weight: %lld of %lld rows; logits at %lld rows%s",
		 (long long)mtp_tensor_numel(&hr->t),
		 (long long)c->head_full_rows,
		 (long long)(lr ? mtp_tensor_numel(&lr->t) : 0),
		 lr ? "; token as a necessary condition (listed in "
		      "logits_rows and their argmax)"
		    : "; logits and token not judged (no logits_rows)");
}

enum mtp_status mtp_judge_dump(struct mtp_result *r, const struct mtp_case *c,
			       const struct mtp_case_call *p,
			       const struct mtp_tensor *ref)
{
	struct view v = {0};
	enum mtp_status st;

	if (!mtp_subset_present(c))
		return mtp_judge_outputs(r, c, p, NULL, &c->observed, NULL,
					 ref);
	st = build_view(c, p, ref, &v);
	if (!st)
		st = mtp_judge_outputs(r, c, p, NULL, &v.obs, NULL, v.want);
	if (!st)
		describe_partial(r, c);
	view_fini(&v);
	return st;
}
