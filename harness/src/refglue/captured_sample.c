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

static enum mtp_status gather_list(struct mtp_tensor_list *l, bool outputs,
				   int64_t v, const int64_t *map, int64_t kept)
{
	enum mtp_status st = MTP_OK;

	for (int i = 0; !st && i < l->n; i++) {
		const char *n = l->items[i].name;

		if (outputs ? strcmp(leaf(n), "logits") == 0 : is_rowed(n))
			st = gather(&l->items[i].t, outputs, v, map, kept);
	}
	return st;
}

static int64_t vocab_of(const struct mtp_case *c)
{
	for (int i = 0; i < c->inputs.n; i++)
		if (strcmp(leaf(c->inputs.items[i].name), "head_weight") == 0)
			return c->inputs.items[i].t.shape[0];
	return 0;
}

enum mtp_status mtp_captured_prepare(struct mtp_case *c, bool full, char *note,
				     size_t noten, char *err, size_t errn)
{
	int64_t v = vocab_of(c), kept = 0, *map;
	enum mtp_status st;

	note[0] = 0;
	if (full || !c->params.v2.captured || v <= MTP_SAMPLE_MIN_V)
		return MTP_OK;
	map = calloc((size_t)v, sizeof(*map)); /* 1: kept, then new index */
	if (!map) {
		snprintf(err, errn, "%s: out of memory", c->id);
		return MTP_ERR_NOMEM;
	}
	for (int64_t i = 0; i < MTP_SAMPLE_ROWS; i++)
		map[i * v / MTP_SAMPLE_ROWS] = 1;
	keep_values(&c->inputs, v, map);
	keep_values(&c->expected, v, map);
	keep_values(&c->observed, v, map);
	for (int64_t r = 0; r < v; r++)
		map[r] = map[r] ? kept++ : -1;
	st = gather_list(&c->inputs, false, v, map, kept);
	if (!st)
		st = gather_list(&c->expected, true, v, map, kept);
	if (!st)
		st = gather_list(&c->observed, true, v, map, kept);
	renumber(&c->inputs, v, map);
	renumber(&c->expected, v, map);
	renumber(&c->observed, v, map);
	free(map);
	if (st) {
		snprintf(err, errn, "%s: out of memory", c->id);
		return st;
	}
	snprintf(note, noten,
		 "partial: logits judged on %lld of %lld vocabulary rows "
		 "(one row in %lld and the case's tokens and ids), tokens as "
		 "the argmax over those rows; --full-logits judges all",
		 (long long)kept, (long long)v,
		 (long long)(v / MTP_SAMPLE_ROWS));
	return MTP_OK;
}
