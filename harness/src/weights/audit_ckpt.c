/*
 * The weight audit on a real checkpoint folder (`audit-weights
 * --checkpoint DIR`, docs/WEIGHTS.md): with the tensors' dtypes and shapes
 * from the safetensors headers, the judged mapping must load every MTP
 * tensor into exactly one parameter and every parameter from one tensor,
 * every FP8 weight must have its scale with one block shape for the whole
 * checkpoint, and (PARAMS with shapes) each tensor must fit its parameter.
 */
#include "mtp/safetensors.h"
#include "mtp/weightmap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "audit_int.h"

/* One judged key -> parameter row. */
struct row {
	const char *key, *param;
	char shard[12]; /* "" when none */
	int expert;
};

static const char *const scale_suffixes[] = {".weight_scale_inv",
					     ".weight_scale", ".scale"};

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

bool mtp_wm_au_is_weight_scale(const char *name)
{
	return ends_with(name, "weight_scale") ||
	       ends_with(name, "weight_scale_inv") ||
	       ends_with(name, "weight_scale_2");
}

/* A key's weight/scale pair: the name without .weight or a scale suffix. */
static size_t pair_len(const char *key)
{
	size_t n = strlen(key);

	for (size_t i = 0; i < 3; i++)
		if (ends_with(key, scale_suffixes[i]))
			return n - strlen(scale_suffixes[i]);
	return ends_with(key, ".weight") ? n - 7 : n;
}

static bool same_pair(const char *a, const char *b)
{
	size_t n = pair_len(a);

	return n == pair_len(b) && strncmp(a, b, n) == 0;
}

static bool is_scale_key(const char *key)
{
	return pair_len(key) != strlen(key) && !ends_with(key, ".weight");
}

static struct row *collect_rows(struct audit *au, int *n)
{
	const struct mtp_wm_pairs *map = au->in->map;
	const struct mtp_wm_mapping *m = mtp_wm_au_simulated(au);
	int cap = map ? map->n : m->n;
	struct row *r = calloc((size_t)cap + 1, sizeof(*r));

	*n = 0;
	if (!r)
		return NULL;
	for (int i = 0; map && i < map->n; i++) {
		r[*n] = (struct row){map->v[i].a, map->v[i].b, "",
				     map->v[i].expert};
		memcpy(r[(*n)++].shard, map->v[i].shard, sizeof(r->shard));
	}
	for (int i = 0; !map && i < m->n; i++) {
		if (!m->v[i].param)
			continue;
		r[*n] = (struct row){m->v[i].key, m->v[i].param, "",
				     m->v[i].expert};
		if (m->v[i].shard >= 0)
			snprintf(r[*n].shard, sizeof(r->shard), "%d",
				 m->v[i].shard);
		(*n)++;
	}
	return r;
}

static int by_key(const void *a, const void *b)
{
	return strcmp(((const struct row *)a)->key,
		      ((const struct row *)b)->key);
}

static int by_target(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = strcmp(x->param, y->param);

	if (!c)
		c = strcmp(x->shard, y->shard);
	return c ? c : (x->expert > y->expert) - (x->expert < y->expert);
}

static void loaded_nowhere(struct audit *au, const char *key)
{
	bool scale = is_scale_key(key);

	mtp_wm_au_finding(au,
			  scale ? MTP_DIAG_QUANT_SCALE_DROPPED
				: MTP_DIAG_STALE_WEIGHT_REMAP,
			  key, "",
			  scale ? "the checkpoint's scale is loaded nowhere: "
				  "its weight runs without it"
				: "an MTP tensor of the checkpoint is loaded "
				  "nowhere: its values never reach the engine");
}

/* Each MTP tensor lands in exactly one parameter (rows sorted by key). */
static void exactly_one(struct audit *au, const struct row *r, int n)
{
	const struct mtp_wm_names *keys = &au->in->ckpt->keys;
	char text[200];

	for (int k = 0; k < keys->n; k++) {
		struct row probe = {.key = keys->v[k]};
		const struct row *hit, *end;

		if (mtp_wm_au_key_layer(au->c, probe.key) < 0)
			continue;
		hit = n ? bsearch(&probe, r, (size_t)n, sizeof(*r), by_key)
			: NULL;
		if (!hit) {
			loaded_nowhere(au, probe.key);
			continue;
		}
		while (hit > r && !by_key(&hit[-1], &probe))
			hit--;
		for (end = hit + 1; end < r + n && !by_key(end, &probe); end++)
			if (strcmp(end->param, hit->param))
				break;
		if (end == r + n || by_key(end, &probe))
			continue;
		snprintf(text, sizeof(text),
			 "loaded into two parameters (%.80s and this one)",
			 hit->param);
		mtp_wm_au_finding(au, MTP_DIAG_STALE_WEIGHT_REMAP, probe.key,
				  end->param, text);
	}
}

/* Whether two tensors of the checkpoint have one dtype and one shape. */
static bool alike(const struct mtp_wm_ckpt *k, const char *a, const char *b)
{
	const struct mtp_st_tensor *x = mtp_wm_ckpt_find(k, a);
	const struct mtp_st_tensor *y = mtp_wm_ckpt_find(k, b);

	return x && y && !strcmp(x->dtype, y->dtype) && x->ndim == y->ndim &&
	       !memcmp(x->shape, y->shape, (size_t)x->ndim * sizeof(*x->shape));
}

/* Every parameter (shard, expert) is loaded from one tensor; a weight and
 * its own scale folded into it at load (the FP8 indexer wk) count once.
 * Two tensors alike in dtype and shape (the published V3 layout's top-level
 * and MTP-layer embedding, GLM-4.5's lm_head and MTP head) are a note: the
 * later load wins, and only the data, never read here, could tell whether
 * they differ. Rows sorted by target. */
static void loaded_once(struct audit *au, const struct row *r, int n)
{
	char text[200];
	const char *first = NULL;
	int twice = 0;

	for (int i = 1; i < n; i++) {
		if (by_target(&r[i - 1], &r[i]) ||
		    same_pair(r[i - 1].key, r[i].key))
			continue;
		if (alike(au->in->ckpt, r[i - 1].key, r[i].key)) {
			if (!twice++)
				first = r[i].param;
			continue;
		}
		snprintf(text, sizeof(text),
			 "loaded twice, from %.70s and from this key (another "
			 "dtype or shape): the later load overwrites the "
			 "earlier",
			 r[i - 1].key);
		mtp_wm_au_finding(au, MTP_DIAG_STALE_WEIGHT_REMAP, r[i].key,
				  r[i].param, text);
	}
	if (twice)
		mtp_wm_au_note(au->a,
			       "%d parameter(s) loaded twice from tensors of "
			       "one dtype and shape, the later load winning "
			       "(first: %s)",
			       twice, first);
}

/* The block sizes b with ceil(dim / b) == blocks: [lo, hi] (empty, lo >
 * hi, when there is none: no blocks for a non-empty dimension, or more
 * blocks than elements). */
static void block_range(int64_t dim, int64_t blocks, int64_t *lo, int64_t *hi)
{
	*lo = blocks > 0 ? (dim + blocks - 1) / blocks : 1;
	*hi = blocks > 1 ? (dim - 1) / (blocks - 1) : INT64_MAX;
	if (dim == 0)
		*lo = *hi = 0;
	else if (blocks <= 0 || blocks > dim)
		*hi = 0;
}

struct blocks {
	int64_t lo[2], hi[2];
	bool set;
	char first[MTP_WM_NAME_MAX];
};

/* Whether a [s0, s1] block scale of a [o, i] weight fits the blocks seen
 * so far (b narrowed into lo/hi when it does). */
static bool blocks_fit(const struct blocks *b, const int64_t *w,
		       const int64_t *sc, int64_t *lo, int64_t *hi)
{
	bool fits = true;

	for (int d = 0; d < 2; d++) {
		block_range(w[d], sc[d], &lo[d], &hi[d]);
		if (b->set) {
			lo[d] = lo[d] > b->lo[d] ? lo[d] : b->lo[d];
			hi[d] = hi[d] < b->hi[d] ? hi[d] : b->hi[d];
		}
		fits = fits && lo[d] <= hi[d];
	}
	return fits;
}

/* A 2-D scale [so, si] of a weight [o, i]: blocks consistent with every
 * scale seen before; else its transpose would be (a scale stored
 * transposed), else a mismatch. */
static void check_block(struct audit *au, struct blocks *b,
			const struct mtp_st_tensor *w,
			const struct mtp_st_tensor *s)
{
	int64_t lo[2], hi[2], swapped[2] = {s->shape[1], s->shape[0]};
	char text[200];
	bool transposed;

	if (blocks_fit(b, w->shape, s->shape, lo, hi)) {
		memcpy(b->lo, lo, sizeof(lo));
		memcpy(b->hi, hi, sizeof(hi));
		if (!b->set)
			snprintf(b->first, sizeof(b->first), "%s", w->name);
		b->set = true;
		return;
	}
	transposed = s->shape[0] != s->shape[1] &&
		     blocks_fit(b, w->shape, swapped, lo, hi);
	snprintf(text, sizeof(text),
		 "scale [%lld, %lld] of weight [%lld, %lld] does not fit the "
		 "blocks [%lld, %lld] of %.50s%s",
		 (long long)s->shape[0], (long long)s->shape[1],
		 (long long)w->shape[0], (long long)w->shape[1],
		 (long long)b->lo[0], (long long)b->lo[1], b->first,
		 transposed ? " (its transpose does)" : "");
	mtp_wm_au_finding(au,
			  transposed ? MTP_DIAG_QUANT_SCALE_TRANSPOSED
				     : MTP_DIAG_QUANT_SCALE_DROPPED,
			  s->name, w->name, text);
}

/* The scale tensor of an FP8 weight, or NULL. */
static const struct mtp_st_tensor *scale_of(const struct mtp_wm_ckpt *k,
					    const char *weight)
{
	char name[MTP_WM_NAME_MAX + 32];
	size_t n = pair_len(weight);

	for (size_t i = 0; i < 3; i++) {
		const struct mtp_st_tensor *s;

		snprintf(name, sizeof(name), "%.*s%s", (int)n, weight,
			 scale_suffixes[i]);
		if ((s = mtp_wm_ckpt_find(k, name)))
			return s;
	}
	return NULL;
}

/* A per-channel scale ([o] or [o, 1]) or a per-tensor one (one value). */
static bool channel_or_tensor(const struct mtp_st_tensor *w,
			      const struct mtp_st_tensor *s)
{
	int64_t numel = 1;

	for (int d = 0; d < s->ndim; d++)
		numel *= s->shape[d];
	return numel == 1 || (s->ndim >= 1 && s->shape[0] == w->shape[0] &&
			      numel == w->shape[0]);
}

static void fp8_scales(struct audit *au)
{
	const struct mtp_wm_ckpt *k = au->in->ckpt;
	struct blocks b = {.set = false};
	char text[200];

	for (int i = 0; i < k->n; i++) {
		const struct mtp_st_tensor *w = &k->t[i], *s;

		if (strncmp(w->dtype, "F8_E4M3", 7) &&
		    strncmp(w->dtype, "F8_E5M2", 7))
			continue;
		if (!ends_with(w->name, ".weight") ||
		    mtp_wm_au_key_layer(au->c, w->name) < 0)
			continue;
		au->a->n_fp8++;
		if (!(s = scale_of(k, w->name))) {
			snprintf(text, sizeof(text),
				 "an FP8 weight (%s) without its scale "
				 "(.weight_scale_inv or .weight_scale): it "
				 "loads as raw e4m3 values",
				 w->dtype);
			mtp_wm_au_finding(au, MTP_DIAG_QUANT_SCALE_DROPPED,
					  w->name, "", text);
		} else if (s->ndim == 2 && w->ndim == 2 &&
			   !channel_or_tensor(w, s)) {
			check_block(au, &b, w, s);
		} else if (!channel_or_tensor(w, s)) {
			mtp_wm_au_finding(au, MTP_DIAG_QUANT_SCALE_DROPPED,
					  s->name, w->name,
					  "the scale's shape fits neither "
					  "blocks, channels nor the tensor");
		}
	}
	if (b.set) {
		snprintf(text, sizeof(text), "%lld x %lld (first: %.100s)",
			 (long long)b.lo[0], (long long)b.lo[1], b.first);
		mtp_wm_au_note(au->a,
			       "%d FP8 MTP weight(s) with their scales; block "
			       "shape %s",
			       au->a->n_fp8, text);
	}
}

/* "D0,D1,..." into dims; -1 on a malformed or too long list. */
static int parse_dims(const char *s, int64_t *dims)
{
	int n = 0;

	while (*s) {
		char *end;

		if (n == MTP_ST_MAX_DIMS)
			return -1;
		dims[n++] = strtoll(s, &end, 10);
		if (end == s || (*end && *end != ','))
			return -1;
		s = *end ? end + 1 : end;
	}
	return n;
}

static const char *shape_of(const struct audit *au, const char *param)
{
	const struct mtp_wm_pairs *s = au->in->shapes;

	for (int i = 0; i < s->n; i++)
		if (strcmp(s->v[i].a, param) == 0)
			return s->v[i].b;
	return NULL;
}

/* Whether tensor t fits the parameter p (TP = 1): as is; a shard of a
 * stacked parameter (dim 0 a part); one expert of a fused [E, ...]
 * parameter (w13: one of two halves of dim 1). */
static bool fits(const struct row *r, const struct mtp_st_tensor *t,
		 const int64_t *p, int np)
{
	int off = r->expert >= 0;

	if (np != t->ndim + off)
		return false;
	for (int d = 0; d < t->ndim; d++) {
		int64_t want = p[d + off];

		if (d == 0 && off && strstr(r->param, "w13_"))
			want /= 2;
		if (d == 0 && !off && r->shard[0] ? t->shape[0] > want
						  : t->shape[d] != want)
			return false;
	}
	return true;
}

static void print_dims(char *buf, size_t n, const int64_t *d, int nd)
{
	size_t o = (size_t)snprintf(buf, n, "[");

	for (int i = 0; i < nd && o < n; i++)
		o += (size_t)snprintf(buf + o, n - o, "%s%lld", i ? ", " : "",
				      (long long)d[i]);
	if (o < n)
		snprintf(buf + o, n - o, "]");
}

/* Checkpoint shapes against PARAMS' shapes (a weight and the scale folded
 * into it at load are not compared). */
static void shapes_fit(struct audit *au, const struct row *r, int n)
{
	char text[200], ts[64], ps[64];
	int64_t p[MTP_ST_MAX_DIMS];

	for (int i = 0; i < n; i++) {
		const struct mtp_st_tensor *t =
			mtp_wm_ckpt_find(au->in->ckpt, r[i].key);
		const char *shape = shape_of(au, r[i].param);
		int np = shape ? parse_dims(shape, p) : -1;

		if (!t || np < 0 ||
		    (is_scale_key(r[i].key) &&
		     !mtp_wm_au_is_weight_scale(r[i].param)))
			continue;
		au->a->n_shapes++;
		if (fits(&r[i], t, p, np))
			continue;
		print_dims(ts, sizeof(ts), t->shape, t->ndim);
		print_dims(ps, sizeof(ps), p, np);
		snprintf(text, sizeof(text),
			 "checkpoint shape %s does not fit the parameter's %s",
			 ts, ps);
		mtp_wm_au_finding(au, MTP_DIAG_STALE_WEIGHT_REMAP, r[i].key,
				  r[i].param, text);
	}
}

void mtp_wm_au_checkpoint(struct audit *au)
{
	int n;
	struct row *r = collect_rows(au, &n);

	if (!r) {
		au->st = MTP_ERR_NOMEM;
		return;
	}
	qsort(r, (size_t)n, sizeof(*r), by_key);
	exactly_one(au, r, n);
	if (au->in->shapes)
		shapes_fit(au, r, n);
	qsort(r, (size_t)n, sizeof(*r), by_target);
	loaded_once(au, r, n);
	fp8_scales(au);
	free(r);
}
