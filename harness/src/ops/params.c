/*
 * Case attributes -> struct mtp_params. Which attributes an op takes is in
 * the op table; what each attribute means, its type and its valid range is
 * here, once.
 */
#include "mtp/op.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

enum attr_kind {
	K_EPS,
	K_POS,
	K_INT,
	K_ROUNDING,
	K_VARIANT,
	K_CONTRACT,
	K_QUANT,
	K_MASK,
	K_DSPARK
};

struct attr_def {
	const char *name;
	enum attr_kind kind;
	size_t off;
	int64_t lo, hi; /* integers */
};

#define OFF(f) offsetof(struct mtp_params, f)

static const struct attr_def attr_defs[] = {
	{"eps", K_EPS, OFF(eps), 0, 0},
	{"rounding", K_ROUNDING, OFF(rounding), 0, 0},
	{"rms_eps", K_EPS, OFF(hc.rms_eps), 0, 0},
	{"pre_eps", K_EPS, OFF(hc.pre_eps), 0, 0},
	{"sinkhorn_eps", K_EPS, OFF(hc.sinkhorn_eps), 0, 0},
	{"post_mult", K_POS, OFF(hc.post_mult), 0, 0},
	{"sinkhorn_iters", K_INT, OFF(hc.sinkhorn_iters), 1, 10000},
	{"norm_eps", K_EPS, OFF(hc.norm_eps), 0, 0},
	{"hc_eps", K_EPS, OFF(hc_eps), 0, 0},
	{"variant", K_VARIANT, OFF(variant), 0, 0},
	{"hc_head_variant", K_VARIANT, OFF(variant), 0, 0},
	{"block_contract", K_CONTRACT, OFF(contract), 0, 0},
	{"hc_mult", K_INT, OFF(hc_mult), 1, 64},
	{"num_steps", K_INT, OFF(num_steps), 1, 64},
	{"num_layers", K_INT, OFF(num_layers), 1, 16},
	{"pass_step_idx", K_INT, OFF(pass_step_idx), 0, 1},
	{"proj_quant", K_QUANT, OFF(proj_quant), 0, 0},
	{"act_quant_eps", K_POS, OFF(act_quant_eps), 0, 0},
	{"logit_scale", K_POS, OFF(logit_scale), 0, 0},
	{"logits_mup", K_POS, OFF(logits_mup), 0, 0},
	{"block_mask", K_MASK, OFF(block_mask), 0, 0},
	{"dspark_variant", K_DSPARK, OFF(dspark_variant), 0, 0},
};

static const struct attr_def *attr_def_find(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(attr_defs) / sizeof(attr_defs[0]); i++)
		if (strlen(attr_defs[i].name) == len &&
		    strncmp(attr_defs[i].name, name, len) == 0)
			return &attr_defs[i];
	return NULL;
}

static const struct mtp_attr *attr_get(const struct mtp_attr_list *l,
				       const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->items[i].name, name) == 0)
			return &l->items[i];
	return NULL;
}

static bool parse_enum(const char *s, enum attr_kind k, int *v)
{
	static const char *const names[][3] = {
		[K_ROUNDING] = {"eager", "fused"},
		[K_VARIANT] = {"cuda", "rocm"},
		[K_CONTRACT] = {"deferred", "internal"},
		[K_QUANT] = {"none", "fp8_w", "fp8_w8a8"},
		[K_MASK] = {"non_causal", "causal"},
		[K_DSPARK] = {"v4.1", "qwen3"},
	};
	for (int i = 0; i < 3; i++) {
		if (names[k][i] && strcmp(s, names[k][i]) == 0) {
			*v = i;
			return true;
		}
	}
	return false;
}

static void store_int(struct mtp_params *p, const struct attr_def *d, int64_t v)
{
	char *base = (char *)p + d->off;

	if (d->off == OFF(hc.sinkhorn_iters))
		*(int *)base = (int)v;
	else if (d->off == OFF(pass_step_idx))
		*(bool *)base = v != 0;
	else
		*(int64_t *)base = v;
}

static enum mtp_status set_attr(struct mtp_params *p, const struct attr_def *d,
				const struct mtp_attr *a, char *err,
				size_t errn)
{
	char *base = (char *)p + d->off;
	int e;

	if (d->kind >= K_ROUNDING) {
		if (!a->is_string || !parse_enum(a->str, d->kind, &e)) {
			snprintf(err, errn,
				 "attribute '%s': '%s' is not a valid value",
				 d->name, a->is_string ? a->str : "(a number)");
			return MTP_ERR_INVALID;
		}
		*(int *)base = e;
		if (d->kind == K_QUANT)
			p->proj_quant_declared = true;
		return MTP_OK;
	}
	if (a->is_string || !isfinite(a->num)) {
		snprintf(err, errn, "attribute '%s': must be a finite number",
			 d->name);
		return MTP_ERR_INVALID;
	}
	if (d->kind == K_INT) {
		if (a->num != floor(a->num) || a->num < (double)d->lo ||
		    a->num > (double)d->hi) {
			snprintf(err, errn,
				 "attribute '%s': %g is not an integer in "
				 "[%lld, %lld]",
				 d->name, a->num, (long long)d->lo,
				 (long long)d->hi);
			return MTP_ERR_INVALID;
		}
		store_int(p, d, (int64_t)a->num);
		return MTP_OK;
	}
	if (a->num < 0 || (d->kind == K_POS && a->num == 0) || a->num > 1e3) {
		snprintf(err, errn, "attribute '%s': %g is out of range",
			 d->name, a->num);
		return MTP_ERR_INVALID;
	}
	*(double *)base = a->num;
	return MTP_OK;
}

/* Applies every attribute named in `list` ("eps rounding norm_eps?"). */
static enum mtp_status apply_list(const char *list,
				  const struct mtp_attr_list *attrs,
				  struct mtp_params *p, char *err, size_t errn)
{
	const char *s = list;

	while (*s) {
		size_t len = strcspn(s, " ");
		bool optional = len > 0 && s[len - 1] == '?';
		size_t nlen = optional ? len - 1 : len;
		const struct attr_def *d = attr_def_find(s, nlen);
		char name[48];

		snprintf(name, sizeof(name), "%.*s", (int)nlen, s);
		const struct mtp_attr *a = attr_get(attrs, name);

		if (!d) {
			snprintf(err, errn, "internal: unknown attribute '%s'",
				 name);
			return MTP_ERR_INVALID;
		}
		if (a) {
			enum mtp_status st = set_attr(p, d, a, err, errn);

			if (st)
				return st;
		} else if (!optional) {
			snprintf(err, errn, "attribute '%s': missing", name);
			return MTP_ERR_INVALID;
		}
		s += len;
		s += strspn(s, " ");
	}
	return MTP_OK;
}

enum mtp_status mtp_params_parse(const struct mtp_op *op,
				 enum mtp_family family,
				 const struct mtp_attr_list *attrs,
				 struct mtp_params *out, char *err, size_t errn)
{
	enum mtp_status st;

	memset(out, 0, sizeof(*out));
	out->family = family;
	out->num_steps = out->num_layers = 1;
	out->hc.post_mult = 2.0;
	out->act_quant_eps = 1e-10; /* FORMAT.md version 2, rule 7 */
	out->logit_scale = 1.0;	    /* SPEC.md §13 Step DS-6: V4.1's */
	/* undeclared: what engines on Hopper run (SPEC.md §12.2) */
	out->proj_quant = MTP_PROJ_QUANT_FP8_W8A8;
	st = apply_list(op->attrs, attrs, out, err, errn);
	if (!st && mtp_family_mhc(family))
		st = apply_list(op->attrs_v4, attrs, out, err, errn);
	if (!st)
		st = mtp_params_parse_v2(op, attrs, out, err, errn);
	if (st)
		return st;
	st = mtp_conventions_parse(attrs, &out->conv, err, errn);
	if (st)
		return st;
	if (out->logits_mup != 0.0 && !mtp_family_logits_mup(family)) {
		snprintf(err, errn,
			 "attribute 'logits_mup': family %s's head divides "
			 "by no mup (only a row with logits_mup does)",
			 mtp_family_name(family));
		return MTP_ERR_INVALID;
	}
	if (mtp_family_mhc(family) && op->attrs_v4[0]) {
		/* the mHC scalars of a V4 layer (SPEC.md §1, §10.2) */
		out->hc.rms_eps = out->eps;
		out->hc.pre_eps = out->hc.sinkhorn_eps = out->hc_eps;
		out->hc.norm_eps = out->eps;
	}
	return MTP_OK;
}
