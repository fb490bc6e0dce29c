/*
 * Real-size captured steps (SPEC.md §12.3 at V = 129280): the vocabulary
 * GEMM dominates the reference's cost, T * V * H multiply-adds per step in
 * double. Unless the user asks for the full product, a captured case with a
 * large vocabulary is judged on a deterministic sample of vocabulary rows:
 * every k-th row plus every token and id the case holds. The head weights,
 * the embedding table and every logits tensor keep only those rows (in
 * their order) and the tokens and ids are renumbered into them, so the
 * reference, the diagnoses and the comparison run unchanged on a smaller
 * vocabulary; the result says so. A token is then judged as the argmax over
 * the kept rows, a necessary condition (FORMAT.md v2 rule 6 reads alike).
 */
#include "captured.h"
#include "ops/ops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *leaf(const char *name)
{
	const char *slash = strrchr(name, '/');

	return slash ? slash + 1 : name;
}

static bool is_rowed(const char *name) /* [V, H] tensors */
{
	return strcmp(leaf(name), "head_weight") == 0 ||
	       strcmp(name, "embed_table") == 0;
}

static bool is_index(const char *name) /* values that are vocabulary rows */
{
	return strcmp(leaf(name), "token") == 0 ||
	       strcmp(name, "input_ids") == 0 ||
	       strcmp(name, "next_tokens") == 0;
}

static void keep_values(const struct mtp_tensor_list *l, int64_t v,
			int64_t *map)
{
	for (int i = 0; i < l->n; i++) {
		const struct mtp_tensor *t = &l->items[i].t;

		if (!is_index(l->items[i].name) || !t->data)
			continue;
		for (int64_t k = 0; k < mtp_tensor_numel(t); k++) {
			double x = mtp_load(t->dtype, t->data, (size_t)k);

			if (x >= 0 && x < (double)v)
				map[(int64_t)x] = 1;
		}
	}
}

static void renumber(struct mtp_tensor_list *l, int64_t v, const int64_t *map)
{
	for (int i = 0; i < l->n; i++) {
		struct mtp_tensor *t = &l->items[i].t;

		if (!is_index(l->items[i].name) || !t->data)
			continue;
		for (int64_t k = 0; k < mtp_tensor_numel(t); k++) {
			double x = mtp_load(t->dtype, t->data, (size_t)k);
			bool in = x >= 0 && x < (double)v;

			mtp_store(t->dtype, t->data, (size_t)k,
				  in ? (double)map[(int64_t)x] : -1.0);
		}
	}
}

/* Keeps the mapped entries along the first (rows) or last (logits) axis. */
static enum mtp_status gather(struct mtp_tensor *t, bool last_axis, int64_t v,
			      const int64_t *map, int64_t kept)
{
	int ax = last_axis ? t->ndim - 1 : 0;
	size_t es = mtp_dtype_size(t->dtype), inner = es, outer = 1;
	unsigned char *dst, *src = t->data;

	if (!src || t->ndim < 1 || t->shape[ax] != v)
		return MTP_OK; /* not this vocabulary: judged as it is */
	for (int d = 0; d < t->ndim; d++) {
		if (d > ax)
			inner *= (size_t)t->shape[d];
		if (d < ax)
			outer *= (size_t)t->shape[d];
	}
	dst = malloc(outer * (size_t)kept * inner + 1);
	if (!dst)
		return MTP_ERR_NOMEM;
	for (size_t o = 0; o < outer; o++)
		for (int64_t r = 0; r < v; r++)
			if (map[r] >= 0)
				memcpy(dst + (o * (size_t)kept +
					      (size_t)map[r]) *
						       inner,
				       src + (o * (size_t)v + (size_t)r) *
						       inner,
				       inner);
	free(src);
	t->data = dst;
	t->shape[ax] = kept;
	return MTP_OK;
}

/* The full vocabulary: a subset's full_rows, else head_weight's rows. */
static int64_t vocab_of(const struct mtp_case *c)
{
	for (int i = 0; i < c->n_subsets; i++)
		if (mtp_subset_is_vocab(c->subsets[i].name))
			return c->subsets[i].full_rows;
	for (int i = 0; i < c->inputs.n; i++)
		if (strcmp(leaf(c->inputs.items[i].name), "head_weight") == 0)
			return c->inputs.items[i].t.shape[0];
	return 0;
}

/* Whether some vocabulary tensor is whole (or, any, a subset). */
static bool vocab_kinds(const struct mtp_case *c, bool *any_subset)
{
	bool whole = false;

	*any_subset = false;
	for (int i = 0; i < c->inputs.n; i++) {
		const char *n = c->inputs.items[i].name;

		if (!is_rowed(n))
			continue;
		if (mtp_subset_decl_of(c, n))
			*any_subset = true;
		else
			whole = true;
	}
	return whole;
}

static void keep_rows(const struct mtp_tensor *rows, int64_t v, int64_t *map)
{
	for (int64_t j = 0; j < mtp_tensor_numel(rows); j++) {
		int64_t x = mtp_subset_at(rows, j);

		if (x >= 0 && x < v)
			map[x] = 1;
	}
}

/* A vocabulary subset [R, H] laid out on the kept rows: its rows at their
 * places, every other kept row a copy of its first non-zero row (never
 * read, never judged: ids are listed by rule 4 and logits judged at
 * logits_rows only; a copy, not zeros, so that the weight sanity rule
 * judges the stored rows alone). */
static enum mtp_status scatter(struct mtp_tensor *t,
			       const struct mtp_tensor *rows,
			       const int64_t *map, int64_t kept)
{
	size_t row =
		t->shape[0] ? mtp_tensor_nbytes(t) / (size_t)t->shape[0] : 0;
	int64_t r = t->shape[0], fill = 0;
	unsigned char *dst, *src = t->data;
	char *have;

	if (!src || r == 0)
		return MTP_OK;
	for (int64_t j = 0; j < r && fill == j; j++) {
		bool zero = true;

		for (size_t b = 0; b < row && zero; b++)
			zero = src[(size_t)j * row + b] == 0;
		fill = zero ? j + 1 : j;
	}
	fill = fill < r ? fill : 0;
	dst = malloc((size_t)kept * row + 1);
	have = calloc((size_t)kept + 1, 1);
	if (!dst || !have) {
		free(dst);
		free(have);
		return MTP_ERR_NOMEM;
	}
	for (int64_t j = 0; j < r; j++) {
		int64_t at = map[mtp_subset_at(rows, j)];

		memcpy(dst + (size_t)at * row, src + (size_t)j * row, row);
		have[at] = 1;
	}
	for (int64_t k = 0; k < kept; k++)
		if (!have[k])
			memcpy(dst + (size_t)k * row, src + (size_t)fill * row,
			       row);
	free(have);
	free(src);
	t->data = dst;
	t->shape[0] = kept;
	return MTP_OK;
}

/* The [V, H] tensors on the kept rows: whole ones gathered, subsets laid
 * out. */
static enum mtp_status lay_out(struct mtp_case *c, int64_t v,
			       const int64_t *map, int64_t kept)
{
	enum mtp_status st = MTP_OK;

	for (int i = 0; !st && i < c->inputs.n; i++) {
		struct mtp_named *e = &c->inputs.items[i];
		const struct mtp_tensor *rows = mtp_subset_rows(c, e->name);

		if (!is_rowed(e->name))
			continue;
		if (rows && mtp_subset_decl_of(c, e->name))
			st = scatter(&e->t, rows, map, kept);
		else
			st = gather(&e->t, false, v, map, kept);
	}
	return st;
}

/* Whether logits `name` of part (expected/observed) has logits_rows. */
static bool has_logits_rows(const struct mtp_case *c, const char *part,
			    const char *name)
{
	char n[2 * MTP_NAME_MAX];

	snprintf(n, sizeof(n), "%s/%s_rows", part, name);
	return mtp_list_find(&c->companions, n) != NULL;
}

static enum mtp_status gather_logits(struct mtp_case *c,
				     struct mtp_tensor_list *l,
				     const char *part, int64_t v,
				     const int64_t *map, int64_t kept)
{
	enum mtp_status st = MTP_OK;

	for (int i = 0; !st && i < l->n; i++) {
		const char *n = l->items[i].name;

		if (strcmp(leaf(n), "logits") == 0 &&
		    !has_logits_rows(c, part, n))
			st = gather(&l->items[i].t, true, v, map, kept);
	}
	return st;
}

/* The kept rows: a sample (every k-th row) when asked, else every row if
 * some vocabulary tensor is whole; then the listed rows of the subsets,
 * the rows logits_rows names, and the ids and tokens the case holds. */
static void keep(const struct mtp_case *c, int64_t v, bool sample, bool whole,
		 int64_t *map)
{
	for (int64_t i = 0; sample && i < MTP_SAMPLE_ROWS; i++)
		map[i * v / MTP_SAMPLE_ROWS] = 1;
	for (int64_t r = 0; !sample && whole && r < v; r++)
		map[r] = 1;
	for (int i = 0; i < c->n_subsets; i++)
		if (mtp_subset_is_vocab(c->subsets[i].name))
			keep_rows(mtp_subset_rows(c, c->subsets[i].name), v,
				  map);
	for (int i = 0; i < c->companions.n; i++)
		if (strncmp(c->companions.items[i].name, "inputs/", 7))
			keep_rows(&c->companions.items[i].t, v, map);
	keep_values(&c->inputs, v, map);
	if (whole) { /* as sampled; with subsets only, tokens are columns */
		keep_values(&c->expected, v, map);
		keep_values(&c->observed, v, map);
	}
}

static void renumber_rows(struct mtp_case *c, int64_t v, const int64_t *map)
{
	for (int i = 0; i < c->companions.n; i++) {
		struct mtp_tensor *t = &c->companions.items[i].t;

		if (strncmp(c->companions.items[i].name, "inputs/", 7) == 0)
			continue; /* the weights' own rows: original ids */
		for (int64_t k = 0; k < mtp_tensor_numel(t); k++) {
			int64_t x = mtp_subset_at(t, k);

			mtp_store(t->dtype, t->data, (size_t)k,
				  x >= 0 && x < v ? (double)map[x] : -1.0);
		}
	}
}

enum mtp_status mtp_captured_prepare(struct mtp_case *c, bool full, char *note,
				     size_t noten, char *err, size_t errn)
{
	int64_t v = vocab_of(c), kept = 0, *map;
	bool subsets, whole = vocab_kinds(c, &subsets);
	bool sample =
		!full && c->params.v2.captured && whole && v > MTP_SAMPLE_MIN_V;
	enum mtp_status st;

	note[0] = 0;
	if (!sample && !subsets)
		return MTP_OK;
	map = calloc((size_t)v + 1, sizeof(*map)); /* 1: kept, then index */
	if (!map) {
		snprintf(err, errn, "%s: out of memory", c->id);
		return MTP_ERR_NOMEM;
	}
	keep(c, v, sample, whole, map);
	for (int64_t r = 0; r < v; r++)
		map[r] = map[r] ? kept++ : -1;
	st = lay_out(c, v, map, kept);
	if (!st)
		st = gather_logits(c, &c->expected, "expected", v, map, kept);
	if (!st)
		st = gather_logits(c, &c->observed, "observed", v, map, kept);
	renumber(&c->inputs, v, map);
	renumber(&c->expected, v, map);
	renumber(&c->observed, v, map);
	renumber_rows(c, v, map);
	free(map);
	if (st) {
		snprintf(err, errn, "%s: out of memory", c->id);
		return st;
	}
	if (sample)
		snprintf(
			note, noten,
			"partial: logits judged on %lld of %lld vocabulary "
			"rows (one row in %lld and the case's tokens and ids), "
			"tokens as the argmax over those rows; --full-logits "
			"judges all",
			(long long)kept, (long long)v,
			(long long)(v / MTP_SAMPLE_ROWS));
	return MTP_OK;
}
