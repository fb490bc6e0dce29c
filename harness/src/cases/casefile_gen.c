/*
 * Generated lines of case files (docs/CASES.md): each value of each list is
 * parsed and checked once, then the line expands into every combination (the
 * last key varies fastest) and each problem is checked by the generator
 * (attributes the op takes, sizes) before it is kept, so that a bad line
 * stops the run with FILE:LINE:COL before anything runs.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "casefile_int.h"
#include "mtp/membudget.h"

/* One list-valued key of a generated line: the product runs over these. */
struct axis {
	const struct mtp_cf_token *tok;
	int n;
	struct mtp_cf_item items[MTP_CF_MAX_ITEMS];
};

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	if (!isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	*v = strtoull(s, &end, 0);
	return !errno && !*end;
}

static bool dtype_parse(const char *s, enum mtp_dtype *dt)
{
	static const char *const alias[][2] = {{"bf16", "bfloat16"},
					       {"fp16", "float16"},
					       {"fp32", "float32"},
					       {"fp64", "float64"}};

	for (size_t i = 0; i < sizeof(alias) / sizeof(alias[0]); i++)
		if (strcmp(s, alias[i][0]) == 0)
			s = alias[i][1];
	return mtp_dtype_parse(s, dt);
}

static int64_t *dim_field(struct mtp_gen_spec *s, char sym)
{
	switch (sym) {
	case 'T': return &s->t;
	case 'H': return &s->h;
	case 'M': return &s->m;
	case 'V': return &s->v;
	case 'F': return &s->f;
	case 'R': return &s->rows;
	case 'P': return &s->parts;
	case 'K': return &s->k;
	case 'C': return &s->c;
	default: return &s->l;
	}
}

/* A dim's value; 0 only for the batch dims T and R and dspark_step's
 * context rows C (an empty batch, which every op must take without
 * launching anything: docs/CASES.md). */
static enum mtp_status apply_dim(const struct mtp_cf_line *ln,
				 const struct mtp_cf_token *t,
				 const struct mtp_cf_item *it, uint64_t u,
				 struct mtp_gen_spec *s)
{
	const char sym = t->key[0];
	const unsigned bit = sym == 'T'	  ? MTP_GEN_EMPTY_T
			     : sym == 'R' ? MTP_GEN_EMPTY_R
			     : sym == 'C' ? MTP_GEN_EMPTY_C
					  : 0;

	if (u == 0 && !bit)
		return mtp_cf_error(ln, it->col,
				    "bad number '0' for '%c': only the batch "
				    "dims T, R and C may be 0",
				    sym);
	s->empty = u ? s->empty & ~bit : s->empty | bit;
	*dim_field(s, sym) = (int64_t)u;
	return MTP_OK;
}

static enum mtp_status apply_attr(const struct mtp_cf_line *ln,
				  const struct mtp_cf_token *t,
				  const struct mtp_cf_item *it,
				  struct mtp_gen_spec *s)
{
	struct mtp_attr *a;
	char *end;
	double v = strtod(it->s, &end);

	if (s->attrs.n ==
	    (int)(sizeof(s->attrs.items) / sizeof(s->attrs.items[0])))
		return mtp_cf_error(ln, t->col, "too many attributes");
	a = &s->attrs.items[s->attrs.n++];
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%.*s", t->klen - 5, t->key + 5);
	if (!*end && end != it->s) {
		a->num = v;
		return MTP_OK;
	}
	if (strspn(it->s, MTP_CF_ALNUM "_") != strlen(it->s) ||
	    strlen(it->s) >= sizeof(a->str))
		return mtp_cf_error(
			ln, it->col,
			"bad value '%s' for '%.*s': a number or a word", it->s,
			t->klen, t->key);
	a->is_string = true;
	snprintf(a->str, sizeof(a->str), "%s", it->s);
	return MTP_OK;
}

/* Sets the field of one key to one value; op= resets the spec. */
static enum mtp_status apply(const struct mtp_cf_line *ln,
			     const struct mtp_cf_token *t,
			     const struct mtp_cf_item *it,
			     struct mtp_gen_spec *s)
{
	const struct mtp_op *op;
	uint64_t u;

	switch (t->id) {
	case K_OP:
		if (!(op = mtp_op_find(it->s)))
			return mtp_cf_error(ln, it->col, "unknown op '%s'",
					    it->s);
		mtp_gen_spec_init(s, op);
		return MTP_OK;
	case K_FAMILY:
		if (!mtp_family_parse(it->s, &s->family))
			return mtp_cf_error(ln, it->col,
					    "unknown family '%s' (%s)", it->s,
					    mtp_family_names());
		return MTP_OK;
	case K_DTYPE:
		if (!dtype_parse(it->s, &s->act) || !mtp_dtype_is_float(s->act))
			return mtp_cf_error(ln, it->col,
					    "bad dtype '%s' (bfloat16, "
					    "float16, float32, float64)",
					    it->s);
		return MTP_OK;
	case K_SEED:
		if (!parse_u64(it->s, &s->seed))
			return mtp_cf_error(
				ln, it->col,
				"bad number '%s' for 'seed': expected an "
				"unsigned 64-bit integer",
				it->s);
		return MTP_OK;
	case K_OPTIONAL:
		if (strcmp(it->s, "0") && strcmp(it->s, "1"))
			return mtp_cf_error(
				ln, it->col,
				"bad value '%s' for 'optional': 0 or 1", it->s);
		s->optional = it->s[0] == '1';
		return MTP_OK;
	case K_ATTR: return apply_attr(ln, t, it, s);
	default: /* K_DIM */
		if (!parse_u64(it->s, &u) || u > (uint64_t)INT64_MAX ||
		    (it->s[0] == '0' && it->s[1]))
			return mtp_cf_error(ln, it->col,
					    "bad number '%s' for '%.*s': "
					    "expected a positive integer",
					    it->s, t->klen, t->key);
		return apply_dim(ln, t, it, u, s);
	}
}

/* The column to blame for a spec's error: the attribute it names, else the
 * dim it names, else op=. */
static int blame(const struct axis *ax, int nax, const char *msg)
{
	char pat[64];

	for (int pass = 0; pass < 2; pass++) {
		for (int i = 1; i < nax; i++) {
			const struct mtp_cf_token *t = ax[i].tok;

			if ((t->id == K_ATTR) != (pass == 0))
				continue;
			if (t->id == K_ATTR)
				snprintf(pat, sizeof(pat), "'%.*s'",
					 t->klen - 5, t->key + 5);
			else
				snprintf(pat, sizeof(pat), " %.*s=", t->klen,
					 t->key);
			if (strstr(msg, pat))
				return t->col;
		}
	}
	return ax[0].tok->col;
}

/* Axes in line order with op= first; every value is checked once. */
static enum mtp_status axes_build(const struct mtp_cf_line *ln, struct axis *ax,
				  int *nax, long *total)
{
	struct mtp_gen_spec s;
	enum mtp_status st;

	*nax = 1;
	*total = 1;
	for (int i = 0; i < ln->n; i++) {
		const struct mtp_cf_token *t = &ln->tok[i];
		struct axis *a;

		if (t->id == K_TAGS || t->id == K_BACKENDS)
			continue;
		a = t->id == K_OP ? &ax[0] : &ax[(*nax)++];
		a->tok = t;
		st = mtp_cf_items(ln, t, a->items, &a->n);
		if (st)
			return st;
	}
	for (int i = 0; i < *nax; i++) {
		for (int k = 0; k < ax[i].n; k++) {
			mtp_gen_spec_init(&s, i ? mtp_op_get(0) : NULL);
			st = apply(ln, ax[i].tok, &ax[i].items[k], &s);
			if (st)
				return st;
		}
		*total *= ax[i].n;
		if (*total > MTP_CASEFILE_MAX_EXPAND)
			return mtp_cf_error(
				ln, 1,
				"the line expands into more than %d problems",
				MTP_CASEFILE_MAX_EXPAND);
	}
	return MTP_OK;
}

static enum mtp_status gen_one(const struct mtp_cf_line *ln,
			       const struct axis *ax, int nax, const int *idx,
			       const struct mtp_casefile_entry *proto)
{
	struct mtp_casefile_entry *e;
	struct mtp_gen_spec spec;
	char msg[MTP_ERR_MAX], id[128];
	enum mtp_status st = MTP_OK;

	bool seeded = false;

	mtp_gen_spec_init(&spec, NULL);
	for (int i = 0; i < nax && !st; i++) {
		st = apply(ln, ax[i].tok, &ax[i].items[idx[i]], &spec);
		seeded |= ax[i].tok->id == K_SEED;
	}
	if (st)
		return st;
	if (!seeded && ln->ps->cf->has_default_seed) /* run --seed */
		spec.seed = ln->ps->cf->default_seed;
	st = mtp_gen_spec_check(&spec, id, sizeof(id), msg, sizeof(msg));
	if (st)
		return mtp_cf_error(ln, blame(ax, nax, msg), "%s", msg);
	if (mtp_mem_check(mtp_gen_spec_bytes(&spec), mtp_mem_budget(), msg,
			  sizeof(msg)))
		return mtp_cf_error(ln, 1, "%s: %s", id, msg);
	st = mtp_cf_entry_add(ln, 1, &e);
	if (st)
		return st;
	*e = *proto;
	e->spec = spec;
	snprintf(e->id, sizeof(e->id), "%s", id);
	return MTP_OK;
}

/* op=... : every combination of the line's lists, each checked. */
enum mtp_status mtp_cf_line_generated(const struct mtp_cf_line *ln,
				      const struct mtp_casefile_entry *proto)
{
	struct axis *ax = calloc(MTP_CF_MAX_TOKENS, sizeof(*ax));
	int nax, idx[MTP_CF_MAX_TOKENS] = {0};
	long total;
	enum mtp_status st;

	if (!ax)
		return mtp_cf_error(ln, 1, "out of memory");
	st = axes_build(ln, ax, &nax, &total);
	for (long c = 0; !st && c < total; c++) {
		st = gen_one(ln, ax, nax, idx, proto);
		for (int i = nax - 1; i >= 0;
		     i--) { /* odometer, last key fastest */
			if (++idx[i] < ax[i].n)
				break;
			idx[i] = 0;
		}
	}
	free(ax);
	return st;
}
