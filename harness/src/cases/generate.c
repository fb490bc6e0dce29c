/*
 * Generated problems: a case built in process from (op, family, dtype, dims,
 * attributes, seed), so that full-size shapes can be checked without giant
 * fixture files and a repro line replays the inputs bit for bit. One generic
 * routine walks the op's signature (the op table decides which tensors exist
 * and their shapes); the values come from gen_values.c. Sizes are checked
 * before anything is allocated.
 */
#include "mtp/generate.h"
#include "mtp/membudget.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GEN_MAX_DIM ((int64_t)1 << 31)

/* ---- attributes ------------------------------------------------------- */

enum mtp_family mtp_gen_default_family(const struct mtp_op *op)
{
	return op->default_family;
}

void mtp_gen_spec_init(struct mtp_gen_spec *spec, const struct mtp_op *op)
{
	memset(spec, 0, sizeof(*spec));
	spec->op = op;
	spec->family = op ? mtp_gen_default_family(op) : MTP_FAMILY_DEEPSEEK_V3;
	spec->act = MTP_BF16;
	spec->seed = MTP_GEN_DEFAULT_SEED;
}

struct attr_default {
	const char *name;
	double num;
	const char *str;
};

static const struct attr_default attr_defaults[] = {
	{"eps", 1e-6, NULL},
	{"rounding", 0, "fused"},
	{"rms_eps", 1e-6, NULL},
	{"pre_eps", 1e-6, NULL},
	{"sinkhorn_eps", 1e-6, NULL},
	{"post_mult", 2.0, NULL},
	{"sinkhorn_iters", 20, NULL},
	{"norm_eps", 1e-6, NULL},
	{"hc_eps", 1e-6, NULL},
	{"variant", 0, "cuda"},
	{"hc_head_variant", 0, "cuda"},
	{"block_contract", 0, "deferred"},
	{"hc_mult", 4, NULL},
	{"num_steps", 3, NULL},
	{"num_layers", 2, NULL},
	{"pass_step_idx", 1, NULL},
};

static const struct mtp_attr *attr_find(const struct mtp_attr_list *l,
					const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->items[i].name, name) == 0)
			return &l->items[i];
	return NULL;
}

/* Whether `name` is in an op's attribute list ("eps rounding norm_eps?"). */
static bool in_list(const char *list, const char *name)
{
	size_t k = strlen(name);

	for (const char *s = list; *s;) {
		size_t len = strcspn(s, " ");
		size_t nlen = len && s[len - 1] == '?' ? len - 1 : len;

		if (nlen == k && strncmp(s, name, k) == 0)
			return true;
		s += len;
		s += strspn(s, " ");
	}
	return false;
}

static bool op_takes(const struct mtp_gen_spec *sp, const char *name)
{
	return in_list(sp->op->attrs, name) ||
	       (mtp_family_mhc(sp->family) &&
		in_list(sp->op->attrs_v4, name)) ||
	       mtp_params_tp_takes(sp->op, name);
}

static bool has_default(const char *name)
{
	for (size_t i = 0; i < sizeof(attr_defaults) / sizeof(attr_defaults[0]);
	     i++)
		if (strcmp(attr_defaults[i].name, name) == 0)
			return true;
	return false;
}

/* The default of one attribute; the dims M, K, L of the spec win. */
static void attr_default(const struct mtp_gen_spec *sp,
			 const struct attr_default *d, struct mtp_attr *a)
{
	memset(a, 0, sizeof(*a));
	snprintf(a->name, sizeof(a->name), "%s", d->name);
	a->is_string = d->str != NULL;
	if (d->str)
		snprintf(a->str, sizeof(a->str), "%s", d->str);
	a->num = d->num;
	if (strcmp(d->name, "hc_mult") == 0 && sp->m)
		a->num = (double)sp->m;
	else if (strcmp(d->name, "num_steps") == 0 && sp->k)
		a->num = (double)sp->k;
	else if (strcmp(d->name, "num_layers") == 0 && sp->l)
		a->num = (double)sp->l;
}

/* An override of hc_mult/num_steps/num_layers must agree with M/K/L. */
static enum mtp_status attr_agrees(const struct mtp_gen_spec *sp,
				   const struct mtp_attr *a, char *err,
				   size_t errn)
{
	static const char *const names[] = {"hc_mult", "num_steps",
					    "num_layers"};
	const int64_t dims[] = {sp->m, sp->k, sp->l};
	const char syms[] = "MKL";

	for (int i = 0; i < 3; i++) {
		if (strcmp(a->name, names[i]) || !dims[i] || a->is_string ||
		    a->num == (double)dims[i])
			continue;
		snprintf(err, errn,
			 "gen %s: attribute '%s' = %g disagrees with %c=%lld",
			 sp->op->name, a->name, a->num, syms[i],
			 (long long)dims[i]);
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

/* Defaults for every attribute the op takes, overridden by spec->attrs;
 * an override the op does not take is an error (a typo would be ignored). */
static enum mtp_status attrs_build(const struct mtp_gen_spec *sp,
				   struct mtp_attr_list *out, char *err,
				   size_t errn)
{
	memset(out, 0, sizeof(*out));
	for (int i = 0; i < sp->attrs.n; i++) {
		const struct mtp_attr *a = &sp->attrs.items[i];
		enum mtp_status st;

		if (!op_takes(sp, a->name)) {
			snprintf(err, errn,
				 "gen %s: attribute '%s' is not one of this op "
				 "(%s) for %s",
				 sp->op->name, a->name,
				 sp->op->attrs[0] ? sp->op->attrs : "none",
				 mtp_family_name(sp->family));
			return MTP_ERR_INVALID;
		}
		st = attr_agrees(sp, a, err, errn);
		if (st)
			return st;
		/* one without a default: passed on (the first if repeated) */
		if (!has_default(a->name) && !attr_find(out, a->name))
			out->items[out->n++] = *a;
	}
	for (size_t i = 0; i < sizeof(attr_defaults) / sizeof(attr_defaults[0]);
	     i++) {
		const struct mtp_attr *o =
			attr_find(&sp->attrs, attr_defaults[i].name);

		if (!op_takes(sp, attr_defaults[i].name))
			continue;
		if (o)
			out->items[out->n++] = *o;
		else
			attr_default(sp, &attr_defaults[i],
				     &out->items[out->n++]);
	}
	return MTP_OK;
}

/* ---- the plan: attributes, signature, dims, sizes, id ----------------- */

struct plan {
	struct mtp_attr_list attrs;
	struct mtp_params params;
	struct mtp_signature *sig;
	struct mtp_dims dims;
	bool optional; /* the spec asks for optional inputs and the op has some */
	char id[128];
};

static int64_t or_default(int64_t v, int64_t def)
{
	return v ? v : def;
}

static enum mtp_status dims_check(const struct mtp_gen_spec *sp, char *err,
				  size_t errn)
{
	const int64_t v[] = {sp->t,    sp->h,	  sp->m, sp->v, sp->f,
			     sp->rows, sp->parts, sp->k, sp->l, sp->c};
	const char *sym = "THMVFRPKLC";

	for (int i = 0; i < 10; i++) {
		if (v[i] >= 0 && v[i] < GEN_MAX_DIM)
			continue;
		snprintf(err, errn, "gen %s: %c=%lld is outside [0, %lld)",
			 sp->op->name, sym[i], (long long)v[i],
			 (long long)GEN_MAX_DIM);
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

/* Small defaults: T=3, H=64, M=4, V=97, F=96, R=T, P=2, C=5; M, K and L of the
 * ops that take hc_mult/num_steps/num_layers come from those attributes; T,
 * R and C are 0 where the spec asks for an empty batch. */
static void dims_bind(const struct mtp_gen_spec *sp, const struct mtp_params *p,
		      struct mtp_dims *d)
{
	d->t = sp->empty & MTP_GEN_EMPTY_T ? 0 : or_default(sp->t, 3);
	d->h = or_default(sp->h, 64);
	d->m = p->hc_mult > 0 ? p->hc_mult : or_default(sp->m, 4);
	d->v = or_default(sp->v, 97);
	d->f = or_default(sp->f, 96);
	d->r = sp->empty & MTP_GEN_EMPTY_R ? 0 : or_default(sp->rows, d->t);
	d->p = or_default(sp->parts, 2);
	d->k = p->num_steps;
	d->l = p->num_layers;
	d->c = sp->empty & MTP_GEN_EMPTY_C ? 0 : or_default(sp->c, 5);
}

/* Whether generation draws input s: required ones always, optional ones
 * when asked; never a block scale (generated cases are not quantized). */
static bool gen_draws(const struct plan *pl, const struct mtp_tspec *s)
{
	if (s->cls == MTP_TC_QSCALE)
		return false;
	return pl->optional || !s->optional;
}

/* Rebuilds the signature with every optional input present. */
static enum mtp_status sig_with_optional(const struct mtp_gen_spec *sp,
					 struct plan *pl, char *err,
					 size_t errn)
{
	struct mtp_tensor_list present;
	enum mtp_status st = MTP_OK;

	mtp_list_init(&present);
	for (int i = 0; i < pl->sig->n_in && !st; i++)
		if (pl->sig->in[i].optional &&
		    pl->sig->in[i].cls != MTP_TC_QSCALE &&
		    !mtp_list_add(&present, pl->sig->in[i].name))
			st = MTP_ERR_NOMEM;
	if (!st)
		st = mtp_signature_build(sp->op, &pl->params, &present, pl->sig,
					 err, errn);
	mtp_list_fini(&present);
	return st;
}

static enum mtp_status size_check(const struct mtp_gen_spec *sp,
				  const struct mtp_tspec *s, bool out,
				  const struct mtp_dims *d, char *err,
				  size_t errn)
{
	struct mtp_tensor t = {0};
	double bytes;
	char shape[96];

	t.dtype = mtp_tspec_dtype(s, sp->act);
	if (!mtp_tspec_shape(s, d, &t.ndim, t.shape)) {
		snprintf(err, errn,
			 "gen %s: %s '%s': the rule [%s] gives no shape",
			 sp->op->name, out ? "output" : "input", s->name,
			 s->shape);
		return MTP_ERR_INVALID;
	}
	bytes = (double)mtp_dtype_size(t.dtype);
	for (int i = 0; i < t.ndim; i++)
		bytes *= (double)t.shape[i];
	if (bytes <= (double)MTP_GEN_MAX_TENSOR_BYTES)
		return MTP_OK;
	snprintf(err, errn,
		 "gen %s: %s '%s' %s %s would take %.1f GiB, over the %llu GiB "
		 "limit",
		 sp->op->name, out ? "output" : "input", s->name,
		 mtp_shape_str(&t, shape, sizeof(shape)),
		 mtp_dtype_name(t.dtype), bytes / (1u << 30),
		 (unsigned long long)(MTP_GEN_MAX_TENSOR_BYTES >> 30));
	return MTP_ERR_LIMIT;
}

static enum mtp_status sizes_check(const struct mtp_gen_spec *sp,
				   const struct plan *pl, char *err,
				   size_t errn)
{
	enum mtp_status st = MTP_OK;

	for (int i = 0; i < pl->sig->n_in && !st; i++)
		if (gen_draws(pl, &pl->sig->in[i]))
			st = size_check(sp, &pl->sig->in[i], false, &pl->dims,
					err, errn);
	for (int i = 0; i < pl->sig->n_out && !st; i++)
		st = size_check(sp, &pl->sig->out[i], true, &pl->dims, err,
				errn);
	return st;
}

struct idbuf {
	char *s;
	size_t n, len;
	bool overflow;
};

/* Appends text, dropping '+' and mapping anything outside [A-Za-z0-9_.-]. */
static void id_put(struct idbuf *b, const char *text)
{
	for (const char *p = text; *p; p++) {
		char c = *p;

		if (c == '+')
			continue;
		if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWX"
			    "YZ0123456789_.-",
			    c))
			c = '_';
		if (b->len + 1 >= b->n) {
			b->overflow = true;
			return;
		}
		b->s[b->len++] = c;
		b->s[b->len] = 0;
	}
}

/* An integer as such, else the shortest %g form that reads back as v. */
static void num_str(double v, char *buf, size_t n)
{
	if (v == (double)(long long)v && v > -1e15 && v < 1e15) {
		snprintf(buf, n, "%lld", (long long)v);
		return;
	}
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

static const char *dtype_short(enum mtp_dtype dt)
{
	static const char *const names[] = {[MTP_F64] = "fp64",
					    [MTP_F32] = "fp32",
					    [MTP_F16] = "fp16",
					    [MTP_BF16] = "bf16"};

	return (unsigned)dt <= MTP_BF16 ? names[dt] : "?";
}

static int64_t dim_of(const struct mtp_dims *d, char sym)
{
	const int64_t v[] = {d->t, d->h, d->m, d->v, d->f,
			     d->r, d->p, d->k, d->l, d->c};

	return v[strchr("THMVFRPKLC", sym) - "THMVFRPKLC"];
}

/* The dims the signature uses (and M, K, L where attributes bind them), in
 * the fixed order P R T M H V F K L. */
static void id_dims(const struct mtp_gen_spec *sp, const struct plan *pl,
		    struct idbuf *b)
{
	static const char order[] = "PRTMHVFKLC";
	char used[32] = "", part[32];
	const struct mtp_signature *sig = pl->sig;

	if (pl->params.hc_mult > 0)
		strcat(used, "M");
	if (sp->op->attr_dims)
		strcat(used, sp->op->attr_dims);
	for (int i = 0; i < sig->n_in + sig->n_out; i++) {
		const struct mtp_tspec *s =
			i < sig->n_in ? &sig->in[i] : &sig->out[i - sig->n_in];

		if (i < sig->n_in && !gen_draws(pl, s))
			continue;
		for (const char *c = s->shape; *c; c++)
			if (strchr(order, *c) && !strchr(used, *c) &&
			    strlen(used) < sizeof(used) - 1)
				strncat(used, c, 1);
	}
	for (const char *c = order; *c; c++) {
		if (!strchr(used, *c))
			continue;
		snprintf(part, sizeof(part), ".%c%lld", *c,
			 (long long)dim_of(&pl->dims, *c));
		id_put(b, part);
	}
}

static enum mtp_status id_build(const struct mtp_gen_spec *sp, struct plan *pl,
				char *err, size_t errn)
{
	struct idbuf b = {pl->id, sizeof(pl->id), 0, false};
	char part[160], num[40];

	pl->id[0] = 0;
	snprintf(part, sizeof(part), "gen.%s.%s.%s", sp->op->name,
		 mtp_family_name(sp->family), dtype_short(sp->act));
	id_put(&b, part);
	id_dims(sp, pl, &b);
	for (int i = 0; i < sp->attrs.n; i++) {
		const struct mtp_attr *a = &sp->attrs.items[i];

		if (!a->is_string)
			num_str(a->num, num, sizeof(num));
		snprintf(part, sizeof(part), ".%s-%s", a->name,
			 a->is_string ? a->str : num);
		id_put(&b, part);
	}
	snprintf(part, sizeof(part), "%s.s%llu", pl->optional ? ".opt" : "",
		 (unsigned long long)sp->seed);
	id_put(&b, part);
	if (b.overflow) {
		snprintf(err, errn,
			 "gen %s: case id longer than %zu characters (%s...)",
			 sp->op->name, sizeof(pl->id) - 1, pl->id);
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

static enum mtp_status plan_build(const struct mtp_gen_spec *sp,
				  struct plan *pl, char *err, size_t errn)
{
	enum mtp_status st;

	memset(pl, 0, sizeof(*pl));
	if (!sp->op) {
		snprintf(err, errn, "gen: no op");
		return MTP_ERR_INVALID;
	}
	if (!mtp_dtype_is_float(sp->act)) {
		snprintf(err, errn,
			 "gen %s: activations must be a float dtype, not %s",
			 sp->op->name, mtp_dtype_name(sp->act));
		return MTP_ERR_INVALID;
	}
	st = dims_check(sp, err, errn);
	if (!st)
		st = attrs_build(sp, &pl->attrs, err, errn);
	if (!st)
		st = mtp_params_parse(sp->op, sp->family, &pl->attrs,
				      &pl->params, err, errn);
	if (st)
		return st;
	pl->sig = malloc(sizeof(*pl->sig));
	if (!pl->sig)
		return MTP_ERR_NOMEM;
	st = mtp_signature_build(sp->op, &pl->params, NULL, pl->sig, err, errn);
	for (int i = 0; !st && sp->optional && i < pl->sig->n_in; i++)
		pl->optional =
			pl->optional || (pl->sig->in[i].optional &&
					 pl->sig->in[i].cls != MTP_TC_QSCALE);
	if (!st && pl->optional)
		st = sig_with_optional(sp, pl, err, errn);
	if (st)
		return st;
	dims_bind(sp, &pl->params, &pl->dims);
	st = sizes_check(sp, pl, err, errn);
	return st ? st : id_build(sp, pl, err, errn);
}

static void plan_fini(struct plan *pl)
{
	free(pl->sig);
	pl->sig = NULL;
}

enum mtp_status mtp_gen_spec_check(const struct mtp_gen_spec *spec, char *id,
				   size_t idn, char *err, size_t errn)
{
	struct plan pl;
	enum mtp_status st = plan_build(spec, &pl, err, errn);

	if (!st && id)
		snprintf(id, idn, "%s", pl.id);
	plan_fini(&pl);
	return st;
}

uint64_t mtp_gen_spec_bytes(const struct mtp_gen_spec *spec)
{
	struct plan pl;
	char err[MTP_ERR_MAX];
	uint64_t b = UINT64_MAX;

	if (!plan_build(spec, &pl, err, sizeof(err))) {
		struct mtp_tensor_list in;

		mtp_list_init(&in);
		for (int i = 0; i < pl.sig->n_in; i++) {
			const struct mtp_tspec *s = &pl.sig->in[i];
			struct mtp_named *n =
				pl.optional || !s->optional
					? mtp_list_add(&in, s->name)
					: NULL;

			if (n) {
				n->t.dtype = mtp_tspec_dtype(s, spec->act);
				mtp_tspec_shape(s, &pl.dims, &n->t.ndim,
						n->t.shape);
			}
		}
		uint64_t o = mtp_mem_outputs_bytes(pl.sig, &pl.dims, spec->act);

		b = mtp_mem_list_bytes(&in);
		/* as mtp_mem_case_bytes for a golden: the harness's inputs
		 * and three copies of the outputs, the worker's two copies of
		 * each */
		b = b > UINT64_MAX / 3 || o > (UINT64_MAX - 3 * b) / 5
			    ? UINT64_MAX
			    : 3 * b + 5 * o;
		mtp_list_fini(&in);
	}
	plan_fini(&pl);
	return b;
}

/* ---- the case --------------------------------------------------------- */

static enum mtp_status add_input(struct mtp_case *c, const struct plan *pl,
				 const struct mtp_tspec *s, enum mtp_dtype act,
				 char *err, size_t errn)
{
	struct mtp_named *n = mtp_list_add(&c->inputs, s->name);
	int64_t shape[MTP_MAX_DIMS];
	int ndim;
	enum mtp_status st;

	if (!n)
		return MTP_ERR_NOMEM;
	mtp_tspec_shape(s, &pl->dims, &ndim, shape);
	st = mtp_tensor_alloc(&n->t, mtp_tspec_dtype(s, act), ndim, shape);
	if (!st)
		st = mtp_gen_fill(s, &pl->dims, c->seed, &n->t);
	if (st == MTP_ERR_NOMEM)
		snprintf(err, errn, "gen %s: out of memory for input '%s'",
			 c->op->name, s->name);
	return st;
}

enum mtp_status mtp_case_generate(const struct mtp_gen_spec *spec,
				  struct mtp_case *c, char *err, size_t errn)
{
	struct plan pl;
	struct mtp_dims dims;
	enum mtp_dtype act;
	enum mtp_status st;

	memset(c, 0, sizeof(*c));
	mtp_list_init(&c->inputs);
	mtp_list_init(&c->expected);
	mtp_list_init(&c->observed);
	st = plan_build(spec, &pl, err, errn);
	if (st)
		goto out;
	snprintf(c->file, sizeof(c->file), "generated");
	snprintf(c->id, sizeof(c->id), "%s", pl.id);
	c->op = spec->op;
	c->family = spec->family;
	c->has_seed = true;
	c->seed = spec->seed;
	c->attrs = pl.attrs;
	for (int i = 0; i < pl.sig->n_in && !st; i++)
		if (gen_draws(&pl, &pl.sig->in[i]))
			st = add_input(c, &pl, &pl.sig->in[i], spec->act, err,
				       errn);
	if (!st)
		st = mtp_case_check(c, pl.sig, &dims, &act, err, errn);
	if (!st)
		c->loaded = true;
out:
	plan_fini(&pl);
	if (st)
		mtp_case_fini(c);
	return st;
}
