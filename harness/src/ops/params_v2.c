/*
 * The FORMAT.md version 2 attributes of the captured-block form: `block`
 * (synthetic or captured, for mtp_step and draft_chain), `max_position` (a
 * chain's position clamp, rule 15) and whether `pos0_mask` is declared (the
 * MISSING_POS0_MASK claim needs a declared 1). Kept apart from params.c so
 * that the version 1 table stays as it was.
 */
#include "mtp/op.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const struct mtp_attr *find(const struct mtp_attr_list *l,
				   const char *name)
{
	for (int i = 0; i < l->n; i++)
		if (strcmp(l->items[i].name, name) == 0)
			return &l->items[i];
	return NULL;
}

static enum mtp_status parse_block(const struct mtp_op *op,
				   const struct mtp_attr *a,
				   struct mtp_v2_params *v, char *err,
				   size_t errn)
{
	if (!a->is_string || (strcmp(a->str, "synthetic") != 0 &&
			      strcmp(a->str, "captured") != 0)) {
		snprintf(err, errn,
			 "attribute 'block': '%s' is not synthetic or captured",
			 a->is_string ? a->str : "(a number)");
		return MTP_ERR_INVALID;
	}
	v->captured = strcmp(a->str, "captured") == 0;
	if (v->captured && !op->captured_form) {
		snprintf(err, errn,
			 "attribute 'block': captured applies to mtp_step, "
			 "draft_chain and dspark_step only, not %s",
			 op->name);
		return MTP_ERR_INVALID;
	}
	return MTP_OK;
}

static enum mtp_status parse_int(const struct mtp_attr *a, double lo, double hi,
				 double *v, char *err, size_t errn)
{
	if (a->is_string || !isfinite(a->num) || a->num != floor(a->num) ||
	    a->num < lo || a->num > hi) {
		snprintf(err, errn,
			 "attribute '%s': must be an integer in [%.0f, %.0f]",
			 a->name, lo, hi);
		return MTP_ERR_INVALID;
	}
	*v = a->num;
	return MTP_OK;
}

enum mtp_status mtp_params_parse_v2(const struct mtp_op *op,
				    const struct mtp_attr_list *attrs,
				    struct mtp_params *out, char *err,
				    size_t errn)
{
	struct mtp_v2_params *v = &out->v2;
	const struct mtp_attr *a;
	enum mtp_status st = MTP_OK;
	double x;

	v->captured = false;
	v->max_position = INT64_MAX;
	v->pos0_mask = -1;
	if ((a = find(attrs, "block")))
		st = parse_block(op, a, v, err, errn);
	if (!st && (a = find(attrs, "max_position"))) {
		st = parse_int(a, 0, 4611686018427387904.0, &x, err, errn);
		v->max_position = (int64_t)x;
	}
	if (!st && (a = find(attrs, "pos0_mask"))) {
		st = parse_int(a, 0, 1, &x, err, errn);
		v->pos0_mask = (int)x;
	}
	if (!st)
		st = mtp_params_parse_tp(op, attrs, out, err, errn);
	return st;
}
