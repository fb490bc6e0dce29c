/*
 * The bug classes seen in the field (SPEC.md §12.4) as hypotheses: the
 * reference run as the buggy engine ran it, by changing one attribute or
 * some inputs of the call (diag_hyp.c does the §8 classes):
 *  - SPEC_STEP_LAYER_REUSE: a chain with pass_step_idx = 1 run as 0;
 *  - SHARED_HEAD_OVERWRITE: every head_weight replaced by the dump's
 *    target_head_weight (the target model's lm_head);
 *  - SHARED_HEAD_UNINIT: every head_weight all zeros (never loaded);
 *  - QUANT_SCALE_DROPPED and its variants: every block scale of the call
 *    replaced by ones, its reciprocal, its transpose (square scale matrices
 *    only) or layer (l+1) mod L's.
 * Also the weight sanity rule that names SHARED_HEAD_UNINIT from a dump's
 * parameters alone.
 */
#include "field_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_chain(const struct mtp_call *c)
{
	return c->op->id == MTP_OP_DRAFT_CHAIN;
}

static bool is_step(const struct mtp_call *c)
{
	return c->op->id == MTP_OP_MTP_STEP || is_chain(c);
}

const char *mtp_field_base(const char *name)
{
	const char *slash = strrchr(name, '/');

	return slash ? slash + 1 : name;
}

bool mtp_field_ends_with(const char *s, const char *suffix)
{
	size_t a = strlen(s), b = strlen(suffix);

	return a >= b && strcmp(s + a - b, suffix) == 0;
}

static bool present(const struct mtp_call *c, const char *name)
{
	int i = mtp_call_in_index(c, name);

	return i >= 0 && c->in[i].data;
}

/* Whether the call has a float8 weight (and so block scales). */
/* Whether the call has a block-scale input (square: a square one, the only
 * kind whose transpose is a different bug than none) */
static bool has_scales(const struct mtp_call *c, bool square)
{
	for (int i = 0; i < c->n_in; i++)
		if (c->in[i].data &&
		    mtp_field_ends_with(c->sig->in[i].name, "scale_inv") &&
		    (!square || (c->in[i].ndim == 2 &&
				 c->in[i].shape[0] == c->in[i].shape[1])))
			return true;
	return false;
}

bool mtp_field_is_head(const struct mtp_call *c, int i)
{
	const char *b = mtp_field_base(c->sig->in[i].name);

	return strcmp(b, "head_weight") == 0 ||
	       (c->op->id == MTP_OP_LM_HEAD && strcmp(b, "weight") == 0);
}

bool mtp_field_is_head_scale(const struct mtp_call *c, int i)
{
	const char *b = mtp_field_base(c->sig->in[i].name);

	return strcmp(b, "head_scale_inv") == 0 ||
	       (c->op->id == MTP_OP_LM_HEAD &&
		strcmp(b, "weight_scale_inv") == 0);
}

bool mtp_diag_field_applies(enum mtp_diag d, const struct mtp_call *c)
{
	const struct mtp_params *p = c->params;

	switch (d) {
	case MTP_DIAG_SPEC_STEP_LAYER_REUSE:
		return is_chain(c) && p->num_layers >= 2 && p->pass_step_idx &&
		       p->num_steps >= 2;
	case MTP_DIAG_SHARED_HEAD_OVERWRITE:
		return is_step(c) && present(c, "target_head_weight");
	case MTP_DIAG_SHARED_HEAD_UNINIT:
		return is_step(c) || c->op->id == MTP_OP_LM_HEAD;
	case MTP_DIAG_QUANT_SCALE_DROPPED:
	case MTP_DIAG_QUANT_SCALE_RECIPROCAL: return has_scales(c, false);
	case MTP_DIAG_QUANT_SCALE_TRANSPOSED: return has_scales(c, true);
	case MTP_DIAG_QUANT_SCALE_OTHER_LAYER:
		return has_scales(c, false) && is_chain(c) &&
		       p->num_layers >= 2;
	default: return false;
	}
}

int mtp_field_other_layer(const struct mtp_call *c, int i)
{
	const char *name = c->sig->in[i].name;
	long long l;
	int off = 0, j;
	char other[MTP_NAME_MAX];

	if (sscanf(name, "layer.%lld/%n", &l, &off) != 1 || off == 0)
		return i;
	snprintf(other, sizeof(other), "layer.%lld/%s",
		 (l + 1) % c->params->num_layers, name + off);
	j = mtp_call_in_index(c, other);
	if (j < 0 || !c->in[j].data ||
	    !mtp_tensor_same_shape(&c->in[j], &c->in[i]))
		return i;
	return j;
}

int64_t mtp_field_scale_src(enum mtp_diag d, int64_t r, int64_t k, int64_t rows,
			    int64_t cols)
{
	if (d == MTP_DIAG_QUANT_SCALE_TRANSPOSED && rows == cols)
		return k * cols + r;
	return r * cols + k;
}

double mtp_field_scale_value(enum mtp_diag d, double v)
{
	if (d == MTP_DIAG_QUANT_SCALE_DROPPED)
		return 1.0;
	return d == MTP_DIAG_QUANT_SCALE_RECIPROCAL ? 1.0 / v : v;
}

/* A float32 copy of scale input i, changed as bug d changes it. */
static enum mtp_status wrong_scale(enum mtp_diag d, const struct mtp_call *c,
				   int i, struct mtp_tensor *t)
{
	const struct mtp_tensor *s = &c->in[i];
	const struct mtp_tensor *src =
		d == MTP_DIAG_QUANT_SCALE_OTHER_LAYER
			? &c->in[mtp_field_other_layer(c, i)]
			: s;
	int64_t rows = s->shape[0], cols = s->ndim > 1 ? s->shape[1] : 1;
	enum mtp_status st = mtp_tensor_alloc(t, MTP_F32, s->ndim, s->shape);

	for (int64_t r = 0; !st && r < rows; r++) {
		for (int64_t k = 0; k < cols; k++) {
			int64_t at = mtp_field_scale_src(d, r, k, rows, cols);
			double v = mtp_load(src->dtype, src->data, (size_t)at);

			mtp_store(MTP_F32, t->data, (size_t)(r * cols + k),
				  mtp_field_scale_value(d, v));
		}
	}
	return st;
}

/* The inputs as bug d sees them; changed ones are owned by `own`. */
static enum mtp_status change_inputs(enum mtp_diag d, const struct mtp_call *c,
				     struct mtp_tensor *in,
				     struct mtp_tensor *own)
{
	int it = mtp_call_in_index(c, "target_head_weight");
	enum mtp_status st = MTP_OK;

	for (int i = 0; !st && i < c->n_in; i++) {
		const char *b = mtp_field_base(c->sig->in[i].name);

		if (!c->in[i].data)
			continue;
		if (d >= MTP_DIAG_QUANT_SCALE_DROPPED &&
		    mtp_field_ends_with(b, "scale_inv")) {
			st = wrong_scale(d, c, i, &own[i]);
			in[i] = own[i];
		} else if (d == MTP_DIAG_SHARED_HEAD_OVERWRITE &&
			   mtp_field_is_head(c, i)) {
			in[i] = c->in[it];
		} else if (d == MTP_DIAG_SHARED_HEAD_UNINIT &&
			   mtp_field_is_head(c, i)) {
			st = mtp_tensor_alloc(&own[i], c->act, c->in[i].ndim,
					      c->in[i].shape);
			in[i] = own[i];
		} else if (d <= MTP_DIAG_SHARED_HEAD_UNINIT &&
			   mtp_field_is_head_scale(c, i)) {
			in[i].data = NULL; /* the replacement is not float8 */
		}
	}
	return st;
}

enum mtp_status mtp_diag_field_hypothesis(enum mtp_diag d,
					  const struct mtp_call *c,
					  struct mtp_tensor *hyp)
{
	struct mtp_params p = *c->params;
	struct mtp_call h = *c;
	size_t n = (size_t)c->n_in + 1;
	struct mtp_tensor *in = malloc(n * sizeof(*in));
	struct mtp_tensor *own = calloc(n, sizeof(*own));
	enum mtp_status st = in && own ? MTP_OK : MTP_ERR_NOMEM;

	if (!st) {
		memcpy(in, c->in, (size_t)c->n_in * sizeof(*in));
		if (d == MTP_DIAG_SPEC_STEP_LAYER_REUSE)
			p.pass_step_idx = false;
		else
			st = change_inputs(d, c, in, own);
	}
	if (!st) {
		h.in = in;
		h.params = &p;
		h.out = hyp;
		st = mtp_reference_run(&h);
	}
	for (int i = 0; own && i < c->n_in; i++)
		mtp_tensor_fini(&own[i]);
	free(own);
	free(in);
	return st;
}

/* ---- the weight sanity rule ------------------------------------------- */

/* Whether the rule looks at w: a head or embedding weight, in memory. */
static bool checked_weight(const struct mtp_named *w)
{
	const char *b = mtp_field_base(w->name);

	return w->t.data && w->t.ndim == 2 &&
	       (mtp_dtype_is_float(w->t.dtype) ||
		mtp_dtype_is_fp8(w->t.dtype)) &&
	       (strcmp(b, "head_weight") == 0 ||
		strcmp(b, "embed_table") == 0 ||
		strcmp(w->name, "weight") == 0);
}

struct wstats {
	int64_t rows, zero_rows, const_rows, nonzero, wild, special;
};

static void weight_stats(const struct mtp_tensor *t, struct wstats *s)
{
	int64_t n = mtp_tensor_numel(t);
	int64_t cols = t->ndim > 1 ? t->shape[t->ndim - 1] : n;

	memset(s, 0, sizeof(*s));
	s->rows = cols ? n / cols : 0;
	for (int64_t r = 0; r < s->rows; r++) {
		double first = mtp_load(t->dtype, t->data, (size_t)(r * cols));
		bool zero = true, same = true;

		for (int64_t k = 0; k < cols; k++) {
			double v = mtp_load(t->dtype, t->data,
					    (size_t)(r * cols + k));

			if (!isfinite(v)) {
				s->special++;
				continue;
			}
			zero &= v == 0;
			same &= v == first;
			if (v != 0) {
				s->nonzero++;
				s->wild += fabs(v) < 1e-20 || fabs(v) > 1e4;
			}
		}
		s->zero_rows += zero;
		s->const_rows += same && !zero && cols > 1;
	}
}

static bool suspect_one(const struct mtp_named *w, char *why, size_t n)
{
	struct wstats s;

	weight_stats(&w->t, &s);
	if (s.special)
		snprintf(why, n, "'%s' holds %lld NaN/Inf values", w->name,
			 (long long)s.special);
	else if (mtp_dtype_is_fp8(w->t.dtype))
		return false; /* stored e4m3 codes: only NaN means anything */
	else if (s.rows && s.zero_rows == s.rows)
		snprintf(why, n, "'%s' is all zeros", w->name);
	else if (s.zero_rows * 100 >= s.rows && s.zero_rows)
		snprintf(why, n, "'%s': %lld of %lld rows are all zeros",
			 w->name, (long long)s.zero_rows, (long long)s.rows);
	else if (s.const_rows * 100 >= s.rows && s.const_rows)
		snprintf(why, n, "'%s': %lld of %lld rows are constant",
			 w->name, (long long)s.const_rows, (long long)s.rows);
	else if (s.wild * 1000 >= s.nonzero && s.wild)
		snprintf(why, n,
			 "'%s': %lld of %lld non-zero values have magnitudes "
			 "outside [1e-20, 1e4] (uninitialised memory?)",
			 w->name, (long long)s.wild, (long long)s.nonzero);
	else
		return false;
	return true;
}

bool mtp_weights_suspect(const struct mtp_tensor_list *inputs, char *why,
			 size_t n)
{
	for (int i = 0; i < inputs->n; i++) {
		const struct mtp_named *w = &inputs->items[i];

		if (checked_weight(w) && suspect_one(w, why, n))
			return true;
	}
	return false;
}

int64_t mtp_weights_checked(const struct mtp_tensor_list *inputs)
{
	int64_t n = 0;

	for (int i = 0; i < inputs->n; i++)
		if (checked_weight(&inputs->items[i]))
			n += mtp_tensor_numel(&inputs->items[i].t);
	return n;
}
