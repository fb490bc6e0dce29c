/*
 * --invariance: a token's outputs must not depend on the batch it came in
 * nor on its row. Engines verify N draft tokens in one call (q_len = N) and
 * decode one (q_len = 1); when the two take different kernels, the target's
 * verify logits differ from the draft's and greedy speculative decoding
 * accepts other tokens than plain decoding would. Tolerances cannot see it:
 * both kernels are within them. So a case that passed is called again on
 * its own rows, on the same worker: each row alone (T = 1) and the batch
 * rotated by one row (a lone row twice), or, for causal ops, its prefixes;
 * each output row must have the bits of the same token's row in the first
 * call, or lie within --invariance-ulps. Ops whose rows mix are said not
 * applicable in the result's note.
 */
#include "determinism.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void plan_not(struct mtp_row_plan *plan, const char *why, const char *op)
{
	plan->applicable = false;
	snprintf(plan->why, sizeof(plan->why), why, op);
}

static void plan_call(struct mtp_row_plan *plan, int64_t **at, int64_t n,
		      int64_t first, int64_t step, const char *what)
{
	struct mtp_row_call *rc = &plan->calls[plan->n_calls++];

	rc->n = n;
	rc->rows = *at;
	for (int64_t j = 0; j < n; j++)
		rc->rows[j] = (first + j * step) % plan->storage[0];
	*at += n;
	snprintf(rc->what, sizeof(rc->what), "%s", what);
}

static void plan_independent(struct mtp_row_plan *plan, int64_t n,
			     int64_t singles, int64_t **at)
{
	int64_t k = singles < 1			      ? 1
		    : singles > MTP_INVAR_SINGLES_MAX ? MTP_INVAR_SINGLES_MAX
						      : singles;

	k = n < k ? n : k;
	char what[80];

	for (int64_t i = 0; i < k; i++) {
		int64_t row = k > 1 ? i * (n - 1) / (k - 1) : 0;

		snprintf(what, sizeof(what), "row %lld alone (T = 1)",
			 (long long)row);
		plan_call(plan, at, 1, row, 0, what);
	}
	if (n > 1)
		plan_call(plan, at, n, 1, 1, "the batch rotated by one row");
	else
		plan_call(plan, at, 2, 0, 0, "the row twice (T = 2)");
}

static void plan_causal(struct mtp_row_plan *plan, int64_t n, int64_t **at)
{
	int64_t ks[3] = {1, n / 2, n - 1}, last = 0;
	char what[80];

	for (int i = 0; i < 3; i++) {
		if (ks[i] <= last)
			continue;
		last = ks[i];
		snprintf(what, sizeof(what), "the first %lld rows (T = %lld)",
			 (long long)last, (long long)last);
		plan_call(plan, at, last, 0, 1, what);
	}
}

enum mtp_status mtp_row_plan_make(const struct mtp_op *op, int64_t n_rows,
				  int64_t singles, struct mtp_row_plan *plan)
{
	int64_t *at;

	memset(plan, 0, sizeof(*plan));
	plan->applicable = true;
	if (op->rows == MTP_ROWS_UNDECLARED)
		plan_not(plan,
			 "the op table does not say how the rows of %s depend "
			 "on each other",
			 op->name);
	else if (op->rows == MTP_ROWS_MIXED)
		plan_not(plan, "every row of %s reads every other row",
			 op->name);
	else if (n_rows < 1)
		plan_not(plan, "%s has no rows here", op->name);
	else if (op->rows == MTP_ROWS_CAUSAL && n_rows < 2)
		plan_not(plan, "one row of causal %s: no prefix to compare",
			 op->name);
	if (!plan->applicable)
		return MTP_OK;
	/* storage[0] holds n_rows; the calls' rows follow */
	plan->storage =
		malloc((size_t)(MTP_INVAR_SINGLES_MAX + 3 * n_rows + 3) *
		       sizeof(int64_t));
	if (!plan->storage)
		return MTP_ERR_NOMEM;
	plan->storage[0] = n_rows;
	at = plan->storage + 1;
	if (op->rows == MTP_ROWS_CAUSAL)
		plan_causal(plan, n_rows, &at);
	else
		plan_independent(plan, n_rows, singles, &at);
	return MTP_OK;
}

void mtp_row_plan_fini(struct mtp_row_plan *plan)
{
	free(plan->storage);
	memset(plan, 0, sizeof(*plan));
}

/* The spec of the signature's input or output called name, or NULL. */
static const struct mtp_tspec *spec_of(const struct mtp_signature *sig,
				       bool out, const char *name)
{
	int n = out ? sig->n_out : sig->n_in;
	const struct mtp_tspec *s = out ? sig->out : sig->in;

	for (int i = 0; i < n; i++)
		if (!strcmp(s[i].name, name))
			return &s[i];
	return NULL;
}

/* Elements before and after a tensor's row axis. */
static void row_layout(const struct mtp_tensor *t, int axis, int64_t *outer,
		       int64_t *inner)
{
	*outer = *inner = 1;
	for (int d = 0; d < t->ndim; d++) {
		if (d < axis)
			*outer *= t->shape[d];
		else if (d > axis)
			*inner *= t->shape[d];
	}
}

/* dst = the rows rc->rows of src along axis, in that order. */
static enum mtp_status gather(const struct mtp_tensor *src, int axis,
			      const struct mtp_row_call *rc,
			      struct mtp_tensor *dst)
{
	int64_t outer, inner, shape[MTP_MAX_DIMS];
	size_t sz = mtp_dtype_size(src->dtype), row;
	enum mtp_status st;

	memcpy(shape, src->shape, sizeof(shape));
	shape[axis] = rc->n;
	memset(dst, 0, sizeof(*dst));
	st = mtp_tensor_alloc(dst, src->dtype, src->ndim, shape);
	if (st)
		return st;
	row_layout(src, axis, &outer, &inner);
	row = (size_t)inner * sz;
	for (int64_t o = 0; o < outer; o++)
		for (int64_t j = 0; j < rc->n; j++)
			memcpy((char *)dst->data +
				       (size_t)(o * rc->n + j) * row,
			       (const char *)src->data +
				       (size_t)(o * src->shape[axis] +
						rc->rows[j]) *
					       row,
			       row);
	return MTP_OK;
}

/* The case on rows rc: row inputs gathered (own[i]), weights shared as
 * views (their data pointers cleared before the list is freed). */
struct sub_case {
	struct mtp_case c;
	bool *own;
};

static void sub_free(struct sub_case *sub)
{
	for (int i = 0; i < sub->c.inputs.n; i++)
		if (!sub->own || !sub->own[i])
			sub->c.inputs.items[i].t.data = NULL;
	mtp_list_fini(&sub->c.inputs);
	free(sub->own);
	sub->own = NULL;
}

static enum mtp_status sub_make(const struct mtp_case *c,
				const struct mtp_signature *sig,
				const struct mtp_row_call *rc,
				struct sub_case *sub)
{
	struct mtp_case *d = &sub->c;
	enum mtp_status st = MTP_OK;

	*d = *c;
	mtp_list_init(&d->inputs);
	mtp_list_init(&d->expected);
	mtp_list_init(&d->observed);
	mtp_list_init(&d->companions);
	d->n_refs = d->n_live = d->n_subsets = 0;
	d->refs = d->live = NULL;
	d->subsets = NULL;
	sub->own = calloc((size_t)c->inputs.n + 1, sizeof(*sub->own));
	if (!sub->own)
		return MTP_ERR_NOMEM;
	for (int i = 0; !st && i < c->inputs.n; i++) {
		const struct mtp_named *in = &c->inputs.items[i];
		const struct mtp_tspec *s = spec_of(sig, false, in->name);
		int axis = s ? mtp_tspec_row_axis(sig, s) : -1;
		struct mtp_named *e = mtp_list_add(&d->inputs, in->name);

		if (!e) {
			st = MTP_ERR_NOMEM;
		} else if (axis < 0 || !in->t.data) {
			e->t = in->t;
		} else {
			st = gather(&in->t, axis, rc, &e->t);
			sub->own[i] = true;
		}
	}
	return st;
}

/* The first element of the sub-call's rows beyond the bound, and how many
 * are (over one output). */
struct row_diff {
	long long n;
	int64_t row, elem, ulps;
	char full[64], part[64];
};

static void rows_compare(const struct mtp_tensor *full,
			 const struct mtp_tensor *part, int axis,
			 const struct mtp_row_call *rc, int64_t bound,
			 struct row_diff *d)
{
	int64_t outer, inner, n = full->shape[axis];

	row_layout(full, axis, &outer, &inner);
	for (int64_t o = 0; o < outer; o++) {
		for (int64_t j = 0; j < rc->n; j++) {
			size_t i = (size_t)((o * n + rc->rows[j]) * inner);
			size_t k = (size_t)((o * rc->n + j) * inner);

			for (int64_t e = 0; e < inner; e++) {
				int64_t u = mtp_elem_ulps(
					full->dtype, full->data, i + (size_t)e,
					part->data, k + (size_t)e);

				if (!u || (bound && u <= bound) || d->n++)
					continue;
				d->row = rc->rows[j];
				d->elem = o * inner + e;
				d->ulps = u;
				mtp_elem_describe(full, i + (size_t)e, d->full,
						  sizeof(d->full));
				mtp_elem_describe(part, k + (size_t)e, d->part,
						  sizeof(d->part));
			}
		}
	}
}

static void bound_text(int64_t ulps, char *buf, size_t n)
{
	if (ulps)
		snprintf(buf, n, "within %lld ulps (--invariance-ulps)",
			 (long long)ulps);
	else
		snprintf(buf, n, "bitwise");
}

static void batch_variant(struct mtp_result *r, const char *out,
			  const struct mtp_row_call *rc,
			  const struct row_diff *d, int64_t n_rows,
			  int64_t bound)
{
	char b[64], u[32];

	bound_text(bound, b, sizeof(b));
	if (d->ulps == INT64_MAX)
		snprintf(u, sizeof(u), "not comparable");
	else
		snprintf(u, sizeof(u), "%lld ulps", (long long)d->ulps);
	r->verdict = MTP_FAILED;
	for (int i = 0; i < r->n_cmp; i++)
		if (!strcmp(r->cmp[i].name, out))
			r->first_bad = i;
	snprintf(r->message, sizeof(r->message),
		 "invariance: output '%s' of token row %lld differs between "
		 "the batch of %lld and %s in %lld elements; first: element "
		 "%lld of the row, %s in the batch, %s here (%s apart; bound: "
		 "%s)",
		 out, (long long)d->row, (long long)n_rows, rc->what, d->n,
		 (long long)d->elem, d->full, d->part, u, b);
	memset(&r->diag, 0, sizeof(r->diag));
	r->diag.diag = MTP_DIAG_BATCH_VARIANT;
	r->diag.ratio = (double)d->n;
	snprintf(r->diag.text, sizeof(r->diag.text),
		 "BATCH_VARIANT [%s]: output '%s', token row %lld: %s is not "
		 "the batch's (bound: %s); %s",
		 mtp_diag_info(MTP_DIAG_BATCH_VARIANT)->section, out,
		 (long long)d->row, rc->what, b,
		 mtp_diag_info(MTP_DIAG_BATCH_VARIANT)->history);
}

/* The sub-call's outputs against the same tokens' rows of the first call;
 * false (and r failed) at the first output that differs. */
static bool outputs_match(const struct mtp_run_opts *o, struct mtp_result *r,
			  const struct mtp_case_call *p,
			  const struct mtp_tensor *got,
			  const struct mtp_tensor *part,
			  const struct mtp_row_call *rc)
{
	for (int k = 0; k < p->call.n_out; k++) {
		const struct mtp_tspec *s = &p->sig->out[k];
		const struct mtp_tensor *sp = NULL;
		int axis = mtp_tspec_row_axis(p->sig, s);
		struct row_diff d = {0};

		if (axis < 0 || !got[k].data)
			continue;
		sp = &part[k];
		if (!sp->data)
			continue; /* empty output: checked by the wire */
		rows_compare(&got[k], sp, axis, rc, o->det.ulps, &d);
		if (d.n) {
			batch_variant(r, s->name, rc, &d, got[k].shape[axis],
				      o->det.ulps);
			return false;
		}
	}
	return true;
}

/* One call of the plan; false when the case stops passing or cannot go on
 * (r, or its note, says why). */
static bool plan_call_run(const struct mtp_run_opts *o, struct mtp_worker *w,
			  struct mtp_result *r, const struct mtp_case *c,
			  const struct mtp_case_call *p,
			  const struct mtp_tensor *got,
			  const struct mtp_row_call *rc)
{
	struct sub_case sub = {0};
	struct mtp_case_call sp = {0};
	struct mtp_tensor *part = NULL;
	char err[MTP_ERR_MAX], what[120], note[240];
	enum mtp_status st = sub_make(c, p->sig, rc, &sub);
	bool ok = false;

	if (!st)
		st = mtp_case_call_init(&sub.c, &sp, err, sizeof(err));
	else
		snprintf(err, sizeof(err), "%s", mtp_status_name(st));
	if (!st) {
		part = calloc((size_t)sp.call.n_out + 1, sizeof(*part));
		st = part ? MTP_OK : MTP_ERR_NOMEM;
	}
	snprintf(what, sizeof(what), "invariance call, %s", rc->what);
	if (st == MTP_ERR_NOMEM) {
		r->verdict = MTP_CRASHED;
		snprintf(r->message, sizeof(r->message),
			 "%s: out of memory in the harness", what);
	} else if (st) {
		snprintf(note, sizeof(note),
			 "invariance: not applicable: %.60s is no valid case "
			 "(%.120s)",
			 rc->what, err);
		mtp_note_add(r, note);
	} else if (mtp_extra_call(o, w, &sub.c, sp.call.out, sp.call.n_out,
				  part, what, r)) {
		ok = outputs_match(o, r, p, got, part, rc);
	}
	for (int k = 0; part && k < sp.call.n_out; k++)
		mtp_tensor_fini(&part[k]);
	free(part);
	mtp_case_call_fini(&sp);
	sub_free(&sub);
	return ok;
}

/* The rows of the call: the row axis of its first output that has one. */
static int64_t rows_of(const struct mtp_case_call *p)
{
	for (int k = 0; k < p->call.n_out; k++) {
		int axis = mtp_tspec_row_axis(p->sig, &p->sig->out[k]);

		if (axis >= 0)
			return p->call.out[k].shape[axis];
	}
	return 0;
}

/* How many rows to call alone within the byte budget (determinism.h). */
static int64_t singles_of(const struct mtp_case_call *p, int64_t n)
{
	double all = 0, shared = 0, per_call;

	for (int i = 0; i < p->call.n_in; i++) {
		double b = (double)mtp_tensor_nbytes(&p->call.in[i]);

		all += b;
		if (mtp_tspec_row_axis(p->sig, &p->sig->in[i]) < 0)
			shared += b;
	}
	per_call = shared + (n > 0 ? (all - shared) / (double)n : 0);
	if (per_call <= 0)
		return MTP_INVAR_SINGLES_MAX;
	per_call = MTP_INVAR_BYTES_X * all / per_call;
	return per_call < MTP_INVAR_SINGLES_MIN	  ? MTP_INVAR_SINGLES_MIN
	       : per_call > MTP_INVAR_SINGLES_MAX ? MTP_INVAR_SINGLES_MAX
						  : (int64_t)per_call;
}

void mtp_invariance_check(const struct mtp_run_opts *o, struct mtp_worker *w,
			  struct mtp_result *r, const struct mtp_case *c,
			  const struct mtp_case_call *p,
			  const struct mtp_tensor *got)
{
	struct mtp_row_plan plan;
	char note[240], b[64];
	int i = 0;

	int64_t n = rows_of(p);

	if (mtp_row_plan_make(c->op, n, singles_of(p, n), &plan)) {
		r->verdict = MTP_CRASHED;
		snprintf(r->message, sizeof(r->message), "out of memory");
		return;
	}
	if (!plan.applicable) {
		snprintf(note, sizeof(note), "invariance: not applicable: %s",
			 plan.why);
		mtp_note_add(r, note);
	}
	while (i < plan.n_calls &&
	       plan_call_run(o, w, r, c, p, got, &plan.calls[i]))
		i++;
	if (plan.applicable && i == plan.n_calls) {
		bound_text(o->det.ulps, b, sizeof(b));
		if (c->op->rows == MTP_ROWS_CAUSAL)
			snprintf(note, sizeof(note),
				 "invariance: %d prefixes of the batch of %lld "
				 "match it, %s",
				 plan.n_calls, (long long)n, b);
		else
			snprintf(note, sizeof(note),
				 "invariance: %d of %lld rows alone (T = 1) "
				 "and %s match the batch, %s",
				 plan.n_calls - 1, (long long)n,
				 plan.calls[plan.n_calls - 1].what, b);
		mtp_note_add(r, note);
	}
	mtp_row_plan_fini(&plan);
}
