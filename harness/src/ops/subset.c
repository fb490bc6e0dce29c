/*
 * Weights by subset (FORMAT.md v2, rules 1-6): which weights may be a row
 * subset, the checks of their companions (before and after the data is
 * read) and the load-time layout of the projection subsets.
 *
 * A weight <p>_weight with the attribute full_rows holds only the rows its
 * companion <p>_rows lists (embed_table: embed_table_rows). Its declared
 * shape has full_rows rows, so that the op's shape rules bind H or V to
 * full_rows. Two kinds, laid out differently:
 *
 *  - projections (eh_proj_weight, e_proj_weight, h_proj_weight; rule 5,
 *    captured-block steps and chains only): read at their rows of a zero
 *    [full_rows, in] weight (mtp_subset_expand), float8 codes too, whose
 *    block scales stay whole (rule 11). The glue then computes zero at
 *    every other column of block_in, and those columns of the captured
 *    block_in are zeroed alike: only the listed columns are judged
 *    (subset_judge.c), and a diagnosis sees nothing else. Everything after
 *    the block starts from the captured block outputs and stays whole.
 *  - the vocabulary (head_weight, embed_table): kept as stored, then
 *    renumbered with the rest of the vocabulary before the reference runs
 *    (mtp_captured_prepare, captured_sample.c), and judged through the
 *    views of subset_judge.c.
 *
 * Not yet: a float8 head_weight subset (its block scales would have to be
 * renumbered too); refused with one line.
 */
#include "subset_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *mtp_subset_leaf(const char *name)
{
	const char *slash = strrchr(name, '/');

	return slash ? slash + 1 : name;
}

bool mtp_subset_is_vocab(const char *name)
{
	return !strcmp(mtp_subset_leaf(name), "head_weight") ||
	       !strcmp(name, "embed_table");
}

bool mtp_subset_is_proj(const char *name)
{
	const char *l = mtp_subset_leaf(name);

	return !strcmp(l, "eh_proj_weight") || !strcmp(l, "e_proj_weight") ||
	       !strcmp(l, "h_proj_weight");
}

/* "layer.0/head_weight" -> "inputs/layer.0/head_rows" (rule 1). */
void mtp_subset_rows_name(const char *weight, char *buf, size_t n)
{
	size_t len = strlen(weight);

	if (len >= 7 && !strcmp(weight + len - 7, "_weight"))
		len -= 7;
	snprintf(buf, n, "inputs/%.*s_rows", (int)len, weight);
}

const struct mtp_tensor *mtp_subset_rows(const struct mtp_case *c,
					 const char *weight)
{
	char name[MTP_NAME_MAX + 16];
	const struct mtp_named *e;

	mtp_subset_rows_name(weight, name, sizeof(name));
	e = mtp_list_find(&c->companions, name);
	return e ? &e->t : NULL;
}

int64_t mtp_subset_at(const struct mtp_tensor *t, int64_t i)
{
	return (int64_t)mtp_load(t->dtype, t->data, (size_t)i);
}

int64_t mtp_subset_find(const struct mtp_tensor *rows, int64_t id)
{
	int64_t lo = 0, hi = mtp_tensor_numel(rows) - 1;

	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2, v = mtp_subset_at(rows, mid);

		if (v == id)
			return mid;
		if (v < id)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

int64_t mtp_subset_steps(const struct mtp_case *c)
{
	return c->op->scope == MTP_SCOPE_CHAIN ? c->params.num_steps : 1;
}

void mtp_subset_step_names(const struct mtp_case *c, int64_t s, char *step,
			   char *layer, size_t n)
{
	bool chain = c->op->scope == MTP_SCOPE_CHAIN;
	int64_t l =
		chain && c->params.pass_step_idx
			? s % (c->params.num_layers ? c->params.num_layers : 1)
			: 0;

	snprintf(step, n, chain ? "step.%lld/" : "", (long long)s);
	snprintf(layer, n, chain ? "layer.%lld/" : "", (long long)l);
}

bool mtp_subset_present(const struct mtp_case *c)
{
	return c->companions.n > 0 || c->n_subsets > 0;
}

const struct mtp_subset_decl *mtp_subset_decl_of(const struct mtp_case *c,
						 const char *name)
{
	for (int i = 0; i < c->n_subsets; i++)
		if (!strcmp(c->subsets[i].name, name))
			return &c->subsets[i];
	return NULL;
}

enum mtp_status mtp_subset_declare(struct mtp_case *c, const char *name,
				   int64_t full_rows, int64_t stored_rows,
				   char *err, size_t errn)
{
	struct mtp_subset_decl *d;

	if (!mtp_subset_is_vocab(name) && !mtp_subset_is_proj(name)) {
		snprintf(err, errn,
			 "full_rows: '%s' cannot be a row subset (only "
			 "head_weight, embed_table, eh_proj_weight, "
			 "e_proj_weight, h_proj_weight; docs/FORMAT.md v2 "
			 "rule 2)",
			 name);
		return MTP_ERR_INVALID;
	}
	if (stored_rows > full_rows) {
		snprintf(err, errn,
			 "'%s' stores %lld rows, more than full_rows = %lld "
			 "(rule 2)",
			 name, (long long)stored_rows, (long long)full_rows);
		return MTP_ERR_INVALID;
	}
	d = realloc(c->subsets, (size_t)(c->n_subsets + 1) * sizeof(*d));
	if (!d)
		return MTP_ERR_NOMEM;
	c->subsets = d;
	d = &c->subsets[c->n_subsets++];
	snprintf(d->name, sizeof(d->name), "%s", name);
	d->full_rows = full_rows;
	d->stored_rows = stored_rows;
	return MTP_OK;
}

int64_t mtp_subset_load_rows(const struct mtp_case *c, const char *name,
			     int64_t rows)
{
	const struct mtp_subset_decl *d = mtp_subset_decl_of(c, name);

	if (!d)
		return rows;
	return mtp_subset_is_proj(name) ? d->full_rows : d->stored_rows;
}

static enum mtp_status refuse(char *err, size_t errn, const char *what,
			      const char *why)
{
	snprintf(err, errn, "%s: %s", what, why);
	return MTP_ERR_INVALID;
}

/* "observed/step.1/logits_rows" of a step s < K (no step in an mtp_step). */
static bool logits_rows_name(const struct mtp_case *c, const char *n)
{
	char step[MTP_NAME_MAX], layer[MTP_NAME_MAX], want[2 * MTP_NAME_MAX];

	for (int64_t s = 0; s < mtp_subset_steps(c); s++) {
		mtp_subset_step_names(c, s, step, layer, sizeof(step));
		snprintf(want, sizeof(want), "observed/%slogits_rows", step);
		if (!strcmp(n, want))
			return true;
	}
	return false;
}

/* A companion: a weight's rows, or a step's logits_rows. */
static enum mtp_status check_companion(const struct mtp_case *c,
				       const struct mtp_named *e, char *err,
				       size_t errn)
{
	char rows[MTP_NAME_MAX + 16];
	bool known = logits_rows_name(c, e->name);

	for (int i = 0; !known && i < c->n_subsets; i++) {
		mtp_subset_rows_name(c->subsets[i].name, rows, sizeof(rows));
		known = !strcmp(rows, e->name);
	}
	if (!known)
		return refuse(err, errn, e->name,
			      strncmp(e->name, "inputs/", 7)
				      ? "not a companion (logits_rows sits "
					"in observed/, beside the logits of a "
					"step; docs/FORMAT.md v2 rule 3)"
				      : "rows of no weight with full_rows "
					"(docs/FORMAT.md v2 rules 1, 2)");
	if (e->t.ndim != 1 || e->t.dtype != MTP_I64)
		return refuse(err, errn, e->name, "must be int64 [R]");
	return MTP_OK;
}

static enum mtp_status check_decl(const struct mtp_case *c,
				  const struct mtp_subset_decl *d, char *err,
				  size_t errn)
{
	const struct mtp_tensor *rows = mtp_subset_rows(c, d->name);
	const struct mtp_named *w = mtp_list_find(&c->inputs, d->name);
	char rn[MTP_NAME_MAX + 16], what[MTP_NAME_MAX + 16];

	mtp_subset_rows_name(d->name, rn, sizeof(rn));
	snprintf(what, sizeof(what), "inputs/%s", d->name);
	if (!rows) {
		snprintf(err, errn,
			 "%s: full_rows without its rows companion %s "
			 "(docs/FORMAT.md v2 rules 1, 2)",
			 what, rn);
		return MTP_ERR_INVALID;
	}
	if (mtp_tensor_numel(rows) != d->stored_rows) {
		snprintf(err, errn,
			 "%s: lists %lld rows, but %s stores %lld (rule 2)", rn,
			 (long long)mtp_tensor_numel(rows), what,
			 (long long)d->stored_rows);
		return MTP_ERR_INVALID;
	}
	if (mtp_subset_is_proj(d->name) && !c->params.v2.captured)
		return refuse(err, errn, what,
			      "a projection row subset needs block = captured "
			      "(docs/FORMAT.md v2 rule 5)");
	if (w && mtp_dtype_is_fp8(w->t.dtype) && mtp_subset_is_vocab(d->name)) {
		snprintf(err, errn,
			 "%s: a float8 vocabulary subset is not judged yet "
			 "(only the projections' float8 subsets are)",
			 what);
		return MTP_ERR_UNSUPPORTED;
	}
	return MTP_OK;
}

/* V4: a layer's e_proj and h_proj feed the same block_in columns, so they
 * are subsets together (their rows compared once loaded). */
static enum mtp_status check_v4_pair(const struct mtp_case *c,
				     const struct mtp_subset_decl *d, char *err,
				     size_t errn)
{
	char other[MTP_NAME_MAX + 8];
	const char *l = mtp_subset_leaf(d->name);
	size_t pfx = (size_t)(l - d->name);

	if (strcmp(l, "e_proj_weight") && strcmp(l, "h_proj_weight"))
		return MTP_OK;
	snprintf(other, sizeof(other), "%.*s%s", (int)pfx, d->name,
		 l[0] == 'e' ? "h_proj_weight" : "e_proj_weight");
	if (mtp_subset_decl_of(c, other))
		return MTP_OK;
	snprintf(err, errn,
		 "inputs/%s: a row subset without one of %s (both feed every "
		 "block_in column: subsets of the same rows, or neither)",
		 d->name, other);
	return MTP_ERR_INVALID;
}

enum mtp_status mtp_subset_check(const struct mtp_case *c, char *err,
				 size_t errn)
{
	enum mtp_status st = MTP_OK;

	if (!mtp_subset_present(c))
		return MTP_OK;
	if (c->op->scope < MTP_SCOPE_STEP)
		return refuse(err, errn, c->op->name,
			      "weights by subset are judged on mtp_step and "
			      "draft_chain only");
	if (c->expected.n > 0)
		return refuse(err, errn, "expected/",
			      "weights by subset are judged in dumps "
			      "(observed/) only: a golden holds every output");
	for (int i = 0; !st && i < c->companions.n; i++)
		st = check_companion(c, &c->companions.items[i], err, errn);
	for (int i = 0; !st && i < c->n_subsets; i++)
		st = check_decl(c, &c->subsets[i], err, errn);
	for (int i = 0; !st && i < c->n_subsets; i++)
		st = check_v4_pair(c, &c->subsets[i], err, errn);
	return st;
}

static bool increasing_below(const struct mtp_tensor *t, int64_t lim)
{
	for (int64_t i = 0; i < mtp_tensor_numel(t); i++)
		if (mtp_subset_at(t, i) < 0 || mtp_subset_at(t, i) >= lim ||
		    (i && mtp_subset_at(t, i) <= mtp_subset_at(t, i - 1)))
			return false;
	return true;
}

/* The full vocabulary size of input `name` (a vocabulary weight). */
static int64_t full_of(const struct mtp_case *c, const char *name)
{
	const struct mtp_subset_decl *d = mtp_subset_decl_of(c, name);
	const struct mtp_named *w = mtp_list_find(&c->inputs, name);

	return d ? d->full_rows : w ? w->t.shape[0] : 0;
}

/* logits_rows lists nothing while the step's logits have token rows: a
 * judged output that is empty though the batch is not. */
static bool empty_rows(const struct mtp_case *c, const struct mtp_named *lr,
		       const char *step)
{
	char n[2 * MTP_NAME_MAX];
	const struct mtp_named *l;

	snprintf(n, sizeof(n), "%slogits", step);
	l = mtp_list_find(&c->observed, n);
	return mtp_tensor_numel(&lr->t) == 0 && l && l->t.ndim == 2 &&
	       l->t.shape[0] > 0;
}

/* Rule 3: each step's logits_rows within V, listed in its head's rows, and
 * at least one where the batch has a token. */
static enum mtp_status check_logits_rows(const struct mtp_case *c, char *err,
					 size_t errn)
{
	char step[MTP_NAME_MAX], layer[MTP_NAME_MAX], n[2 * MTP_NAME_MAX];

	for (int64_t s = 0; s < mtp_subset_steps(c); s++) {
		const struct mtp_named *lr;
		const struct mtp_tensor *hr;

		mtp_subset_step_names(c, s, step, layer, sizeof(step));
		snprintf(n, sizeof(n), "observed/%slogits_rows", step);
		lr = mtp_list_find(&c->companions, n);
		if (!lr)
			continue;
		if (empty_rows(c, lr, step))
			return refuse(err, errn, lr->name,
				      "lists no row, so its logits of T rows "
				      "hold nothing to judge (docs/FORMAT.md "
				      "v2 rule 3)");
		snprintf(n, sizeof(n), "%shead_weight", layer);
		hr = mtp_subset_rows(c, n);
		if (!increasing_below(&lr->t, full_of(c, n)))
			return refuse(err, errn, lr->name,
				      "not strictly increasing in [0, V)");
		for (int64_t k = 0; hr && k < mtp_tensor_numel(&lr->t); k++)
			if (mtp_subset_find(hr, mtp_subset_at(&lr->t, k)) < 0) {
				snprintf(err, errn,
					 "%s: lists row %lld, which inputs/%s "
					 "does not hold (its head_rows; "
					 "docs/FORMAT.md v2 rule 3)",
					 lr->name,
					 (long long)mtp_subset_at(&lr->t, k),
					 n);
				return MTP_ERR_INVALID;
			}
	}
	return MTP_OK;
}

/* Rule 4: every id the chain embeds is a row of the embedding subset. */
static enum mtp_status check_ids(const struct mtp_case *c, char *err,
				 size_t errn)
{
	static const char *const ids[] = {"input_ids", "next_tokens"};
	const struct mtp_tensor *rows = mtp_subset_rows(c, "embed_table");

	for (int i = 0; rows && i < 2; i++) {
		const struct mtp_named *e = mtp_list_find(&c->inputs, ids[i]);

		for (int64_t k = 0; e && k < mtp_tensor_numel(&e->t); k++) {
			int64_t id = mtp_subset_at(&e->t, k);

			if (mtp_subset_find(rows, id) >= 0)
				continue;
			snprintf(err, errn,
				 "inputs/%s: id %lld is not listed in "
				 "inputs/embed_table_rows (docs/FORMAT.md v2 "
				 "rule 4)",
				 ids[i], (long long)id);
			return MTP_ERR_INVALID;
		}
	}
	return MTP_OK;
}

/* V4: a layer's e_proj_rows and h_proj_rows are the same rows. */
static enum mtp_status check_same_rows(const struct mtp_case *c, char *err,
				       size_t errn)
{
	for (int i = 0; i < c->n_subsets; i++) {
		const char *n = c->subsets[i].name, *l = mtp_subset_leaf(n);
		char other[MTP_NAME_MAX + 8];
		const struct mtp_tensor *a, *b;

		if (strcmp(l, "e_proj_weight"))
			continue;
		snprintf(other, sizeof(other), "%.*sh_proj_weight",
			 (int)(l - n), n);
		a = mtp_subset_rows(c, n);
		b = mtp_subset_rows(c, other);
		if (a && b &&
		    (mtp_tensor_numel(a) != mtp_tensor_numel(b) ||
		     memcmp(a->data, b->data, mtp_tensor_nbytes(a))))
			return refuse(
				err, errn, n,
				"e_proj_rows and h_proj_rows differ (both "
				"feed every block_in column)");
	}
	return MTP_OK;
}

enum mtp_status mtp_subset_check_values(const struct mtp_case *c, char *err,
					size_t errn)
{
	enum mtp_status st = MTP_OK;
	char rn[MTP_NAME_MAX + 16];

	for (int i = 0; i < c->n_subsets; i++) {
		const struct mtp_tensor *rows =
			mtp_subset_rows(c, c->subsets[i].name);

		mtp_subset_rows_name(c->subsets[i].name, rn, sizeof(rn));
		if (rows && !increasing_below(rows, c->subsets[i].full_rows))
			return refuse(err, errn, rn,
				      "not strictly increasing in [0, "
				      "full_rows) (docs/FORMAT.md v2 rule 2)");
	}
	st = check_logits_rows(c, err, errn);
	if (!st)
		st = check_ids(c, err, errn);
	return st ? st : check_same_rows(c, err, errn);
}

/* Zeroes the columns of a [..., H] tensor that `rows` does not list. */
static void zero_unlisted(struct mtp_tensor *t, const struct mtp_tensor *rows)
{
	int64_t h = t->shape[t->ndim - 1], outer = mtp_tensor_numel(t) / h;

	for (int64_t col = 0, j = 0; col < h; col++) {
		if (j < mtp_tensor_numel(rows) &&
		    mtp_subset_at(rows, j) == col) {
			j++;
			continue;
		}
		for (int64_t o = 0; o < outer; o++)
			mtp_store(t->dtype, t->data, (size_t)(o * h + col), 0);
	}
}

/* The stored rows, read at the start of a [full_rows, in] buffer, moved
 * to their rows (last first: rows[j] >= j), the others zeroed. */
static void expand_one(struct mtp_tensor *t, const struct mtp_tensor *rows)
{
	size_t row = mtp_tensor_nbytes(t) / (size_t)t->shape[0];
	unsigned char *p = t->data;
	int64_t r = mtp_tensor_numel(rows), next = t->shape[0];

	for (int64_t j = r - 1; j >= 0; j--) {
		int64_t at = mtp_subset_at(rows, j);

		if (at != j)
			memmove(p + (size_t)at * row, p + (size_t)j * row, row);
		if (next > at + 1)
			memset(p + (size_t)(at + 1) * row, 0,
			       (size_t)(next - at - 1) * row);
		next = at;
	}
	if (next > 0)
		memset(p, 0, (size_t)next * row);
}

void mtp_subset_expand(struct mtp_case *c)
{
	char step[MTP_NAME_MAX], layer[MTP_NAME_MAX], n[2 * MTP_NAME_MAX];

	for (int i = 0; i < c->n_subsets; i++) {
		struct mtp_named *w =
			mtp_list_find(&c->inputs, c->subsets[i].name);
		const struct mtp_tensor *rows =
			mtp_subset_rows(c, c->subsets[i].name);

		if (w && w->t.data && rows && mtp_subset_is_proj(w->name))
			expand_one(&w->t, rows);
	}
	for (int64_t s = 0; s < mtp_subset_steps(c); s++) {
		const struct mtp_tensor *cols;
		struct mtp_named *bi;

		mtp_subset_step_names(c, s, step, layer, sizeof(step));
		snprintf(n, sizeof(n), "%sblock_in", step);
		bi = mtp_list_find(&c->inputs, n);
		cols = mtp_subset_columns(c, n);
		if (bi && bi->t.data && cols && bi->t.ndim >= 1)
			zero_unlisted(&bi->t, cols);
	}
}

const struct mtp_tensor *mtp_subset_columns(const struct mtp_case *c,
					    const char *output)
{
	char step[MTP_NAME_MAX], layer[MTP_NAME_MAX], n[2 * MTP_NAME_MAX];
	static const char *const proj[] = {"eh_proj_weight", "e_proj_weight"};

	if (!c->n_subsets || strcmp(mtp_subset_leaf(output), "block_in"))
		return NULL;
	for (int64_t s = 0; s < mtp_subset_steps(c); s++) {
		mtp_subset_step_names(c, s, step, layer, sizeof(step));
		snprintf(n, sizeof(n), "%sblock_in", step);
		if (strcmp(n, output))
			continue;
		for (int i = 0; i < 2; i++) {
			snprintf(n, sizeof(n), "%s%s", layer, proj[i]);
			if (mtp_subset_decl_of(c, n))
				return mtp_subset_rows(c, n);
		}
	}
	return NULL;
}

enum mtp_status mtp_subset_gather_columns(const struct mtp_tensor *t,
					  const struct mtp_tensor *cols,
					  struct mtp_tensor *out)
{
	int64_t h = t->ndim ? t->shape[t->ndim - 1] : 0;
	int64_t r = mtp_tensor_numel(cols),
		outer = h ? mtp_tensor_numel(t) / h : 0;
	int64_t shape[MTP_MAX_DIMS];
	enum mtp_status st;

	memcpy(shape, t->shape, sizeof(shape));
	if (t->ndim)
		shape[t->ndim - 1] = r;
	st = mtp_tensor_alloc(out, t->dtype, t->ndim, shape);
	for (int64_t o = 0; !st && o < outer; o++)
		for (int64_t j = 0; j < r; j++) {
			int64_t col = mtp_subset_at(cols, j);

			mtp_store(out->dtype, out->data, (size_t)(o * r + j),
				  col < h ? mtp_load(t->dtype, t->data,
						     (size_t)(o * h + col))
					  : 0);
		}
	return st;
}
