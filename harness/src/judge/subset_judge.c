/*
 * Judging a dump with weights by subset (FORMAT.md v2 rules 3, 5, 6): what
 * the partial judgement compares, per step of an mtp_step or a chain.
 *
 *  - A step with observed logits_rows: its logits are compared at those
 *    rows only (the reference's logits, renumbered into the case's kept
 *    vocabulary by mtp_captured_prepare, projected onto them), and its token
 *    as a necessary condition: listed in logits_rows and the argmax over
 *    those rows (the lowest column among equal maxima; tokens compared as
 *    columns of logits_rows, R for an id not listed).
 *  - A step whose head is a subset and that has no logits_rows: its logits
 *    and token are not judged.
 *  - A captured block_in whose layer's projection is a subset: compared at
 *    the listed columns only (judge.c asks mtp_subset_columns).
 *
 * Everything else (hidden_pre, hidden_post, streams, recycled, head_hidden)
 * is judged whole: it is computed from the captured block outputs, which a
 * dump carries whole. The result says the judgement is partial and what
 * was judged.
 */
#include "judge.h"
#include "ops/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
		int64_t id = mtp_subset_at(got_ids, i);
		int64_t col = id < 0 ? -1 : mtp_subset_find(lr, id);

		((int64_t *)got->data)[i] = col < 0 ? r : col;
	}
	return st;
}

struct view {
	struct mtp_tensor *want;    /* signature order: views, some owned */
	struct mtp_tensor_list obs; /* views, the tokens owned */
	struct mtp_tensor *owned;   /* 3 per step: logits, want/got token */
	int n_owned;
};

static void view_fini(struct view *v)
{
	for (int i = 0; i < v->n_owned; i++)
		mtp_tensor_fini(&v->owned[i]);
	free(v->owned);
	free(v->want);
	free(v->obs.items);
}

/* What step s judges of the vocabulary: with logits_rows, the projection;
 * without, nothing when its head is a subset (both outputs left out of
 * obs), else the outputs as they are. */
static enum mtp_status view_step(const struct mtp_case *c,
				 const struct mtp_case_call *p, int64_t s,
				 const struct mtp_tensor *ref, struct view *v)
{
	char step[MTP_NAME_MAX], layer[MTP_NAME_MAX], n[2 * MTP_NAME_MAX];
	const struct mtp_named *lr, *tok;
	struct mtp_tensor *o = &v->owned[3 * s];
	int il, it;
	enum mtp_status st;

	mtp_subset_step_names(c, s, step, layer, sizeof(step));
	snprintf(n, sizeof(n), "observed/%slogits_rows", step);
	lr = mtp_list_find(&c->companions, n);
	snprintf(n, sizeof(n), "%slogits", step);
	il = mtp_call_out_index(&p->call, n);
	snprintf(n, sizeof(n), "%stoken", step);
	it = mtp_call_out_index(&p->call, n);
	tok = mtp_list_find(&c->observed, n);
	snprintf(n, sizeof(n), "%shead_weight", layer);
	if (!lr || il < 0) {
		bool drop = mtp_subset_decl_of(c, n) != NULL;
		struct mtp_named *e;

		for (int i = 0; drop && i < 2; i++) {
			snprintf(n, sizeof(n), "%s%s", step,
				 i ? "token" : "logits");
			e = mtp_list_find(&v->obs, n);
			if (e)
				e->name[0] = 0; /* not judged */
		}
		return MTP_OK;
	}
	{
		int64_t t = ref[il].shape[0], r = mtp_tensor_numel(&lr->t);
		int64_t vk = ref[il].shape[1], shape[2] = {t, r};

		st = mtp_tensor_alloc(&o[0], ref[il].dtype, 2, shape);
		for (int64_t i = 0; !st && i < t; i++)
			for (int64_t j = 0; j < r; j++) {
				int64_t col = mtp_subset_at(&lr->t, j);

				mtp_store(o[0].dtype, o[0].data,
					  (size_t)(i * r + j),
					  col >= 0 && col < vk
						  ? mtp_load(ref[il].dtype,
							     ref[il].data,
							     (size_t)(i * vk +
								      col))
						  : 0);
			}
	}
	if (st)
		return st;
	v->want[il] = o[0];
	if (!tok || it < 0)
		return MTP_OK;
	st = token_columns(&o[0], &lr->t, &tok->t, &o[1], &o[2]);
	if (!st) {
		struct mtp_named *e = mtp_list_find(&v->obs, tok->name);

		if (e)
			e->t = o[2];
		v->want[it] = o[1];
	}
	return st;
}

static enum mtp_status build_view(const struct mtp_case *c,
				  const struct mtp_case_call *p,
				  const struct mtp_tensor *ref, struct view *v)
{
	int64_t k = mtp_subset_steps(c);
	enum mtp_status st = MTP_OK;

	v->want = calloc((size_t)p->call.n_out + 1, sizeof(*v->want));
	v->owned = calloc((size_t)(3 * k), sizeof(*v->owned));
	if (!v->want || !v->owned)
		return MTP_ERR_NOMEM;
	v->n_owned = (int)(3 * k);
	memcpy(v->want, ref, (size_t)p->call.n_out * sizeof(*ref));
	mtp_list_init(&v->obs);
	for (int i = 0; i < c->observed.n; i++) {
		struct mtp_named *e = mtp_list_add(&v->obs, "");

		if (!e)
			return MTP_ERR_NOMEM;
		*e = c->observed.items[i];
	}
	for (int64_t s = 0; !st && s < k; s++)
		st = view_step(c, p, s, ref, v);
	return st;
}

static void add(char *buf, size_t n, const char *text)
{
	size_t len = strlen(buf);

	if (len + 1 < n)
		snprintf(buf + len, n - len, "%s%s", len ? "; " : "", text);
}

static void describe_partial(struct mtp_result *r, const struct mtp_case *c)
{
	char step[MTP_NAME_MAX], layer[MTP_NAME_MAX], n[2 * MTP_NAME_MAX];
	char text[2 * MTP_NAME_MAX + 96];
	long long with_rows = 0, rows = 0, dropped = 0;

	r->partial = true;
	r->judged[0] = 0;
	for (int i = 0; i < c->n_subsets; i++) {
		const struct mtp_subset_decl *d = &c->subsets[i];

		snprintf(text, sizeof(text), "%s: %lld of %lld rows%s", d->name,
			 (long long)d->stored_rows, (long long)d->full_rows,
			 mtp_subset_is_proj(d->name)
				 ? " (block_in judged at those columns)"
				 : "");
		add(r->judged, sizeof(r->judged), text);
	}
	for (int64_t s = 0; s < mtp_subset_steps(c); s++) {
		const struct mtp_named *lr;

		mtp_subset_step_names(c, s, step, layer, sizeof(step));
		snprintf(n, sizeof(n), "observed/%slogits_rows", step);
		lr = mtp_list_find(&c->companions, n);
		snprintf(n, sizeof(n), "%shead_weight", layer);
		if (lr) {
			with_rows++;
			rows = (long long)mtp_tensor_numel(&lr->t);
		} else if (mtp_subset_decl_of(c, n)) {
			dropped++;
		}
	}
	if (with_rows) {
		snprintf(text, sizeof(text),
			 "logits at their logits_rows (%lld rows) in %lld "
			 "step(s); token as a necessary condition (listed in "
			 "logits_rows and their argmax)",
			 rows, with_rows);
		add(r->judged, sizeof(r->judged), text);
	}
	if (dropped) {
		snprintf(text, sizeof(text),
			 "logits and token not judged in %lld step(s) (a head "
			 "subset without logits_rows)",
			 dropped);
		add(r->judged, sizeof(r->judged), text);
	}
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
